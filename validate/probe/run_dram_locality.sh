#!/usr/bin/env bash
# Runs a DRAM probe on the GPU machine: dram_locality.cu (the default) or dram_mixed.cu (`run_dram_locality.sh
# dram_mixed`). Timings (NAME.json), then the same program under ncu, one counted launch a configuration after its
# warm-up, for the DRAM bytes and time of each (NAME_ncu.csv). Results under $OUT.
set -uo pipefail
name=${1:-dram_locality}
case $name in
  dram_locality) kernels='^dram_(read|write)' ;;
  dram_mixed) kernels='^mixed_' ;;
  *) echo "run_dram_locality.sh: unknown probe '$name' (dram_locality or dram_mixed)" >&2; exit 2 ;;
esac
out=${OUT:-$PWD/probe-out}
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../gpu/common.sh"
write_environment "$out/${name}_environment.txt"
nvcc -O2 -arch=sm_90 -I"$here" -I"$here/../../model/include" "$here/$name.cu" -o "/tmp/$name" || exit 1
"/tmp/$name" > "$out/$name.json"
echo "$name rc=$?" | tee -a "$out/${name}_environment.txt"
metrics=dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_op_read.sum,lts__t_sectors_op_write.sum
metrics+=,gpu__time_duration.sum
ncu --clock-control none --cache-control none --replay-mode application --csv --metrics "$metrics" \
  -k regex:"$kernels" "/tmp/$name" 1 > "$out/${name}_ncu.csv" 2> "$out/${name}_ncu.err"
echo "ncu rc=$?" | tee -a "$out/${name}_environment.txt"
cat "$out/${name}_environment.txt" "$out/$name.json"
tail -n 3 "$out/${name}_ncu.err"
