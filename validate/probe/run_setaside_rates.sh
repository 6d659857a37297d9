#!/usr/bin/env bash
# Runs setaside_rates.cu on the GPU machine: timings (setaside_rates.json), then the same program under ncu, one
# counted launch a configuration after two warm-ups, for the DRAM bytes of the steady state (setaside_rates_ncu.csv).
# Results under $OUT, and all of them in $OUT/../setaside_rates.tar.gz (the device tool brings back a few files a call).
set -uo pipefail
out=${OUT:-$PWD/probe-out}
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../gpu/common.sh"
write_environment "$out/setaside_rates_environment.txt"
nvcc -O2 -arch=sm_90 -I"$here" -I"$here/../../model/include" "$here/setaside_rates.cu" -o /tmp/setaside_rates || exit 1
/tmp/setaside_rates > "$out/setaside_rates.json"
echo "setaside_rates rc=$? $(date -u +%H:%M:%S)" | tee -a "$out/setaside_rates_environment.txt"
metrics=dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_op_read.sum,lts__t_sectors_op_write.sum
metrics+=,gpu__time_duration.sum
ncu --clock-control none --cache-control none --replay-mode application --csv --metrics "$metrics" \
  -k regex:'rates_stream' /tmp/setaside_rates 1 > "$out/setaside_rates_ncu.csv" 2> "$out/setaside_rates_ncu.err"
echo "ncu rc=$? $(date -u +%H:%M:%S)" | tee -a "$out/setaside_rates_environment.txt"
tail -n 2 "$out/setaside_rates_ncu.err"
cat "$out/setaside_rates_environment.txt" "$out/setaside_rates.json"
tar -czf "$out/../setaside_rates.tar.gz" -C "$out" .
