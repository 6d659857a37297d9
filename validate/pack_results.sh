#!/usr/bin/env bash
# Compresses the ncu CSVs of GPU runs before they are committed: each ncu_*.csv or *_ncu*.csv of 32 KiB or more under
# the folders given (default validate/results) becomes X.csv.zst (zstd -19, checked by unpacking it again before the
# CSV goes). ncu repeats its column names and units on every row, so a CSV packs 30-40x; the device tool sends the
# whole tracked tree to the GPU machine, 64 MiB at most. `memhier validate` and validate/probe/ncu_csv.py read X.csv
# from X.csv.zst where only that exists. sim_check/ folders are left as they are (their scripts read plain CSV).
# An X.csv.zst already there is never replaced: the script stops and names it.
#   bash validate/pack_results.sh [--dry-run] [DIR...]
set -euo pipefail
cd "$(dirname "$0")/.."
dry=0
if [ "${1:-}" = --dry-run ]; then
  dry=1
  shift
fi
dirs=("$@")
((${#dirs[@]})) || dirs=(validate/results)
command -v zstd >/dev/null || { echo "pack_results: the zstd command is missing (bash scripts/setup.sh)" >&2; exit 1; }
for d in "${dirs[@]}"; do
  [ -d "$d" ] || { echo "pack_results: $d: no such folder" >&2; exit 1; }
done
before=0 after=0 n=0
while IFS= read -r -d '' csv; do
  packed="$csv.zst"
  if [ -e "$packed" ]; then
    echo "pack_results: $packed exists beside $csv; compare and remove one by hand" >&2
    exit 1
  fi
  size=$(stat -c %s "$csv")
  if ((dry)); then
    echo "would pack $csv ($size bytes)"
    continue
  fi
  zstd -19 -q -o "$packed" -- "$csv"
  # The packed copy must unpack to the same bytes before the CSV is removed.
  if ! zstd -dcq -- "$packed" | cmp -s - "$csv"; then
    rm -f -- "$packed"
    echo "pack_results: $packed does not unpack to $csv; left $csv as it was" >&2
    exit 1
  fi
  rm -- "$csv"
  before=$((before + size))
  after=$((after + $(stat -c %s "$packed")))
  n=$((n + 1))
done < <(find "${dirs[@]}" -type f \( -name 'ncu_*.csv' -o -name '*_ncu*.csv' \) -size +32k -not -path '*/sim_check/*' \
           -print0 | sort -z)
((dry)) || echo "pack_results: $n CSVs, $before bytes -> $after bytes"
