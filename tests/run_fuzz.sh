#!/usr/bin/env bash
# Builds the .mht reader fuzzer and the index-expression fuzzer with clang/libFuzzer and runs each for a bounded time:
# the reader on seeds made by the memhier CLI, the expressions on one seed per operator and function.
# usage: run_fuzz.sh SOURCE_DIR BUILD_DIR MEMHIER_CLI SECONDS
set -euo pipefail
src=$1 build=$2 cli=$3 seconds=$4
if ! command -v clang++ >/dev/null; then
  echo "SKIPPED: clang++ not found; the fuzz test needs clang and libclang-rt-dev (scripts/setup.sh installs them)"
  exit 77
fi
cmake -S "$src/fuzz" -B "$build" -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j2 >/dev/null
corpus=$build/corpus
rm -rf "$corpus" && mkdir -p "$corpus"
"$cli" trace gen "$src/traces/examples/coalesced_copy.yaml" --set n=2048 -o "$corpus/copy.mht" >/dev/null
"$cli" trace gen "$src/traces/examples/random_gather.yaml" --set n=256 --set m=4096 -o "$corpus/gather.mht" >/dev/null
"$cli" trace gen "$src/traces/examples/transpose_tiled.yaml" --set n=64 -o "$corpus/transpose.mht" >/dev/null
# A 16 x 16 block's rows: lanes the simulator keeps as runs (BlockTrace::compact_last_runs).
"$cli" trace gen "$src/traces/examples/matmul_naive.yaml" --set n=32 -o "$corpus/matmul.mht" >/dev/null
# Several 64 KiB chunks: next_blocks() decodes them as separate jobs.
"$cli" trace gen "$src/traces/examples/coalesced_copy.yaml" --set 'n=1 << 20' -o "$corpus/copy-chunks.mht" >/dev/null
# Expression seeds: the text, a newline, then the mask and lane values (expr_fuzz.cpp); bytes of a fixed pattern.
exprs=$build/expr-corpus
rm -rf "$exprs" && mkdir -p "$exprs"
i=0
for e in 'a + b - c' 'a * b' 'a / c' 'a % c' '(a << 3) | b' 'a >> (b & 7)' 'a & b ^ c' 'a < b && c >= d' \
         'a <= b || c > d' 'a == b' 'a != b' 'min(a, max(b, c))' 'abs(a) + ceil_div(b, 3)' \
         'urand(abs(a), abs(b), 0, 1000)' 'a > b ? a : b' '-a * !b' '(a * b + c) % (d + 7)'; do
  i=$((i + 1))
  { printf '%s\n' "$e"; head -c 400 /dev/zero | tr '\0' '\045'; } > "$exprs/seed$i"
done
cd "$build"
./mht_fuzz -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 "$corpus" 2>&1 | tail -n 15
./expr_fuzz -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 "$exprs" 2>&1 | tail -n 6
