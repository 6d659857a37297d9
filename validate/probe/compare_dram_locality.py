#!/usr/bin/env python3
"""Compares the DRAM probes' measured times with memhier's prediction of the same kernels: validate/probe/
dram_locality.cu (256 MiB read or written in runs of k 64-byte granules at random places; description
dram_locality/dram_locality.yaml) and validate/probe/dram_mixed.cu (the same read, written, or read and written in one
kernel; description dram_mixed/dram_mixed.yaml).

Usage: compare_dram_locality.py PROBE_DIR [MEMHIER] [--arch h100] [--max-error PERCENT]
PROBE_DIR holds dram_locality.json (run_dram_locality.sh's output; each configuration's runs fall in the first
buffer_bytes of the buffer) or dram_mixed.json (`run_dram_locality.sh dram_mixed`). The error of a configuration is
predicted / measured - 1 of its median time; --max-error makes it exit 1 when the mean |error| exceeds PERCENT (the
ctests dram_locality_probe and dram_mixed_probe)."""
import argparse
import concurrent.futures
import json
import pathlib

import memhier_json
import probe_errors

HERE = pathlib.Path(__file__).resolve().parent
MIXED_MODES = {"read": 0, "write": 1, "copy": 2}


def settings(probe, r):
    """The description and its --set values for result `r` of `probe` (the JSON file's stem)."""
    if probe == "dram_mixed":
        return HERE / "dram_mixed" / "dram_mixed.yaml", {"k": r["run_granules"], "mode": MIXED_MODES[r["pattern"]]}
    return HERE / "dram_locality" / "dram_locality.yaml", {
        "k": r["run_granules"], "write": 1 if r["pattern"] == "write" else 0, "buffer_mib": r["buffer_bytes"] >> 20}


def predicted(memhier, arch, probe, r):
    description, values = settings(probe, r)
    cmd = [memhier, "predict", description, "--arch", arch, "--json", "--threads", "1"]
    for key, value in values.items():
        cmd += ["--set", f"{key}={value}"]
    return memhier_json.run(cmd)[-1]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("probe_dir", type=pathlib.Path)
    ap.add_argument("memhier", nargs="?", default="build/release/tools/memhier")
    ap.add_argument("--arch", default="h100")
    ap.add_argument("--max-error", type=float, help="exit 1 if the mean |error| (percent) exceeds this")
    ap.add_argument("--jobs", type=int, default=2, help="predictions run at once")
    args = ap.parse_args()
    found = [p for p in ("dram_locality", "dram_mixed") if (args.probe_dir / f"{p}.json").is_file()]
    if len(found) != 1:
        raise SystemExit(f"compare_dram_locality: {args.probe_dir}: expected one of dram_locality.json and "
                         f"dram_mixed.json (run_dram_locality.sh writes them), found {len(found)}")
    probe_name = found[0]
    probe = json.loads((args.probe_dir / f"{probe_name}.json").read_text())
    results = probe["results"]
    for r in results:  # probes before the buffer sweep name one buffer for all
        r.setdefault("buffer_bytes", probe["buffer_bytes"])
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        preds = list(pool.map(lambda r: predicted(args.memhier, args.arch, probe_name, r), results))
    print(f"{'pattern':7} {'k':>5} {'MiB':>5} | {'measured us':>11} {'model us':>9} {'error':>7} | {'rows opened':>11} "
          f"{'of accesses':>11}")
    errors = []
    for r, p in zip(results, preds):
        c = p["counters"]
        model_us = p["seconds"] * 1e6
        error = 100 * (model_us / r["median_us"] - 1)
        errors.append(abs(error))
        accesses = max(c["dram_row_hits"] + c["dram_row_misses"], 1)
        print(f"{r['pattern']:7} {r['run_granules']:5d} {r['buffer_bytes'] >> 20:5d} | {r['median_us']:11.1f} "
              f"{model_us:9.1f} {error:+6.1f}% | "
              f"{c['dram_row_misses']:11d} {100 * c['dram_row_misses'] / accesses:10.1f}%")
    probe_errors.check_mean("compare_dram_locality", errors, args.max_error, "time error", "%", "configurations", 2)


if __name__ == "__main__":
    main()
