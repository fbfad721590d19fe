"""chakrasim.run on ASTRA-sim's tutorial (HotI 2024, demo 1): 8 NPUs in a ring of 50 GB/s
(2^30 B/s) and 500 ns links; ring algorithms, 4 chunks with one active, 10 ns endpoint delay,
localBWAware, 50 GB/s local memory (Ring_8.yml and Ring_sys.json).

- The 1 MiB all-reduce (generate_all_reduce.py): ASTRA-sim prints 117780 cycles on every NPU,
  as `chakrasim demo` does.
- The three nodes (generate_3nodes.py): a 1 MiB all-reduce, then a 2 MiB all-gather and 50 us of
  compute side by side: ASTRA-sim prints 405520 cycles on every NPU, 355520 of them exposed
  communication (405520 - the 50000 ns of GPU compute).
"""
import os
import tempfile
import threading
import unittest

import chakrasim
from chakrasim.et import (
    ALL_REDUCE,
    COMM_COLL_NODE,
    COMM_RECV_NODE,
    COMP_NODE,
    ChakraAttr,
    ChakraNode,
    BoolList,
    GlobalMetadata,
    encode_message,
)
from test_et import tutorial_three_nodes

SYSTEM = {
    "scheduling-policy": "LIFO",
    "endpoint-delay": 10,
    "active-chunks-per-dimension": 1,
    "preferred-dataset-splits": 4,
    "all-reduce-implementation": ["ring"],
    "all-gather-implementation": ["ring"],
    "reduce-scatter-implementation": ["ring"],
    "all-to-all-implementation": ["ring"],
    "collective-optimization": "localBWAware",
    "local-mem-bw": 50,
    "boost-mode": 0,
}
NETWORK = {"topology": ["Ring"], "npus_count": [8], "bandwidth": [50.0], "latency": [500.0]}
NPUS = 8


def all_reduce_1mib():
    node = ChakraNode()
    node.id = 1
    node.name = "All-Reduce"
    node.type = COMM_COLL_NODE
    node.attr.append(ChakraAttr(name="is_cpu_op", bool_val=False))
    node.attr.append(ChakraAttr(name="comm_type", int64_val=ALL_REDUCE))
    node.attr.append(ChakraAttr(name="comm_size", uint64_val=1 << 20))
    node.attr.append(ChakraAttr(name="involved_dim", bool_list=BoolList(values=[True])))
    return [node]


class TutorialFigures(unittest.TestCase):
    def test_all_reduce_takes_117780_ns_on_every_npu(self):
        for backend in ["congestion-unaware", "congestion-aware"]:
            with self.subTest(backend=backend):
                result = chakrasim.run(workload=[all_reduce_1mib()] * NPUS, system=SYSTEM, network=NETWORK,
                                       backend=backend)
                self.assertEqual(result.finish_ns, [117780] * NPUS)
                self.assertEqual(result.exposed_comm_ns, [117780] * NPUS)
                self.assertEqual(result.max_finish_ns, 117780)
                self.assertEqual(result.npus, NPUS)

    def test_three_nodes_take_405520_ns_on_every_npu(self):
        for backend in ["congestion-unaware", "congestion-aware"]:
            with self.subTest(backend=backend):
                result = chakrasim.run(workload=[tutorial_three_nodes()] * NPUS, system=SYSTEM, network=NETWORK,
                                       backend=backend)
                self.assertEqual(result.finish_ns, [405520] * NPUS)
                self.assertEqual(result.gpu_compute_ns, [50000] * NPUS)
                self.assertEqual(result.exposed_comm_ns, [355520] * NPUS)
                # The time split: the compute overlaps the all-gather, whose rest is exposed.
                self.assertEqual(result.compute_ns, [50000] * NPUS)
                self.assertEqual(result.collective_ns, [355520] * NPUS)
                self.assertEqual(result.idle_ns, [0] * NPUS)
                self.assertEqual(result.nodes, [3] * NPUS)

    def test_files_and_memory_give_the_same_result(self):
        with tempfile.TemporaryDirectory() as dir:
            for npu in range(NPUS):
                with open(os.path.join(dir, f"3nodes.{npu}.et"), "wb") as et:
                    encode_message(et, GlobalMetadata(version="0.0.4"))
                    for node in tutorial_three_nodes():
                        encode_message(et, node)
            with open(os.path.join(dir, "network.yml"), "w") as f:
                f.write("topology: [ Ring ]\nnpus_count: [ 8 ]\nbandwidth: [ 50.0 ]  # GB/s\nlatency: [ 500.0 ]  # ns\n")
            import json
            with open(os.path.join(dir, "system.json"), "w") as f:
                json.dump(SYSTEM, f)
            from pathlib import Path
            from_files = chakrasim.run(workload=os.path.join(dir, "3nodes"), system=Path(dir) / "system.json",
                                       network=os.path.join(dir, "network.yml"))
        pairs = [(GlobalMetadata(version="0.0.4"), tutorial_three_nodes()) for _ in range(NPUS)]
        in_memory = chakrasim.run(workload=pairs, system=SYSTEM, network=NETWORK)
        self.assertEqual(from_files.finish_ns, [405520] * NPUS)
        self.assertEqual(in_memory.rows(), from_files.rows())

    def test_ranks_may_differ(self):
        # NPU 0 computes 10 us longer before the all-reduce; the others wait for it in the ring.
        slow = [ChakraNode(id=0, name="warmup", type=COMP_NODE, duration_micros=10)] + all_reduce_1mib()
        slow[1].data_deps.append(0)
        result = chakrasim.run(workload=[slow] + [all_reduce_1mib()] * (NPUS - 1), system=SYSTEM, network=NETWORK)
        self.assertGreaterEqual(min(result.finish_ns), 117780)
        self.assertGreaterEqual(result.finish_ns[0], 117780 + 10000)
        self.assertEqual(result.gpu_compute_ns[0], 10000)
        self.assertEqual(result.gpu_compute_ns[1:], [0] * (NPUS - 1))


