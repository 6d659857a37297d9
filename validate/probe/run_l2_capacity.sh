#!/usr/bin/env bash
# Runs l2_capacity.cu on the GPU machine: timings (l2_capacity.json), then the same program under ncu, one counted
# launch a configuration after two warm-ups, for L2 hits and DRAM bytes in the steady state (l2_capacity_ncu.csv).
# Results under $OUT.
set -uo pipefail
out=${OUT:-$PWD/probe-out}
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../gpu/common.sh"
write_environment "$out/l2_capacity_environment.txt"
nvcc -O2 -arch=sm_90 -I"$here" "$here/l2_capacity.cu" -o /tmp/l2_capacity || exit 1
/tmp/l2_capacity > "$out/l2_capacity.json"
echo "l2_capacity rc=$?" | tee -a "$out/l2_capacity_environment.txt"
metrics=dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_op_read.sum,lts__t_sectors_op_read_lookup_hit.sum
metrics+=,lts__t_sectors_op_write.sum,lts__t_sectors_op_write_lookup_hit.sum,gpu__time_duration.sum
ncu --clock-control none --cache-control none --replay-mode application --csv --metrics "$metrics" \
  -k regex:'^l2cap_' /tmp/l2_capacity 1 > "$out/l2_capacity_ncu.csv" 2> "$out/l2_capacity_ncu.err"
echo "ncu rc=$?" | tee -a "$out/l2_capacity_environment.txt"
cat "$out/l2_capacity_environment.txt" "$out/l2_capacity.json"
tail -n 3 "$out/l2_capacity_ncu.err"
