"""chakrasim.sweep: the issue's sweep (4 bandwidths x 3 all-reduce algorithms) over the tutorial's
all-reduce, from a dict and from a spec file, as `chakrasim sweep` runs it: 12 rows, the
tutorial's own system (50 GB/s, ring) at 117780 ns."""
import json
import os
import shutil
import tempfile
import unittest

import chakrasim
from chakrasim.et import GlobalMetadata, encode_message
from test_run import NETWORK, SYSTEM, all_reduce_1mib


class Sweep(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="chakrasim_sweep_")
        self.addCleanup(shutil.rmtree, self.dir, ignore_errors=True)
        for rank in range(8):
            with open(os.path.join(self.dir, f"ar.{rank}.et"), "wb") as et:
                encode_message(et, GlobalMetadata(version="0.0.4"))
                for node in all_reduce_1mib():
                    encode_message(et, node)
        with open(os.path.join(self.dir, "system.json"), "w") as f:
            json.dump(SYSTEM, f)
        with open(os.path.join(self.dir, "network.yml"), "w") as f:
            json.dump(NETWORK, f)  # JSON is YAML
        self.spec = {
            "base": {
                "workload": os.path.join(self.dir, "ar"),
                "system": os.path.join(self.dir, "system.json"),
                "network": os.path.join(self.dir, "network.yml"),
            },
            "axes": {
                "network.bandwidth[0]": [25, 50, 100, 200],
                "system.all-reduce-implementation": [["ring"], ["direct"], ["halvingDoubling"]],
            },
            "cost": "network.bandwidth[0]",
        }

    def test_a_dict_spec(self):
        out = os.path.join(self.dir, "r.csv")
        result = chakrasim.sweep(self.spec, out=out, html=os.path.join(self.dir, "r.html"), jobs=2)
        self.assertEqual(len(result), 12)
        rows = result.rows()
        self.assertEqual([r["point"] for r in rows], list(range(12)))
        tutorial = rows[3]
        self.assertEqual(tutorial["network.bandwidth[0]"], 50)
        self.assertEqual(tutorial["system.all-reduce-implementation"], '["ring"]')
        self.assertEqual(tutorial["status"], "ok")
        self.assertEqual(tutorial["iteration_ns"], 117780)
        self.assertTrue(os.path.exists(out))
        self.assertTrue(os.path.exists(os.path.join(self.dir, "r.html")))
        # The CSV the command line writes, row for row (apart from wall times).
        with open(out) as f:
            lines = f.read().splitlines()
        self.assertEqual(lines[0].split(",")[: len(result.columns)], result.columns)
        self.assertEqual(len(lines), 13)

    def test_a_spec_file_and_the_dataframe(self):
        path = os.path.join(self.dir, "sweep.yaml")
        with open(path, "w") as f:
            json.dump(self.spec, f)
        result = chakrasim.sweep(path)
        try:
            import pandas  # noqa: F401
        except ImportError:
            with self.assertRaises(ImportError):
                result.to_dataframe()
            return
        frame = result.to_dataframe()
        self.assertEqual(len(frame), 12)
        self.assertEqual(frame.loc[3, "iteration_ns"], 117780)

    def test_errors(self):
        with self.assertRaises(chakrasim.Error) as e:
            chakrasim.sweep({"axes": {"backend": ["x"]}})
        self.assertIn("base: missing", str(e.exception))
        bad = {"base": self.spec["base"], "axes": {"system.all-reduce-implementation": [["sideways"]]}}
        rows = chakrasim.sweep(bad).rows()
        self.assertEqual(rows[0]["status"], "error")
        self.assertIn("sideways", rows[0]["error"])


if __name__ == "__main__":
    unittest.main()
