#!/usr/bin/env python3
"""Compares validate/probe/l1_data_stage.cu's L1 data-stage passes under ncu with memhier's simulation of the same
launches (validate/probe/l1_data_stage/l1_data_stage.yaml).

Usage: compare_l1_data_stage.py PROBE_DIR [MEMHIER] [--arch h100] [--check]
PROBE_DIR holds l1_data_stage.json (the launches in order, warm-ups included) and l1_data_stage_ncu.csv
(run_l1_data_stage.sh's output). Per request: read passes of the loads
(l1tex__data_pipe_lsu_wavefronts_mem_lgds_cmd_read over l1tex__t_requests_pipe_lsu_mem_global_op_ld; memhier
l1_ld_wavefronts) and write passes of the stores (..._cmd_write over ..._op_st; memhier l1_wavefronts less
l1_ld_wavefronts), measured and simulated.

The simulator gives every request its lines' passes (a gather's missed lines two a pass, its hits as the banks allow)
and nothing for the contention of loads and stores of different warps in the data stage, which costs the GPU 0.07 to
0.44 passes a line each way. So copies and read-modify-writes of more than one warp an SM are reported, not checked;
--check: exit 1 unless every other launch is within 1% of the GPU on both counts, and the gathers within 15% (the
ctest l1_data_stage_probe)."""
import argparse
import concurrent.futures
import json
import pathlib

import memhier_json
import ncu_csv

HERE = pathlib.Path(__file__).resolve().parent

KINDS = {"load": 0, "reread": 0, "copy": 1, "store": 2, "rmw": 3, "gather": 4}
READ = "l1tex__data_pipe_lsu_wavefronts_mem_lgds_cmd_read.sum"
WRITE = "l1tex__data_pipe_lsu_wavefronts_mem_lgds_cmd_write.sum"
LOADS = "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"
STORES = "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"


def simulated(memhier, arch, launch, sms):
    settings = {"kind": KINDS[launch["kernel"]], "width": launch["width"], "cg": int(launch["cg"]),
                "stride": 0 if launch["kernel"] == "reread" else 32, "requests": launch["requests_per_warp"],
                "spin": launch["spin_cycles"], "blocks": launch["blocks"], "threads": launch["threads"],
                "runs": 2 if launch["source"] == "l2" else 1}
    if launch["table_lines"]:
        settings["table_lines"] = launch["table_lines"]
    else:  # the table only sizes array a: as large as the loads' footprint
        settings["table_lines"] = 1
    cmd = [memhier, "simulate", HERE / "l1_data_stage" / "l1_data_stage.yaml", "--arch", arch, "--json", "--threads",
           "1", "--keep-cache"]
    for k, v in settings.items():
        cmd += ["--set", f"{k}={v}"]
    return memhier_json.run(cmd)[-1]["counters"]


def tolerance(launch):
    """The relative error --check allows, or None where the comparison is reported only."""
    if launch["kernel"] in ("copy", "rmw") and launch["threads"] > 32:
        return None
    return 0.15 if launch["kernel"] == "gather" else 0.01


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("probe_dir", type=pathlib.Path)
    ap.add_argument("memhier", nargs="?", default="build/release/tools/memhier")
    ap.add_argument("--arch", default="h100")
    ap.add_argument("--check", action="store_true", help="exit 1 if a checked launch is off by more than allowed")
    ap.add_argument("--jobs", type=int, default=2, help="simulations run at once")
    args = ap.parse_args()
    path = args.probe_dir / "l1_data_stage.json"
    if not path.is_file():
        raise SystemExit(f"compare_l1_data_stage: {path}: missing (run_l1_data_stage.sh writes it)")
    probe = json.loads(path.read_text())
    launches = probe["launches"]
    csv = args.probe_dir / "l1_data_stage_ncu.csv"
    measured = ncu_csv.launches(csv)
    if len(measured) != len(launches):
        raise SystemExit(f"compare_l1_data_stage: {len(measured)} launches in {csv}, {len(launches)} in {path}")
    ncu_csv.require(csv, measured, [READ, WRITE, LOADS, STORES])
    pairs = [(l, measured[k]) for l, k in zip(launches, sorted(measured)) if not l["warm_up"]]
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        sims = list(pool.map(lambda p: simulated(args.memhier, args.arch, p[0], probe["sms"]), pairs))
    print(f"{'kernel':7} {'source':6} {'width':>5} {'cg':>2} {'spin':>5} {'warps/SM':>8} | "
          f"{'read passes a load':^17} | {'write passes a store':^17} | checked")
    print(f"{'':7} {'':6} {'':>5} {'':>2} {'':>5} {'':>8} | {'GPU':>8} {'model':>8} | {'GPU':>8} {'model':>8} |")
    failed = []
    for (l, m), c in zip(pairs, sims):
        row = []
        ok = True
        tol = tolerance(l)
        for gpu_passes, gpu_requests, passes, requests in (
                (m[READ], m[LOADS], c["l1_ld_wavefronts"], c["global_ld_requests"]),
                (m[WRITE], m[STORES], c["l1_wavefronts"] - c["l1_ld_wavefronts"], c["global_st_requests"])):
            if gpu_requests == 0 and requests == 0:
                row.append(f"{'-':>8} {'-':>8}")
                continue
            gpu = gpu_passes / gpu_requests if gpu_requests else float("nan")
            model = passes / requests if requests else float("nan")
            row.append(f"{gpu:8.3f} {model:8.3f}")
            if tol is not None and not abs(model - gpu) <= tol * gpu:
                ok = False
        warps = l["threads"] // 32 * l["blocks"] // probe["sms"]
        mark = "-" if tol is None else (f"{tol:.0%}" if ok else f"{tol:.0%} FAILED")
        print(f"{l['kernel']:7} {l['source']:6} {l['width']:5d} {int(l['cg']):2d} {l['spin_cycles']:5d} {warps:8d} | "
              f"{row[0]} | {row[1]} | {mark}")
        if not ok:
            failed.append(l)
    if failed:
        print(f"{len(failed)} checked launch(es) outside their tolerance")
        if args.check:
            raise SystemExit(1)


if __name__ == "__main__":
    main()
