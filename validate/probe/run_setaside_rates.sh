#!/usr/bin/env bash
# Runs setaside_rates.cu on the GPU machine: timings (setaside_rates.json), then the same program under ncu, one
# counted launch a configuration after two warm-ups, for the DRAM bytes of the steady state (setaside_rates_ncu.csv).
# Results under $OUT, and all of them in $OUT/../setaside_rates.tar.gz.
set -uo pipefail
out=${OUT:-$PWD/probe-out}
source "$(cd "$(dirname "$0")" && pwd)/../gpu/common.sh"
probe_run setaside_rates "$out" || exit 1
metrics=dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_op_read.sum,lts__t_sectors_op_write.sum
probe_ncu setaside_rates "$out" "$metrics,gpu__time_duration.sum" 'rates_stream' 1
