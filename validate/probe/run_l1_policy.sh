#!/usr/bin/env bash
# Runs l1_policy.cu on the GPU machine under ncu (every launch cold: ncu's default cache control), with the
# environment and the kernel's SASS. Results under $OUT.
set -uo pipefail
out=${OUT:-$PWD/probe-out}
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../gpu/common.sh"
write_environment "$out/l1_policy_environment.txt"
nvcc -O2 -arch=sm_90 -I"$here" "$here/l1_policy.cu" -o /tmp/l1_policy || exit 1
cuobjdump -sass /tmp/l1_policy | grep -E "Function|LDG|BRA" > "$out/l1_policy_sass.txt"
/tmp/l1_policy > "$out/l1_policy.json"
echo "l1_policy rc=$?" | tee -a "$out/l1_policy_environment.txt"
metrics=l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum
metrics+=,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,lts__t_sectors_srcunit_tex_op_read.sum,launch__grid_size
metrics+=,launch__block_size,launch__shared_mem_config_size,sm__ctas_launched.max,sm__ctas_launched.min
metrics+=,gpu__time_duration.sum
ncu --clock-control none --csv --metrics "$metrics" -k regex:'^l1policy' /tmp/l1_policy \
  > "$out/l1_policy_ncu.csv" 2> "$out/l1_policy_ncu.err"
echo "ncu rc=$?" | tee -a "$out/l1_policy_environment.txt"
cat "$out/l1_policy_environment.txt"
tail -n 3 "$out/l1_policy_ncu.err"
