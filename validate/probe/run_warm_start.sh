#!/usr/bin/env bash
# Runs warm_start.cu on the GPU machine: timings (warm_start.json), then the same program under ncu (one timed launch
# a configuration, after its two warm-ups: every third ws_ launch) for the DRAM bytes each start leaves to the kernel
# (warm_start_ncu.csv). Results under $OUT, and all of them in $OUT/../warm_start.tar.gz (the device tool brings back a
# few files a call).
set -uo pipefail
out=${OUT:-$PWD/probe-out}
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../gpu/common.sh"
write_environment "$out/warm_start_environment.txt"
nvcc -O2 -arch=sm_90 -I"$here" -I"$here/../../model/include" "$here/warm_start.cu" -o /tmp/warm_start || exit 1
/tmp/warm_start > "$out/warm_start.json"
echo "warm_start rc=$? $(date -u +%H:%M:%S)" | tee -a "$out/warm_start_environment.txt"
metrics=dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum
ncu --clock-control none --cache-control none --replay-mode application --csv --metrics "$metrics" \
  -k regex:'ws_' /tmp/warm_start 1 > "$out/warm_start_ncu.csv" 2> "$out/warm_start_ncu.err"
echo "ncu rc=$? $(date -u +%H:%M:%S)" | tee -a "$out/warm_start_environment.txt"
tail -n 2 "$out/warm_start_ncu.err"
cat "$out/warm_start_environment.txt" "$out/warm_start.json"
tar -czf "$out/../warm_start.tar.gz" -C "$out" .
