"""Compares the partly-written-sector probe (validate/probe/partial_writes.cu under ncu) with memhier's predictions
for its description (validate/probe/partial_writes/pw_open.yaml): DRAM bytes read and written by sectors written a word
at a time, by how many are open at once. pw_full (whole lines) is the reference and is only printed.

Usage: compare_partial_writes.py PROBE_DIR [MEMHIER] [--max-error MB]
  PROBE_DIR    a folder with partial_writes.json and partial_writes_ncu.csv (validate/results/h100-2026-11-24f/probe)
  MEMHIER      the memhier to predict with (default build/release/tools/memhier)
  --max-error  exit 1 when the mean |DRAM error| (reads and writes of every pw_open launch, MB) exceeds MB"""
import argparse
import json
import pathlib
import sys

import memhier_json
import ncu_csv
import probe_errors

HERE = pathlib.Path(__file__).resolve().parent
DESCRIPTION = HERE / "partial_writes" / "pw_open.yaml"
READ, WRITE = "dram__bytes_read.sum", "dram__bytes_write.sum"


def main(argv):
    ap = argparse.ArgumentParser(usage=__doc__)
    ap.add_argument("probe")
    ap.add_argument("memhier", nargs="?", default="build/release/tools/memhier")
    ap.add_argument("--max-error", type=float)
    args = ap.parse_args(argv[1:])
    probe = pathlib.Path(args.probe)
    runs = ncu_csv.launches(probe / "partial_writes_ncu.csv")
    ncu_csv.require(probe / "partial_writes_ncu.csv", runs,
                    [READ, WRITE, "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"])
    try:
        configs = json.loads((probe / "partial_writes.json").read_text())["runs"]
    except (OSError, ValueError, KeyError) as e:
        raise SystemExit(f"{probe / 'partial_writes.json'}: not the probe's output ({e})")
    if len(configs) != len(runs):
        raise SystemExit(f"{probe}: {len(configs)} launches in partial_writes.json, "
                         f"{len(runs)} in partial_writes_ncu.csv")
    errors = []
    print(f"{'words':>5} {'group':>6} {'open sectors':>12} {'DRAM read MB':>13} {'model':>7} {'DRAM write MB':>14} "
          f"{'model':>7} {'model fills':>11}")
    for config, launch in zip(configs, sorted(runs)):
        m = runs[launch]
        if config["kernel"] != "pw_open":
            print(f"{config['kernel']}: DRAM read {m[READ] / 1e6:.1f} MB, written {m[WRITE] / 1e6:.1f} MB (reference)")
            continue
        command = [args.memhier, "simulate", str(DESCRIPTION), "--arch", "h100", "--json",
                   "--set", f"group={config['group']}", "--set", f"words={config['words']}"]
        c = memhier_json.run(command)[0]["counters"]
        sectors = m["l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"]
        if sectors != c["global_st_sectors"]:
            raise SystemExit(f"group {config['group']}: {sectors:.0f} store sectors measured, "
                             f"{c['global_st_sectors']} described")
        read, write = c["dram_read_bytes"] / 1e6, c["dram_write_bytes"] / 1e6
        print(f"{config['words']:>5} {config['group']:>6} {config['open_sectors']:>12} {m[READ] / 1e6:>13.1f} "
              f"{read:>7.1f} {m[WRITE] / 1e6:>14.1f} {write:>7.1f} {c['l2_partial_fills']:>11}")
        errors += [abs(read - m[READ] / 1e6), abs(write - m[WRITE] / 1e6)]
    probe_errors.check_mean("compare_partial_writes", errors, args.max_error, "DRAM error", " MB", "comparisons")


if __name__ == "__main__":
    main(sys.argv)
