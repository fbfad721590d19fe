"""ASTRA-sim's tutorial all-reduce (HotI 2024, demo 1) written against chakrasim's Python module:
one 1 MiB all-reduce per NPU, 8 NPUs, into ./allreduce/allreduce.<npu>.et.

Only the imports differ from the Chakra version, which takes the same names from
chakra.et_def.et_def_pb2 and chakra.third_party.utils.protolib.
"""
import os

from chakrasim.et import (
    ALL_REDUCE,
    COMM_COLL_NODE,
    AttributeProto as ChakraAttr,
    BoolList,
    GlobalMetadata,
    Node as ChakraNode,
    encode_message,
)

NPUS = 8
ALL_REDUCE_BYTES = 1 << 20  # 1 MiB per NPU


def all_reduce_node() -> ChakraNode:
    node = ChakraNode()
    node.id = 1
    node.name = "All-Reduce"
    node.type = COMM_COLL_NODE
    node.attr.append(ChakraAttr(name="is_cpu_op", bool_val=False))
    node.attr.append(ChakraAttr(name="comm_type", int64_val=ALL_REDUCE))
    node.attr.append(ChakraAttr(name="comm_size", uint64_val=ALL_REDUCE_BYTES))
    # One entry per network dimension: the ring is the only one, and the collective uses it.
    node.attr.append(ChakraAttr(name="involved_dim", bool_list=BoolList(values=[True])))
    return node


def main() -> None:
    os.makedirs("allreduce", exist_ok=True)
    for npu in range(NPUS):
        with open(f"allreduce/allreduce.{npu}.et", "wb") as et:
            encode_message(et, GlobalMetadata(version="0.0.4"))
            encode_message(et, all_reduce_node())


if __name__ == "__main__":
    main()
