"""Compares the local-memory probe (validate/probe/local_slots.cu under ncu) with memhier's predictions for its
description (validate/probe/local_slots/local16.yaml): DRAM bytes written, L2 write sectors and L1 local-load hits, for
each grid size the probe ran.

Usage: compare_local_slots.py PROBE_DIR [MEMHIER [OTHER_MEMHIER]] [--max-error MB]
  PROBE_DIR      a folder with local_slots_ncu.csv (validate/results/h100-2026-11-24e/probe)
  MEMHIER        the memhier to predict with (default build/release/tools/memhier)
  OTHER_MEMHIER  a second build to set beside it (an older model), optional
  --max-error    exit 1 when MEMHIER's mean |DRAM written error| exceeds MB (the ctest local_slots_probe)"""
import argparse
import pathlib
import sys

import memhier_json
import ncu_csv
import probe_errors

HERE = pathlib.Path(__file__).resolve().parent
DESCRIPTION = HERE / "local_slots" / "local16.yaml"


def predict(memhier, n):
    return memhier_json.run([memhier, "simulate", DESCRIPTION, "--arch", "h100", "--set", f"n={n}", "--json"])[0][
        "counters"]


def main(argv):
    ap = argparse.ArgumentParser(usage=__doc__)
    ap.add_argument("probe")
    ap.add_argument("builds", nargs="*")
    ap.add_argument("--max-error", type=float)
    args = ap.parse_args(argv[1:])
    if len(args.builds) > 2:
        raise SystemExit(__doc__)
    probe = pathlib.Path(args.probe)
    builds = args.builds or ["build/release/tools/memhier"]
    runs = ncu_csv.launches(probe / "local_slots_ncu.csv")
    ncu_csv.require(probe / "local_slots_ncu.csv", runs,
                    ["launch__grid_size", "dram__bytes_write.sum", "lts__t_sectors_op_write.sum",
                     "l1tex__t_sectors_pipe_lsu_mem_local_op_ld_lookup_hit.sum"])
    header = f"{'threads':>9} {'DRAM written MB':>16}"
    header += "".join(f" {'model ' + str(i + 1):>10}" for i in range(len(builds)))
    header += f" {'L2 write sectors':>17} {'model':>11} {'L1 local ld hits':>17} {'model':>11}"
    print(header)
    errors = []
    for launch in sorted(runs):
        m = runs[launch]
        n = int(m["launch__grid_size"]) * 256
        models = [predict(b, n) for b in builds]
        line = f"{n:>9} {m['dram__bytes_write.sum'] / 1e6:>16.1f}"
        line += "".join(f" {c['dram_write_bytes'] / 1e6:>10.1f}" for c in models)
        line += f" {m['lts__t_sectors_op_write.sum']:>17.0f} {models[0]['l2_write_sectors']:>11}"
        hits = m["l1tex__t_sectors_pipe_lsu_mem_local_op_ld_lookup_hit.sum"]
        line += f" {hits:>17.0f} {models[0]['l1_sector_hits']:>11}"
        print(line)
        errors.append(abs(models[0]["dram_write_bytes"] - m["dram__bytes_write.sum"]) / 1e6)
    probe_errors.check_mean("compare_local_slots", errors, args.max_error,
                            "DRAM written error", " MB", "grids (model 1)")


if __name__ == "__main__":
    main(sys.argv)
