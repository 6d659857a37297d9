"""Compares the L1 working-set sweep (validate/probe/l1_sweep.cu under ncu) with memhier's predictions for its
description (validate/probe/l1_sweep/sweep.yaml): L1 hit rate of global-load sectors over 4 passes, by footprint.

Usage: compare_l1_sweep.py PROBE_DIR [MEMHIER] [--max-error POINTS]
  PROBE_DIR    a folder with l1_sweep_ncu.csv (validate/results/h100-2026-11-24e/probe)
  MEMHIER      the memhier to predict with (default build/release/tools/memhier)
  --max-error  exit 1 when the mean |hit-rate error| over the footprints exceeds POINTS (the ctest l1_sweep_probe)"""
import argparse
import json
import pathlib
import subprocess
import sys

import ncu_csv

HERE = pathlib.Path(__file__).resolve().parent
DESCRIPTION = HERE / "l1_sweep" / "sweep.yaml"


def main(argv):
    ap = argparse.ArgumentParser(usage=__doc__)
    ap.add_argument("probe")
    ap.add_argument("memhier", nargs="?", default="build/release/tools/memhier")
    ap.add_argument("--max-error", type=float)
    args = ap.parse_args(argv[1:])
    probe = pathlib.Path(args.probe)
    memhier = args.memhier
    runs = ncu_csv.launches(probe / "l1_sweep_ncu.csv")
    ncu_csv.require(probe / "l1_sweep_ncu.csv", runs,
                    ["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
                     "l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum", "launch__shared_mem_config_size",
                     "sm__ctas_launched.min", "sm__ctas_launched.max"])
    try:
        sweep = json.loads((probe / "l1_sweep.json").read_text())["runs"]
    except (OSError, ValueError, KeyError) as e:
        raise SystemExit(f"{probe / 'l1_sweep.json'}: not the probe's output ({e})")
    if len(sweep) != len(runs):
        raise SystemExit(f"{probe}: {len(sweep)} launches in l1_sweep.json, {len(runs)} in l1_sweep_ncu.csv")
    errors = []
    print(f"{'KiB a SM':>8} {'sectors':>10} {'measured hit %':>15} {'model hit %':>12} {'L1 KiB':>7} {'CTAs a SM':>10}")
    for config, launch in zip(sweep, sorted(runs)):
        m = runs[launch]
        lines = f"lines={config['lines']}"
        command = [memhier, "simulate", str(DESCRIPTION), "--arch", "h100", "--set", lines, "--json"]
        out = subprocess.run(command, check=True, capture_output=True, text=True).stdout
        c = json.loads(out)[0]["counters"]
        sectors = m["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"]
        if sectors != c["global_ld_sectors"]:
            raise SystemExit(f"{config['kib']} KiB: {sectors:.0f} sectors measured, {c['global_ld_sectors']} described")
        measured = 100 * m["l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum"] / sectors
        model = 100 * c["l1_sector_hits"] / c["l1_sector_lookups"]
        l1 = (256 * 1024 - m["launch__shared_mem_config_size"]) / 1024
        ctas = f"{m['sm__ctas_launched.min']:.0f}-{m['sm__ctas_launched.max']:.0f}"
        print(f"{config['kib']:>8} {sectors:>10.0f} {measured:>15.1f} {model:>12.1f} {l1:>7.0f} {ctas:>10}")
        errors.append(abs(model - measured))
    mean = sum(errors) / len(errors)
    print(f"mean |hit-rate error| {mean:.2f} points over {len(errors)} footprints, worst {max(errors):.1f}")
    if args.max_error is not None and mean > args.max_error:
        print(f"compare_l1_sweep: mean error {mean:.2f} points exceeds --max-error {args.max_error}")
        sys.exit(1)


if __name__ == "__main__":
    main(sys.argv)
