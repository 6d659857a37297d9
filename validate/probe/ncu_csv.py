"""Reads `ncu --csv --metrics ...` output: the launches it profiled, each a {metric name: value in base units}.

ncu writes its CSV to stdout after the profiled program's own output and its ==PROF== lines, so the table starts at
the header line beginning with "ID".

Committed GPU runs keep their ncu CSVs zstd-compressed (validate/pack_results.sh): X.csv is read from X.csv.zst where
only that exists (through the `zstd` command, which scripts/setup.sh installs), as `memhier validate` does."""
import csv
import io
import pathlib
import shutil
import subprocess

UNITS = {"byte": 1, "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9, "sector": 1, "request": 1, "": 1, "%": 1,
         "ns": 1, "usecond": 1e3, "msecond": 1e6, "cycle": 1, "inst": 1, "register/thread": 1,
         "block": 1, "warp": 1}


def source(path):
    """The file `path` is read from: itself, or where it does not exist and `path`.zst does, that one."""
    path = pathlib.Path(path)
    packed = path.with_name(path.name + ".zst")
    return packed if not path.exists() and path.suffix != ".zst" and packed.exists() else path


def exists(path):
    """Whether `path` or its compressed copy `path`.zst exists."""
    return source(path).exists()


def read_text(path):
    """The text of `path` (or of `path`.zst, unpacked); SystemExit naming the file read if it cannot be read."""
    path = source(path)
    if path.suffix != ".zst":
        try:
            return path.read_text()
        except OSError as e:
            raise SystemExit(f"{path}: {e.strerror}")
    if shutil.which("zstd") is None:
        raise SystemExit(f"{path}: is zstd-compressed and the zstd command is not installed (bash scripts/setup.sh)")
    done = subprocess.run(["zstd", "-dcq", "--", str(path)], capture_output=True)
    if done.returncode != 0:
        raise SystemExit(f"{path}: cannot unpack: {done.stderr.decode(errors='replace').strip()}")
    try:
        return done.stdout.decode()
    except UnicodeDecodeError as e:
        raise SystemExit(f"{path}: unpacks to bytes that are not UTF-8 text (byte {e.start})")


def launches(path):
    """{launch ID: {metric: value}} of an ncu --csv file (or of its .zst); SystemExit naming the file on anything
    unexpected."""
    path = source(path)
    text = read_text(path).splitlines()
    start = next((i for i, line in enumerate(text) if line.startswith('"ID"')), None)
    if start is None:
        raise SystemExit(f'{path}: no ncu --csv header ("ID",...)')
    out = {}
    for row in csv.DictReader(io.StringIO("\n".join(text[start:]))):
        if row["Metric Value"] == "n/a":  # a metric ncu cannot compute for this launch (a .sum of a ratio)
            continue
        unit = row["Metric Unit"]
        if unit not in UNITS:
            raise SystemExit(f"{path}: unexpected unit {unit!r} for {row['Metric Name']}")
        value = float(row["Metric Value"].replace(",", "")) * UNITS[unit]
        out.setdefault(int(row["ID"]), {})[row["Metric Name"]] = value
    return out


def require(path, runs, metrics):
    """SystemExit naming the file, launch and metric if a launch of `runs` (from launches(path)) lacks one of
    `metrics`: the file is of another probe, or ncu could not collect it."""
    for launch, values in sorted(runs.items()):
        for metric in metrics:
            if metric not in values:
                raise SystemExit(f"{path}: launch {launch} has no {metric}")
