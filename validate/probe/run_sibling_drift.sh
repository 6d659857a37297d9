#!/usr/bin/env bash
# Runs sibling_drift.cu on the GPU machine: each block's SM and times (sibling_drift.json), then the same program under
# ncu for the L1 and L2 read sectors of every launch (sibling_drift_ncu.csv). Results under $OUT, and all of them in
# $OUT/../sibling_drift.tar.gz. Analysis: python3 validate/probe/analyze_sibling_drift.py DIR.
set -uo pipefail
out=${OUT:-$PWD/probe-out}
source "$(cd "$(dirname "$0")" && pwd)/../gpu/common.sh"
probe_run sibling_drift "$out" || exit 1
metrics=l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum
metrics+=,lts__t_sectors_op_read.sum,lts__t_sectors_srcunit_tex_op_read.sum,gpu__time_duration.sum
probe_ncu sibling_drift "$out" "$metrics" 'drift_' quiet > /dev/null
tail -n 4 "$out/sibling_drift_environment.txt"
head -c 300 "$out/sibling_drift.json"; echo
grep -c drift_ "$out/sibling_drift_ncu.csv"
