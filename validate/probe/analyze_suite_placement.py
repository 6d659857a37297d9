#!/usr/bin/env python3
"""Whether blocks 2j and 2j + 1 share a TPC, wave by wave, in the suite's multi-wave kernels (suite_placement.cu).

For each kernel and run: the share of pairs (2j, 2j + 1) on the two SMs of one TPC (SMs 2t and 2t + 1) in the first
wave (blocks below resident_per_sm x SMs) and after it, how far apart the pair's blocks start (median over the pairs
on one TPC), and the blocks' median run time. The model merges the reads of the first wave's pairs only
(model/sim/tpc_merge.h).

Usage: analyze_suite_placement.py DIR   (DIR holds suite_placement.json or .json.gz)
"""
import gzip
import json
import statistics
import sys
from pathlib import Path


def load(folder):
    plain = folder / "suite_placement.json"
    if plain.exists():
        return json.loads(plain.read_text())
    return json.loads(gzip.decompress((folder / "suite_placement.json.gz").read_bytes()))


def pairs(run, first, last):
    """(pairs on one TPC, pairs, median start gap in ns of those on one TPC) for pairs (2j, 2j + 1) in [first, last)."""
    sm, start = run["sm"], run["start_ns"]
    together, gaps, total = 0, [], 0
    for j in range(first - first % 2, last - 1, 2):
        total += 1
        if sm[j] // 2 == sm[j + 1] // 2 and sm[j] != sm[j + 1]:
            together += 1
            gaps.append(abs(start[j] - start[j + 1]))
    return together, total, statistics.median(gaps) if gaps else None


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    data = load(Path(sys.argv[1]))
    print(f"{data['name']}, {data['sms']} SMs")
    for config in data["configs"]:
        wave = config["resident_per_sm"] * data["sms"]
        for i, run in enumerate(config["runs"]):
            blocks = len(run["sm"])
            t1, n1, g1 = pairs(run, 0, min(wave, blocks))
            t2, n2, g2 = pairs(run, wave, blocks)
            length = statistics.median(e - s for s, e in zip(run["start_ns"], run["end_ns"]))
            later = f"{t2}/{n2} ({t2 / n2:.0%}), start gap median {g2} ns" if n2 else "none"
            print(f"{config['name']} run {i}: {blocks} blocks, {config['resident_per_sm']} a SM (a wave: {wave}); "
                  f"block median {length:.0f} ns; pairs on one TPC: first wave {t1}/{n1} ({t1 / n1:.0%}), start gap "
                  f"median {g1} ns; later {later}")


if __name__ == "__main__":
    main()
