#!/usr/bin/env bash
# The SM front's hint (SmFront::prefetch: the next record's L1 lines into the host cache) must survive optimization:
# GCC deleted it silently for a long time, as a call to a "pure" function whose result went unused
# (model/util/host_prefetch.h). In an optimized build (tests/CMakeLists.txt registers it for those only, where the
# prefetches are inlined into it), fails unless its machine code holds a prefetch instruction; skips (77) off x86 or
# without objdump. Usage: tests/check_prefetch.sh path/to/memhier
set -uo pipefail
bin=${1:?usage: check_prefetch.sh path/to/memhier}
case "$(uname -m)" in x86_64 | i?86) ;; *) echo "not x86: skipped"; exit 77 ;; esac
command -v objdump > /dev/null || { echo "no objdump: skipped"; exit 77; }
code=$(objdump -d --no-show-raw-insn -C "$bin" |
  awk '/<memhier::SmFront::prefetch\(memhier::BlockTrace const&, memhier::WarpRecord const&\) const>:$/ {p = 1; next}
       p && /^$/ {exit} p')
if [ -z "$code" ]; then
  echo "SmFront::prefetch not found in $bin (inlined or renamed?)"
  exit 1
fi
n=$(grep -c -E '\s(prefetcht[012]|prefetchnta|prefetchw)\s' <<< "$code")
echo "SmFront::prefetch: $(wc -l <<< "$code") instructions, $n prefetches"
[ "$n" -gt 0 ]
