#!/usr/bin/env python3
"""Compares validate/probe/spill_waves.cu's counters under ncu (the suite's register_spill kernel at 1 to 16 waves)
with memhier's simulation of the suite's description of it (traces/examples/register_spill.yaml, --set n=...).

Usage: compare_spill_waves.py PROBE_DIR [MEMHIER] [--arch h100] [--max-error PCT]
PROBE_DIR holds spill_waves.json (the launches in order, the warm-up marked) and spill_waves_ncu.csv
(run_spill_waves.sh's output). Per launch: the share of local-load sectors that hit L1
(l1tex__t_sectors_pipe_lsu_mem_local_op_ld_lookup_hit over ..._local_op_ld; memhier l1_sector_hits over
l1_sector_lookups, which count the kernel's few global loads too), and the relative errors of L2 read sectors
(lts__t_sectors_op_read), DRAM bytes read and DRAM bytes written. --max-error: exit 1 if the mean of those three
errors over the launches (in %) is above PCT (the ctest spill_waves_probe)."""
import argparse
import json
import pathlib

import memhier_json
import ncu_csv
import probe_errors

ROOT = pathlib.Path(__file__).resolve().parent.parent.parent
COUNTERS = [("l2_read_sectors", "lts__t_sectors_op_read.sum", "L2 read sectors"),
            ("dram_read_bytes", "dram__bytes_read.sum", "DRAM read"),
            ("dram_write_bytes", "dram__bytes_write.sum", "DRAM write")]
HIT = "l1tex__t_sectors_pipe_lsu_mem_local_op_ld_lookup_hit.sum"
LOOKUPS = "l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("probe_dir", type=pathlib.Path)
    ap.add_argument("memhier", nargs="?", default="build/release/tools/memhier")
    ap.add_argument("--arch", default="h100")
    ap.add_argument("--max-error", type=float, help="exit 1 above this mean error (%%)")
    args = ap.parse_args()
    path = args.probe_dir / "spill_waves.json"
    if not path.is_file():
        raise SystemExit(f"compare_spill_waves: {path}: missing (run_spill_waves.sh writes it)")
    launches = json.loads(path.read_text())["launches"]
    csv = args.probe_dir / "spill_waves_ncu.csv"
    measured = ncu_csv.launches(csv)
    if len(measured) != len(launches):
        raise SystemExit(f"compare_spill_waves: {len(measured)} launches in {csv}, {len(launches)} in {path}")
    ncu_csv.require(csv, measured, [HIT, LOOKUPS] + [m for _, m, _ in COUNTERS])
    description = ROOT / "traces" / "examples" / "register_spill.yaml"
    print(f"{'waves':>6} | {'L1 hits of local loads':^22} | " + " | ".join(f"{name:^24}" for _, _, name in COUNTERS))
    print(f"{'':>6} | {'GPU':>10} {'model':>11} | " + " | ".join(f"{'GPU':>10} {'model':>13}" for _ in COUNTERS))
    errors = []
    for launch, key in zip(launches, sorted(measured)):
        if launch["warm_up"]:
            continue
        m = measured[key]
        c = memhier_json.run([args.memhier, "simulate", description, "--arch", args.arch, "--json", "--threads", "1",
                              "--set", f"n={launch['n']}"])[0]["counters"]
        cells = []
        for name, metric, _ in COUNTERS:
            error = (c[name] - m[metric]) / m[metric] * 100
            errors.append(abs(error))
            cells.append(f"{m[metric]:10.4g} {c[name]:10.4g} {error:+4.0f}%")
        print(f"{launch['waves']:6.2f} | {m[HIT] / m[LOOKUPS]:10.3f} {c['l1_sector_hits'] / c['l1_sector_lookups']:11.3f} | "
              + " | ".join(cells))
    probe_errors.check_mean("compare_spill_waves", errors, args.max_error,
                            "error", "%", "counters (L2 read sectors, DRAM read and write bytes of each launch)")


if __name__ == "__main__":
    main()
