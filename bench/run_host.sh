#!/usr/bin/env bash
# Simulation speed on another host (the GPU machine's CPU: 16 cores where this project's VM has 2), in one call:
# builds the simulation benchmarks and the CLI in Release with that machine's toolchain, runs memhier_bench_sim's
# simulation benchmarks (1, 2, 4, ... threads up to the cores) and memhier_bench_floor (what a lean tag-exact L1 + L2
# alone costs there, for comparison), then checks that a random-gather trace simulated on 1 thread and on every core
# gives byte-identical JSON. Results, environment and logs go under $OUT (or ./host-out): the benchmarks' console
# output (bench_sim.txt, the decoded traces' runs appended, bench_billion.txt, bench_long.txt, bench_floor.txt),
# identical.txt, environment.txt, build.log and raw.tar.gz (JSON output, stderr).
# Carry .deb/ where muparser and Boost.Program_options are missing (README, "On the GPU machine").
set -uo pipefail
out=${OUT:-$PWD/host-out}
mkdir -p "$out/raw"
cd "$(dirname "$0")/.."

source validate/gpu/deps.sh || exit 1  # muparser and Boost.Program_options from the carried .deb/, where needed

build=/tmp/memhier-bench-build
source bench/host_env.sh
host_environment > "$out/environment.txt" 2>&1

if ! { cmake -S . -B $build -DCMAKE_BUILD_TYPE=Release -DMEMHIER_BUILD_TESTS=OFF &&
       cmake --build $build -j "$(nproc)" --target memhier_bench_sim memhier_bench_floor memhier_cli; } \
     > "$out/build.log" 2>&1; then
  echo "build failed: $out/build.log" >&2
  tail -30 "$out/build.log" >&2
  exit 1
fi

# Three repetitions of each, medians and spread reported; the console table and the JSON both kept.
# The benchmarks from .mht files, then those of the traces decoded beforehand in a process of their own: after the
# others in one process the decoded gather ran 1.2-1.45x slower on this project's VM (197-206 ms from its file, then
# 223-265 decoded, against 183-189 ms decoded alone: the heap the earlier benchmarks left, 8.5 thousand more page
# faults; bench/results/sim-2026-12-02-session66.txt).
# The 1-billion-access run and the long-running wave each in a process of its own: their max RSS is the process's
# peak, which earlier benchmarks would otherwise set.
files='^BM_Sim(Streaming|StreamingLong|RandomGather|TransposeTiled)/|^BM_SimManyLaunches'
$build/bench/memhier_bench_sim --benchmark_filter="$files" --benchmark_repetitions=3 \
  --benchmark_report_aggregates_only=true --benchmark_out="$out/raw/bench_sim.json" --benchmark_out_format=json \
  > "$out/bench_sim.txt" 2> "$out/raw/bench_sim.err"
echo "memhier_bench_sim rc $?" >> "$out/bench_sim.txt"
$build/bench/memhier_bench_sim --benchmark_filter='^BM_Sim[A-Za-z]+Decoded/' --benchmark_repetitions=3 \
  --benchmark_report_aggregates_only=true --benchmark_out="$out/raw/bench_sim_decoded.json" \
  --benchmark_out_format=json >> "$out/bench_sim.txt" 2> "$out/raw/bench_sim_decoded.err"
echo "memhier_bench_sim (decoded) rc $?" >> "$out/bench_sim.txt"
$build/bench/memhier_bench_sim --benchmark_filter='BM_SimBillion' --benchmark_out="$out/raw/bench_billion.json" \
  --benchmark_out_format=json > "$out/bench_billion.txt" 2> "$out/raw/bench_billion.err"
echo "memhier_bench_sim rc $?" >> "$out/bench_billion.txt"
$build/bench/memhier_bench_sim --benchmark_filter='BM_SimLongRows' --benchmark_out="$out/raw/bench_long.json" \
  --benchmark_out_format=json > "$out/bench_long.txt" 2> "$out/raw/bench_long.err"
echo "memhier_bench_sim rc $?" >> "$out/bench_long.txt"
# The floor (one thread): a lean L1 + L2 alone on the same traces, and the host memory their lookups reach.
$build/bench/memhier_bench_floor --benchmark_repetitions=3 --benchmark_report_aggregates_only=true \
  --benchmark_out="$out/raw/bench_floor.json" --benchmark_out_format=json \
  > "$out/bench_floor.txt" 2> "$out/raw/bench_floor.err"
echo "memhier_bench_floor rc $?" >> "$out/bench_floor.txt"

# Identical results on one thread and on every core (the unit test checks 1 against 2, 5 and 16 threads).
memhier=$build/tools/memhier
trace=/tmp/memhier-gather.mht
$memhier trace gen traces/examples/random_gather.yaml -o $trace --force --set 'n=1 << 21' --set 'm=1 << 24' \
  > "$out/identical.txt" 2>&1
# The outputs stay in /tmp (the device tool brings back only a few files); identical.txt names their SHA-256.
TIMEFORMAT='%R s'
for t in 1 "$(nproc)"; do
  { time $memhier simulate $trace --arch h100 --json --threads "$t" > "/tmp/gather_threads$t.json"; } \
    2> "/tmp/gather_threads$t.time"
  echo "threads $t: $(cat "/tmp/gather_threads$t.time"), $(sha256sum < "/tmp/gather_threads$t.json")" \
    >> "$out/identical.txt"
done
if cmp -s "/tmp/gather_threads1.json" "/tmp/gather_threads$(nproc).json"; then
  echo "identical: 1 and $(nproc) threads" >> "$out/identical.txt"
else
  echo "DIFFERENT: 1 and $(nproc) threads" >> "$out/identical.txt"
fi
tar -czf "$out/raw.tar.gz" -C "$out" raw && rm -rf "$out/raw"
cat "$out/identical.txt"
grep -E "median|rc" "$out/bench_sim.txt"
grep -E "Billion|rc" "$out/bench_billion.txt"
grep -E "LongRows|rc" "$out/bench_long.txt"
grep -E "median|rc" "$out/bench_floor.txt"
