#!/usr/bin/env python3
"""Compares validate/probe/l2_capacity.cu's measured steady state (ncu, the last of three launches) with memhier's
prediction of the same kernels (validate/probe/l2_capacity/*.yaml, three launches with --keep-cache).

Usage: compare_l2_capacity.py PROBE_DIR [MEMHIER] [--arch h100] [--name NAME] [--max-error POINTS]
PROBE_DIR holds NAME.json and NAME_ncu.csv (NAME l2_capacity: run_l2_capacity.sh's output; l2_capacity_wN: run at N
ways set aside by run_l2_setaside.sh, which the simulations then run with as --set-aside). The error of a configuration
is |measured - predicted| DRAM bytes of the kind its kernel moves (reads for read and copy, writes for copy and write)
in points of its footprint; --max-error makes it exit 1 when their mean exceeds POINTS (the ctest l2_capacity_probe)."""
import argparse
import concurrent.futures
import json
import pathlib

import memhier_json
import ncu_csv
import probe_errors

HERE = pathlib.Path(__file__).resolve().parent


def measured(probe_dir, stem):
    """(kernel, footprint MiB) -> metrics of the configuration's last launch."""
    for name, found in ((f"{stem}_ncu.csv", ncu_csv.exists), (f"{stem}.json", pathlib.Path.is_file)):
        if not found(probe_dir / name):  # the CSV as it is or packed (.csv.zst)
            raise SystemExit(f"compare_l2_capacity: {probe_dir / name}: missing (run_l2_capacity.sh writes it)")
    launches = ncu_csv.launches(probe_dir / f"{stem}_ncu.csv")
    configs = json.loads((probe_dir / f"{stem}.json").read_text())["configs"]
    ids = sorted(launches)
    if len(ids) != 3 * len(configs):
        raise SystemExit(f"{len(ids)} profiled launches for {len(configs)} configurations (expected 3 each)")
    return {(c["kernel"], c["footprint_mib"]): launches[ids[3 * i + 2]] for i, c in enumerate(configs)}


def predicted(memhier, arch, kernel, n, set_aside):
    cmd = [memhier, "simulate", str(HERE / "l2_capacity" / f"{kernel}.yaml"), "--arch", arch, "--keep-cache", "--json",
           "--set", f"n={n}"]
    if set_aside:
        cmd += ["--set-aside", str(set_aside)]
    return memhier_json.run(cmd)[-1]["counters"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("probe_dir", type=pathlib.Path)
    ap.add_argument("memhier", nargs="?", default="build/release/tools/memhier")
    ap.add_argument("--arch", default="h100")
    ap.add_argument("--name", default="l2_capacity", help="the probe files' stem (default l2_capacity)")
    ap.add_argument("--max-error", type=float, help="exit 1 if the mean error (points of footprint) exceeds this")
    ap.add_argument("--jobs", type=int, default=2, help="simulations run at once")
    args = ap.parse_args()
    meas = measured(args.probe_dir, args.name)
    probe = json.loads((args.probe_dir / f"{args.name}.json").read_text())
    configs, set_aside = probe["configs"], probe.get("set_aside_bytes", 0)
    if set_aside:
        print(f"set-aside {set_aside} B ({probe.get('set_aside_ways')} ways), no window")
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        preds = list(pool.map(lambda c: predicted(args.memhier, args.arch, c["kernel"], c["n"], set_aside), configs))
    print(f"{'kernel':6} {'MiB':>4} | {'DRAM read MB':>19} | {'DRAM write MB':>19} | {'L2 read hit %':>15}")
    print(f"{'':6} {'':>4} | {'measured':>9} {'model':>9} | {'measured':>9} {'model':>9} | "
          f"{'measured':>7} {'model':>7}")
    errors = []
    for c, p in zip(configs, preds):
        m = meas[(c["kernel"], c["footprint_mib"])]
        m_hit = 100 * m["lts__t_sectors_op_read_lookup_hit.sum"] / max(m["lts__t_sectors_op_read.sum"], 1)
        p_hit = 100 * p["l2_read_hits"] / max(p["l2_read_sectors"], 1)
        hits = f"{m_hit:7.1f} {p_hit:7.1f}" if c["kernel"] != "write" else f"{'-':>7} {'-':>7}"
        print(f"{c['kernel']:6} {c['footprint_mib']:4d} | {m['dram__bytes_read.sum'] / 1e6:9.2f} "
              f"{p['dram_read_bytes'] / 1e6:9.2f} | {m['dram__bytes_write.sum'] / 1e6:9.2f} "
              f"{p['dram_write_bytes'] / 1e6:9.2f} | {hits}")
        footprint = c["footprint_mib"] * 2**20
        if c["kernel"] != "write":
            errors.append(abs(m["dram__bytes_read.sum"] - p["dram_read_bytes"]) / footprint * 100)
        if c["kernel"] != "read":
            errors.append(abs(m["dram__bytes_write.sum"] - p["dram_write_bytes"]) / footprint * 100)
    probe_errors.check_mean("compare_l2_capacity", errors, args.max_error,
                            "DRAM error", " points of footprint", "comparisons", 2)


if __name__ == "__main__":
    main()
