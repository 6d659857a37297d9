# Sourced by bench/run_host.sh, bench/compare_host.sh and bench/memory_host.sh: host_environment prints what a speed
# result depends on (date, kernel, CPU, memory, compilers, GPU). It leaves out the commit: the device's copy of .git
# can be stale, so the results' README names the commit that ran.
host_environment() {
  date -u +%Y-%m-%dT%H:%M:%SZ
  uname -a
  lscpu
  nproc
  free -g
  g++ --version | head -1
  cmake --version | head -1
  nvidia-smi -L 2>/dev/null || true
}

# build_base_and_new BASELINE.tar NAME TARGET OUT: unpacks the older tree's archive into /tmp/memhier-NAME-base-src,
# writes OUT/environment.txt, and builds TARGET in Release of it and of this tree (the current directory) into
# /tmp/memhier-NAME-base and /tmp/memhier-NAME-new, logging to OUT/build.log. Returns non-zero, saying why, on failure.
build_base_and_new() {
  local base_tar=$1 name=$2 target=$3 out=$4
  local base_src=/tmp/memhier-$name-base-src
  rm -rf "$base_src" && mkdir -p "$base_src" && tar -xf "$base_tar" -C "$base_src" ||
    { echo "cannot unpack $base_tar" >&2; return 1; }
  {
    echo "baseline: $(basename "$base_tar")"
    host_environment
  } > "$out/environment.txt" 2>&1
  local which src
  for which in base new; do
    src=$PWD
    [ "$which" = base ] && src=$base_src
    if ! { cmake -S "$src" -B "/tmp/memhier-$name-$which" -DCMAKE_BUILD_TYPE=Release -DMEMHIER_BUILD_TESTS=OFF \
             -DMEMHIER_BUILD_KERNELS=OFF &&
           cmake --build "/tmp/memhier-$name-$which" -j "$(nproc)" --target "$target"; } >> "$out/build.log" 2>&1; then
      echo "build of $which failed: $out/build.log" >&2
      tail -30 "$out/build.log" >&2
      return 1
    fi
  done
}
