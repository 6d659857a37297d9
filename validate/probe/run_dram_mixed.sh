#!/usr/bin/env bash
# Runs dram_mixed.cu on the GPU machine: timings (dram_mixed.json), then the same program under ncu, one counted
# launch a configuration after its warm-up, for the DRAM bytes and time of each (dram_mixed_ncu.csv). Results under
# $OUT.
set -uo pipefail
out=${OUT:-$PWD/probe-out}
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../gpu/common.sh"
write_environment "$out/dram_mixed_environment.txt"
nvcc -O2 -arch=sm_90 -I"$here" -I"$here/../../model/include" "$here/dram_mixed.cu" -o /tmp/dram_mixed || exit 1
/tmp/dram_mixed > "$out/dram_mixed.json"
echo "dram_mixed rc=$?" | tee -a "$out/dram_mixed_environment.txt"
metrics=dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_op_read.sum,lts__t_sectors_op_write.sum
metrics+=,gpu__time_duration.sum
ncu --clock-control none --cache-control none --replay-mode application --csv --metrics "$metrics" \
  -k regex:'^mixed_' /tmp/dram_mixed 1 > "$out/dram_mixed_ncu.csv" 2> "$out/dram_mixed_ncu.err"
echo "ncu rc=$?" | tee -a "$out/dram_mixed_environment.txt"
cat "$out/dram_mixed_environment.txt" "$out/dram_mixed.json"
tail -n 3 "$out/dram_mixed_ncu.err"
