#!/usr/bin/env bash
# Runs tile_pitch.cu on the GPU machine: the times of a float4 copy, tiles copied in place and transposes at row pitches
# of 4096 and 4128 floats (tile_pitch.json), then each configuration's DRAM bytes and duration under ncu
# (tile_pitch_ncu.csv), with the environment. Results under $OUT, and all of them in $OUT/../tile_pitch.tar.gz.
set -uo pipefail
out=${OUT:-$PWD/probe-out}
source "$(cd "$(dirname "$0")" && pwd)/../gpu/common.sh"
probe_run tile_pitch "$out" || exit 1
probe_ncu tile_pitch "$out" \
  dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum,lts__t_sectors_op_write.sum,lts__t_sectors_op_read.sum \
  '^(copy4|tile|tile_smem|transpose|naive|transpose_shared.*)$' 1
