"""Plot for `memhier sweep --plot`: predicted time against the first varied key, one line per kernel and combination
of the other keys. Usage: sweep_plot.py SWEEP.json OUT.svg|png"""
import json
import re
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

UNITS = {"": 1, "B": 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "KB": 1e3, "MB": 1e6, "GB": 1e9, "TB/s": 1e12,
         "GB/s": 1e9, "MHz": 1e6, "GHz": 1e9, "us": 1e-6, "ns": 1e-9}


def number(text):
    m = re.fullmatch(r"\s*([0-9.eE+-]+)\s*([A-Za-z/]*)\s*", text)
    if m and m.group(2) in UNITS:
        try:
            return float(m.group(1)) * UNITS[m.group(2)]
        except ValueError:
            pass
    m = re.fullmatch(r"\s*(\d+)\s*<<\s*(\d+)\s*", text)
    return float(int(m.group(1)) << int(m.group(2))) if m else None


data = json.load(open(sys.argv[1]))
x_key, others = data["vary"][0], data["vary"][1:]
several = any(p.get("launch_index", 0) > 0 for p in data["points"])  # a trace of several launches: a line each
lines = defaultdict(list)
for p in data["points"]:
    name = f"{p['kernel']} #{p['launch_index']}" if several else p["kernel"]
    label = " ".join([name] + [f"{k}={p[k]}" for k in others])
    lines[label].append((p[x_key], p["seconds"] * 1e6))
numeric = all(number(x) is not None for pts in lines.values() for x, _ in pts)
fig, ax = plt.subplots(figsize=(7, 4.5))
for label, pts in lines.items():
    if numeric:
        pts = sorted(pts, key=lambda t: number(t[0]))
        ax.plot([number(x) for x, _ in pts], [y for _, y in pts], marker="o", label=label)
    else:
        ax.plot([x for x, _ in pts], [y for _, y in pts], marker="o", label=label)
if numeric:
    if min(number(x) for pts in lines.values() for x, _ in pts) > 0:  # a log scale has no place for 0 (set_aside=0)
        ax.set_xscale("log", base=2)
    ticks = sorted({number(x) for pts in lines.values() for x, _ in pts})
    names = {number(x): x for pts in lines.values() for x, _ in pts}
    ax.set_xticks(ticks, [names[t] for t in ticks])
ax.set(xlabel=x_key, ylabel="predicted time (us)", title=f"memhier sweep: {data['trace']}")
ax.set_ylim(bottom=0)
ax.legend(fontsize=7)
fig.tight_layout()
fig.savefig(sys.argv[2])
