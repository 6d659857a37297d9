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

# A probe's timings and its ncu counters, as run_setaside_rates.sh and run_warm_start.sh take them: probe_run NAME OUT
# builds validate/probe/NAME.cu as /tmp/NAME, writes OUT/NAME_environment.txt, runs it into OUT/NAME.json and notes its
# exit status there (1 if it does not build); probe_ncu NAME OUT METRICS KERNELS ARGS... runs /tmp/NAME ARGS under ncu
# (no clock or cache control, application replay) for the launches whose names match the regex KERNELS, into
# OUT/NAME_ncu.csv and .err, then prints the environment and the timings and packs OUT into OUT/../NAME.tar.gz (the
# device tool brings back a few files a call).
probe_run() {
  local name=$1 out=$2 here
  here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../probe" && pwd)
  mkdir -p "$out"
  write_environment "$out/${name}_environment.txt"
  nvcc -O2 -arch=sm_90 -I"$here" -I"$here/../../model/include" "$here/$name.cu" -o "/tmp/$name" || return 1
  "/tmp/$name" > "$out/$name.json"
  echo "$name rc=$? $(date -u +%H:%M:%S)" | tee -a "$out/${name}_environment.txt"
}
probe_ncu() {
  local name=$1 out=$2 metrics=$3 kernels=$4
  shift 4
  ncu --clock-control none --cache-control none --replay-mode application --csv --metrics "$metrics" \
    -k regex:"$kernels" "/tmp/$name" "$@" > "$out/${name}_ncu.csv" 2> "$out/${name}_ncu.err"
  echo "ncu rc=$? $(date -u +%H:%M:%S)" | tee -a "$out/${name}_environment.txt"
  tail -n 2 "$out/${name}_ncu.err"
  cat "$out/${name}_environment.txt" "$out/$name.json"
  tar -czf "$out/../$name.tar.gz" -C "$out" .
}
