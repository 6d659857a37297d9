#!/usr/bin/env python3
"""Compares the H100's times of streams that write with a persisting set-aside (no window) with memhier's predictions
of the same kernels, each the last of three launches run with --keep-cache, as the probes time them (no flush). The
rates and l2_capacity probes time each launch alone after a synchronize, so those launches are predicted with
--idle-gpu (launch.idle_overhead: the start event fires before the launch reaches the GPU); setaside_ways.cu times the
second launch of a pair, queued behind the first, so its launches are not.

Usage: compare_setaside_time.py MEMHIER [--rates DIR] [--l2cap DIR] [--persisting DIR] [--arch h100]
                                 [--max-error PERCENT]
  --rates DIR: setaside_rates.json (validate/probe/setaside_rates.cu: float4 streams reading 0 to 4 arrays of 64 MiB
               and writing one or none, at 0 to 10 ways set aside), against validate/probe/setaside_rates/rates.yaml;
               the H100's l2.setaside_write_cost (9 and 10 ways) was fitted to its writing streams and to
               --persisting's kernel.
  --l2cap DIR: l2_capacity_wN.json (validate/probe/l2_capacity.cu at N ways set aside: one float a thread), the copy
               and write-only kernels from 40 MiB of footprint on, which the costs were not fitted to.
  --persisting DIR: setaside_ways.json (validate/probe/setaside_ways.cu: out[i] = stream[i] + hot[i % hot_n], one float
               a thread, 64 MiB streamed in and out, a 16 MiB hot buffer, with and without a persisting window on it,
               at 0 to 10 ways set aside), against traces/examples/persisting_l2_window.yaml.
--max-error makes it exit 1 when the mean |time error| over the configurations compared exceeds PERCENT."""
import argparse
import concurrent.futures
import json
import pathlib
import re
import tempfile

import memhier_json
import probe_errors

HERE = pathlib.Path(__file__).resolve().parent


def predicted_us(memhier, arch, description, sets, set_aside, idle):
    cmd = [memhier, "predict", str(description), "--arch", arch, "--keep-cache", "--json", "--threads", "1"]
    if idle:  # a launch timed alone after a synchronize: the GPU takes the launch from idle
        cmd.append("--idle-gpu")
    for s in sets:
        cmd += ["--set", s]
    cmd += ["--set-aside", str(set_aside)]  # 0 too: it replaces a description's own (persisting_l2_window's)
    return memhier_json.run(cmd)[-1]["seconds"] * 1e6


def load(path):
    """The probe's JSON, or an exit naming the file and what is wrong with it."""
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError) as e:
        raise SystemExit(f"compare_setaside_time: {path}: {e}")


def rate_configs(directory):
    probe = load(directory / "setaside_rates.json")
    n = probe["array_bytes"] // 16
    for c in probe["configs"]:
        yield {"probe": "rates", "kernel": c["kernel"], "ways": c["ways"], "set_aside": c["set_aside_bytes"],
               "measured": c["us_median"], "idle": True, "description": HERE / "setaside_rates" / "rates.yaml",
               "sets": [f"n={n}", f"reads={c['reads']}", f"write={1 if c['write'] else 0}",
                        f"blocks={probe['blocks']}"]}


def l2cap_configs(directory):
    for path in sorted(directory.glob("l2_capacity_w*.json"), key=lambda p: int(p.stem.split("_w")[1])):
        probe = load(path)
        for c in probe["configs"]:
            if c["kernel"] == "read" or c["footprint_mib"] < 40:
                continue
            yield {"probe": "l2cap", "kernel": c["kernel"] + f" {c['footprint_mib']} MiB",
                   "ways": probe["set_aside_ways"], "set_aside": probe["set_aside_bytes"], "measured": c["us_median"],
                   "idle": True, "description": HERE / "l2_capacity" / f"{c['kernel']}.yaml", "sets": [f"n={c['n']}"]}


def persisting_configs(directory, scratch):
    """The example's description, three launches (the probe times the second of pairs after a warm-up pair), with its
    window and without (its l2 section dropped: the probe's set-aside alone)."""
    text = (HERE.parent.parent / "traces" / "examples" / "persisting_l2_window.yaml").read_text()
    text = text.replace("launches: 2", "launches: 3")
    descriptions = {True: scratch / "window.yaml", False: scratch / "no_window.yaml"}
    descriptions[True].write_text(text)
    descriptions[False].write_text(re.sub(r"l2:\n(  .*\n)+", "", text))
    probe = load(directory / "setaside_ways.json")
    for c in probe["configs"]:
        if "window" not in c:  # the read-only and write-only streams
            continue
        yield {"probe": "persist", "kernel": "window" if c["window"] else "no window", "ways": c["ways"],
               "set_aside": c["set_aside_granted_bytes"], "measured": c["launch2_us_median"], "idle": False,
               "description": descriptions[c["window"]], "sets": []}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("memhier")
    ap.add_argument("--rates", type=pathlib.Path)
    ap.add_argument("--l2cap", type=pathlib.Path)
    ap.add_argument("--persisting", type=pathlib.Path)
    ap.add_argument("--arch", default="h100")
    ap.add_argument("--max-error", type=float, help="exit 1 if the mean |time error| (percent) exceeds this")
    ap.add_argument("--jobs", type=int, default=2, help="predictions run at once")
    args = ap.parse_args()
    scratch = tempfile.TemporaryDirectory()
    configs = []
    for directory, source in ((args.rates, rate_configs), (args.l2cap, l2cap_configs)):
        if directory is not None:
            configs += list(source(directory))
    if args.persisting is not None:
        configs += list(persisting_configs(args.persisting, pathlib.Path(scratch.name)))
    if not configs:
        raise SystemExit("compare_setaside_time: give --rates, --l2cap or --persisting DIR")
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        preds = list(pool.map(lambda c: predicted_us(args.memhier, args.arch, c["description"], c["sets"],
                                                     c["set_aside"], c["idle"]), configs))
    scratch.cleanup()
    print(f"{'probe':7} {'kernel':16} {'ways':>4} | {'measured us':>11} {'model us':>9} {'error %':>8}")
    errors, by_probe = [], {}
    for c, p in zip(configs, preds):
        error = 100 * (p - c["measured"]) / c["measured"]
        errors.append(abs(error))
        by_probe.setdefault((c["probe"], c["ways"] >= 5), []).append(abs(error))
        print(f"{c['probe']:7} {c['kernel']:16} {c['ways']:4d} | {c['measured']:11.1f} {p:9.1f} {error:+8.1f}")
    for (probe, large), e in sorted(by_probe.items()):
        print(f"{probe}, {'5 or more' if large else 'up to 4'} ways set aside: mean |time error| "
              f"{sum(e) / len(e):.1f}% over {len(e)}, worst {max(e):.1f}%")
    probe_errors.check_mean("compare_setaside_time", errors, args.max_error, "time error", "%", "configurations")


if __name__ == "__main__":
    main()
