#!/usr/bin/env python3
"""Compares validate/probe/write_merge.cu's L2 write lookups under ncu with memhier's simulation of the same launches
(validate/probe/write_merge/write_merge.yaml).

Usage: compare_write_merge.py PROBE_DIR [MEMHIER] [--arch h100] [--check]
PROBE_DIR holds write_merge.json (the launches in order) and write_merge_ncu.csv (run_write_merge.sh's output). Per
L1 store sector (l1tex__t_sectors_pipe_lsu_mem_global_op_st; memhier global_st_sectors): L2 write lookups
(lts__t_sectors_op_write; memhier l2_write_sectors), measured and simulated.

The simulator counts a store sector in its partition's slice and, for a line homed in the other, again at home (1.5
on average), and the sectors a fill of partly written sectors brings back from DRAM once more each. It merges no
stores in the L1, so launches of one warp an SM storing back to back (where the H100's L1 sends only 22-34% of the
sectors on) are reported, not checked; the description has no spin, which on the GPU changes nothing for 64 warps an
SM (both spins are compared with the same simulation). --check: exit 1 unless every other launch is within 2% of the
GPU, the single word a sector (k = 1) within 10% (the ctest write_merge_probe)."""
import argparse
import concurrent.futures
import json
import pathlib

import memhier_json
import ncu_csv

HERE = pathlib.Path(__file__).resolve().parent

KINDS = {"fields": 0, "same": 1, "spread": 2}
WRITES = "lts__t_sectors_op_write.sum"
STORE_SECTORS = "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"


def simulated(memhier, arch, launch, n):
    cmd = [memhier, "simulate", HERE / "write_merge" / "write_merge.yaml", "--arch", arch, "--json", "--threads", "1",
           "--set", f"n={n}", "--set", f"k={launch['k']}", "--set", f"kind={KINDS[launch['kind']]}"]
    return memhier_json.run(cmd)[0]["counters"]


def tolerance(launch):
    """The relative error --check allows, or None where the comparison is reported only."""
    if launch["one_warp"]:
        return None
    return 0.10 if launch["k"] == 1 else 0.02


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("probe_dir", type=pathlib.Path)
    ap.add_argument("memhier", nargs="?", default="build/release/tools/memhier")
    ap.add_argument("--arch", default="h100")
    ap.add_argument("--check", action="store_true", help="exit 1 if a checked launch is off by more than allowed")
    ap.add_argument("--jobs", type=int, default=2, help="simulations run at once")
    args = ap.parse_args()
    path = args.probe_dir / "write_merge.json"
    if not path.is_file():
        raise SystemExit(f"compare_write_merge: {path}: missing (run_write_merge.sh writes it)")
    try:
        probe = json.loads(path.read_text())
        launches, n = probe["launches"], probe["n"]
        for i, l in enumerate(launches):
            if l["kind"] not in KINDS or not isinstance(l["k"], int) or "one_warp" not in l or "spin" not in l:
                raise KeyError(f"launch {i}: kind, k, one_warp and spin")
    except (ValueError, KeyError, TypeError) as e:
        raise SystemExit(f"compare_write_merge: {path}: not the probe's output ({e})")
    csv = args.probe_dir / "write_merge_ncu.csv"
    measured = ncu_csv.launches(csv)
    if len(measured) != len(launches):
        raise SystemExit(f"compare_write_merge: {len(measured)} launches in {csv}, {len(launches)} in {path}")
    ncu_csv.require(csv, measured, [WRITES, STORE_SECTORS])
    pairs = [(l, measured[k]) for l, k in zip(launches, sorted(measured))]
    # One simulation a distinct (kind, k): the spin and the warps an SM are not in the description.
    keys = sorted({(l["kind"], l["k"]) for l, _ in pairs})
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        sims = dict(zip(keys, pool.map(lambda key: simulated(args.memhier, args.arch, {"kind": key[0], "k": key[1]},
                                                               n), keys)))
    print(f"{'kind':6} {'k':>2} {'warps/SM':>8} {'spin':>5} | {'L2 write lookups a store sector':^21} | checked")
    print(f"{'':6} {'':>2} {'':>8} {'':>5} | {'GPU':>10} {'model':>10} |")
    failed = []
    for l, m in pairs:
        c = sims[(l["kind"], l["k"])]
        if c["global_st_sectors"] != m[STORE_SECTORS] and not l["one_warp"]:
            raise SystemExit(f"compare_write_merge: {l['kind']} k={l['k']}: {m[STORE_SECTORS]:.0f} store sectors "
                             f"measured, {c['global_st_sectors']} described")
        gpu = m[WRITES] / m[STORE_SECTORS]
        model = c["l2_write_sectors"] / c["global_st_sectors"]
        tol = tolerance(l)
        ok = tol is None or abs(model - gpu) <= tol * gpu
        mark = "-" if tol is None else (f"{tol:.0%}" if ok else f"{tol:.0%} FAILED")
        warps = 1 if l["one_warp"] else 64
        print(f"{l['kind']:6} {l['k']:2d} {warps:8d} {l['spin']:5d} | {gpu:10.3f} {model:10.3f} | {mark}")
        if not ok:
            failed.append(l)
    if failed:
        print(f"{len(failed)} checked launch(es) outside their tolerance")
        if args.check:
            raise SystemExit(1)


if __name__ == "__main__":
    main()
