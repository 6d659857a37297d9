#!/usr/bin/env python3
"""Compares validate/probe/dram_mixed.cu's measured times (256 MiB read, written, or read and written in the same
kernel, in runs of k 64-byte granules at random places) with memhier's prediction of the same kernels
(validate/probe/dram_mixed/dram_mixed.yaml).

Usage: compare_dram_mixed.py PROBE_DIR [MEMHIER] [--arch h100] [--max-error PERCENT]
PROBE_DIR holds dram_mixed.json (run_dram_mixed.sh's output). The error of a configuration is predicted / measured - 1
of its median time; --max-error makes it exit 1 when the mean |error| exceeds PERCENT (the ctest dram_mixed_probe)."""
import argparse
import concurrent.futures
import json
import pathlib

import memhier_json

HERE = pathlib.Path(__file__).resolve().parent


MODES = {"read": 0, "write": 1, "copy": 2}


def predicted(memhier, arch, pattern, k):
    cmd = [memhier, "predict", str(HERE / "dram_mixed" / "dram_mixed.yaml"), "--arch", arch, "--json",
           "--threads", "1", "--set", f"k={k}", "--set", f"mode={MODES[pattern]}"]
    return memhier_json.run(cmd)[-1]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("probe_dir", type=pathlib.Path)
    ap.add_argument("memhier", nargs="?", default="build/release/tools/memhier")
    ap.add_argument("--arch", default="h100")
    ap.add_argument("--max-error", type=float, help="exit 1 if the mean |error| (percent) exceeds this")
    ap.add_argument("--jobs", type=int, default=2, help="predictions run at once")
    args = ap.parse_args()
    path = args.probe_dir / "dram_mixed.json"
    if not path.is_file():
        raise SystemExit(f"compare_dram_mixed: {path}: missing (run_dram_mixed.sh writes it)")
    probe = json.loads(path.read_text())
    results = probe["results"]
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        preds = list(pool.map(lambda r: predicted(args.memhier, args.arch, r["pattern"], r["run_granules"]), results))
    print(f"{'pattern':7} {'k':>5} | {'measured us':>11} {'model us':>9} {'error':>7} | {'rows opened':>11} "
          f"{'of accesses':>11}")
    errors = []
    for r, p in zip(results, preds):
        c = p["counters"]
        model_us = p["seconds"] * 1e6
        error = 100 * (model_us / r["median_us"] - 1)
        errors.append(abs(error))
        accesses = max(c["dram_row_hits"] + c["dram_row_misses"], 1)
        print(f"{r['pattern']:7} {r['run_granules']:5d} | {r['median_us']:11.1f} "
              f"{model_us:9.1f} {error:+6.1f}% | "
              f"{c['dram_row_misses']:11d} {100 * c['dram_row_misses'] / accesses:10.1f}%")
    mean = sum(errors) / len(errors)
    print(f"mean |time error| {mean:.2f}% over {len(errors)} configurations, worst {max(errors):.1f}%")
    if args.max_error is not None and mean > args.max_error:
        print(f"compare_dram_mixed: mean error {mean:.2f}% exceeds --max-error {args.max_error}")
        raise SystemExit(1)


if __name__ == "__main__":
    main()
