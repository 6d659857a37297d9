#!/usr/bin/env python3
"""Summarizes run_placement.sh's results: where blocks go, which SMs share an L2 partition, and what the L2 sees
when SMs read the same lines.

usage: analyze_placement.py PROBE_DIR [MEMHIER]
PROBE_DIR holds block_placement.json, sm_partition.json, shared_reads.json and shared_reads_ncu.csv
(run_placement.sh's output). With MEMHIER (a memhier binary), each shared_reads launch is also simulated
(validate/probe/shared_reads/shared_reads.yaml, three launches with --keep-cache, on h100) and the share of its L1
sectors that reach L2 printed next to the measured one.
"""
import itertools
import json
import statistics
import sys
from collections import defaultdict
from pathlib import Path

import memhier_json
import ncu_csv


def placement(d):
    print("block placement (first run of each configuration):")
    for c in d["configs"]:
        sm = c["runs"][0]["sm"]
        per = defaultdict(list)
        for b, s in enumerate(sm):
            per[s].append(b)
        gaps = [b2 - b1 for blocks in per.values() for b1, b2 in zip(blocks, blocks[1:])]
        tpc = sum(1 for b in range(0, len(sm) - 1, 2) if sm[b] // 2 == sm[b + 1] // 2)
        same = all(r["sm"] == c["runs"][0]["sm"] for r in c["runs"])
        start = c["runs"][0]["start_ns"]
        apart = sorted(abs(start[b + 1] - start[b]) for b in range(0, len(sm) - 1, 2) if sm[b] // 2 == sm[b + 1] // 2)
        print(f"  {c['name']:28} {len(sm):5} blocks on {len(per):3} SMs; blocks 2j, 2j+1 on one TPC: "
              f"{tpc}/{len(sm) // 2}, starting within {apart[len(apart) * 9 // 10]} ns (90%), {apart[-1]} ns (all); "
              f"gap between blocks of one SM: median {statistics.median(gaps) if gaps else '-'}; "
              f"same SMs in all runs: {same}")


def partitions(d):
    runs = d["runs"]
    sms, lines = len(runs[0]), d["lines"]
    mean = [[sum(r[s][l] for r in runs) / len(runs) for l in range(lines)] for s in range(sms)]
    median = [statistics.median(mean[s][l] for s in range(sms)) for l in range(lines)]
    groups = defaultdict(list)
    for s in range(sms):
        groups["".join("n" if mean[s][l] < median[l] else "f" for l in range(lines))].append(s)
    print("SMs by near (n) / far (f) latency to each of the lines:")
    for key, members in sorted(groups.items(), key=lambda kv: -len(kv[1])):
        print(f"  {key}  {len(members):3} SMs: {members}")
    pairs = sum(1 for s in range(0, sms, 2) if any(s in m and s + 1 in m for m in groups.values()))
    print(f"  SM pairs (2t, 2t+1) with one pattern: {pairs}/{sms // 2}")
    near = [mean[s][l] for s in range(sms) for l in range(lines) if mean[s][l] < median[l]]
    far = [mean[s][l] for s in range(sms) for l in range(lines) if mean[s][l] >= median[l]]
    print(f"  cycles a load, near: {min(near):.0f}-{max(near):.0f}, far: {min(far):.0f}-{max(far):.0f}")
    # The two partitions are the groups of the first line's latency.
    return {s for s in range(sms) if mean[s][0] < median[0]}


def dispatch_runs(placement_data, group):
    """Lengths of the runs of consecutive blocks that land in one partition, first run of one full wave."""
    c = next(c for c in placement_data["configs"] if c["name"] == "grid1056_block256")
    sides = [s in group for s in c["runs"][0]["sm"][:264]]
    print(f"  blocks by partition in launch order (first 264 of grid1056_block256): runs of "
          f"{[len(list(g)) for _, g in itertools.groupby(sides)]}")


HERE = Path(__file__).resolve().parent


def simulated_share(memhier, pattern, delay):
    """The share of the kernel's L1 sectors that reach L2 in the last of three launches (far lookups counted once)."""
    if memhier is None:
        return ""
    cmd = [memhier, "simulate", str(HERE / "shared_reads" / "shared_reads.yaml"), "--arch", "h100", "--keep-cache",
           "--json", "--set", f"pattern={pattern}", "--set", f"delay={delay}"]
    c = memhier_json.run(cmd)[-1]["counters"]
    far_writes = c["l2_write_sectors"] - c["global_st_sectors"]
    return f"{(c['l2_read_sectors'] - (c['l2_far_sectors'] - far_writes)) / c['global_ld_sectors']:9.2f}"


def shared_reads(path, delays, memhier):
    by_id = ncu_csv.launches(path)
    names = ["distinct", "tpc_pair", "far_pair", "spread"]
    metrics = ["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
               "l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum",
               "lts__t_sectors_srcunit_tex_op_read.sum", "lts__t_sectors_op_read.sum"]
    print("shared_reads under ncu (mean of the launches of each pattern):")
    print(f"  {'pattern':9} {'L1 sectors':>11} {'L1 hits':>9} {'L2 from L1':>11} {'share':>6} {'L2 reads':>9}"
          + (" simulated" if memhier else ""))
    for p, name in enumerate(names):
        launches = [by_id[i] for i in sorted(by_id) if i // 3 == p]
        m = [statistics.mean(l[k] for l in launches) for k in metrics]
        print(f"  {name:9} {m[0]:11.0f} {m[1]:9.0f} {m[2]:11.0f} {m[2] / m[0]:6.2f} {m[3]:9.0f}"
              + simulated_share(memhier, p, 0))
    print("tpc_pair with the odd blocks starting later (SM cycles):")
    for k, delay in enumerate(delays):
        launches = [by_id[i] for i in sorted(by_id) if (i - 3 * len(names)) // 3 == k and i >= 3 * len(names)]
        if not launches:
            continue
        m = [statistics.mean(l[key] for l in launches) for key in metrics]
        print(f"  {delay:9} {m[0]:11.0f} {m[1]:9.0f} {m[2]:11.0f} {m[2] / m[0]:6.2f} {m[3]:9.0f}"
              + simulated_share(memhier, 1, delay))


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    memhier = sys.argv[2] if len(sys.argv) == 3 else None
    d = Path(sys.argv[1])
    try:
        placement_data = json.loads((d / "block_placement.json").read_text())
        placement(placement_data)
        dispatch_runs(placement_data, partitions(json.loads((d / "sm_partition.json").read_text())))
        shared_reads(d / "shared_reads_ncu.csv", json.loads((d / "shared_reads.json").read_text()).get("delays", []),
                     memhier)
    except (OSError, ValueError, KeyError) as e:
        sys.exit(f"analyze_placement.py: {d}: {e}")


if __name__ == "__main__":
    main()
