#!/usr/bin/env bash
# The bundled default report: the architecture table and occupancy of typical launch shapes on H100.
set -euo pipefail
memhier=${1:-memhier}
echo "== Architectures =="
"$memhier" archs list
echo
for shape in "256 32 0" "128 64 32KiB" "1024 64 0" "256 128 48KiB" "64 40 0"; do
  read -r threads regs smem <<<"$shape"
  echo "== Occupancy on h100: $threads threads, $regs registers, $smem static shared memory =="
  "$memhier" occupancy --arch h100 --threads "$threads" --regs "$regs" --smem "$smem"
  echo
done
