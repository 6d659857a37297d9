#!/usr/bin/env bash
# Runs local_slots.cu on the GPU machine under ncu (every launch cold: ncu's default cache control), with the SASS of
# its kernel (its local loads and stores) and the environment. Results under $OUT.
set -uo pipefail
out=${OUT:-$PWD/probe-out}
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../gpu/common.sh"
write_environment "$out/local_slots_environment.txt"
nvcc -O2 -arch=sm_90 -I"$here" "$here/local_slots.cu" -o /tmp/local_slots || exit 1
cuobjdump -sass /tmp/local_slots > "$out/local_slots_sass.txt" 2>&1
/tmp/local_slots > "$out/local_slots.json"
echo "local_slots rc=$?" | tee -a "$out/local_slots_environment.txt"
metrics=dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_op_read.sum,lts__t_sectors_op_write.sum
metrics+=,lts__t_sectors_srcunit_tex_op_read.sum,l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum
metrics+=,l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum,l1tex__t_sectors_pipe_lsu_mem_local_op_ld_lookup_hit.sum
metrics+=,launch__registers_per_thread,launch__grid_size,gpu__time_duration.sum
ncu --clock-control none --csv --metrics "$metrics" -k regex:'^local16' /tmp/local_slots \
  > "$out/local_slots_ncu.csv" 2> "$out/local_slots_ncu.err"
echo "ncu rc=$?" | tee -a "$out/local_slots_environment.txt"
cat "$out/local_slots_environment.txt" "$out/local_slots.json"
grep -c 'STL\|LDL' "$out/local_slots_sass.txt"
tail -n 3 "$out/local_slots_ncu.err"
