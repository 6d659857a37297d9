#!/usr/bin/env bash
# On a GPU machine, in one call (a few minutes): the measurements behind model constants that the suite's own runs do
# not give. Results under $OUT/probe (default ./gpu-out/probe):
#   environment.txt        GPU, driver, CUDA, ncu versions and the date
#   constant_cache*,       validate/probe/run_constant_cache.sh: cycles per divergent constant load by lines, words,
#   suite_constant_ncu.csv stride, reuse and warps an SM, with ncu's constant-cache (idc__) counters (summarize with
#                          validate/probe/analyze_constant.py)
#   ncu_cold_flushed.csv   the cold cases under ncu --cache-control none --replay-mode application, each launch after
#                          the suite's own L2 flush (memhier-suite --once --flush): DRAM and L2 traffic without
#                          ncu's flush and buffer restore in front of the kernel (compare ncu_cold.csv of run_suite.sh)
#   ncu_warm_l1.csv        the warm cases' L1 data-stage and tag-stage wavefronts (application replay; each case runs
#                          twice, the second launch counts)
#   once_*.jsonl           the case order and launch counts of those ncu runs
#   l2_capacity*           validate/probe/run_l2_capacity.sh: how much of a steady read, copy or write footprint
#                          (4-96 MiB) the L2 keeps (compare with validate/probe/compare_l2_capacity.py)
#   block_placement.json,  validate/probe/run_placement.sh: which SM runs which block, which SMs share an L2
#   sm_partition.json,     partition, and how many of the reads two SMs share reach L2 (summarize with
#   shared_reads*          validate/probe/analyze_placement.py)
set -uo pipefail
out=${OUT:-$PWD/gpu-out}/probe
mkdir -p "$out"
cd "$(dirname "$0")/../.."
source validate/gpu/common.sh
bin=/tmp/memhier-suite
write_environment "$out/environment.txt"

OUT="$out" bash validate/probe/run_constant_cache.sh > /dev/null 2>&1
echo "constant_cache rc=$?" | tee -a "$out/environment.txt"

OUT="$out" bash validate/probe/run_l2_capacity.sh > /dev/null 2>&1
echo "l2_capacity rc=$?" | tee -a "$out/environment.txt"

OUT="$out" bash validate/probe/run_placement.sh > /dev/null 2>&1
echo "placement rc=$?" | tee -a "$out/environment.txt"

build_suite "$bin" "$out/build.log" "$out/environment.txt"  # always: a runner left by an older checkout would do

traffic=dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_op_read.sum,lts__t_sectors_op_write.sum
traffic+=,lts__t_sectors_op_red.sum,lts__t_sectors_op_atom.sum,gpu__time_duration.sum
ncu --clock-control none --cache-control none --replay-mode application --csv --metrics "$traffic" \
  -k regex:'^(?!read_all)' "$bin" --once --flush --only cold --out "$out/once_cold_flushed.jsonl" \
  > "$out/ncu_cold_flushed.csv" 2> "$out/ncu_cold_flushed.err"
echo "ncu cold flushed rc=$?" | tee -a "$out/environment.txt"

l1=l1tex__data_pipe_lsu_wavefronts_mem_lgds_cmd_read.sum,l1tex__data_pipe_lsu_wavefronts_mem_lgds_cmd_write.sum
l1+=,l1tex__t_output_wavefronts_pipe_lsu_mem_global_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum
l1+=,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sector_hit_rate.pct,gpu__time_duration.sum
ncu --clock-control none --cache-control none --replay-mode application --csv --metrics "$l1" \
  "$bin" --once --only warm --out "$out/once_warm_l1.jsonl" > "$out/ncu_warm_l1.csv" 2> "$out/ncu_warm_l1.err"
echo "ncu warm l1 rc=$?" | tee -a "$out/environment.txt"

cat "$out/environment.txt"
grep -o '"pattern": "[^"]*"\|"cycles_per_address": [0-9.]*' "$out/constant_cache.json" | paste - - | head -30
tail -n 3 "$out"/ncu_*.err
