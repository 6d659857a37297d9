#!/usr/bin/env bash
# The constant cache on the GPU machine, in one call (about two minutes). Results under $OUT (default ./probe-out):
#   constant_cache.json       validate/probe/constant_cache.cu: SM cycles per divergent constant load by pattern
#   constant_cache_ncu.csv    the same patterns under ncu (a warm-up and one measured launch each) with every idc__
#                             (indexed constant cache) metric this ncu knows: requests, lookup hits and misses
#   suite_constant_ncu.csv    the suite's constant cases (memhier-suite --once) with the same metrics
#   idc_metrics.txt           ncu --query-metrics lines for the idc unit; constant_cache_sass.txt: the probe's LDCs
#   constant_environment.txt  GPU, driver, CUDA, ncu, date and each step's exit status
set -uo pipefail
out=${OUT:-$PWD/probe-out}
mkdir -p "$out"
cd "$(dirname "$0")/../.."
source validate/gpu/common.sh
env_file="$out/constant_environment.txt"
write_environment "$env_file"

nvcc -O2 -arch=sm_90 -Ivalidate/probe validate/probe/constant_cache.cu -o /tmp/constant_cache &&
  /tmp/constant_cache > "$out/constant_cache.json"
echo "constant_cache rc=$?" | tee -a "$env_file"
cuobjdump -sass /tmp/constant_cache | grep -E 'LDC|Function' > "$out/constant_cache_sass.txt" 2>&1

ncu --query-metrics > /tmp/all_metrics.txt 2>&1
echo "query-metrics rc=$?" | tee -a "$env_file"
grep -E '^(idc__|sm__cycles_elapsed |smsp__inst_executed_op_ldc)' /tmp/all_metrics.txt > "$out/idc_metrics.txt"
metrics=$(awk '{print $1 ".sum"}' "$out/idc_metrics.txt" | grep -v '^sm__cycles_elapsed' | paste -sd, -)
metrics+=,sm__cycles_elapsed.max,gpu__time_duration.sum
echo "metrics: $metrics" | tee -a "$env_file"

ncu --clock-control none --csv --metrics "$metrics" /tmp/constant_cache 2 \
  > "$out/constant_cache_ncu.csv" 2> "$out/constant_cache_ncu.err"
echo "constant_cache ncu rc=$?" | tee -a "$env_file"

bin=/tmp/memhier-suite
build_suite "$bin" "$out/suite_build.log" "$env_file"
ncu --clock-control none --csv --metrics "$metrics" -k regex:constant "$bin" --once --filter constant \
  --out "$out/once_constant.jsonl" > "$out/suite_constant_ncu.csv" 2> "$out/suite_constant_ncu.err"
echo "suite constant ncu rc=$?" | tee -a "$env_file"

cat "$env_file"
grep -o '"pattern": "[^"]*"\|"cycles_per_address": [0-9.]*' "$out/constant_cache.json" | paste - - | head -40
tail -n 3 "$out"/*.err
