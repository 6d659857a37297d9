#!/usr/bin/env bash
# Builds the .mht reader fuzzer, the .mht writer + reader + simulator fuzzer, the index-expression fuzzer, the
# Accel-Sim reader + simulator fuzzer, the kernel description fuzzer and the architecture file fuzzer with
# clang/libFuzzer and runs each for a bounded time: the readers on seeds made by the memhier CLI (and, for Accel-Sim,
# one written here with every address mode, line info, generic and bulk accesses), the simulator fuzzer on those
# traces' bytes (it builds traces from any bytes), the expressions on one seed per operator and function, the
# descriptions on the example kernels, the architecture files on the shipped ones.
# usage: run_fuzz.sh SOURCE_DIR BUILD_DIR MEMHIER_CLI SECONDS
set -euo pipefail
src=$1 build=$2 cli=$3 seconds=$4
if ! command -v clang++ >/dev/null; then
  echo "SKIPPED: clang++ not found; the fuzz test needs clang and libclang-rt-dev (scripts/setup.sh installs them)"
  [ "${CI:-}" = true ] && exit 1  # CI's set-up installs them: there, a skip would hide that it failed
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
# Simulator seeds: any bytes make a trace (sim_fuzz.cpp); the traces above are bytes enough to start from.
sims=$build/sim-corpus
rm -rf "$sims" && mkdir -p "$sims"
cp "$corpus"/*.mht "$sims"
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
# Accel-Sim seeds: two exported kernels, and one of every address mode with line info, generic loads, a barrier, an
# LDGSTS, local stores and a bulk copy.
accel=$build/accelsim-corpus
rm -rf "$accel" && mkdir -p "$accel"
for k in "transpose_tiled --set n=32" "random_gather --set n=64 --set m=4096"; do
  name=${k%% *}
  # shellcheck disable=SC2086  # the --set flags split on purpose
  "$cli" trace convert "$src/traces/examples/$name.yaml" "$build/accelsim-$name" ${k#* } >/dev/null
  cp "$build/accelsim-$name/kernel-1.traceg" "$accel/$name.traceg"
  rm -rf "$build/accelsim-$name"
done
cat > "$accel/modes.traceg" <<'TRACE'
-kernel name = k
-grid dim = (2,1,1)
-block dim = (64,1,1)
-shmem base_addr = 0x00007f2c00000000
-local mem base_addr = 0x00007f2c01000000
-accelsim tracer version = 4
-enable lineinfo = 1

#BEGIN_TB
thread block = 1,0,0
warp = 0
insts = 5
7 0010 ffffffff 1 R1 IMAD 2 R1 R2 0
7 0030 0000000f 0 STG.E.64 2 R2 R4 8 0 0x00007f2c20000000 0x00007f2c20000100 0x00007f2c20000008 0x00007f2c20000010
8 0040 00000007 1 R5 LD.E 1 R2 4 2 0x00007f2c00000010 4 -8 0x10
9 0050 ffffffff 0 BAR.SYNC.DEFER_BLOCKING 0 0
9 0060 00000003 0 LDGSTS.E.BYPASS.128 2 R2 R3 16 1 0x00007f2c10000000 16
warp = 1
insts = 2
10 0070 ffffffff 0 STL 2 R2 R4 4 1 0x00007f2c01000000 4
11 0080 00000001 1 R4 UBLKCP 1 R2 16 1 0x00007f2c10000040 0
#END_TB
TRACE
# Description and architecture seeds: copies of the examples and of the shipped archs (libFuzzer adds what it finds
# to the folder it is given).
descs=$build/desc-corpus
rm -rf "$descs" && mkdir -p "$descs"
cp "$src"/traces/examples/*.yaml "$descs"
archs=$build/arch-corpus
rm -rf "$archs" && mkdir -p "$archs"
cp "$src"/archs/*.yaml "$archs"
cd "$build"
# One target for $seconds on its corpus, with a timeout a run: the end of its report, or on a finding (a crash,
# leak, failed check, timeout or allocation past the limit) the last 80 lines, with the input's bytes, and the test
# fails. libFuzzer's own exit codes for findings are 77 and 70; 77 is ctest's "skipped" (SKIP_RETURN_CODE, for a
# machine without clang), so a finding would pass for a skip: both are set to 1.
status=0
run() {
  local target=$1 corpus=$2 timeout=$3 lines=$4 log=$build/$1.log
  if ./"$target" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout="$timeout" -error_exitcode=1 \
    -timeout_exitcode=1 -print_final_stats=1 "$corpus" >"$log" 2>&1; then
    tail -n "$lines" "$log"
  else
    echo "FAILED: $target found an input that fails (its report below; the input is in $build)"
    tail -n 80 "$log"
    status=1
  fi
}
run mht_fuzz "$corpus" 10 15
run sim_fuzz "$sims" 20 6
run expr_fuzz "$exprs" 10 6
run accelsim_fuzz "$accel" 30 6
run desc_fuzz "$descs" 10 6
run arch_fuzz "$archs" 20 6
exit "$status"
