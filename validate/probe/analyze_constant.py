#!/usr/bin/env python3
"""Summarizes validate/probe/run_constant_cache.sh output: per pattern of constant_cache.cu, SM cycles per serialized
address (clock64 spans) next to the indexed constant cache's (IDC) own counters under ncu: lookups per request
(requests + failed lookups: misses on a pending line, tag misses sent to the GCC, and lookups that found no way free)
and IDC active cycles per request; then a least-squares fit of SM cycles per address on the failed-lookup kinds; the
model's estimate, replay_cycles x (1 + miss_replays x misses a request), with the misses `memhier simulate` counts
for each pattern (constant_cache/constant_pattern.yaml, the h100 arch) when MEMHIER is given; and the suite's
constant cases under the same metrics.

Usage: analyze_constant.py PROBE_DIR [MEMHIER]   (PROBE_DIR: the folder run_constant_cache.sh wrote)"""
import concurrent.futures
import json
import pathlib
import subprocess
import sys

import memhier_json
import ncu_csv

PEND = "idc__requests_lookup_miss_tag_hit.sum"
TAG_MISS = "idc__requests_lookup_miss_tag_miss.sum"
UNAVAILABLE = "idc__requests_lookup_miss_tag_unavailable.sum"
REQUESTS = "idc__requests.sum"
HERE = pathlib.Path(__file__).resolve().parent
ACTIVE = "idc__request_cycles_active.sum"


def load_json(path):
    try:
        return json.loads(path.read_text())
    except OSError as e:
        raise SystemExit(f"{path}: {e.strerror}")
    except json.JSONDecodeError as e:
        raise SystemExit(f"{path}: line {e.lineno}: {e.msg}")


def solve(rows, ys):
    """Least squares by the normal equations (a handful of columns; no numpy on the CPU machines)."""
    n = len(rows[0])
    a = [[sum(r[i] * r[j] for r in rows) for j in range(n)] for i in range(n)]
    b = [sum(r[i] * y for r, y in zip(rows, ys)) for i in range(n)]
    for i in range(n):
        p = max(range(i, n), key=lambda k: abs(a[k][i]))
        a[i], a[p], b[i], b[p] = a[p], a[i], b[p], b[i]
        for k in range(i + 1, n):
            f = a[k][i] / a[i][i]
            a[k] = [x - f * y for x, y in zip(a[k], a[i])]
            b[k] -= f * b[i]
    x = [0.0] * n
    for i in reversed(range(n)):
        x[i] = (b[i] - sum(a[i][j] * x[j] for j in range(i + 1, n))) / a[i][i]
    return x


