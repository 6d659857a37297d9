#!/usr/bin/env bash
# Runs warm_start.cu on the GPU machine: timings (warm_start.json), then the same program under ncu (one timed launch
# a configuration, after its two warm-ups: every third ws_ launch) for the DRAM bytes each start leaves to the kernel
# (warm_start_ncu.csv). Results under $OUT, and all of them in $OUT/../warm_start.tar.gz.
set -uo pipefail
out=${OUT:-$PWD/probe-out}
source "$(cd "$(dirname "$0")" && pwd)/../gpu/common.sh"
probe_run warm_start "$out" || exit 1
probe_ncu warm_start "$out" dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum 'ws_' 1
