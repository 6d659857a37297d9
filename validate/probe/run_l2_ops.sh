#!/usr/bin/env bash
# Runs l2_ops.cu on the GPU machine: the times of ten kinds of L2 lookup (reads, writes, reductions and atomics) over
# an L2-resident buffer (l2_ops.json), the kernels' memory instructions in SASS (l2_ops_sass.txt), then each kind's L2
# sectors, requests, hits and DRAM bytes under ncu (l2_ops_ncu.csv, a warm-up and a counted launch a kind), with the
# environment. Results under $OUT, and all of them in $OUT/../l2_ops.tar.gz.
set -uo pipefail
out=${OUT:-$PWD/probe-out}
source "$(cd "$(dirname "$0")" && pwd)/../gpu/common.sh"
probe_run l2_ops "$out" || exit 1
cuobjdump -sass /tmp/l2_ops | grep -E "Function|LDG|STG|RED|ATOM" > "$out/l2_ops_sass.txt"
probe_ncu l2_ops "$out" \
  gpu__time_duration.sum,lts__t_sectors_op_read.sum,lts__t_sectors_op_write.sum,lts__t_sectors_op_atom.sum,lts__t_sectors_op_red.sum,lts__t_requests_srcunit_tex_op_read.sum,lts__t_requests_srcunit_tex_op_write.sum,lts__t_requests_srcunit_tex_op_atom.sum,lts__t_requests_srcunit_tex_op_red.sum,lts__t_sectors_op_read_lookup_hit.sum,lts__t_sectors_op_write_lookup_hit.sum,lts__t_sectors_op_atom_lookup_hit.sum,lts__t_sectors_op_red_lookup_hit.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_write.sum,lts__t_sectors_srcunit_tex_op_atom.sum,lts__t_sectors_srcunit_tex_op_red.sum,l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum,l1tex__t_requests_pipe_lsu_mem_global_op_red.sum \
  '^l2_ops' 1
