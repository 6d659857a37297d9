#!/usr/bin/env bash
# On the GPU machine: runs sim_check.cu once under ncu (cold caches per kernel, as ncu's default cache control does)
# and writes the raw CSV and environment under $OUT/sim_check. Compare with `memhier simulate` on the CPU side.
set -uo pipefail
out=${OUT:-$PWD/gpu-out}/sim_check
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
nvcc -O2 -arch=sm_90 -I"$here/../../model/include" "$here/sim_check.cu" -o /tmp/sim_check || exit 1
{ date -u +%Y-%m-%dT%H:%M:%SZ; nvidia-smi --query-gpu=name,driver_version --format=csv; ncu --version | tail -1; } \
  > "$out/environment.txt" 2>&1
metrics=l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum
metrics+=,l1tex__t_requests_pipe_lsu_mem_global_op_st.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum
metrics+=,l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum
metrics+=,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum
metrics+=,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum
metrics+=,lts__t_sectors_op_read.sum,lts__t_sectors_op_write.sum,lts__t_sectors_op_read_lookup_hit.sum
metrics+=,lts__t_sectors_op_read_lookup_miss.sum,lts__t_sectors_op_write_lookup_hit.sum
metrics+=,dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum
ncu --clock-control none --csv --metrics "$metrics" /tmp/sim_check > "$out/ncu.csv" 2> "$out/ncu.err"
echo "ncu rc=$?" | tee -a "$out/environment.txt"
cat "$out/environment.txt"
tail -3 "$out/ncu.err"
wc -l "$out/ncu.csv"
