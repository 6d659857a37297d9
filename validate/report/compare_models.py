#!/usr/bin/env python3
"""Two models' reports of the same runs side by side: what a model change did, run by run.

Each of OLD and NEW holds one report folder a run (`memhier validate --results validate/results/RUN --out OLD/RUN`,
with the old tree's memhier and then the new one's). For each run in both: the time MAPE from descriptions, the mean
and traffic-weighted errors of L2 read sectors, L2 read hits and DRAM write bytes, old -> new, the n=1024 matrix
multiplies' L2 read sector errors, and every summary error that got worse (mean or weighted, of any counter; the L2
read hit rate's mean points).

Usage: compare_models.py OLD NEW
"""
import json
import sys
from pathlib import Path

COUNTERS = ("l2_read_sectors", "l2_read_hits", "dram_write_bytes")


def counter(report, name):
    c = report["summary"]["counters"].get(name, {})
    return c.get("mean_abs_error_pct", 0.0), c.get("weighted_abs_error_pct", 0.0)


def matmul_1024(report):
    errors = []
    for case in report["cases"]:
        if case["case"].startswith("matmul") and "n=1024" in case["case"]:
            v = case.get("counters", {}).get("l2_read_sectors", {})
            if "error_pct" in v:
                errors.append(f"{v['error_pct']:+.0f}%")
    return "/".join(errors) or "-"


def worse(old, new):
    out = []
    for name, c in new["summary"]["counters"].items():
        before = old["summary"]["counters"].get(name, {})
        for key in ("mean_abs_error_pct", "weighted_abs_error_pct"):
            delta = c.get(key, 0.0) - before.get(key, 0.0)
            if delta > 1e-9:
                out.append(f"{name} {key.split('_')[0]} +{delta:.3f}")
    rate = "mean_abs_error_points"
    delta = (new["summary"].get("hit_rates", {}).get("l2_read_hit_rate", {}).get(rate, 0.0) -
             old["summary"].get("hit_rates", {}).get("l2_read_hit_rate", {}).get(rate, 0.0))
    if delta > 1e-9:
        out.append(f"l2_read_hit_rate points +{delta:.3f}")
    return out


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    old_dir, new_dir = Path(sys.argv[1]), Path(sys.argv[2])
    runs = sorted(p.name for p in new_dir.iterdir() if (p / "report.json").exists() and
                  (old_dir / p.name / "report.json").exists())
    heads = ["run", "time MAPE %"] + [f"{c} mean/weighted %" for c in COUNTERS] + ["matmul n=1024 L2 reads"]
    print(" | ".join(heads))
    regressions = []
    for run in runs:
        old = json.loads((old_dir / run / "report.json").read_text())
        new = json.loads((new_dir / run / "report.json").read_text())
        mape = [r["summary"]["time_from_description"].get("mape_pct", 0.0) for r in (old, new)]
        cells = [run, f"{mape[0]:.2f} -> {mape[1]:.2f}"]
        for c in COUNTERS:
            (a, b), (x, y) = counter(old, c), counter(new, c)
            cells.append(f"{a:.2f}/{b:.2f} -> {x:.2f}/{y:.2f}")
        cells.append(f"{matmul_1024(old)} -> {matmul_1024(new)}")
        print(" | ".join(cells))
        regressions += [f"{run}: {w}" for w in worse(old, new)]
    print("worse:" if regressions else "worse: none")
    for r in regressions:
        print(f"  {r}")


if __name__ == "__main__":
    main()
