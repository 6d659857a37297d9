"""Captured (tracer) vs described (kernel description) counts per suite case, from run_capture.sh's info/ folder.
For warm cases the capture holds two runs (warm-up and counted run); the description holds one, so counts are
compared per launch. Usage: python3 compare_capture.py CAPTURE_DIR > comparison.txt"""
import json
import pathlib
import sys

root = pathlib.Path(sys.argv[1])
keys = ["memory_instructions", "lane_accesses", "barriers"]
spaces = ["global", "shared", "local"]
print(f"{'case':48} {'launch':>6} " + " ".join(f"{k:>22}" for k in keys + spaces))
exact = total = 0
for described in sorted(root.glob("info/*.described.json")):
    name = described.name.removesuffix(".described.json")
    captured = root / "info" / f"{name}.captured.json"
    try:
        d = json.loads(described.read_text())["kernels"]
        c = json.loads(captured.read_text())["kernels"]
    except (OSError, ValueError, KeyError):
        print(f"{name:48} not captured")
        continue
    per_launch = len(c) // max(len(d), 1)  # warm cases ran twice
    c = c[len(c) - len(d):] if per_launch > 1 else c
    for i, (dk, ck) in enumerate(zip(d, c)):
        dc, cc = dk["counts"], ck["counts"]
        cells, same = [], True
        for k in keys:
            same &= dc[k] == cc[k]
            cells.append(f"{cc[k]:>10}/{dc[k]:<11}")
        for s in spaces:
            same &= dc["by_space"][s] == cc["by_space"][s]
            cells.append(f"{cc['by_space'][s]:>10}/{dc['by_space'][s]:<11}")
        total += 1
        exact += same
        print(f"{name:48} {i:>6} " + " ".join(cells) + ("" if same else "  DIFFERS"))
print(f"\n{exact} of {total} launches: captured counts (left) equal the description's (right) exactly")
