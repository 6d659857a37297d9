#!/usr/bin/env bash
# Runs a partly-written-sector probe on the GPU machine under ncu (every launch cold: ncu's default cache control),
# with the environment. Results under $OUT.
#   run_partial_writes.sh                 partial_writes.cu (kernels pw_*: words ordered by barriers)
#   run_partial_writes.sh partial_drift   partial_drift.cu (kernels pd_*: words from free-running warps)
set -uo pipefail
probe=${1:-partial_writes}
case "$probe" in
  partial_writes) kernels='^pw_' ;;
  partial_drift) kernels='^pd_' ;;
  *) echo "run_partial_writes.sh: unknown probe '$probe' (partial_writes or partial_drift)" >&2; exit 2 ;;
esac
out=${OUT:-$PWD/probe-out}
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../gpu/common.sh"
write_environment "$out/${probe}_environment.txt"
nvcc -O2 -arch=sm_90 -I"$here" "$here/$probe.cu" -o "/tmp/$probe" || exit 1
cuobjdump -sass "/tmp/$probe" | grep -E "Function|STG|BAR" > "$out/${probe}_sass.txt"
"/tmp/$probe" > "$out/$probe.json"
echo "$probe rc=$?" | tee -a "$out/${probe}_environment.txt"
metrics=dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_op_read.sum,lts__t_sectors_op_write.sum
metrics+=,lts__t_sectors_op_write_lookup_hit.sum,lts__t_sectors_op_read_lookup_miss.sum
metrics+=,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum,l1tex__t_requests_pipe_lsu_mem_global_op_st.sum
metrics+=,gpu__time_duration.sum
ncu --clock-control none --csv --metrics "$metrics" -k regex:"$kernels" "/tmp/$probe" \
  > "$out/${probe}_ncu.csv" 2> "$out/${probe}_ncu.err"
echo "ncu rc=$?" | tee -a "$out/${probe}_environment.txt"
cat "$out/${probe}_environment.txt" "$out/$probe.json"
tail -n 3 "$out/${probe}_ncu.err"
