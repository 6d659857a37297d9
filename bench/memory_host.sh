#!/usr/bin/env bash
# Peak memory and wall time of simulations whose blocks run long, this tree against an older commit on the same host,
# in one call: builds `memhier` of both in Release, writes matmul_naive at n=1024 as a .mht trace (this tree's
# writer), then simulates, old and new in turn, matmul_naive n=1024 from its description and from the .mht, and the
# persistent grid-stride copy of bench/results/sim-2026-11-26-session41-persistent_copy.yaml at 2000 and 8000
# iterations, on every core and on one thread, each once (/usr/bin/time: %e s, %M KB), checking that old and new
# print the same JSON. Results under $OUT (or ./memory-out): summary.txt, environment.txt, build.log. Carry .deb/ where
# muparser and Boost.Program_options are missing (README, "On the GPU machine").
# Usage: bench/memory_host.sh BASELINE.tar
#   BASELINE.tar: `git archive --format=tar COMMIT -- . ':!validate/results' ':!bench/results'` of the older commit
set -uo pipefail
base_tar=$(realpath "${1:?usage: bench/memory_host.sh BASELINE.tar}")
out=${OUT:-$PWD/memory-out}
mkdir -p "$out"
cd "$(dirname "$0")/.."

source validate/gpu/deps.sh || exit 1  # muparser and Boost.Program_options from the carried .deb/, where needed

source bench/host_env.sh
build_base_and_new "$base_tar" memory memhier_cli "$out" || exit 1

work=/tmp/memhier-memory-work
mkdir -p $work
/tmp/memhier-memory-new/tools/memhier trace gen traces/examples/matmul_naive.yaml -o $work/matmul1024.mht --set n=1024 \
  --force >> "$out/build.log" 2>&1 || { echo "trace gen failed: $out/build.log" >&2; exit 1; }

# Runs a command; writes its wall seconds and peak resident KB to $work/time.txt (as /usr/bin/time's %e %M, which the
# GPU machine may lack) and exits with its status.
peak() {
  python3 - "$@" <<'PY'
import resource, subprocess, sys, time
start = time.monotonic()
rc = subprocess.call(sys.argv[1:])
with open("/tmp/memhier-memory-work/time.txt", "w") as f:
    f.write(f"{time.monotonic() - start:.2f} {resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}\n")
sys.exit(rc)
PY
}

persistent=bench/results/sim-2026-11-26-session41-persistent_copy.yaml
cases=("traces/examples/matmul_naive.yaml --set n=1024" "$work/matmul1024.mht" "$persistent --set iters=2000"
       "$persistent --set iters=8000")
{
  echo "# case | threads | binary | wall s | peak KB | JSON as base's"
  for threads in "$(nproc)" 1; do
    for c in "${cases[@]}"; do
      for which in base new; do
        # shellcheck disable=SC2086  # a case is a trace and its --set words
        peak /tmp/memhier-memory-$which/tools/memhier simulate $c --arch h100 --json --threads "$threads" \
          > $work/$which.json 2> $work/$which.err
        rc=$?
        same=-
        [ $which = new ] && { cmp -s $work/base.json $work/new.json && same=same || same=DIFFERS; }
        echo "$c | $threads | $which | $(cat $work/time.txt | tr ' ' '|' | sed 's/|/ | /') | $same | rc $rc"
      done
    done
  done
} > "$out/summary.txt"
cat "$out/summary.txt"
