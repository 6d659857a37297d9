#!/usr/bin/env bash
# Everything memhier does on the GPU machine, in one call (results under $OUT, or ./gpu-out):
#   1. builds memhier with that machine's toolchain (CMake 4.x, g++ 13) and runs the CPU test suite there;
#   2. runs the device probe (properties, launch overhead) and the driver occupancy probe;
#   3. runs the simulation check kernels under ncu (validate/sim_check/).
# Carry .deb/ (see README, "On the GPU machine"): `apt-get download libmuparser-dev libmuparser2v5 libboost1.74-dev
#   libboost-program-options1.74-dev libboost-program-options1.74.0` into .deb/ here first.
set -uo pipefail
out=${OUT:-$PWD/gpu-out}
mkdir -p "$out"
cd "$(dirname "$0")/../.."

source validate/gpu/deps.sh || exit 1  # muparser and Boost.Program_options from the carried .deb/, where needed

{
  date -u +%Y-%m-%dT%H:%M:%SZ
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem --format=csv
  nvcc --version | tail -2
  cmake --version | head -1
  g++ --version | head -1
} > "$out/environment.txt" 2>&1

( cmake --preset release --fresh && cmake --build --preset release -j "$(nproc)" && ctest --preset release ) \
  > "$out/build_and_test.log" 2>&1
echo "build+test rc=$?" | tee -a "$out/build_and_test.log"

nvcc -O2 -arch=sm_90 validate/probe/device_probe.cu -o /tmp/device_probe && /tmp/device_probe > "$out/device_probe.json"
nvcc -O2 -arch=sm_90 validate/probe/occupancy_probe.cu -o /tmp/occupancy_probe &&
  /tmp/occupancy_probe > "$out/occupancy_probe.json"
echo "probes rc=$?"
# Simulation counters vs ncu on the example kernels (compare on the CPU side with validate/sim_check/compare.py).
OUT=$out bash validate/sim_check/run.sh > "$out/sim_check.log" 2>&1
echo "sim_check rc=$?"
tail -5 "$out/build_and_test.log"
cat "$out/environment.txt"
