#!/usr/bin/env bash
# Runs suite_placement.cu on the GPU machine: each block's SM, start and end in four of the suite's multi-wave kernels
# (suite_placement.json, gzipped), with the environment, and its analysis (suite_placement_analysis.txt). Results under
# $OUT, and all of them in $OUT/../suite_placement.tar.gz.
set -uo pipefail
out=${OUT:-$PWD/probe-out}
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../gpu/common.sh"
probe_run suite_placement "$out" || exit 1
gzip -9f "$out/suite_placement.json"
python3 "$here/analyze_suite_placement.py" "$out" | tee "$out/suite_placement_analysis.txt"
tar -czf "$out/../suite_placement.tar.gz" -C "$out" .
