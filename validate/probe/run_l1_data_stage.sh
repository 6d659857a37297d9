#!/usr/bin/env bash
# Runs l1_data_stage.cu on the GPU machine: the launches' order and times (l1_data_stage.json), then the same program
# under ncu with cache control off and application replay (each pass reruns the whole program, so every counted launch
# sees the caches its predecessors left), for each ds_ launch's L1 data-stage passes of loads and stores, requests,
# sectors, L1 hits, L2 hits and DRAM bytes (l1_data_stage_ncu.csv), and the kernels' SASS (l1_data_stage_sass.txt).
# Results under $OUT.
set -uo pipefail
out=${OUT:-$PWD/probe-out}
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../gpu/common.sh"
write_environment "$out/l1_data_stage_environment.txt"
nvcc -O2 -arch=sm_90 -I"$here" -I"$here/../../model/include" "$here/l1_data_stage.cu" -o /tmp/l1_data_stage || exit 1
cuobjdump -sass /tmp/l1_data_stage | grep -E 'Function|LDG|STG|CS2R|BRA' > "$out/l1_data_stage_sass.txt"
/tmp/l1_data_stage > "$out/l1_data_stage.json"
echo "l1_data_stage rc=$?" | tee -a "$out/l1_data_stage_environment.txt"
metrics=l1tex__data_pipe_lsu_wavefronts_mem_lgds_cmd_read.sum,l1tex__data_pipe_lsu_wavefronts_mem_lgds_cmd_write.sum
metrics+=,l1tex__t_output_wavefronts_pipe_lsu_mem_global_op_ld.sum
metrics+=,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum
metrics+=,l1tex__t_requests_pipe_lsu_mem_global_op_st.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum
metrics+=,l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum,l1tex__m_xbar2l1tex_read_sectors.sum
metrics+=,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum
metrics+=,dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum
ncu --clock-control none --cache-control none --replay-mode application --csv --metrics "$metrics" \
  -k regex:'^ds_' /tmp/l1_data_stage > "$out/l1_data_stage_ncu.csv" 2> "$out/l1_data_stage_ncu.err"
echo "ncu rc=$?" | tee -a "$out/l1_data_stage_environment.txt"
cat "$out/l1_data_stage_environment.txt"
head -c 1500 "$out/l1_data_stage.json"
tail -n 3 "$out/l1_data_stage_ncu.err"
