#!/usr/bin/env python3
"""Prints ncu --csv output as one block per launch: metric = value (launches numbered in order)."""
import csv
import sys

rows = [r for r in csv.reader(open(sys.argv[1])) if r]
start = next(i for i, r in enumerate(rows) if r and r[0] == "ID")
header = rows[start]
launches = {}
for r in rows[start + 1:]:
    if len(r) != len(header):
        continue
    d = dict(zip(header, r))
    key = (int(d["ID"]), d["Kernel Name"].split("(")[0])
    launches.setdefault(key, {})[d["Metric Name"]] = d["Metric Value"].replace(",", "")
for (i, name), metrics in sorted(launches.items()):
    print(i, name)
    for m in sorted(metrics):
        print(f"    {m} = {metrics[m]}")
