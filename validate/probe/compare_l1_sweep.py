"""Compares the L1 probes with memhier's predictions for their descriptions: L1 hit rate of global-load sectors, launch
by launch.
  - the working-set sweep (validate/probe/l1_sweep.cu, l1_sweep_ncu.csv; description validate/probe/l1_sweep/
    sweep.yaml): 1024 threads an SM, 32 to 512 KiB read 4 times;
  - the policy probe (validate/probe/l1_policy.cu, l1_policy_ncu.csv; description validate/probe/l1_policy/
    policy.yaml): one warp or 32 an SM, footprints, strides between lines and numbers of passes.
The folder's files say which it holds (both, when both are there).

Usage: compare_l1_sweep.py PROBE_DIR [MEMHIER] [--max-error POINTS]
  PROBE_DIR    a folder with l1_sweep_ncu.csv and/or l1_policy_ncu.csv (validate/results/h100-2026-11-24e/probe,
               validate/results/h100-2026-11-24g/probe)
  MEMHIER      the memhier to predict with (default build/release/tools/memhier)
  --max-error  exit 1 when the mean |hit-rate error| over the launches exceeds POINTS (the ctests l1_sweep_probe and
               l1_policy_probe)"""
import argparse
import json
import pathlib
import sys

import memhier_json
import ncu_csv
import probe_errors

HERE = pathlib.Path(__file__).resolve().parent
HITS = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum"
SECTORS = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"


def sweep_sets(config):
    return [f"lines={config['lines']}"]


def policy_sets(config):
    return [f"{key}={config[key]}" for key in ("warps", "lines", "stride", "passes")]


# name: (description, the --set overrides of a launch's configuration, the columns that describe it)
PROBES = {
    "l1_sweep": (HERE / "l1_sweep" / "sweep.yaml", sweep_sets, lambda c: f"{c['kib']:>4} KiB"),
    "l1_policy": (HERE / "l1_policy" / "policy.yaml", policy_sets,
                  lambda c: f"{c['warps']:>2} warps {c['lines'] // 8:>4} KiB stride {c['stride']:>2} "
                            f"{c['passes']} passes"),
}


def compare(probe, name, memhier):
    """|model - measured| hit-rate points of each launch of probe `name` in folder `probe`, printed as a table."""
    description, sets, label = PROBES[name]
    csv = probe / f"{name}_ncu.csv"
    runs = ncu_csv.launches(csv)
    ncu_csv.require(csv, runs, [SECTORS, HITS, "launch__shared_mem_config_size", "sm__ctas_launched.min",
                                "sm__ctas_launched.max"])
    try:
        configs = json.loads((probe / f"{name}.json").read_text())["runs"]
    except (OSError, ValueError, KeyError) as e:
        raise SystemExit(f"{probe / (name + '.json')}: not the probe's output ({e})")
    if len(configs) != len(runs):
        raise SystemExit(f"{probe}: {len(configs)} launches in {name}.json, {len(runs)} in {csv.name}")
    errors = []
    print(f"{name}:")
    print(f"{'launch':>34} {'sectors':>10} {'measured hit %':>15} {'model hit %':>12} {'L1 KiB':>7} {'CTAs a SM':>10}")
    for config, launch in zip(configs, sorted(runs)):
        m = runs[launch]
        command = [memhier, "simulate", str(description), "--arch", "h100", "--json"]
        for s in sets(config):
            command += ["--set", s]
        c = memhier_json.run(command)[0]["counters"]
        sectors = m[SECTORS]
        if sectors != c["global_ld_sectors"]:
            raise SystemExit(f"{label(config)}: {sectors:.0f} sectors measured, {c['global_ld_sectors']} described")
        measured = 100 * m[HITS] / sectors
        model = 100 * c["l1_sector_hits"] / c["l1_sector_lookups"]
        l1 = (256 * 1024 - m["launch__shared_mem_config_size"]) / 1024
        ctas = f"{m['sm__ctas_launched.min']:.0f}-{m['sm__ctas_launched.max']:.0f}"
        print(f"{label(config):>34} {sectors:>10.0f} {measured:>15.1f} {model:>12.1f} {l1:>7.0f} {ctas:>10}")
        errors.append(abs(model - measured))
    return errors


def main(argv):
    ap = argparse.ArgumentParser(usage=__doc__)
    ap.add_argument("probe")
    ap.add_argument("memhier", nargs="?", default="build/release/tools/memhier")
    ap.add_argument("--max-error", type=float)
    args = ap.parse_args(argv[1:])
    probe = pathlib.Path(args.probe)
    names = [name for name in PROBES if ncu_csv.exists(probe / f"{name}_ncu.csv")]
    if not names:
        raise SystemExit(f"{probe}: neither l1_sweep_ncu.csv nor l1_policy_ncu.csv")
    errors = []
    for name in names:
        errors += compare(probe, name, args.memhier)
    probe_errors.check_mean("compare_l1_sweep", errors, args.max_error, "hit-rate error", " points", "launches", 2)


if __name__ == "__main__":
    main(sys.argv)
