#!/usr/bin/env bash
# Runs l1_sweep.cu on the GPU machine under ncu (every launch cold: ncu's default cache control), with the
# environment. Results under $OUT.
set -uo pipefail
out=${OUT:-$PWD/probe-out}
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../gpu/common.sh"
write_environment "$out/l1_sweep_environment.txt"
nvcc -O2 -arch=sm_90 -I"$here" "$here/l1_sweep.cu" -o /tmp/l1_sweep || exit 1
/tmp/l1_sweep > "$out/l1_sweep.json"
echo "l1_sweep rc=$?" | tee -a "$out/l1_sweep_environment.txt"
metrics=l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum
metrics+=,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,lts__t_sectors_srcunit_tex_op_read.sum,launch__grid_size
metrics+=,launch__block_size,launch__shared_mem_config_size,sm__ctas_launched.max,sm__ctas_launched.min
metrics+=,gpu__time_duration.sum
ncu --clock-control none --csv --metrics "$metrics" -k regex:'^l1sweep' /tmp/l1_sweep \
  > "$out/l1_sweep_ncu.csv" 2> "$out/l1_sweep_ncu.err"
echo "ncu rc=$?" | tee -a "$out/l1_sweep_environment.txt"
cat "$out/l1_sweep_environment.txt" "$out/l1_sweep.json"
tail -n 3 "$out/l1_sweep_ncu.err"
