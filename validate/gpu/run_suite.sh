#!/usr/bin/env bash
# On a GPU machine, in one call: builds the validation suite (kernels/), times every case (median of 20 CUDA-event
# runs, L2 flushed between runs unless the case is about reuse), then runs each case once under ncu for the counters
# memhier predicts. Results go under $OUT/suite (default ./gpu-out/suite):
#   environment.txt  GPU, driver, CUDA, ncu versions and the date
#   timings.jsonl    one record per case (runner output), with the L2 set-aside it ran with (persisting_set_aside_bytes)
#   ncu_cold.csv     the cold cases under ncu --cache-control none --replay-mode application, each launch after the
#                    suite's own L2 flush (memhier-suite --once --flush), as the timed cold runs are. Under ncu's own
#                    flush and kernel replay (--cache-control all) about 2.3 MB more is written to DRAM during each
#                    kernel (validate/results/h100-2026-11-22e/probe/: reduction_shared 2.39 MB against 0.12 MB)
#   ncu_warm.csv     ncu --cache-control none --replay-mode application for the warm cases (each runs twice; the
#                    second launch counts). Kernel replay would restore the buffers the kernel writes between its
#                    passes, which leaves a different L2 state than the warm-up run did.
#   once_*.jsonl     the case order and launch counts of the ncu runs
#   suite_sass.txt.gz  cuobjdump -sass of the suite binary: what nvcc made of each kernel (predicated instructions,
#                    vector widths, unrolling), which the kernel descriptions must match for ncu's instruction counts
# Besides the counters memhier predicts, ncu collects every case's warp instructions (smsp__inst_executed.sum) and how
# busy its schedulers were (smsp__issue_active), against which `validate` checks the descriptions' instruction counts.
set -uo pipefail
out=${OUT:-$PWD/gpu-out}/suite
mkdir -p "$out"
cd "$(dirname "$0")/../.."
source validate/gpu/common.sh
bin=/tmp/memhier-suite
write_environment "$out/environment.txt"
build_suite "$bin" "$out/build.log" "$out/environment.txt"
cuobjdump -sass "$bin" 2>&1 | gzip -9 > "$out/suite_sass.txt.gz"
"$bin" --out "$out/timings.jsonl" ${SUITE_FILTER:+--filter "$SUITE_FILTER"} 2> "$out/timings.log"
echo "timings rc=$?" | tee -a "$out/environment.txt"
metrics=$(python3 - <<'PY'
import re
src = open("model/sim/counters.cpp").read()
names = sorted(set(m for m in re.findall(r'"([a-z0-9_]+__[a-z0-9_.]+)"', src)))
names += ["gpu__time_duration.sum", "sm__cycles_elapsed.avg.per_second", "launch__registers_per_thread",
          "sm__warps_active.avg.per_cycle_active", "lts__t_sector_hit_rate.pct", "l1tex__t_sector_hit_rate.pct",
          "l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum", "lts__t_sectors_srcunit_tex_op_read.sum",
          "dram__sectors_read.sum", "dram__sectors_write.sum", "l1tex__data_pipe_lsu_wavefronts_mem_lgds_cmd_read.sum",
          "l1tex__data_pipe_lsu_wavefronts_mem_lgds_cmd_write.sum", "l1tex__t_output_wavefronts_pipe_lsu_mem_global_op_ld.sum",
          "smsp__inst_executed.sum", "smsp__issue_active.avg.pct_of_peak_sustained_active"]
print(",".join(names))
PY
)
for mode in cold warm; do
  flush=--flush; [ "$mode" = warm ] && flush=
  ncu --clock-control none --cache-control none --replay-mode application --csv --metrics "$metrics" \
    -k regex:'^(?!read_all)' "$bin" --once $flush --only $mode --out "$out/once_$mode.jsonl" \
    ${SUITE_FILTER:+--filter "$SUITE_FILTER"} > "$out/ncu_$mode.csv" 2> "$out/ncu_$mode.err"
  echo "ncu $mode rc=$?" | tee -a "$out/environment.txt"
done
cat "$out/environment.txt"
tail -n 45 "$out/timings.log"
tail -n 3 "$out"/ncu_*.err
