#!/usr/bin/env bash
# Runs partial_drift.cu on the GPU machine under ncu (every launch cold: ncu's default cache control), with the
# environment. Results under $OUT.
set -uo pipefail
out=${OUT:-$PWD/probe-out}
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../gpu/common.sh"
write_environment "$out/partial_drift_environment.txt"
nvcc -O2 -arch=sm_90 -I"$here" "$here/partial_drift.cu" -o /tmp/partial_drift || exit 1
cuobjdump -sass /tmp/partial_drift | grep -E "Function|STG|BAR" > "$out/partial_drift_sass.txt"
/tmp/partial_drift > "$out/partial_drift.json"
echo "partial_drift rc=$?" | tee -a "$out/partial_drift_environment.txt"
metrics=dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_op_read.sum,lts__t_sectors_op_write.sum
metrics+=,lts__t_sectors_op_write_lookup_hit.sum,lts__t_sectors_op_read_lookup_miss.sum
metrics+=,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum,l1tex__t_requests_pipe_lsu_mem_global_op_st.sum
metrics+=,gpu__time_duration.sum
ncu --clock-control none --csv --metrics "$metrics" -k regex:'^pd_' /tmp/partial_drift \
  > "$out/partial_drift_ncu.csv" 2> "$out/partial_drift_ncu.err"
echo "ncu rc=$?" | tee -a "$out/partial_drift_environment.txt"
cat "$out/partial_drift_environment.txt" "$out/partial_drift.json"
tail -n 3 "$out/partial_drift_ncu.err"
