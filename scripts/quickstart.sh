#!/usr/bin/env bash
# One command from a fresh clone: install dependencies, build (release preset), run the main job on the bundled default.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cmake --preset release >/dev/null
cmake --build --preset release -j "$(nproc)" >/dev/null
bash scripts/main-job.sh build/release/tools/memhier
