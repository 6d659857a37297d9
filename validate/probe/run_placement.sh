#!/usr/bin/env bash
# Runs block_placement.cu (which SM runs which block), sm_partition.cu (which SMs share an L2 partition) and
# shared_reads.cu (whether SMs reading the same lines each cost the L2 a lookup; also under ncu) on the GPU machine.
# Results under $OUT: block_placement.json, sm_partition.json, shared_reads.json, shared_reads_ncu.csv,
# placement_environment.txt.
set -uo pipefail
out=${OUT:-$PWD/probe-out}
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../gpu/common.sh"
write_environment "$out/placement_environment.txt"
for probe in block_placement sm_partition shared_reads; do
  nvcc -O2 -arch=sm_90 -I"$here" "$here/$probe.cu" -o "/tmp/$probe" && "/tmp/$probe" > "$out/$probe.json"
  echo "$probe rc=$?" | tee -a "$out/placement_environment.txt"
done
metrics=l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum
metrics+=,lts__t_sectors_op_read.sum,lts__t_sectors_op_read_lookup_hit.sum,lts__t_sectors_srcunit_tex_op_read.sum
metrics+=,lts__t_requests_srcunit_tex_op_read.sum,dram__bytes_read.sum,gpu__time_duration.sum
ncu --clock-control none --cache-control none --csv --metrics "$metrics" /tmp/shared_reads \
  > "$out/shared_reads_ncu.csv" 2> "$out/shared_reads_ncu.err"
echo "shared_reads ncu rc=$?" | tee -a "$out/placement_environment.txt"
cat "$out/placement_environment.txt"
head -c 600 "$out/block_placement.json"; echo
head -c 600 "$out/sm_partition.json"; echo
