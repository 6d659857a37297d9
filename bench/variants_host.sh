#!/usr/bin/env bash
# One-thread simulation speed of several trees on the same host, in one call: builds memhier_bench_sim of each tree
# (up to four builds at once, the cores shared among them), then runs the benchmark streaming, gather and
# transpose_tiled traces on one thread pinned to one core, tree after tree, for four rounds of three repetitions. Where
# bench/compare_host.sh weighs two trees on every benchmark, this separates the commits of a series (which of them
# moved a benchmark) at the cost of the rest. Results under $OUT (or ./variants-out): summary.txt (each tree's twelve
# times a benchmark, ascending), environment.txt, build-TREE.log and raw.tar.gz. Carry .deb/ where muparser and
# Boost.Program_options are missing (README, "On the GPU machine").
# Usage: bench/variants_host.sh TREE.tar...
#   TREE.tar: `git archive --format=tar COMMIT -- . ':!validate/results' ':!bench/results'`; its name (less .tar)
#   names the tree in the results.
set -uo pipefail
[ $# -ge 1 ] || { echo "usage: bench/variants_host.sh TREE.tar..." >&2; exit 2; }
tars=()
for t in "$@"; do
  [ -f "$t" ] || { echo "variants_host: no such archive: $t" >&2; exit 2; }
  tars+=("$(realpath "$t")")
done
out=${OUT:-$PWD/variants-out}
mkdir -p "$out/raw"
cd "$(dirname "$0")/.."

source validate/gpu/deps.sh || exit 1  # muparser and Boost.Program_options from the carried .deb/, where needed
source bench/host_env.sh
host_environment > "$out/environment.txt" 2>&1

jobs=$(( $(nproc) / (${#tars[@]} < 4 ? ${#tars[@]} : 4) ))
[ "$jobs" -ge 1 ] || jobs=1
names=()
running=0
for t in "${tars[@]}"; do
  n=$(basename "$t" .tar)
  names+=("$n")
  (
    rm -rf "/tmp/memhier-variant-$n-src" && mkdir -p "/tmp/memhier-variant-$n-src" &&
      tar -xf "$t" -C "/tmp/memhier-variant-$n-src" &&
      cmake -S "/tmp/memhier-variant-$n-src" -B "/tmp/memhier-variant-$n" -DCMAKE_BUILD_TYPE=Release \
        -DMEMHIER_BUILD_TESTS=OFF -DMEMHIER_BUILD_KERNELS=OFF &&
      cmake --build "/tmp/memhier-variant-$n" -j "$jobs" --target memhier_bench_sim
  ) > "$out/build-$n.log" 2>&1 &
  running=$((running + 1))
  if [ "$running" -ge 4 ]; then
    wait -n
    running=$((running - 1))
  fi
done
wait
failed=0
for n in "${names[@]}"; do
  if [ ! -x "/tmp/memhier-variant-$n/bench/memhier_bench_sim" ]; then
    echo "build of $n failed: $out/build-$n.log" >&2
    tail -20 "$out/build-$n.log" >&2
    failed=1
  fi
done
[ "$failed" -eq 0 ] || exit 1

core=$(( $(nproc) > 2 ? 2 : 0 ))  # one core, away from core 0's interrupts where there are others
for round in 1 2 3 4; do
  for n in "${names[@]}"; do
    taskset -c "$core" "/tmp/memhier-variant-$n/bench/memhier_bench_sim" \
      --benchmark_filter='BM_Sim(Streaming|RandomGather|TransposeTiled)/1/' --benchmark_repetitions=3 \
      > "$out/raw/$n-round$round.txt" 2>&1
    echo "rc $?" >> "$out/raw/$n-round$round.txt"
  done
done
tar -czf "$out/raw.tar.gz" -C "$out" raw && rm -rf "$out/raw"

{
  echo "ms, one thread pinned to core $core, 4 rounds x 3 repetitions, ascending"
  for n in "${names[@]}"; do
    echo "== $n"
    for b in BM_SimStreaming BM_SimRandomGather BM_SimTransposeTiled; do
      printf '%-22s' "$b"
      tar -xzOf "$out/raw.tar.gz" --wildcards "raw/$n-round*.txt" | grep "^$b/1/real_time " | awk '{print $2}' |
        sort -n | tr '\n' ' '
      echo
    done
  done
} | tee "$out/summary.txt"
