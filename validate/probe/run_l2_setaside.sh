#!/usr/bin/env bash
# Runs l2_capacity.cu on the GPU machine at several persisting set-asides (whole ways, no window: the set-aside unused),
# each as run_l2_capacity.sh runs it: timings (l2_capacity_w<N>.json), then under ncu one counted launch a
# configuration after two warm-ups (l2_capacity_w<N>_ncu.csv). WAYS: the set-asides (default 0 4 6 8 9 10).
# Results under $OUT.
set -uo pipefail
out=${OUT:-$PWD/probe-out}
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../gpu/common.sh"
write_environment "$out/l2_setaside_environment.txt"
nvcc -O2 -arch=sm_90 -I"$here" "$here/l2_capacity.cu" -o /tmp/l2_capacity || exit 1
metrics=dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_op_read.sum,lts__t_sectors_op_read_lookup_hit.sum
metrics+=,lts__t_sectors_op_write.sum,lts__t_sectors_op_write_lookup_hit.sum,gpu__time_duration.sum
for w in ${WAYS:-0 4 6 8 9 10}; do
  /tmp/l2_capacity 10 "$w" > "$out/l2_capacity_w$w.json"
  echo "l2_capacity ways=$w rc=$? $(date -u +%H:%M:%S)" | tee -a "$out/l2_setaside_environment.txt"
  ncu --clock-control none --cache-control none --replay-mode application --csv --metrics "$metrics" \
    -k regex:'^l2cap_' /tmp/l2_capacity 1 "$w" > "$out/l2_capacity_w${w}_ncu.csv" 2> "$out/l2_capacity_w${w}_ncu.err"
  echo "ncu ways=$w rc=$? $(date -u +%H:%M:%S)" | tee -a "$out/l2_setaside_environment.txt"
  tail -n 2 "$out/l2_capacity_w${w}_ncu.err"
done
cat "$out/l2_setaside_environment.txt"
# The device tool brings back a few files a call: everything in one archive too.
tar -czf "$out/../l2_setaside.tar.gz" -C "$out" .
