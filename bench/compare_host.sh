#!/usr/bin/env bash
# Simulation speed of this tree against an older commit on the same host, in one call (timings from two calls may
# come from two different machines): builds memhier_bench_sim of both in Release, then runs the simulation benchmarks
# on 1 thread and on every core, old and new in turn, three times (three repetitions each, every one kept, summed up
# at the end as each binary's fastest and median of nine), and the 1-billion-access copy once each. Each binary writes
# its benchmark traces with its own .mht writer. Then kernel-description generation (memhier_bench_traces'
# BM_Generate*, one thread), old and new in turn, twice: both built with this tree's bench/bench_traces.cpp, so the
# same benchmark times each library (skipped, and said so, where the older library cannot build it). Results,
# environment and logs go under $OUT (or ./compare-out): summary.txt, environment.txt, build.log and raw.tar.gz (every
# run's output). Carry .deb/ where muparser and Boost.Program_options are missing (README, "On the GPU machine").
# Usage: bench/compare_host.sh BASELINE.tar
#   BASELINE.tar: `git archive --format=tar COMMIT -- . ':!validate/results' ':!bench/results'` of the older commit
set -uo pipefail
base_tar=$(realpath "${1:?usage: bench/compare_host.sh BASELINE.tar}")
out=${OUT:-$PWD/compare-out}
mkdir -p "$out"
cd "$(dirname "$0")/.."

source validate/gpu/deps.sh || exit 1  # muparser and Boost.Program_options from the carried .deb/, where needed

raw=$out/raw
mkdir -p "$raw"
source bench/host_env.sh
build_base_and_new "$base_tar" compare memhier_bench_sim "$out" || exit 1
base_src=/tmp/memhier-compare-base-src

cores=$(nproc)
# The traces decoded beforehand in a process of their own, appended to the round's file (after the benchmarks from
# files in one process the decoded gather ran 1.2-1.45x slower: run_host.sh).
filter="^BM_Sim(Streaming|RandomGather|TransposeTiled)/(1|$cores)/|^BM_SimManyLaunches"
decoded="^BM_Sim(StreamingDecoded|RandomGatherDecoded)/(1|$cores)/"
for round in 1 2 3; do
  for which in base new; do
    /tmp/memhier-compare-$which/bench/memhier_bench_sim --benchmark_filter="$filter" --benchmark_repetitions=3 \
      > "$raw/$which-round$round.txt" 2> "$raw/$which-round$round.err"
    echo "rc $?" >> "$raw/$which-round$round.txt"
    /tmp/memhier-compare-$which/bench/memhier_bench_sim --benchmark_filter="$decoded" --benchmark_repetitions=3 \
      >> "$raw/$which-round$round.txt" 2>> "$raw/$which-round$round.err"
    echo "rc $?" >> "$raw/$which-round$round.txt"
  done
done
for which in base new; do
  /tmp/memhier-compare-$which/bench/memhier_bench_sim --benchmark_filter='BM_SimBillion' \
    > "$raw/$which-billion.txt" 2> "$raw/$which-billion.err"
  echo "rc $?" >> "$raw/$which-billion.txt"
done

# Description generation: the same benchmark source for both.
cp bench/bench_traces.cpp $base_src/bench/bench_traces.cpp
generate=yes
for which in base new; do
  if ! cmake --build /tmp/memhier-compare-$which -j "$(nproc)" --target memhier_bench_traces >> "$out/build.log" 2>&1; then
    echo "memhier_bench_traces of $which did not build with this tree's bench_traces.cpp: generation not compared" \
      >> "$out/build.log"
    generate=no
  fi
done
if [ $generate = yes ]; then
  for round in 1 2; do
    for which in base new; do
      /tmp/memhier-compare-$which/bench/memhier_bench_traces --benchmark_filter=BM_Generate --benchmark_min_time=1 \
        > "$raw/$which-generate$round.txt" 2> "$raw/$which-generate$round.err"
      echo "rc $?" >> "$raw/$which-generate$round.txt"
    done
  done
fi

# One line a benchmark: its median on each run, old then new.
{
  for f in "$raw"/base-round1.txt "$raw"/new-round1.txt "$raw"/base-round2.txt "$raw"/new-round2.txt \
           "$raw"/base-round3.txt "$raw"/new-round3.txt "$raw"/base-billion.txt "$raw"/new-billion.txt; do
    echo "== $(basename "$f")"
    grep -E 'median|Billion|^rc' "$f" | sed -E 's/ +/ /g'
  done
  for f in "$raw"/base-generate1.txt "$raw"/new-generate1.txt "$raw"/base-generate2.txt "$raw"/new-generate2.txt; do
    [ -f "$f" ] || continue
    echo "== $(basename "$f")"
    grep -E 'BM_Generate|^rc' "$f" | sed -E 's/ +/ /g'
  done
  # Every repetition of every round (9 a binary, the host's load drifting between them): the fastest and the median
  # wall time, and the median shares of the phases (SimPhaseTimes; a tree older than the set-up share counts it in
  # `other`), base then new.
  echo "== all rounds: ms (fastest, median of 9) and median phase shares"
  for b in $(grep -hoE '^BM_Sim[A-Za-z]+(/[0-9]+)?/real_time ' "$raw"/base-round1.txt | sort -u); do
    for which in base new; do
      cat "$raw"/$which-round[123].txt | grep -E "^${b//\//\\/} " | sed -E 's/ +/ /g' | awk -v w=$which -v b=$b 'BEGIN { n = 0 }
        function num(x,   u) { u = substr(x, length(x)); x += 0  # a counter may carry an SI suffix (8.4m, 5.1M)
          return u == "m" ? x / 1e3 : u == "u" ? x / 1e6 : u == "k" ? x * 1e3 : u == "M" ? x * 1e6 : x }
        { t[n] = $2 * ($3 == "s" ? 1000 : 1); for (i = 4; i <= NF; i++) if (split($i, kv, "=") == 2) s[kv[1], n] = num(kv[2]); n++ }
        function med(a, k,   v, m, i, j, x) { m = 0; for (i = 0; i < n; i++) v[m++] = (k == "" ? a[i] : a[k, i]);
          for (i = 1; i < m; i++) { x = v[i]; for (j = i - 1; j >= 0 && v[j] > x; j--) v[j + 1] = v[j]; v[j + 1] = x }
          return m % 2 ? v[(m - 1) / 2] : (v[m / 2 - 1] + v[m / 2]) / 2 }
        END { if (n == 0) exit; lo = t[0]; for (i = 1; i < n; i++) if (t[i] < lo) lo = t[i];
          printf "%-34s %-4s %8.2f %8.2f  read %.3f sm %.3f l2 %.3f setup %.3f other %.3f\n", b, w, lo, med(t, ""),
            med(s, "read_share"), med(s, "sm_share"), med(s, "l2_share"), med(s, "setup_share"), med(s, "other_share") }'
    done
  done
} > "$out/summary.txt"
tar -czf "$out/raw.tar.gz" -C "$out" raw && rm -rf "$raw"
cat "$out/summary.txt"
