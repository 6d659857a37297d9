#!/usr/bin/env bash
# Every integer key of the H100's architecture (`archs show h100 --json`) set to extreme values in a file that extends
# it (0, 1, 3, 4096, 2^30 for counts, 2^32 - 1, 2^32, 2^40, 2^62, 2^64 - 1; bytes where the key takes a size), then
# simulate and predict of two small kernels (shared memory, global traffic and an L2 window): each run must give a
# result or an error message with exit 1 or 2, never a signal, a hang or a C++ exception's text. What it guards: 4 GiB
# banks ended in SIGFPE, 4 GiB L1s and constant caches ran the machine out of memory, 1 TiB ones in std::bad_alloc and
# a segmentation fault, 2^62-byte L2 lines in SIGFPE (a set in every slice, 2^64 bytes, wrapped to 0), and so did a
# register allocation unit of 2^30 (times 4 sub-partitions: an int product of 0).
# usage: arch_extremes.sh MEMHIER_CLI EXAMPLES_DIR WORK_DIR
set -euo pipefail
cli=$1 examples=$2 work=$3
rm -rf "$work" && mkdir -p "$work"
keys=$("$cli" archs show h100 --json | python3 -c '
import json, sys
def walk(o, path):
    if isinstance(o, dict):
        for k, v in o.items():
            walk(v, path + [k])
    elif isinstance(o, int) and not isinstance(o, bool) and len(path) == 2:
        print(".".join(path))
walk(json.load(sys.stdin), [])')
bad=0 runs=0
for key in $keys; do
  section=${key%%.*} name=${key#*.}
  for value in 0 1 3 4096 1073741824 4294967295 4294967296 1099511627776 4611686018427387904 18446744073709551615; do
    printf 'extends: h100\nname: extreme\n%s:\n  %s: %s\n' "$section" "$name" "$value" >"$work/x.yaml"
    check=$("$cli" archs check "$work/x.yaml" 2>&1 || true)
    if grep -q "needs one of the units" <<<"$check"; then
      # 2^30 is for counts (an int's largest power of two); as bytes, a 1 GiB constant cache on 132 SMs is 16.5 GiB
      # of state that is allowed, built and slow.
      [ "$value" = 1073741824 ] && continue
      printf 'extends: h100\nname: extreme\n%s:\n  %s: %sB\n' "$section" "$name" "$value" >"$work/x.yaml"
    fi
    for kernel in "transpose_tiled --set n=128" "persisting_l2_window --set n=65536"; do
      for command in simulate predict; do
        runs=$((runs + 1))
        rc=0
        # shellcheck disable=SC2086  # the kernel's --set flags split on purpose
        err=$(timeout 60 "$cli" "$command" "$examples/${kernel%% *}.yaml" ${kernel#* } --arch "$work/x.yaml" \
          2>&1 >/dev/null) || rc=$?
        if [ "$rc" -gt 2 ] || { [ "$rc" -ne 0 ] && [ -z "$err" ]; } ||
          grep -q -E "terminate called|what\(\)|std::|json.exception" <<<"$err"; then
          echo "FAILED: $key: $value, $command ${kernel%% *}: exit $rc: ${err:0:300}"
          bad=$((bad + 1))
        fi
      done
    done
  done
done
echo "$runs runs over $(wc -w <<<"$keys") keys, $bad failed"
[ "$bad" -eq 0 ]
