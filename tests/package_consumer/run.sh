#!/usr/bin/env bash
# Installs the build tree into a temporary prefix, builds the consumer against it, and checks its output.
set -euo pipefail
build_dir=$1 source_dir=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build_dir" --prefix "$work/prefix" >/dev/null
cmake -S "$source_dir" -B "$work/build" -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
cmake --build "$work/build" >/dev/null
out=$("$work/build/consumer")
echo "$out"
[ "$out" = "h100 8 4" ] || { echo "unexpected output: $out" >&2; exit 1; }
# The installed CLI finds the installed architectures by name, relative to its own location.
MEMHIER_ARCH_PATH= "$work/prefix/bin/memhier" archs show h200 --json | grep -q '"source_file": "'"$work"'/prefix/share/memhier/archs/h200.yaml"'
