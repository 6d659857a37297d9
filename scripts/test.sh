#!/usr/bin/env bash
# One command from a fresh clone: install dependencies, build with warnings as errors, run the whole test suite.
# `scripts/test.sh debug` runs it under AddressSanitizer and UBSan instead.
set -euo pipefail
cd "$(dirname "$0")/.."
preset=${1:-release}
bash scripts/setup.sh
cmake --preset "$preset" >/dev/null
cmake --build --preset "$preset" -j "$(nproc)"
ctest --preset "$preset" -j "$(nproc)"
