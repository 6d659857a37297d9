#!/usr/bin/env bash
# The bundled default report: predicted time of every example kernel in traces/examples on H100 (what binds each one),
# then the full breakdown of one kernel. Usage: main-job.sh [path/to/memhier]
set -euo pipefail
memhier=${1:-memhier}
root=$(cd "$(dirname "$0")/.." && pwd)
threads=$(nproc 2>/dev/null || echo 2)
echo "== Predicted time of the example kernels on H100 (traces/examples, default sizes) =="
"$memhier" predict "$root"/traces/examples/*.yaml --arch h100 --threads "$threads"
echo
echo "== Breakdown: shared-memory transpose with a 32x32 tile (bank conflicts) =="
"$memhier" predict "$root/traces/examples/transpose_tiled.yaml" --arch h100 --threads "$threads"
