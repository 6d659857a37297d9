#!/usr/bin/env bash
# Runs l2_fill.cu on the GPU machine: the launches' order and times (l2_fill.json), then the same program under ncu,
# which flushes the caches before each launch, for each launch's L2 lookups, hits and DRAM bytes (l2_fill_ncu.csv;
# l2_fill_fabric_ncu.csv: the same launches' lookups from the other partition, where ncu has those metrics). Results
# under $OUT.
set -uo pipefail
out=${OUT:-$PWD/probe-out}
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../gpu/common.sh"
write_environment "$out/l2_fill_environment.txt"
nvcc -O2 -arch=sm_90 -I"$here" "$here/l2_fill.cu" -o /tmp/l2_fill || exit 1
/tmp/l2_fill > "$out/l2_fill.json"
echo "l2_fill rc=$?" | tee -a "$out/l2_fill_environment.txt"
metrics=lts__t_sectors_op_read.sum,lts__t_sectors_op_read_lookup_hit.sum,lts__t_sectors_op_read_lookup_miss.sum
metrics+=,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_requests_srcunit_tex_op_read.sum,dram__bytes_read.sum
metrics+=,gpu__time_duration.sum
ncu --clock-control none --cache-control all --csv --metrics "$metrics" -k regex:'^l2fill_' /tmp/l2_fill \
  > "$out/l2_fill_ncu.csv" 2> "$out/l2_fill_ncu.err"
echo "ncu rc=$?" | tee -a "$out/l2_fill_environment.txt"
fabric=lts__t_sectors_srcunit_ltcfabric_op_read.sum,lts__t_sectors_srcunit_ltcfabric_op_read_lookup_hit.sum
fabric+=,lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum
ncu --clock-control none --cache-control all --csv --metrics "$fabric" -k regex:'^l2fill_' /tmp/l2_fill \
  > "$out/l2_fill_fabric_ncu.csv" 2> "$out/l2_fill_fabric_ncu.err"
echo "ncu fabric rc=$?" | tee -a "$out/l2_fill_environment.txt"
cat "$out/l2_fill_environment.txt" "$out/l2_fill.json"
tail -n 3 "$out/l2_fill_ncu.err" "$out/l2_fill_fabric_ncu.err"
