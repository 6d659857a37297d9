#!/usr/bin/env bash
# Runs warp_order.cu on the GPU machine under ncu (the caches flushed before each launch): each launch's L1 and L2
# sectors and hits (warp_order_ncu.csv; warp_order.json lists the launches in order). Results under $OUT.
set -uo pipefail
out=${OUT:-$PWD/probe-out}
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../gpu/common.sh"
write_environment "$out/warp_order_environment.txt"
nvcc -O2 -arch=sm_90 -I"$here" "$here/warp_order.cu" -o /tmp/warp_order || exit 1
cuobjdump -sass /tmp/warp_order > "$out/warp_order_sass.txt" 2>&1
/tmp/warp_order > "$out/warp_order.json"
echo "warp_order rc=$?" | tee -a "$out/warp_order_environment.txt"
metrics=lts__t_sectors_op_read.sum,lts__t_sectors_op_read_lookup_hit.sum,lts__t_sectors_srcunit_tex_op_read.sum
metrics+=,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum
metrics+=,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_lgds_cmd_read.sum
metrics+=,dram__bytes_read.sum,gpu__time_duration.sum
ncu --clock-control none --cache-control all --csv --metrics "$metrics" -k regex:'^warp_order' /tmp/warp_order \
  > "$out/warp_order_ncu.csv" 2> "$out/warp_order_ncu.err"
echo "ncu rc=$?" | tee -a "$out/warp_order_environment.txt"
cat "$out/warp_order_environment.txt" "$out/warp_order.json"
tail -n 3 "$out/warp_order_ncu.err"
