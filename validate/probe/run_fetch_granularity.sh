#!/usr/bin/env bash
# Runs fetch_granularity.cu under ncu on the GPU machine; raw ncu CSV and program output under $OUT.
set -euo pipefail
out=${OUT:-$PWD/probe-out}
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
nvcc -O2 -arch=sm_90 "$here/fetch_granularity.cu" -o /tmp/fetch_granularity
{ date -u +%Y-%m-%dT%H:%M:%SZ; nvidia-smi --query-gpu=name,driver_version --format=csv; ncu --version | tail -1; } \
  > "$out/fg_environment.txt" 2>&1
ncu --clock-control none --kernel-name strided_read --csv \
    --metrics dram__bytes_read.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum \
    /tmp/fetch_granularity > "$out/fetch_granularity_ncu.csv" 2> "$out/fetch_granularity_ncu.err" || true
/tmp/fetch_granularity > "$out/fetch_granularity_program.txt"
cat "$out/fg_environment.txt" "$out/fetch_granularity_program.txt"
grep -E "dram__bytes|lts__t_sectors" "$out/fetch_granularity_ncu.csv" | cut -d, -f1,5,13- | head -30
tail -3 "$out/fetch_granularity_ncu.err"
