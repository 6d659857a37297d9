#!/usr/bin/env python3
"""What a fill-and-drain term would do to the timing model's error, before it is built into timing.cpp.

The term: a kernel's first loads find nothing in flight, so its warps wait one whole miss latency before any bandwidth
is used (l2_hit x L2 latency + (1 - l2_hit) x DRAM latency, the latency term's own miss latency), and the kernel ends
only once its last stores have reached L2 (one L2 latency); neither overlaps with anything, so it would be added
outside the k-norm, like the launch overhead. No new constant: the H100's latencies (675 cycles DRAM, 285 L2, 1980 MHz).

Inputs: suite reports re-predicted by this tree (`memhier validate --results DIR --out OUT --no-plots --only
'^(?!matmul_(naive|tiled) n=1024)'`, one OUT per run, each holding report.json) and `memhier validate --ncu CSV TRACE
--arch h100 --json` outputs of captured programs. It recomputes each prediction from the report's terms (the k-norm of
timing.cpp's overlap(), k = 3), with and without the term, and prints the time MAPE of each.

With --rederive, launch.overhead and launch.gpu_overhead are taken as re-derived with the term: both were measured on
an empty kernel whose one block stores once (empty_blocks blocks=1), so each already holds one drain, which comes off
every launch (one L2 latency).

usage: what_if_fill_drain.py --reports OUT1 OUT2 ... [--ncu-json A.json B.json ...] [--rederive]
"""
import argparse
import json

CLOCK = 1.98e9
DRAM, L2 = 675, 285


def knorm(t, k=3.0):
    device = max(t["dram"], t["l2"])
    sm = max(t["l1"], t["shared"], t["constant"])
    rest = sum(v**k for n, v in t.items() if n not in ("dram", "l2", "l1", "shared", "constant"))
    return (rest + device**k + sm**k) ** (1 / k)


def fill_seconds(counters):
    reads, writes = counters.get("l2_read_sectors", 0), counters.get("l2_write_sectors", 0)
    hit = counters.get("l2_read_hits", 0) / reads if reads > 0 else 0
    cycles = (hit * L2 + (1 - hit) * DRAM if reads > 0 else 0) + (L2 if writes > 0 else 0)
    return cycles / CLOCK


REDERIVE = False


def suite(report, with_fill):
    errors = []
    for c in json.load(open(report))["cases"]:
        d = c.get("described")
        if not d:
            continue
        counters = {k: v.get("predicted", 0) for k, v in c.get("counters", {}).items()}
        t = d["launch_seconds"] + knorm(d["terms_s"])
        if abs(t - d["predicted_s"]) > 1e-9 * d["predicted_s"]:
            raise SystemExit(f"{report}: {c['case']}: the terms do not give the report's prediction")
        if with_fill:
            t += (fill_seconds(counters) - (L2 / CLOCK if REDERIVE else 0)) * d.get("launches", 1)
        errors.append(100 * (t - c["measured_s"]) / c["measured_s"])
    return errors


def ncu(path, with_fill):
    errors = []
    for l in json.load(open(path))["launches"]:
        counters = {k: v["predicted"] for k, v in l["counters"].items()}
        t = l["predicted_s"] + (fill_seconds(counters) - (L2 / CLOCK if REDERIVE else 0) if with_fill else 0)
        errors.append(100 * (t - l["measured_s"]) / l["measured_s"])
    return errors


def line(name, before, after):
    mape = lambda e: sum(map(abs, e)) / len(e)
    within = lambda e: sum(abs(x) <= 25 for x in e)
    return (f"{name}: MAPE {mape(before):.2f}% -> {mape(after):.2f}%, within 25% {within(before)} -> {within(after)} "
            f"of {len(before)}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reports", nargs="*", default=[])
    ap.add_argument("--ncu-json", nargs="*", default=[])
    ap.add_argument("--rederive", action="store_true")
    a = ap.parse_args()
    global REDERIVE
    REDERIVE = a.rederive
    for r in a.reports:
        print(line(r, suite(f"{r}/report.json", False), suite(f"{r}/report.json", True)))
    for p in a.ncu_json:
        print(line(p, ncu(p, False), ncu(p, True)))


if __name__ == "__main__":
    main()
