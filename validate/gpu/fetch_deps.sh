#!/usr/bin/env bash
# Fills .deb/ with what the lent GPU machines lack for memhier's build: muparser and Boost.Program_options (they have
# Boost 1.83's headers without its libraries). Run it here, on a Debian 12 machine with apt (no root needed), then
# carry .deb/ to the GPU machine; validate/gpu/deps.sh unpacks it there into a private prefix.
#
# muparser's two packages go in as they are. Boost is packed as a subset: libboost1.74-dev is 9.5 MB of headers, and
# the device tool takes at most 64 MiB of working tree and carried folders together (tracked files are over 57 MB,
# most of it validate/results). The subset holds Boost.Program_options' libraries and CMake files, and every header
# directory that <boost/program_options.hpp> reaches, whole, so that a header another compiler's configuration picks
# instead is there too (deps.sh checks on the GPU machine that no header comes from its own Boost).
#
# usage: bash validate/gpu/fetch_deps.sh [--force]    (--force: replace an existing .deb/)
set -euo pipefail
cd "$(dirname "$0")/../.."
force=0
case "${1:-}" in
  "") ;;
  --force) force=1 ;;
  *) echo "usage: bash validate/gpu/fetch_deps.sh [--force]" >&2; exit 2 ;;
esac
if [ -e .deb ] && [ "$force" != 1 ]; then
  echo "fetch_deps.sh: .deb/ exists; --force replaces it" >&2
  exit 2
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && apt-get download libmuparser-dev libmuparser2v5 libboost1.74-dev libboost-program-options1.74-dev \
  libboost-program-options1.74.0)
root=$tmp/root
for deb in "$tmp"/libboost*.deb; do dpkg -x "$deb" "$root"; done

# The headers <boost/program_options.hpp> includes, with this project's language level, from the unpacked tree only.
echo '#include <boost/program_options.hpp>' > "$tmp/probe.cpp"
g++ -std=c++20 -I"$root/usr/include" -M "$tmp/probe.cpp" | tr ' \\' '\n\n' | grep "^$root/usr/include/boost/" |
  sed "s|^$root/usr/include/||" | sort -u > "$tmp/used.txt"
[ -s "$tmp/used.txt" ] || { echo "fetch_deps.sh: no Boost header found in the unpacked packages" >&2; exit 1; }
# Each used header's directory whole, and every top-level header.
{
  while read -r h; do
    d=$(dirname "$h")
    if [ "$d" != boost ]; then find "$root/usr/include/$d" -maxdepth 1 -type f; fi
  done < "$tmp/used.txt"
  find "$root/usr/include/boost" -maxdepth 1 -type f
} | sed "s|^$root/||" | sort -u > "$tmp/headers.txt"

lib=usr/lib/x86_64-linux-gnu
{
  cat "$tmp/headers.txt"
  (cd "$root" && ls -d $lib/libboost_program_options.so* $lib/cmake/Boost-1.74.0 $lib/cmake/BoostDetectToolset-1.74.0.cmake \
     $lib/cmake/boost_headers-1.74.0 $lib/cmake/boost_program_options-1.74.0 usr/share/doc/libboost*)
} > "$tmp/files.txt"

rm -rf .deb
mkdir -p .deb
cp "$tmp"/libmuparser*.deb .deb/
tar -cJf .deb/boost-program-options-1.74-subset.tar.xz -C "$root" -T "$tmp/files.txt"
echo "fetch_deps.sh: .deb/ holds $(ls .deb | wc -l) files, $(du -sh .deb | cut -f1) ($(wc -l < "$tmp/headers.txt") Boost headers)"
