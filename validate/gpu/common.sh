# Sourced by the GPU machine scripts (run from the repository root).

# The GPU, driver, CUDA and ncu versions and the date, into file $1.
write_environment() {
  {
    date -u +%Y-%m-%dT%H:%M:%SZ
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem --format=csv
    nvcc --version | tail -2
    ncu --version | tail -1
  } > "$1" 2>&1
}

# Builds the validation suite's runner (kernels/) as $1, its log in $2; appends "build rc=N" to $3.
build_suite() {
  nvcc -O3 -std=c++17 -arch=sm_90 --expt-relaxed-constexpr -Imodel/include kernels/runner.cpp kernels/suite_util.cpp \
    kernels/flush.cu kernels/cases_memory.cu kernels/cases_compute.cu -o "$1" > "$2" 2>&1
  echo "build rc=$?" | tee -a "$3"
}
