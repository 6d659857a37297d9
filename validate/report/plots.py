"""Plots for `memhier validate` (matplotlib): predicted vs measured time on log axes with the 1:1 line, the error per
case, and counters predicted vs measured. Usage: plots.py report.json OUT_DIR"""
import json
import pathlib
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

report = json.loads(pathlib.Path(sys.argv[1]).read_text())
out = pathlib.Path(sys.argv[2])
cases = report["cases"]

fig, ax = plt.subplots(figsize=(6, 6))
for key, marker in (("described", "o"), ("traced", "x")):
    pts = [(c["measured_s"] * 1e6, c[key]["predicted_s"] * 1e6) for c in cases if key in c]
    if pts:
        ax.scatter(*zip(*pts), marker=marker, label=f"from {'description' if key == 'described' else 'trace'}")
lo = min(c["measured_s"] for c in cases) * 1e6 / 2
hi = max(c["measured_s"] for c in cases) * 1e6 * 2
ax.plot([lo, hi], [lo, hi], "k--", linewidth=1, label="1:1")
ax.set(xscale="log", yscale="log", xlabel="measured (us)", ylabel="predicted (us)",
       title=f"{report['gpu']}: predicted vs measured")
ax.legend()
fig.tight_layout()
fig.savefig(out / "time_scatter.svg")

fig, ax = plt.subplots(figsize=(10, 0.25 * len(cases) + 1.5))
names = [c["case"] for c in cases]
for i, key in enumerate(("described", "traced")):
    ys = [j + 0.4 * i for j, c in enumerate(cases) if key in c]
    xs = [c[key]["error_pct"] for c in cases if key in c]
    ax.barh(ys, xs, height=0.4, label=f"from {'description' if key == 'described' else 'trace'}")
ax.set_yticks(range(len(names)), names, fontsize=7)
ax.axvline(0, color="k", linewidth=0.8)
for x in (-25, 25):
    ax.axvline(x, color="r", linewidth=0.5, linestyle=":")
ax.set(xlabel="time error (%)", title="error per case")
ax.legend()
fig.tight_layout()
fig.savefig(out / "time_error.svg")

fig, ax = plt.subplots(figsize=(6, 6))
metrics = sorted({m for c in cases for m in c["counters"]})
for m in metrics:
    pts = [(c["counters"][m]["measured"], c["counters"][m]["predicted"]) for c in cases
           if m in c["counters"] and "not_compared" not in c["counters"][m]
           and c["counters"][m]["measured"] > 0 and c["counters"][m]["predicted"] > 0]
    if pts:
        ax.scatter(*zip(*pts), s=10, label=m)
ax.plot([1, 1e10], [1, 1e10], "k--", linewidth=1)
ax.set(xscale="log", yscale="log", xlabel="ncu", ylabel="memhier", title="counters: predicted vs measured")
ax.legend(fontsize=6)
fig.tight_layout()
fig.savefig(out / "counters.svg")
