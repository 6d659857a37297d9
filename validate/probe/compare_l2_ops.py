#!/usr/bin/env python3
"""Compares validate/probe/l2_ops.cu's kernels under ncu (their L2 lookups and their own duration,
gpu__time_duration) with memhier's predictions of the same launches (validate/probe/l2_ops/l2_ops.yaml, the second of
two launches with --keep-cache, as the probe's counted launch follows its warm-up): per kind, the L2 sectors looked
up by reads, writes and atomics with reductions (lts__t_sectors_op_read, _op_write, _op_atom + _op_red) and the time,
with the predicted GPU time (`gpu_seconds`: no launch overhead, as ncu's duration). A probe directory from before the
atomic kinds (six kinds, no atom or red metrics) shows 0 atomic lookups.

Only the kinds that make 32 lookups a warp instruction (read_word, write_word, red_word, atom_word) keep the L2 busy
throughout; the others are bound mostly by the urand arithmetic each lane does for its address (68-72% of the
schedulers' issue slots busy, whole-sector writes 53%, whole-line atomics 41%:
validate/results/h100-2026-11-28-l2atomics/inst), which the model's issue term takes at one instruction a cycle a
scheduler, and are shown, not checked.

Usage: compare_l2_ops.py PROBE_DIR [MEMHIER] [--arch h100] [--max-error PERCENT]
--max-error: exit 1 if the mean |time error| of the checked kinds exceeds PERCENT (the ctest l2_ops_probe)."""
import argparse
import json
import pathlib

import memhier_json
import ncu_csv
import probe_errors

HERE = pathlib.Path(__file__).resolve().parent
CHECKED = ("read_word", "write_word", "red_word", "atom_word")
METRICS = ("gpu__time_duration.sum", "lts__t_sectors_op_read.sum", "lts__t_sectors_op_write.sum")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("probe_dir", type=pathlib.Path)
    ap.add_argument("memhier", nargs="?", default="build/release/tools/memhier")
    ap.add_argument("--arch", default="h100")
    ap.add_argument("--max-error", type=float, help="exit 1 if the checked kinds' mean |time error| exceeds this")
    args = ap.parse_args()
    try:
        configs = json.loads((args.probe_dir / "l2_ops.json").read_text())["configs"]
    except (OSError, ValueError, KeyError) as e:
        raise SystemExit(f"compare_l2_ops: {args.probe_dir / 'l2_ops.json'}: {e}")
    csv_path = args.probe_dir / "l2_ops_ncu.csv"
    ncu = ncu_csv.launches(csv_path)
    ncu_csv.require(csv_path, ncu, METRICS)
    ids = sorted(ncu)
    if len(ids) != 2 * len(configs):
        raise SystemExit(f"compare_l2_ops: {len(ids)} profiled launches for {len(configs)} kinds (expected 2 each)")
    description = HERE / "l2_ops" / "l2_ops.yaml"
    print(f"{'kind':12} | {'L2 read sectors':>15} {'model':>10} | {'L2 write sectors':>16} {'model':>10} | "
          f"{'L2 atom+red':>11} {'model':>10} | {'ncu us':>7} {'model us':>8} {'error':>7}")
    errors = []
    for i, c in enumerate(configs):
        m = ncu[ids[2 * i + 1]]  # the counted launch, after the warm-up
        p = memhier_json.run([args.memhier, "predict", description, "--arch", args.arch, "--set", f"kind={c['kind']}",
                              "--keep-cache", "--json", "--threads", "2"])[-1]
        measured = m["gpu__time_duration.sum"] / 1e3
        model = p["gpu_seconds"] * 1e6
        error = 100 * (model / measured - 1)
        if c["name"] in CHECKED:
            errors.append(abs(error))
        k = p["counters"]
        atomic = m.get("lts__t_sectors_op_atom.sum", 0) + m.get("lts__t_sectors_op_red.sum", 0)
        print(f"{c['name']:12} | {m['lts__t_sectors_op_read.sum']:15,.0f} {k['l2_read_sectors']:10,} | "
              f"{m['lts__t_sectors_op_write.sum']:16,.0f} {k['l2_write_sectors']:10,} | "
              f"{atomic:11,.0f} {k['l2_atom_sectors'] + k['l2_red_sectors']:10,} | {measured:7.1f} {model:8.1f} "
              f"{error:+6.1f}%{'' if c['name'] in CHECKED else ' (not checked)'}")
    probe_errors.check_mean("compare_l2_ops", errors, args.max_error, "time error", "%", "L2-bound kinds")


if __name__ == "__main__":
    main()
