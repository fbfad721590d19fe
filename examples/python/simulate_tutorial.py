"""Simulates the traces generate_all_reduce.py and generate_3nodes.py write (run them first, in
the same folder) on the tutorial's system and network, given as dicts of the files' keys:

    PYTHONPATH=build/python python3 examples/python/simulate_tutorial.py

ASTRA-sim prints 117780 cycles per NPU for the all-reduce and 405520 for the three nodes.
"""
import chakrasim

# Ring_sys.json of the tutorial.
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
# Ring_8.yml: 8 NPUs in a ring of 50 GB/s (2^30 B/s), 500 ns links.
NETWORK = {"topology": ["Ring"], "npus_count": [8], "bandwidth": [50.0], "latency": [500.0]}


def main() -> None:
    for prefix in ["allreduce/allreduce", "3nodes/3nodes"]:
        # The tutorial runs ASTRA-sim's congestion-aware analytical backend.
        result = chakrasim.run(workload=prefix, system=SYSTEM, network=NETWORK, backend="congestion-aware")
        for npu, finish_ns in enumerate(result.finish_ns):
            print(f"{prefix}: sys[{npu}] finished, {finish_ns} cycles, "
                  f"exposed communication {result.exposed_comm_ns[npu]} cycles.")


if __name__ == "__main__":
    main()
