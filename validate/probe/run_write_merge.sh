#!/usr/bin/env bash
# Runs write_merge.cu on the GPU machine: the launches' order (write_merge.json), then the same program under ncu (cache
# control all: every launch starts with a clean, empty L2) for each wm_ launch's L1 store requests and sectors, L2 write
# lookups in all, from the SMs and from the other partition, and DRAM bytes (write_merge_ncu.csv), with the kernels'
# SASS (write_merge_sass.txt). Results under $OUT.
#   run_write_merge.sh             the launches of validate/results/h100-2026-11-26e
#   run_write_merge.sh occupancy   fields k = 3 and 8 with 1 to 32 warps an SM (files write_merge_occupancy*)
set -uo pipefail
mode=${1:-}
case "$mode" in
  "") name=write_merge ;;
  occupancy) name=write_merge_occupancy ;;
  *) echo "run_write_merge.sh: unknown mode '$mode' (none, or occupancy)" >&2; exit 2 ;;
esac
out=${OUT:-$PWD/probe-out}
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../gpu/common.sh"
write_environment "$out/${name}_environment.txt"
nvcc -O2 -arch=sm_90 -I"$here" "$here/write_merge.cu" -o /tmp/write_merge || exit 1
cuobjdump -sass /tmp/write_merge | grep -E 'Function|STG|CS2R|BRA' > "$out/write_merge_sass.txt"
/tmp/write_merge $mode > "$out/$name.json"
echo "write_merge $mode rc=$?" | tee -a "$out/${name}_environment.txt"
metrics=l1tex__t_requests_pipe_lsu_mem_global_op_st.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum
metrics+=,lts__t_sectors_op_write.sum,lts__t_requests_op_write.sum,lts__t_sectors_srcunit_tex_op_write.sum
metrics+=,lts__t_sectors_srcunit_ltcfabric_op_write.sum,dram__bytes_write.sum,gpu__time_duration.sum
ncu --clock-control none --cache-control all --csv --metrics "$metrics" -k regex:'wm_' /tmp/write_merge $mode \
  > "$out/${name}_ncu.csv" 2> "$out/${name}_ncu.err"
echo "ncu rc=$?" | tee -a "$out/${name}_environment.txt"
cat "$out/${name}_environment.txt"
tail -n 3 "$out/${name}_ncu.err"
