#!/usr/bin/env python3
"""How far apart the two SMs of a TPC read the same A tiles in the suite's matrix multiplies (sibling_drift.cu).

For each configuration and run: the blocks whose TPC sibling (the other SM of the pair 2t, 2t + 1) runs a block of the
same blockIdx.y at the same time (the two read the same rows of A, step by step), and how far apart in time the two
reach each k-step mark. The model (model/sim/tpc_merge.h) merges a read with its sibling's when it comes within the L2
latency (about 150 ns on the H100), and its siblings run in lockstep. With the ncu CSV: the read sectors the L2 was
spared (L1 misses less L2 reads from L1TEX) as a share of the L1 misses (matmul_tiled reads half its sectors from A).

Usage: analyze_sibling_drift.py DIR   (DIR holds sibling_drift.json or .json.gz, and sibling_drift_ncu.csv)
"""
import csv
import gzip
import io
import json
import statistics
import sys
from pathlib import Path

import ncu_csv

WINDOWS_NS = (150, 500, 1000)


def ncu_rows(path):
    """{launch ID: {metric: value}} from ncu's details page."""
    out = {}
    if not ncu_csv.exists(path):
        return out
    rows = list(csv.reader(io.StringIO(ncu_csv.read_text(path), newline="")))
    header = next((i for i, r in enumerate(rows) if r and r[0] == "ID"), None)
    if header is None:
        return out
    h = rows[header]
    col = {name: h.index(name) for name in ("ID", "Metric Name", "Metric Value")}
    for r in rows[header + 1:]:
        if len(r) < len(h):
            continue
        value = float(r[col["Metric Value"]].replace(",", ""))
        out.setdefault(int(r[col["ID"]]), {})[r[col["Metric Name"]]] = value
    return out


def sibling_pairs(n, sm, times, marks):
    """(block on SM 2t, block on SM 2t + 1) pairs of the same blockIdx.y whose runs overlap in time."""
    side = n // 16
    by_sm = {}
    for b, s in enumerate(sm):
        by_sm.setdefault(s, []).append(b)
    pairs = []
    for b, s in enumerate(sm):
        if s % 2:
            continue
        start, end = times[b * marks], times[b * marks + marks - 1]
        for o in by_sm.get(s + 1, []):
            if o // side == b // side and times[o * marks] < end and start < times[o * marks + marks - 1]:
                pairs.append((b, o))
    return pairs


def analyze(config, run, resident_blocks):
    n, marks = config["n"], config["marks"]
    sm, times = run["sm"], run["times_ns"]
    blocks = len(sm)
    pairs = sibling_pairs(n, sm, times, marks)
    paired = {b for p in pairs for b in p}
    steps = [abs(times[b * marks + k] - times[o * marks + k]) for b, o in pairs for k in range(1, marks - 1)]
    consecutive = sum(1 for j in range(0, blocks - 1, 2) if sm[j] // 2 == sm[j + 1] // 2)
    by_wave = {}
    for b, o in pairs:
        w = min(b, o) // resident_blocks
        by_wave.setdefault(w, []).extend(abs(times[b * marks + k] - times[o * marks + k]) for k in range(1, marks - 1))
    return {
        "blocks": blocks,
        "pairs_2j_one_tpc": f"{consecutive}/{blocks // 2}",
        "blocks_with_a_sibling": len(paired) / blocks,
        "step_gap_median_ns": statistics.median(steps) if steps else None,
        "within": {w: sum(1 for s in steps if s <= w) / len(steps) if steps else 0 for w in WINDOWS_NS},
        "by_wave": {w: (statistics.median(v), sum(1 for s in v if s <= WINDOWS_NS[0]) / len(v))
                    for w, v in sorted(by_wave.items())},
        "kernel_ns": max(times[b * marks + marks - 1] for b in range(blocks)),
    }


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    folder = Path(sys.argv[1])
    plain = folder / "sibling_drift.json"
    data = json.loads(plain.read_text() if plain.exists() else gzip.decompress((folder / "sibling_drift.json.gz").read_bytes()))
    ncu = ncu_rows(folder / "sibling_drift_ncu.csv")
    resident_blocks = 8 * data["sms"]  # 256 threads a block, 2048 a SM
    print(f"{data['name']}, {data['sms']} SMs; a wave: {resident_blocks} blocks")
    launch = 0
    for config in data["configs"]:
        name = f"{config['kernel']} n={config['n']}"
        launch += 1  # the warm-up
        for i, run in enumerate(config["runs"]):
            a = analyze(config, run, resident_blocks)
            within = ", ".join(f"<= {w} ns {a['within'][w]:.0%}" for w in WINDOWS_NS)
            print(f"{name} run {i}: {a['blocks']} blocks in {a['kernel_ns'] / 1000:.1f} us; 2j, 2j+1 on one TPC "
                  f"{a['pairs_2j_one_tpc']}; blocks with a same-row TPC sibling at the same time "
                  f"{a['blocks_with_a_sibling']:.0%}; sibling step gap median {a['step_gap_median_ns']} ns, {within}")
            waves = "; ".join(f"wave {w}: median {m:.0f} ns, {share:.0%} <= {WINDOWS_NS[0]}"
                              for w, (m, share) in a["by_wave"].items())
            print(f"    by wave of the earlier block: {waves}")
            m = ncu.get(launch, {})
            if m:
                l1_miss = (m["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"]
                           - m["l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum"])
                spared = l1_miss - m["lts__t_sectors_srcunit_tex_op_read.sum"]
                print(f"    ncu: L1 miss sectors {l1_miss:,.0f}, L2 reads from L1TEX "
                      f"{m['lts__t_sectors_srcunit_tex_op_read.sum']:,.0f}, spared {spared:,.0f} "
                      f"({spared / l1_miss:.1%} of the misses); {m['gpu__time_duration.sum']:,.0f} ns")
            launch += 1


if __name__ == "__main__":
    main()
