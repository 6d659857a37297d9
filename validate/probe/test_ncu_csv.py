#!/usr/bin/env python3
"""Tests of ncu_csv.py's reading of zstd-compressed CSVs (validate/pack_results.sh packs committed ones): the same
launches from X.csv.zst as from X.csv, X.csv read from X.csv.zst where only that exists, and errors naming the file.
Run: python3 validate/probe/test_ncu_csv.py (ctest: ncu_csv_py)."""
import pathlib
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import ncu_csv  # noqa: E402

CSV = """==PROF== Connected to process 1 (/tmp/probe)
"ID","Kernel Name","Metric Name","Metric Unit","Metric Value"
"0","copy","dram__bytes_read.sum","byte","67,117,824"
"0","copy","gpu__time_duration.sum","usecond","55.68"
"1","copy","dram__bytes_read.sum","Kbyte","2.5"
"""


class PackedCsv(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.path = pathlib.Path(self.dir.name)
        (self.path / "plain.csv").write_text(CSV)
        subprocess.run(["zstd", "-q", "-o", str(self.path / "packed.csv.zst"), str(self.path / "plain.csv")],
                       check=True)

    def tearDown(self):
        self.dir.cleanup()

    def test_values(self):
        # Hand-computed: base units (Kbyte x 1000, microseconds as nanoseconds x 1000).
        got = ncu_csv.launches(self.path / "plain.csv")
        self.assertEqual(got, {0: {"dram__bytes_read.sum": 67117824.0, "gpu__time_duration.sum": 55680.0},
                               1: {"dram__bytes_read.sum": 2500.0}})

    def test_packed_reads_as_plain(self):
        plain = ncu_csv.launches(self.path / "plain.csv")
        self.assertEqual(ncu_csv.launches(self.path / "packed.csv.zst"), plain)
        # Named without .zst: read from the .zst, which is the only one there.
        self.assertEqual(ncu_csv.source(self.path / "packed.csv"), self.path / "packed.csv.zst")
        self.assertTrue(ncu_csv.exists(self.path / "packed.csv"))
        self.assertEqual(ncu_csv.launches(self.path / "packed.csv"), plain)
        # A plain file is read before a .zst beside it.
        self.assertEqual(ncu_csv.source(self.path / "plain.csv"), self.path / "plain.csv")

    def test_errors_name_the_file(self):
        (self.path / "bad.csv.zst").write_text(CSV)  # not compressed
        with self.assertRaises(SystemExit) as e:
            ncu_csv.launches(self.path / "bad.csv")
        self.assertIn(str(self.path / "bad.csv.zst") + ": cannot unpack", str(e.exception))
        with self.assertRaises(SystemExit) as e:
            ncu_csv.launches(self.path / "none.csv")
        self.assertIn(str(self.path / "none.csv") + ": No such file", str(e.exception))
        self.assertFalse(ncu_csv.exists(self.path / "none.csv"))


if __name__ == "__main__":
    unittest.main()
