#!/usr/bin/env bash
# Predicts every example description on every shipped architecture (one comparison table per example) and sweeps
# each across all architectures, reporting any failure. Usage: scripts/check_examples.sh [path/to/memhier]
set -uo pipefail
cd "$(dirname "$0")/.."
memhier=${1:-build/release/tools/memhier}
archs=$(ls archs/*.yaml | xargs -n1 basename | sed 's/\.yaml$//' | paste -sd,)
fail=0
err=$(mktemp)
trap 'rm -f "$err"' EXIT
for ex in traces/examples/*.yaml; do
  name=$(basename "$ex" .yaml)
  # stderr apart: it holds each arch's error on record and other notes, not rows
  if ! out=$("$memhier" predict "$ex" --arch "$archs" --threads 2 --csv 2> "$err"); then
    echo "FAIL predict $name: $(cat "$err")"; fail=1; continue
  fi
  rows=$(grep -c . <<< "$out")
  if ! sweep=$("$memhier" sweep "$ex" --arch h100 --vary "arch=$archs" --csv 2> /dev/null); then
    echo "FAIL sweep $name"; fail=1; continue
  fi
  echo "$name: predict $((rows - 1)) rows, sweep $(($(grep -c . <<< "$sweep") - 1)) points"
done
exit $fail
