#!/usr/bin/env python3
"""Compares validate/probe/l2_fill.cu's L2 counts under ncu (one warp lane reading one sector of a line through
ld.global.cg, waiting, then reading another sector of it) with memhier's simulation of the same kernel
(validate/probe/l2_fill/l2_fill.yaml).

Usage: compare_l2_fill.py PROBE_DIR [MEMHIER] [--arch h100] [--check]
PROBE_DIR holds l2_fill.json (the launches in order: pair and delay) and l2_fill_ncu.csv (run_l2_fill.sh's output).
Per line of the probe: L2 read sectors looked up (lts__t_sectors_op_read) and of them hits
(lts__t_sectors_op_read_lookup_hit), measured and simulated. The description's wait is `work`, which the simulator
takes as using the first read's value, so its second read never leaves before the first's L2 latency: delays of 1 to
the L2 latency (250 here) are beyond what a description can say, and at 500 the GPU merges a fifth of the second reads
where the model merges none (its edge is sharp). --check: exit 1 unless every other launch is within 0.05 sectors a
line of the GPU on both counts (the ctest l2_fill_probe)."""
import argparse
import concurrent.futures
import json
import pathlib

import memhier_json
import ncu_csv

HERE = pathlib.Path(__file__).resolve().parent

PAIRS = {"partner": (0, 1), "same": (0, 0), "other": (0, 2)}
UNCHECKED = {250, 500}  # delays the comparison reports but does not check (see above)


def simulated(memhier, arch, pair, delay, blocks):
    first, second = PAIRS[pair]
    cmd = [memhier, "simulate", str(HERE / "l2_fill" / "l2_fill.yaml"), "--arch", arch, "--json", "--threads", "1",
           "--set", f"first={first}", "--set", f"second={second}", "--set", f"delay={delay}",
           "--set", f"blocks={blocks}"]
    return memhier_json.run(cmd)[-1]["counters"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("probe_dir", type=pathlib.Path)
    ap.add_argument("memhier", nargs="?", default="build/release/tools/memhier")
    ap.add_argument("--arch", default="h100")
    ap.add_argument("--check", action="store_true", help="exit 1 if a checked launch is off by 0.05 a line")
    ap.add_argument("--jobs", type=int, default=2, help="simulations run at once")
    args = ap.parse_args()
    path = args.probe_dir / "l2_fill.json"
    if not path.is_file():
        raise SystemExit(f"compare_l2_fill: {path}: missing (run_l2_fill.sh writes it)")
    probe = json.loads(path.read_text())
    launches = probe["launches"]
    measured = ncu_csv.launches(args.probe_dir / "l2_fill_ncu.csv")
    if len(measured) != len(launches):
        raise SystemExit(f"compare_l2_fill: {len(measured)} launches in l2_fill_ncu.csv, {len(launches)} in {path}")
    ncu_csv.require(args.probe_dir / "l2_fill_ncu.csv", measured,
                    ["lts__t_sectors_op_read.sum", "lts__t_sectors_op_read_lookup_hit.sum"])
    measured = [measured[k] for k in sorted(measured)]
    lines = probe["warps"] * probe["lines_per_warp"]
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        sims = list(pool.map(lambda l: simulated(args.memhier, args.arch, l["pair"], l["delay_cycles"],
                                                 probe["blocks"]), launches))
    print(f"{'pair':8} {'delay':>5} | {'read sectors a line':^21} | {'hits a line':^21} | {'merged':>6}")
    print(f"{'':8} {'':>5} | {'GPU':>10} {'model':>10} | {'GPU':>10} {'model':>10} | {'model':>6}")
    worst = 0.0
    for l, m, c in zip(launches, measured, sims):
        gpu_read = m["lts__t_sectors_op_read.sum"] / lines
        gpu_hit = m["lts__t_sectors_op_read_lookup_hit.sum"] / lines
        read, hit = c["l2_read_sectors"] / lines, c["l2_read_hits"] / lines
        checked = l["delay_cycles"] not in UNCHECKED
        if checked:
            worst = max(worst, abs(read - gpu_read), abs(hit - gpu_hit))
        print(f"{l['pair']:8} {l['delay_cycles']:5d} | {gpu_read:10.3f} {read:10.3f} | {gpu_hit:10.3f} {hit:10.3f} | "
              f"{c['l2_merged_sectors'] / lines:6.3f}{'' if checked else '  (not checked)'}")
    print(f"worst difference of the checked launches: {worst:.3f} sectors a line")
    if args.check and worst > 0.05:
        print("compare_l2_fill: a checked launch is off by more than 0.05 sectors a line")
        raise SystemExit(1)


if __name__ == "__main__":
    main()
