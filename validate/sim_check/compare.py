#!/usr/bin/env python3
"""Compares ncu counters from sim_check.cu (ncu_table.py output format) with `memhier simulate` on the same
kernel descriptions. usage: compare.py MEMHIER_CLI NCU_CSV [ARCH]  -> a table on stdout (metric, ncu, memhier, error)."""
import csv
import json
import subprocess
import sys
from pathlib import Path

here = Path(__file__).resolve().parent
root = here.parent.parent
cli, ncu_csv = sys.argv[1], sys.argv[2]
arch = sys.argv[3] if len(sys.argv) > 3 else "h100"

rows = [r for r in csv.reader(open(ncu_csv)) if r]
start = next(i for i, r in enumerate(rows) if r[0] == "ID")
header = rows[start]
launches = {}
for r in rows[start + 1:]:
    if len(r) == len(header):
        d = dict(zip(header, r))
        launches.setdefault(int(d["ID"]), {})[d["Metric Name"]] = float(d["Metric Value"].replace(",", ""))

pairs = [  # (ncu metric, memhier counter or a function of the counters)
    ("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", "global_ld_requests"),
    ("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", "global_ld_sectors"),
    ("l1tex__t_requests_pipe_lsu_mem_global_op_st.sum", "global_st_requests"),
    ("l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum", "global_st_sectors"),
    ("l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum", "l1_sector_hits"),
    ("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", "shared_ld_wavefronts"),
    ("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum", "shared_ld_bank_conflicts"),
    ("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum", "shared_st_wavefronts"),
    ("lts__t_sectors_op_read.sum", "l2_read_sectors"),
    ("lts__t_sectors_op_read_lookup_hit.sum", "l2_read_hits"),
    ("lts__t_sectors_op_write.sum", "l2_write_sectors"),
    ("dram__bytes_read.sum", "dram_read_bytes"),
    ("dram__bytes_write.sum", "dram_write_bytes"),
]

cases = [l.split("|") for l in (here / "cases.txt").read_text().splitlines() if l and not l.startswith("#")]
print(f"{'case':34} {'metric':58} {'ncu':>12} {'memhier':>12} {'error':>8}")
for i, (label, example, params) in enumerate(cases):
    args = [cli, "simulate", str(root / "traces" / "examples" / (example.strip() + ".yaml")), "--arch", arch, "--json"]
    for p in params.split():
        args += ["--set", p]
    sim = json.loads(subprocess.run(args, check=True, capture_output=True, text=True).stdout)[0]["counters"]
    measured = launches.get(i, {})
    for metric, ours in pairs:
        if metric not in measured:
            continue
        n, m = measured[metric], sim[ours]
        if n == 0 and m == 0:
            continue
        err = "exact" if n == m else (f"{100 * (m - n) / n:+.1f}%" if n else "n/a")
        print(f"{label.strip() + ' ' + params.strip():34} {metric:58} {n:12.0f} {m:12d} {err:>8}")
