#!/usr/bin/env bash
# On a GPU machine, in one call: builds memhier with its tracer there, captures every suite case (one process per case,
# `memhier-suite --once`, so warm cases hold their warm-up launch too) and the PyTorch script, and writes the captured
# counts next to the description's counts for the same parameters. Results under $OUT/capture (default ./gpu-out):
#   build.log, cases.tsv, traces/NAME.mht (small ones), info/NAME.captured.json, info/NAME.described.json,
#   capture.log (per-case tracer reports), torch/ (the PyTorch capture)
# CAPTURE_FILTER (a Perl regex on case ids) captures a subset; CAPTURE_TORCH=0 skips the PyTorch script.
# Carry .deb/ (muparser, Boost.Program_options; see README "On the GPU machine").
set -uo pipefail
out=${OUT:-$PWD/gpu-out}/capture
mkdir -p "$out/traces" "$out/info" "$out/torch"
cd "$(dirname "$0")/../.."
source validate/gpu/deps.sh || exit 1  # muparser and Boost.Program_options from the carried .deb/, where needed
build=build/gpu
( cmake -S . -B $build -DCMAKE_BUILD_TYPE=Release -DMEMHIER_BUILD_BENCH=OFF -DMEMHIER_BUILD_TESTS=OFF &&
  cmake --build $build -j "$(nproc)" --target memhier_cli memhier_tracer memhier_suite ) > "$out/build.log" 2>&1
echo "build rc=$?"
memhier=$build/tools/memhier
suite=$build/kernels/memhier-suite
"$suite" --list > "$out/cases.tsv"
: > "$out/capture.log"
budget=${CAPTURE_SECONDS:-360}  # stop starting captures after this many seconds; the report says which were skipped
while IFS=$'\t' read -r id regime warm; do
  # CAPTURE_FILTER (a Perl regex on the case id) captures a subset, e.g. the cases an earlier run skipped.
  if [ -n "${CAPTURE_FILTER:-}" ] && ! grep -qP -- "$CAPTURE_FILTER" <<< "$id"; then continue; fi
  if [ "$SECONDS" -gt "$budget" ]; then echo "== $id"$'\n'"skipped: time budget" >> "$out/capture.log"; continue; fi
  name=$(echo "$id" | tr ' <=' '__-' | tr -d '>')
  kernel=${id%% *}
  params=${id#"$kernel"}
  trace=/tmp/traces/$name.mht
  mkdir -p /tmp/traces
  { echo "== $id"; timeout 60 "$memhier" trace capture -o "$trace" --force --kernel '^(?!read_all)' --buffer-mib 8192 \
      -- "$suite" --once --case "$id" --out /dev/null; echo "capture rc=$?"; } >> "$out/capture.log" 2>&1
  "$memhier" trace info --json "$trace" > "$out/info/$name.captured.json" 2>> "$out/capture.log"
  cp "$trace.capture.json" "$out/info/$name.capture_report.json" 2>/dev/null
  sets=()
  for p in $params; do sets+=(--set "$p"); done
  "$memhier" trace gen "traces/examples/$kernel.yaml" -o "/tmp/traces/$name.described.mht" --force "${sets[@]}" >/dev/null 2>> "$out/capture.log" &&
    "$memhier" trace info --json "/tmp/traces/$name.described.mht" > "$out/info/$name.described.json"
  [ "$(stat -c %s "$trace" 2>/dev/null || echo 99999999)" -lt 3000000 ] && cp "$trace" "$out/traces/"
done < "$out/cases.tsv"
echo "suite captures: $(grep -c 'capture rc=0' "$out/capture.log") of $(wc -l < "$out/cases.tsv") rc=0"
if [ "${CAPTURE_TORCH:-1}" = 0 ]; then tail -n 4 "$out/build.log"; grep -E "capture rc=[^0]|DROPPED|error" "$out/capture.log"; exit 0; fi
timeout 120 "$memhier" trace capture -o /tmp/traces/torch_ops.mht --force -- python3 validate/gpu/torch_ops.py \
  > "$out/torch/capture.log" 2>&1
echo "torch capture rc=$?"
"$memhier" trace info --json /tmp/traces/torch_ops.mht > "$out/torch/info.json" 2>> "$out/torch/capture.log"
cp /tmp/traces/torch_ops.mht.capture.json "$out/torch/" 2>/dev/null
[ "$(stat -c %s /tmp/traces/torch_ops.mht 2>/dev/null || echo 99999999)" -lt 3000000 ] && cp /tmp/traces/torch_ops.mht "$out/torch/"
tail -n 4 "$out/build.log"
grep -E "capture rc=[^0]|DROPPED|error" "$out/capture.log" | head -20
tail -n 6 "$out/torch/capture.log"
