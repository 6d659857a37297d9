#!/usr/bin/env bash
# What else l2_ops.cu's kernels do: their warp instructions executed (all, and the global memory ones) and how busy
# their schedulers are, under ncu (l2_ops_inst_ncu.csv, a warm-up and a counted launch a kind), with the kernels' whole
# SASS (l2_ops_sass_full.txt.gz). Each lane computes urand for its address every iteration, which kernel descriptions
# give as `work:` (warp instructions beside the memory ones). Results under $OUT/inst.
set -uo pipefail
out=${OUT:-$PWD/probe-out}/inst
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
nvcc -O2 -arch=sm_90 -I"$here" -I"$here/../../model/include" "$here/l2_ops.cu" -o /tmp/l2_ops || exit 1
cuobjdump -sass /tmp/l2_ops | gzip -9 > "$out/l2_ops_sass_full.txt.gz"
ncu --clock-control none --cache-control none --replay-mode application --csv --metrics \
  gpu__time_duration.sum,smsp__inst_executed.sum,smsp__inst_executed_op_global_ld.sum,smsp__inst_executed_op_global_st.sum,smsp__inst_executed_op_global_red.sum,smsp__inst_executed_op_global_atom.sum,sm__cycles_active.avg,smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__warps_active.avg.per_cycle_active \
  -k regex:'^l2_ops' /tmp/l2_ops 1 > "$out/l2_ops_inst_ncu.csv" 2> "$out/l2_ops_inst_ncu.err"
echo "ncu rc=$? $(date -u +%FT%TZ)"
tail -n 2 "$out/l2_ops_inst_ncu.err"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/environment.txt"
