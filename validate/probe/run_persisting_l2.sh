#!/usr/bin/env bash
# Runs persisting_l2.cu on the GPU machine: timings (persisting_l2.json), then the same program under ncu with two
# timed pairs per configuration for L2 hits and DRAM bytes per launch (persisting_l2_ncu.csv). Results under $OUT.
set -uo pipefail
out=${OUT:-$PWD/probe-out}
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../gpu/common.sh"
write_environment "$out/persisting_environment.txt"
nvcc -O2 -arch=sm_90 -I"$here" "$here/persisting_l2.cu" -o /tmp/persisting_l2 || exit 1
/tmp/persisting_l2 > "$out/persisting_l2.json"
echo "persisting_l2 rc=$?" | tee -a "$out/persisting_environment.txt"
ncu --clock-control none --cache-control none --csv \
  --metrics lts__t_sectors_op_read_lookup_hit.sum,lts__t_sectors_op_read.sum,dram__bytes_read.sum,gpu__time_duration.sum \
  /tmp/persisting_l2 2 > "$out/persisting_l2_ncu.csv" 2> "$out/persisting_l2_ncu.err"
echo "ncu rc=$?" | tee -a "$out/persisting_environment.txt"
cat "$out/persisting_environment.txt" "$out/persisting_l2.json"
tail -n 3 "$out/persisting_l2_ncu.err"
