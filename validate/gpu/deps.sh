# Sourced by the GPU scripts. The lent GPU machines lack muparser and Boost.Program_options (they have Boost 1.83
# headers only): unpack the Debian 12 packages carried in .deb/ into a private prefix and point CMake, pkg-config and
# the loader at it; nothing is written under /. Does nothing when .deb/ is absent (the packages are installed).
if ls .deb/*.deb >/dev/null 2>&1; then
  prefix=/tmp/memhier-deps
  for deb in .deb/*.deb; do dpkg -x "$deb" "$prefix"; done
  pcdir=$prefix/usr/lib/x86_64-linux-gnu/pkgconfig
  sed -i "s|^prefix=/usr|prefix=$prefix/usr|" "$pcdir/muparser.pc"
  export PKG_CONFIG_PATH=$pcdir${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
  export CMAKE_PREFIX_PATH=$prefix/usr
  export LD_LIBRARY_PATH=$prefix/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi
