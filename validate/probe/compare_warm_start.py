#!/usr/bin/env python3
"""Compares validate/probe/warm_start.cu's times and DRAM bytes with memhier's predictions of the same kernels
(validate/probe/warm_start/warm_start.yaml), after each of the probe's three starts:
  warm:  the last of three launches with --keep-cache and --idle-gpu (the probe times each warm launch alone after a
         synchronize: the start event fires before the launch reaches the GPU);
  clean: one launch from an empty L2 (the probe's flush leaves clean lines only: nothing to hit, nothing to write back),
         queued behind the flush (no --idle-gpu);
  dirty: the kernel, prep_write.yaml (64 MiB of another buffer written), the kernel, with --keep-cache, queued behind
         prep_write as the probe's is.
The DRAM bytes and the kernel's own duration (gpu__time_duration, no launch in it) are ncu's (warm_start_ncu.csv:
three profiled launches a configuration, the last the timed one's).

Usage: compare_warm_start.py PROBE_DIR [MEMHIER] [--arch h100] [--max-error PERCENT] [--measured-only]
--max-error makes it exit 1 when the mean |time error| over the configurations exceeds PERCENT; --measured-only prints
the probe's numbers without predicting anything."""
import argparse
import concurrent.futures
import json
import pathlib
import tempfile

import memhier_json
import ncu_csv
import probe_errors

HERE = pathlib.Path(__file__).resolve().parent
KINDS = {"copy_float_one": 0, "copy_float_stride": 1, "copy_float4_one": 2, "write_float_one": 3,
         "read_float_one": 4}
STARTS = ("warm", "clean", "dirty")


def predicted(memhier, arch, scratch, kernel, start):
    """The model's last launch for `kernel` after `start`."""
    kind = KINDS[kernel]
    text = (HERE / "warm_start" / "warm_start.yaml").read_text().replace("  kind: 0", f"  kind: {kind}")
    cmd = [memhier, "predict", "--arch", arch, "--json", "--threads", "1"]
    if start == "warm":
        description = scratch / f"warm_{kind}.yaml"
        description.write_text(text)
        cmd += [str(description), "--keep-cache", "--idle-gpu"]
    elif start == "clean":
        description = scratch / f"clean_{kind}.yaml"
        description.write_text(text.replace("launches: 3", "launches: 1"))
        cmd += [str(description)]
    else:
        description = scratch / f"dirty_{kind}.yaml"
        description.write_text(text.replace("launches: 3", "launches: 1"))
        cmd += [str(description), str(HERE / "warm_start" / "prep_write.yaml"), str(description), "--keep-cache"]
    return memhier_json.run(cmd)[-1]


def load(path):
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError) as e:
        raise SystemExit(f"compare_warm_start: {path}: {e}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("probe_dir", type=pathlib.Path)
    ap.add_argument("memhier", nargs="?", default="build/release/tools/memhier")
    ap.add_argument("--arch", default="h100")
    ap.add_argument("--max-error", type=float, help="exit 1 if the mean |time error| (percent) exceeds this")
    ap.add_argument("--jobs", type=int, default=2, help="predictions run at once")
    ap.add_argument("--measured-only", action="store_true", help="print the probe's numbers, predict nothing")
    args = ap.parse_args()
    configs = load(args.probe_dir / "warm_start.json")["configs"]
    for c in configs:
        if c.get("kernel") not in KINDS or c.get("start") not in STARTS:
            raise SystemExit(f"compare_warm_start: {args.probe_dir / 'warm_start.json'}: unexpected configuration {c}")
    ncu = ncu_csv.launches(args.probe_dir / "warm_start_ncu.csv")
    ids = sorted(ncu)
    if len(ids) != 3 * len(configs):
        raise SystemExit(f"compare_warm_start: {len(ids)} profiled launches for {len(configs)} configurations "
                         "(expected 3 each)")
    if args.measured_only:
        print(f"{'kernel':18} {'start':5} | {'event us':>8} {'ncu us':>6} | {'DRAM read MB':>12} {'DRAM write MB':>13}")
        for i, c in enumerate(configs):
            m = ncu[ids[3 * i + 2]]
            print(f"{c['kernel']:18} {c['start']:5} | {c['us_median']:8.1f} {m['gpu__time_duration.sum'] / 1e3:6.1f} | "
                  f"{m['dram__bytes_read.sum'] / 1e6:12.1f} {m['dram__bytes_write.sum'] / 1e6:13.1f}")
        return
    with tempfile.TemporaryDirectory() as scratch, concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        preds = list(pool.map(lambda c: predicted(args.memhier, args.arch, pathlib.Path(scratch), c["kernel"],
                                                  c["start"]), configs))
    print(f"{'kernel':18} {'start':5} | {'measured us':>11} {'ncu us':>6} {'model us':>8} {'error':>7} | "
          f"{'DRAM read MB':>12} {'model':>6} | {'DRAM write MB':>13} {'model':>6}")
    errors = []
    for i, (c, p) in enumerate(zip(configs, preds)):
        m = ncu[ids[3 * i + 2]]
        model_us = p["seconds"] * 1e6
        error = 100 * (model_us / c["us_median"] - 1)
        errors.append(abs(error))
        print(f"{c['kernel']:18} {c['start']:5} | {c['us_median']:11.1f} {m['gpu__time_duration.sum'] / 1e3:6.1f} "
              f"{model_us:8.1f} {error:+6.1f}% | "
              f"{m['dram__bytes_read.sum'] / 1e6:12.1f} {p['counters']['dram_read_bytes'] / 1e6:6.1f} | "
              f"{m['dram__bytes_write.sum'] / 1e6:13.1f} {p['counters']['dram_write_bytes'] / 1e6:6.1f}")
    for start in STARTS:
        e = [x for c, x in zip(configs, errors) if c["start"] == start]
        print(f"{start}: mean |time error| {sum(e) / len(e):.1f}% over {len(e)}, worst {max(e):.1f}%")
    probe_errors.check_mean("compare_warm_start", errors, args.max_error, "time error", "%", "configurations")


if __name__ == "__main__":
    main()