class Results(unittest.TestCase):
    def setUp(self):
        self.result = chakrasim.run(workload=[tutorial_three_nodes()] * NPUS, system=SYSTEM, network=NETWORK)

    def test_rows_and_summary(self):
        rows = self.result.rows()
        self.assertEqual(len(rows), NPUS)
        self.assertEqual(rows[3]["npu"], 3)
        self.assertEqual(rows[3]["finish_ns"], 405520)
        self.assertIn("405.520 µs", self.result.summary)
        self.assertIn("max_finish_ns=405520", repr(self.result))

    def test_to_dataframe(self):
        try:
            import pandas  # noqa: F401
        except ImportError:
            with self.assertRaisesRegex(ImportError, "needs pandas.*python3-pandas"):
                self.result.to_dataframe()
            return
        frame = self.result.to_dataframe()
        self.assertEqual(list(frame.index), list(range(NPUS)))
        self.assertEqual(list(frame["finish_ns"]), [405520] * NPUS)
        self.assertEqual(int(frame["exposed_comm_ns"].max()), 355520)


class Errors(unittest.TestCase):
    def test_a_bad_key_value_raises_chakrasims_message(self):
        bad = dict(SYSTEM, **{"all-reduce-implementation": ["spiral"]})
        with self.assertRaisesRegex(chakrasim.Error, "the system dict.*all-reduce-implementation.*spiral"):
            chakrasim.run(workload=[all_reduce_1mib()] * NPUS, system=bad, network=NETWORK)

    def test_a_missing_file_is_named(self):
        with self.assertRaisesRegex(chakrasim.Error, "no/such/prefix.0.et"):
            chakrasim.run(workload="no/such/prefix", system=SYSTEM, network=NETWORK)

    def test_ranks_must_match_the_network(self):
        with self.assertRaisesRegex(chakrasim.Error, "4 ranks given, but the network has 8 NPUs"):
            chakrasim.run(workload=[all_reduce_1mib()] * 4, system=SYSTEM, network=NETWORK)

    def test_an_unknown_backend_lists_the_valid_ones(self):
        with self.assertRaisesRegex(chakrasim.Error, "congestion-aware"):
            chakrasim.run(workload=[all_reduce_1mib()] * NPUS, system=SYSTEM, network=NETWORK, backend="magic")

    def test_a_workload_entry_that_is_not_a_node(self):
        with self.assertRaisesRegex(TypeError, r"workload\[2\]\[0\]: expected a chakrasim.et.Node"):
            chakrasim.run(workload=[all_reduce_1mib()] * 2 + [[1]] + [all_reduce_1mib()] * 5, system=SYSTEM,
                          network=NETWORK)

    def test_an_unknown_network_key_is_a_warning(self):
        with self.assertWarnsRegex(RuntimeWarning, "bandwith"):
            result = chakrasim.run(workload=[all_reduce_1mib()] * NPUS, system=SYSTEM,
                                   network=dict(NETWORK, bandwith=[1.0]))
        self.assertTrue(any("bandwith" in w for w in result.warnings))

    def test_a_deadlock_raises_with_the_report(self):
        # NPU 0 waits for a message NPU 1 never sends; the other NPUs compute 1 us.
        receive = ChakraNode(id=0, name="wait_for_npu1", type=COMM_RECV_NODE, attr=[
            ChakraAttr(name="is_cpu_op", bool_val=False), ChakraAttr(name="comm_src", int32_val=1),
            ChakraAttr(name="comm_tag", int32_val=5), ChakraAttr(name="comm_size", int64_val=1024)])
        with self.assertRaisesRegex(chakrasim.DeadlockError, "wait_for_npu1"):
            compute = ChakraNode(id=0, name="compute", type=COMP_NODE, duration_micros=1)
            chakrasim.run(workload=[[receive]] + [[compute]] * (NPUS - 1), system=SYSTEM, network=NETWORK)
        self.assertTrue(issubclass(chakrasim.DeadlockError, chakrasim.Error))


class Threads(unittest.TestCase):
    def test_runs_in_threads_give_the_same_figures(self):
        results = [None] * 4

        def run(i):
            results[i] = chakrasim.run(workload=[tutorial_three_nodes()] * NPUS, system=SYSTEM, network=NETWORK,
                                       folding=False).finish_ns

        threads = [threading.Thread(target=run, args=(i,)) for i in range(len(results))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(results, [[405520] * NPUS] * len(results))


if __name__ == "__main__":
    unittest.main()
