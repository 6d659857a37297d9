#!/usr/bin/env bash
# Simulation speed of the example kernels (traces/examples/*.yaml at their default parameters), this tree against an
# older commit on the same host, in one call: builds the memhier CLI of both in Release, writes each example's .mht
# trace once (with this tree's writer; both read it), then simulates each one on one thread (`memhier simulate X.mht
# --arch h100 --json --threads 1`), old and new in turn, three rounds, timing each run's wall clock, and checks that
# both print the same JSON. Results go under $OUT (or ./examples-out): summary.txt (per example: the warp memory
# instructions, each binary's median wall time and instructions a second, new over old, and whether the outputs
# match), environment.txt, build.log and raw.txt (every run). Carry .deb/ where muparser and Boost.Program_options
# are missing (README, "On the GPU machine").
# Usage: bench/examples_host.sh BASELINE.tar
#   BASELINE.tar: `git archive --format=tar COMMIT -- . ':!validate/results' ':!bench/results'` of the older commit
set -uo pipefail
base_tar=$(realpath "${1:?usage: bench/examples_host.sh BASELINE.tar}")
out=${OUT:-$PWD/examples-out}
mkdir -p "$out"
: > "$out/summary.txt"
cd "$(dirname "$0")/.."

source validate/gpu/deps.sh  # muparser and Boost.Program_options from the carried .deb/, where needed
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

raw=$out/raw.txt
: > "$raw"
for round in 1 2 3; do
  for name in "${names[@]}"; do
    for which in base new; do
      bin=$base
      [ "$which" = new ] && bin=$new
      start=$(date +%s%N)
      "$bin" simulate "$traces/$name.mht" --arch h100 --json --threads 1 > "$traces/$which/$name.json" 2>> "$out/build.log"
      rc=$?
      echo "$name $which $round $(( $(date +%s%N) - start )) rc=$rc" >> "$raw"
    done
  done
done

# Per example: warp memory instructions (the requests of every memory space, from the new binary's JSON), median ns
# of each binary over the rounds, instructions a second, new / base, and whether the two JSON outputs are the same.
{
  printf '%-24s %10s %10s %10s %9s %9s %7s %s\n' example instr base_ms new_ms base_M/s new_M/s new/base same_json
  for name in "${names[@]}"; do
    instr=$(python3 -c "import json,sys; c=json.load(open(sys.argv[1]))[0]['counters']; \
print(sum(v for k, v in c.items() if k.endswith('_requests')))" "$traces/new/$name.json" 2>/dev/null || echo 0)
    same=yes
    cmp -s "$traces/base/$name.json" "$traces/new/$name.json" || same=no
    med() { grep "^$name $1 " "$raw" | awk '{print $4}' | sort -n | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
    b=$(med base)
    n=$(med new)
    awk -v e="$name" -v i="$instr" -v b="$b" -v n="$n" -v s="$same" 'BEGIN {
      printf "%-24s %10d %10.1f %10.1f %9.2f %9.2f %7.3f %s\n", e, i, b / 1e6, n / 1e6, i / (b / 1e9) / 1e6,
        i / (n / 1e9) / 1e6, n / b, s }'
  done
} >> "$out/summary.txt"
cat "$out/summary.txt"
