#!/usr/bin/env bash
# Simulation speed of the example kernels (traces/examples/*.yaml at their default parameters), this tree against an
# older commit on the same host, in one call: builds the memhier CLI of both in Release, writes each example's .mht
# trace once (with this tree's writer; both read it), then simulates each one on one thread (`memhier simulate X.mht
# --arch h100 --json --threads 1`, pinned to one core where taskset is), old and new in turn, ROUNDS rounds (5),
# timing each run's wall clock, and checks that both print the same JSON. A shared host's speed drifts by a third
# between runs seconds apart (the GPU machine's Xeon, session 44), so the fastest run of each is the figure to
# compare, the median a check. Results go under $OUT (or ./examples-out): summary.txt (per example: the warp memory
# instructions, each binary's fastest and median wall time, instructions a second at the fastest, new over old, and
# whether the outputs match), environment.txt, build.log and raw.txt (every run). Carry .deb/ where muparser and
# Boost.Program_options are missing (README, "On the GPU machine").
# Usage: bench/examples_host.sh BASELINE.tar
#   BASELINE.tar: `git archive --format=tar COMMIT -- . ':!validate/results' ':!bench/results'` of the older commit
set -uo pipefail
base_tar=$(realpath "${1:?usage: bench/examples_host.sh BASELINE.tar}")
out=${OUT:-$PWD/examples-out}
mkdir -p "$out"
: > "$out/summary.txt"
cd "$(dirname "$0")/.."

source validate/gpu/deps.sh || exit 1  # muparser and Boost.Program_options from the carried .deb/, where needed
source bench/host_env.sh
build_base_and_new "$base_tar" examples memhier_cli "$out" || exit 1

traces=/tmp/memhier-examples-traces
rm -rf "$traces" && mkdir -p "$traces/base" "$traces/new"
new=/tmp/memhier-examples-new/tools/memhier
base=/tmp/memhier-examples-base/tools/memhier
names=()
for yaml in traces/examples/*.yaml; do
  name=$(basename "$yaml" .yaml)
  if "$new" trace gen "$yaml" -o "$traces/$name.mht" --force >> "$out/build.log" 2>&1; then
    names+=("$name")
  else
    echo "$name: trace gen failed (build.log)" >> "$out/summary.txt"
  fi
done

pin=()
command -v taskset > /dev/null && pin=(taskset -c "$(($(nproc) - 1))")
raw=$out/raw.txt
: > "$raw"
for round in $(seq "${ROUNDS:-5}"); do
  for name in "${names[@]}"; do
    for which in base new; do
      bin=$base
      [ "$which" = new ] && bin=$new
      start=$(date +%s%N)
      "${pin[@]}" "$bin" simulate "$traces/$name.mht" --arch h100 --json --threads 1 > "$traces/$which/$name.json" \
        2>> "$out/build.log"
      rc=$?
      echo "$name $which $round $(( $(date +%s%N) - start )) rc=$rc" >> "$raw"
    done
  done
done

# Per example: warp memory instructions (the requests of every memory space, from the new binary's JSON), each
# binary's fastest and median ms over the rounds, instructions a second at the fastest, new / base (fastest), and
# whether the two JSON outputs are the same.
{
  printf '%-24s %9s %9s %9s %9s %9s %8s %8s %8s %s\n' example instr base_min new_min base_med new_med base_M/s \
    new_M/s new/base same_json
  for name in "${names[@]}"; do
    instr=$(python3 -c "import json,sys; c=json.load(open(sys.argv[1]))[0]['counters']; \
print(sum(v for k, v in c.items() if k.endswith('_requests')))" "$traces/new/$name.json" 2>/dev/null || echo 0)
    same=yes
    cmp -s "$traces/base/$name.json" "$traces/new/$name.json" || same=no
    times() { grep "^$name $1 " "$raw" | awk '{print $4}' | sort -n; }
    b=$(times base | head -1)
    n=$(times new | head -1)
    bm=$(times base | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}')
    nm=$(times new | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}')
    awk -v e="$name" -v i="$instr" -v b="$b" -v n="$n" -v bm="$bm" -v nm="$nm" -v s="$same" 'BEGIN {
      printf "%-24s %9d %9.1f %9.1f %9.1f %9.1f %8.2f %8.2f %8.3f %s\n", e, i, b / 1e6, n / 1e6, bm / 1e6, nm / 1e6,
        i / (b / 1e9) / 1e6, i / (n / 1e9) / 1e6, n / b, s }'
  done
} >> "$out/summary.txt"
cat "$out/summary.txt"
