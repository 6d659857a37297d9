#!/usr/bin/env bash
# Runs on the GPU machine in one call: device facts + launch overhead, written under $OUT (or ./probe-out).
set -euo pipefail
out=${OUT:-$PWD/probe-out}
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
{
  date -u +%Y-%m-%dT%H:%M:%SZ
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem --format=csv
  nvcc --version | tail -2
} > "$out/environment.txt" 2>&1
nvcc -O2 -arch=sm_90 "$here/device_probe.cu" -o /tmp/device_probe
/tmp/device_probe | tee "$out/device_probe.json"
cat "$out/environment.txt"