def arch_constant(memhier, key):
    """A constant_cache key of the h100 arch file, as `memhier archs show h100` prints it."""
    try:
        out = subprocess.run([memhier, "archs", "show", "h100"], check=True, capture_output=True, text=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        sys.exit(f"analyze_constant.py: {memhier} archs show h100 failed: {getattr(e, 'stderr', None) or e}")
    for line in out.splitlines():
        words = line.split()
        if words and words[0] == f"constant_cache.{key}":
            return float(words[1])
    sys.exit(f"analyze_constant.py: {memhier} archs show h100 has no constant_cache.{key}")


def simulated_misses(memhier, p):
    """constant_misses / constant_serialized of the pattern, simulated on the h100 from constant_pattern.yaml."""
    sets = {"d": p["lines"], "stride": p["stride_lines"], "phase": p["phase_lines"], "table_lines": p["table_lines"],
            "w": p["words_per_line"], "blocks": p["blocks"], "threads": p.get("threads", 256)}
    cmd = [memhier, "simulate", str(HERE / "constant_cache" / "constant_pattern.yaml"), "--arch", "h100", "--json"]
    for k, v in sets.items():
        cmd += ["--set", f"{k}={v}"]
    c = memhier_json.run(cmd)[-1]["counters"]
    return c["constant_misses"] / c["constant_serialized"]


def per_request(m):
    req = m[REQUESTS]
    return {k: m[v] / req for k, v in (("pend", PEND), ("tag_miss", TAG_MISS), ("unavail", UNAVAILABLE),
                                        ("active", ACTIVE))}


def model_table(memhier, patterns):
    replay, per_miss = arch_constant(memhier, "replay_cycles"), arch_constant(memhier, "miss_replays")
    chosen = [p for p in patterns
              if p["pattern"] != "broadcast" and p.get("threads", 256) == 256 and p["blocks"] == 4096]
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        misses = list(pool.map(lambda p: simulated_misses(memhier, p), chosen))
    print(f"\nmodel: {replay} x (1 + {per_miss} x simulated misses a request) cycles an address, patterns of "
          "4096 blocks x 256 threads")
    old = new = 0.0
    for p, miss in zip(chosen, misses):
        model = replay * (1 + per_miss * miss)
        measured = p["cycles_per_address"]
        old += abs(replay / measured - 1)
        new += abs(model / measured - 1)
        print(f"{p['pattern']:32s} misses {miss:.3f}  measured {measured:6.2f}  without misses "
              f"{100 * (replay / measured - 1):+4.0f}%  with {model:5.2f} {100 * (model / measured - 1):+4.0f}%")
    print(f"mean absolute error over {len(chosen)} patterns: without misses {100 * old / len(chosen):.1f}%, "
          f"with {100 * new / len(chosen):.1f}%")


def main():
    if len(sys.argv) not in (2, 3):
        raise SystemExit(__doc__)
    d = pathlib.Path(sys.argv[1])
    memhier = sys.argv[2] if len(sys.argv) == 3 else None
    patterns = load_json(d / "constant_cache.json")["patterns"]
    launches = ncu_csv.launches(d / "constant_cache_ncu.csv")
    ids = sorted(launches)
    if len(ids) != 2 * len(patterns):
        raise SystemExit(f"{d / 'constant_cache_ncu.csv'}: {len(ids)} launches, expected 2 for each of "
                         f"{len(patterns)} patterns (a warm-up and a measured one)")
    print("pattern                          blocks thr  SM cyc/addr  req/warp load  lookups/req  (pend  tag-miss"
          "  no-way)  IDC cyc/req")
    rows, ys = [], []
    for i, p in enumerate(patterns):
        m = launches[ids[2 * i + 1]]
        threads = p.get("threads", 256)
        warp_loads = p["blocks"] * threads // 32 * 64
        r = per_request(m)
        lookups = 1 + r["pend"] + r["tag_miss"] + r["unavail"]
        print(f"{p['pattern']:32s} {p['blocks']:6d} {threads:3d} {p['cycles_per_address']:11.2f} "
              f"{m[REQUESTS] / warp_loads:14.2f} {lookups:12.2f}  ({r['pend']:.3f} {r['tag_miss']:.3f}    "
              f"{r['unavail']:.3f})  {r['active']:10.2f}")
        if p["pattern"] != "broadcast" and threads == 256 and p["blocks"] == 4096:
            rows.append([1.0, r["pend"], r["tag_miss"], r["unavail"]])
            ys.append(p["cycles_per_address"])
    c = solve(rows, ys)
    worst = max(abs(sum(a * b for a, b in zip(row, c)) - y) / y for row, y in zip(rows, ys))
    print(f"\nfit over the {len(rows)} patterns of 4096 blocks x 256 threads (all but broadcast): "
          f"SM cycles per address ="
          f" {c[0]:.2f} + {c[1]:.2f} x pending + {c[2]:.2f} x tag misses + {c[3]:.2f} x no-way lookups per request;"
          f" worst relative error {100 * worst:.1f}%")
    if memhier:
        model_table(memhier, patterns)
    suite = d / "suite_constant_ncu.csv"
    once = d / "once_constant.jsonl"
    if ncu_csv.exists(suite) and once.exists():
        cases = [json.loads(line)["case"] for line in once.read_text().splitlines() if line.strip()]
        print("\nsuite case                                   IDC requests   LDC instr  lookups/req  IDC cyc/req")
        for (_, m), case in zip(sorted(ncu_csv.launches(suite).items()), cases):
            r = per_request(m)
            print(f"{case:44s} {m[REQUESTS]:12.0f} {m['smsp__inst_executed_op_ldc.sum']:11.0f} "
                  f"{1 + r['pend'] + r['tag_miss'] + r['unavail']:12.2f} {r['active']:12.2f}")


if __name__ == "__main__":
    main()
