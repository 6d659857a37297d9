#!/usr/bin/env bash
# Runs l2_ops.cu on the GPU machine: the times of six kinds of L2 lookup over an L2-resident buffer (l2_ops.json), then
# each kind's L2 sectors, requests, hits and DRAM bytes under ncu (l2_ops_ncu.csv, a warm-up and a counted launch a
# kind), with the environment. Results under $OUT, and all of them in $OUT/../l2_ops.tar.gz.
set -uo pipefail
out=${OUT:-$PWD/probe-out}
source "$(cd "$(dirname "$0")" && pwd)/../gpu/common.sh"
probe_run l2_ops "$out" || exit 1
probe_ncu l2_ops "$out" \
  gpu__time_duration.sum,lts__t_sectors_op_read.sum,lts__t_sectors_op_write.sum,lts__t_requests_srcunit_tex_op_read.sum,lts__t_requests_srcunit_tex_op_write.sum,lts__t_sectors_op_read_lookup_hit.sum,lts__t_sectors_op_write_lookup_hit.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_write.sum \
  '^l2_ops' 1
