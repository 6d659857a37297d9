#!/usr/bin/env bash
# Writes `memhier simulate --json` of every example description on four architectures (plain, and with an access-policy
# window, a set-aside and --keep-cache), and of every captured .mht under validate/results, into one folder: the
# counters a change to the simulator's speed must leave identical. Compare two snapshots with `diff -r A B`.
# Usage: scripts/sim_snapshot.sh OUT_DIR [path/to/memhier]
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: scripts/sim_snapshot.sh OUT_DIR [path/to/memhier]}
memhier=${2:-build/release/tools/memhier}
if [ -e "$out" ] && [ -n "$(ls -A "$out" 2>/dev/null)" ]; then
  echo "sim_snapshot: $out exists and is not empty; give a new folder" >&2
  exit 2
fi
mkdir -p "$out"
cases=0
for ex in traces/examples/*.yaml; do
  name=$(basename "$ex" .yaml)
  for arch in h100 a100 v100 b200; do
    "$memhier" simulate "$ex" --arch "$arch" --threads 2 --json > "$out/$name.$arch.json"
    cases=$((cases + 1))
  done
  # A window over the first 8 MiB of the heap descriptions allocate from, half its lines persisting.
  "$memhier" simulate "$ex" --arch h100 --threads 2 --json --window 0x7f0000000000,8MiB,0.5 --set-aside 16MiB \
    --keep-cache > "$out/$name.h100-window.json"
  cases=$((cases + 1))
done
while IFS= read -r mht; do
  key=$(echo "$mht" | sed 's|^validate/results/||; s|/|__|g')
  "$memhier" simulate "$mht" --arch h100 --threads 2 --json > "$out/$key.json"
  cases=$((cases + 1))
done < <(find validate/results -name '*.mht' | sort)
echo "sim_snapshot: $cases outputs in $out"
