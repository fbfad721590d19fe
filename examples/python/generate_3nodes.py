"""ASTRA-sim's tutorial three-node graph (HotI 2024, demo 1) written against chakrasim's Python
module, into ./3nodes/3nodes.<npu>.et for 8 NPUs:

    1 All-Reduce-1MB  ->  2 All-Gather-2MB
                      ->  3 Compute-50us

Nodes 2 and 3 both wait for node 1 and then run side by side. On the tutorial's 8-NPU ring
(Ring_8.yml, Ring_sys.json) ASTRA-sim reports 405520 cycles on every NPU: the all-reduce's
117780 ns, then the all-gather, which outlasts the 50 us of compute.
"""
import os

from chakrasim.et import (
    ALL_GATHER,
    ALL_REDUCE,
    COMM_COLL_NODE,
    COMP_NODE,
    AttributeProto as ChakraAttr,
    BoolList,
    GlobalMetadata,
    Node as ChakraNode,
    encode_message,
)

NPUS = 8
MIB = 1 << 20


def collective(node_id: int, name: str, comm_type: int, size_bytes: int) -> ChakraNode:
    node = ChakraNode()
    node.id = node_id
    node.name = name
    node.type = COMM_COLL_NODE
    node.attr.append(ChakraAttr(name="is_cpu_op", bool_val=False))
    node.attr.append(ChakraAttr(name="comm_type", int64_val=comm_type))
    node.attr.append(ChakraAttr(name="comm_size", uint64_val=size_bytes))
    node.attr.append(ChakraAttr(name="involved_dim", bool_list=BoolList(values=[True])))
    return node


def three_nodes() -> list:
    all_reduce = collective(1, "All-Reduce-1MB", ALL_REDUCE, MIB)
    all_gather = collective(2, "All-Gather-2MB", ALL_GATHER, 2 * MIB)
    all_gather.data_deps.append(all_reduce.id)
    compute = ChakraNode()
    compute.id = 3
    compute.name = "Compute-50us"
    compute.type = COMP_NODE
    compute.duration_micros = 50
    compute.attr.append(ChakraAttr(name="is_cpu_op", bool_val=False))
    compute.data_deps.append(all_reduce.id)
    return [all_reduce, all_gather, compute]


def main() -> None:
    os.makedirs("3nodes", exist_ok=True)
    for npu in range(NPUS):
        with open(f"3nodes/3nodes.{npu}.et", "wb") as et:
            encode_message(et, GlobalMetadata(version="0.0.4"))
            for node in three_nodes():
                encode_message(et, node)


if __name__ == "__main__":
    main()
