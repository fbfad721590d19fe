"""The tutorial scripts of examples/python, run as a user runs them: the two generators write
their traces into the current folder, then simulate_tutorial.py prints ASTRA-sim's lines, 117780
cycles per NPU for the all-reduce and 405520 for the three nodes (see test_run.py)."""
import os
import subprocess
import sys
import tempfile
import unittest

EXAMPLES = os.path.join(os.environ["CHAKRASIM_SOURCE_DIR"], "examples", "python")


class TutorialScripts(unittest.TestCase):
    def test_generate_then_simulate(self):
        with tempfile.TemporaryDirectory() as dir:
            for script in ["generate_all_reduce.py", "generate_3nodes.py"]:
                subprocess.run([sys.executable, os.path.join(EXAMPLES, script)], cwd=dir, check=True)
            self.assertEqual(sorted(os.listdir(os.path.join(dir, "3nodes"))), [f"3nodes.{n}.et" for n in range(8)])
            out = subprocess.run([sys.executable, os.path.join(EXAMPLES, "simulate_tutorial.py")], cwd=dir,
                                 check=True, capture_output=True, text=True).stdout
        lines = out.splitlines()
        self.assertEqual(len(lines), 16)
        for npu in range(8):
            self.assertIn(f"allreduce/allreduce: sys[{npu}] finished, 117780 cycles, "
                          "exposed communication 117780 cycles.", lines)
            self.assertIn(f"3nodes/3nodes: sys[{npu}] finished, 405520 cycles, "
                          "exposed communication 355520 cycles.", lines)


if __name__ == "__main__":
    unittest.main()
