# Sourced by bench/run_host.sh and bench/compare_host.sh: host_environment prints what a speed result depends on
# (date, kernel, CPU, memory, compilers, GPU). It leaves out the commit: the device's copy of .git can be stale, so
# the results' README names the commit that ran.
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
