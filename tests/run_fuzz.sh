#!/usr/bin/env bash
# Builds the .mht reader fuzzer with clang/libFuzzer and runs it for a bounded time on seeds made by the memhier CLI.
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
# Several 64 KiB chunks: next_blocks() decodes them as separate jobs.
"$cli" trace gen "$src/traces/examples/coalesced_copy.yaml" --set 'n=1 << 20' -o "$corpus/copy-chunks.mht" >/dev/null
cd "$build"
./mht_fuzz -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 "$corpus" 2>&1 | tail -n 15
