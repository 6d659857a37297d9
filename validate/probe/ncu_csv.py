"""Reads `ncu --csv --metrics ...` output: the launches it profiled, each a {metric name: value in base units}.

ncu writes its CSV to stdout after the profiled program's own output and its ==PROF== lines, so the table starts at
the header line beginning with "ID"."""
import csv
import io
import pathlib

UNITS = {"byte": 1, "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9, "sector": 1, "request": 1, "": 1, "%": 1,
         "ns": 1, "usecond": 1e3, "msecond": 1e6, "cycle": 1, "inst": 1, "register/thread": 1,
         "block": 1, "warp": 1}


def launches(path):
    """{launch ID: {metric: value}} of an ncu --csv file; SystemExit naming the file on anything unexpected."""
    path = pathlib.Path(path)
    try:
        text = path.read_text().splitlines()
    except OSError as e:
        raise SystemExit(f"{path}: {e.strerror}")
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
