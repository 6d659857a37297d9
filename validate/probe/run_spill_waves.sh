#!/usr/bin/env bash
# Runs spill_waves.cu on the GPU machine: the launches' order and times (spill_waves.json), then the same program under
# ncu with cache control off and application replay, for each spill launch's local loads and their L1 hits, L2 read
# and write sectors and hits, DRAM bytes and active warps (spill_waves_ncu.csv), and the kernel's SASS
# (spill_waves_sass.txt). Results under $OUT.
set -uo pipefail
out=${OUT:-$PWD/probe-out}
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../gpu/common.sh"
write_environment "$out/spill_waves_environment.txt"
nvcc -O2 -arch=sm_90 -I"$here" -I"$here/../../kernels" -I"$here/../../model/include" "$here/spill_waves.cu" -o /tmp/spill_waves || exit 1
cuobjdump -sass /tmp/spill_waves | awk '/Function :/ { keep = /register_spill/ } keep' | grep -E 'Function|LDL|STL|LDG|STG' \
  > "$out/spill_waves_sass.txt"
/tmp/spill_waves > "$out/spill_waves.json"
echo "spill_waves rc=$?" | tee -a "$out/spill_waves_environment.txt"
metrics=l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_local_op_ld_lookup_hit.sum
metrics+=,l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum,lts__t_sectors_op_read.sum,lts__t_sectors_op_read_lookup_hit.sum
metrics+=,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum
metrics+=,lts__t_sectors_op_write.sum,lts__t_sectors_op_write_lookup_hit.sum
metrics+=,dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum,sm__warps_active.avg.per_cycle_active
ncu --clock-control none --cache-control none --replay-mode application --csv --metrics "$metrics" \
  -k regex:'spill' /tmp/spill_waves > "$out/spill_waves_ncu.csv" 2> "$out/spill_waves_ncu.err"
echo "ncu rc=$?" | tee -a "$out/spill_waves_environment.txt"
cat "$out/spill_waves_environment.txt" "$out/spill_waves.json"
tail -n 3 "$out/spill_waves_ncu.err"
