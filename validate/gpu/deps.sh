# shellcheck shell=bash
# Sourced by the GPU scripts. The lent GPU machines lack muparser and Boost.Program_options (they have Boost 1.83
# headers only): unpack what validate/gpu/fetch_deps.sh put in .deb/ (Debian 12 packages, and Boost.Program_options
# 1.74 as a subset of its packages, .tar.xz) into a private prefix and point CMake, pkg-config and the loader at it;
# nothing is written under /. Does nothing when .deb/ is absent (the packages are installed).
if ls .deb/*.deb .deb/*.tar.xz >/dev/null 2>&1; then
  prefix=/tmp/memhier-deps
  mkdir -p "$prefix"
  for deb in .deb/*.deb; do [ -e "$deb" ] && dpkg -x "$deb" "$prefix"; done
  for archive in .deb/*.tar.xz; do [ -e "$archive" ] && tar -xJf "$archive" -C "$prefix"; done
  pcdir=$prefix/usr/lib/x86_64-linux-gnu/pkgconfig
  [ -f "$pcdir/muparser.pc" ] && sed -i "s|^prefix=/usr|prefix=$prefix/usr|" "$pcdir/muparser.pc"
  export PKG_CONFIG_PATH=$pcdir${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
  export CMAKE_PREFIX_PATH=$prefix/usr
  export LD_LIBRARY_PATH=$prefix/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  # A Boost subset must give every header memhier reaches: one missing would come from the machine's own Boost, of
  # another version, and build without a word.
  if [ -d "$prefix/usr/include/boost" ]; then
    mixed=$(echo '#include <boost/program_options.hpp>' |
      ${CXX:-g++} -std=c++20 -x c++ -isystem "$prefix/usr/include" -M - 2>&1 | tr ' \\' '\n\n' |
      grep -E '^/usr/(local/)?include/boost/' | head -3)
    if [ -n "$mixed" ]; then
      echo "deps.sh: the Boost subset in .deb/ lacks headers this compiler reads, taken from the system's Boost instead:" \
        $mixed "(make .deb/ again with validate/gpu/fetch_deps.sh --force)" >&2
      return 1 2>/dev/null || exit 1
    fi
  fi
fi
