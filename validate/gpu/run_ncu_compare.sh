#!/usr/bin/env bash
# On a GPU machine, in one call: what `memhier validate --ncu` needs for programs that are not the suite, taken as a
# user would take them. Builds memhier with its tracer and the suite runner, then for the PyTorch script
# (validate/gpu/torch_ops.py) and one suite process per case in NCU_CASES: captures it (`memhier trace capture`) and
# profiles it (`ncu --clock-control none --csv --metrics $(memhier validate --ncu-metrics)`, ncu's default cache flush
# before each launch: cold, as memhier predicts by default), then compares the two there. Results under
# $OUT/ncu_compare (default ./gpu-out), packed into $OUT/ncu_compare.tar.gz (the device tool brings back a few files):
#   environment.txt, build.log, NAME.mht (the capture), NAME.mht.capture.json, NAME_ncu.csv and .err, NAME.capture.log,
#   NAME.compare.txt (memhier validate --ncu NAME_ncu.csv NAME.mht --arch ARCH, ARCH from the GPU's name)
# Carry .deb/ (muparser, Boost.Program_options; see README "On the GPU machine").
set -uo pipefail
top=${OUT:-$PWD/gpu-out}
out=$top/ncu_compare
mkdir -p "$out"
cd "$(dirname "$0")/../.." || exit 1
source validate/gpu/common.sh
source validate/gpu/deps.sh || exit 1
write_environment "$out/environment.txt"
build=build/gpu
( cmake -S . -B $build -DCMAKE_BUILD_TYPE=Release -DMEMHIER_BUILD_BENCH=OFF -DMEMHIER_BUILD_TESTS=OFF &&
  cmake --build $build -j "$(nproc)" --target memhier_cli memhier_tracer memhier_suite ) > "$out/build.log" 2>&1
echo "build rc=$?" | tee -a "$out/environment.txt"
memhier=$build/tools/memhier
suite=$build/kernels/memhier-suite
metrics=$("$memhier" validate --ncu-metrics)
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
case $gpu in
  *H200*) arch=h200 ;;
  *H100*) arch=h100 ;;
  *) echo "no arch file is picked here for '$gpu': add its case" | tee -a "$out/environment.txt"; exit 1 ;;
esac
# take NAME CMD...: captures and profiles the program CMD (every launch but the suite's L2 flush, read_all).
take() {
  local name=$1
  shift
  timeout 180 "$memhier" trace capture -o "$out/$name.mht" --force --buffer-mib 8192 --kernel '^(?!read_all)' -- "$@" \
    > "$out/$name.capture.log" 2>&1
  echo "$name capture rc=$? $(date -u +%H:%M:%S)" | tee -a "$out/environment.txt"
  timeout 300 ncu --clock-control none --csv --metrics "$metrics" -k regex:'^(?!read_all)' "$@" \
    > "$out/${name}_ncu.csv" 2> "$out/${name}_ncu.err"
  echo "$name ncu rc=$? $(date -u +%H:%M:%S)" | tee -a "$out/environment.txt"
  "$memhier" validate --ncu "$out/${name}_ncu.csv" "$out/$name.mht" --arch "$arch" > "$out/$name.compare.txt" 2>&1
  echo "$name compare rc=$?" | tee -a "$out/environment.txt"
}
take torch_ops python3 validate/gpu/torch_ops.py
IFS=';' read -r -a cases <<< "${NCU_CASES:-transpose_naive n=4096;stencil_2d n=2048;register_spill n=1<<20}"
for c in "${cases[@]}"; do
  take "$(echo "$c" | tr ' <=' '__-' | tr -d '>')" "$suite" --once --case "$c" --out /dev/null
done
cat "$out/environment.txt"
for f in "$out"/*.compare.txt; do
  echo "== $f"
  head -n 40 "$f"
done
tar czf "$top/ncu_compare.tar.gz" -C "$top" ncu_compare
