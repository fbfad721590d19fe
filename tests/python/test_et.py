"""chakrasim.et: Chakra's message classes, their framing in .et files, and the C++ reader's view
of what Python wrote.

The byte-level expectations are worked out by hand from the protobuf wire format: a field is a
tag byte (field number << 3 | wire type) then its value, and an .et file is each message's
length as a varint followed by its bytes (docs/chakra-format.md §1.1).
"""
import io
import json
import os
import subprocess
import tempfile
import unittest

import chakrasim
from chakrasim.et import (
    ALL_GATHER,
    ALL_REDUCE,
    BARRIER,
    COMM_COLL_NODE,
    COMP_NODE,
    INVALID_NODE,
    AttributeProto,
    BoolList,
    ChakraAttr,
    ChakraNode,
    GlobalMetadata,
    Node,
    decode_message,
    decodeMessage,
    encode_message,
    encodeMessage,
)


def attribute_names(node):
    return [a.name for a in node.attr]


class MessageClasses(unittest.TestCase):
    def test_chakra_names_are_the_same_classes(self):
        self.assertIs(ChakraNode, Node)
        self.assertIs(ChakraAttr, AttributeProto)
        self.assertIs(encodeMessage, encode_message)
        self.assertIs(decodeMessage, decode_message)

    def test_enum_constants_follow_the_schema(self):
        self.assertEqual((INVALID_NODE, COMP_NODE, COMM_COLL_NODE), (0, 4, 7))
        self.assertEqual((ALL_REDUCE, ALL_GATHER, BARRIER), (0, 2, 9))
        self.assertEqual(chakrasim.et.NodeType_NAMES[COMP_NODE], "COMP_NODE")
        self.assertEqual(chakrasim.et.CollectiveCommType_NAMES[ALL_GATHER], "ALL_GATHER")

    def test_fields_are_set_by_attribute_and_by_keyword(self):
        node = Node()
        node.id = 3
        node.name = "gemm"
        node.type = COMP_NODE
        node.duration_micros = 50
        node.data_deps.append(1)
        node.data_deps.extend([2, 2])
        node.ctrl_deps = [0]
        self.assertEqual(node, Node(id=3, name="gemm", type=COMP_NODE, duration_micros=50, data_deps=[1, 2, 2],
                                    ctrl_deps=[0]))
        self.assertEqual(list(node.data_deps), [1, 2, 2])
        self.assertEqual(node.data_deps, [1, 2, 2])
        self.assertEqual(len(node.data_deps), 3)
        self.assertEqual(node.data_deps[-1], 2)
        node.data_deps[0] = 7
        del node.data_deps[1]
        self.assertEqual(node.data_deps, [7, 2])

    def test_attributes_keep_the_oneof_member_set(self):
        node = Node(id=1)
        node.attr.append(ChakraAttr(name="comm_size", uint64_val=1 << 20))
        node.attr.append(ChakraAttr(name="involved_dim", bool_list=BoolList(values=[True, False])))
        node.attr.add(name="comm_type", int64_val=ALL_GATHER)
        self.assertEqual(attribute_names(node), ["comm_size", "involved_dim", "comm_type"])
        self.assertEqual(node.attr[0].WhichOneof("value"), "uint64_val")
        self.assertEqual(node.attr[0].uint64_val, 1 << 20)
        self.assertEqual(list(node.attr[1].bool_list.values), [True, False])
        self.assertEqual(node.attr[2].int64_val, ALL_GATHER)
        # Reading another member reads its default and leaves the one set alone.
        self.assertEqual(node.attr[0].bool_list.values, [])
        self.assertEqual(node.attr[0].WhichOneof("value"), "uint64_val")
        # A plain list stands for a *List message.
        self.assertEqual(ChakraAttr(name="d", bool_list=[True]), ChakraAttr(name="d", bool_list=BoolList(values=[True])))
        # A view of an element changes the node.
        node.attr[0].uint64_val = 5
        self.assertEqual(node.attr[0].uint64_val, 5)

    def test_bad_values_raise_naming_the_field(self):
        node = Node()
        with self.assertRaisesRegex(ValueError, r"Node\.id: -1 is out of range"):
            node.id = -1
        with self.assertRaisesRegex(TypeError, r"Node\.name: expected a str"):
            node.name = 5
        with self.assertRaisesRegex(ValueError, r"Uint32List\.values: 4294967296 is out of range"):
            chakrasim.et.Uint32List(values=[1 << 32])
        with self.assertRaisesRegex(TypeError, r"AttributeProto\.bool_val: expected a bool"):
            ChakraAttr(name="is_cpu_op", bool_val=0)
        with self.assertRaisesRegex(ValueError, r'Node has no field "dependencies"'):
            Node(dependencies=[1])
        with self.assertRaisesRegex(AttributeError, "cannot be assigned"):
            node.attr = []
        # A bad element leaves the list as it was.
        node.data_deps = [1]
        with self.assertRaises(TypeError):
            node.data_deps = [2, "3"]
        self.assertEqual(node.data_deps, [1])

    def test_serialize_parse_copy_and_clear(self):
        node = Node(id=1, name="x", type=COMM_COLL_NODE, attr=[ChakraAttr(name="comm_size", int64_val=8)])
        copy = Node()
        copy.ParseFromString(node.SerializeToString())
        self.assertEqual(copy, node)
        other = Node()
        other.CopyFrom(node)
        self.assertEqual(other, node)
        self.assertTrue(other.HasField("inputs") is False)
        other.ClearField("attr")
        self.assertEqual(len(other.attr), 0)
        other.Clear()
        self.assertEqual(other, Node())
        self.assertIn('name: "x"', str(node))


class Framing(unittest.TestCase):
    def test_encode_message_writes_a_varint_length_then_the_message(self):
        out = io.BytesIO()
        encode_message(out, GlobalMetadata(version="0.0.4"))
        # GlobalMetadata.version is field 1, length-delimited: tag 0x0a, length 5, "0.0.4"; the
        # message is 7 bytes.
        self.assertEqual(out.getvalue(), b"\x07\x0a\x050.0.4")

    def test_a_length_over_127_takes_two_varint_bytes(self):
        out = io.BytesIO()
        node = Node(name="n" * 200)
        encode_message(out, node)
        # name is field 2: tag 0x12, length 200 as the varint c8 01; 203 bytes in all = cb 01.
        self.assertEqual(out.getvalue()[:5], b"\xcb\x01\x12\xc8\x01")
        self.assertEqual(len(out.getvalue()), 2 + 203)

    def test_decode_message_reads_back_until_the_end(self):
        out = io.BytesIO()
        nodes = [Node(id=i, name=f"n{i}", data_deps=list(range(i))) for i in range(4)]
        encode_message(out, GlobalMetadata(version="0.0.4"))
        for node in nodes:
            encode_message(out, node)
        data = io.BytesIO(out.getvalue())
        metadata = GlobalMetadata()
        self.assertTrue(decode_message(data, metadata))
        self.assertEqual(metadata.version, "0.0.4")
        read = []
        node = Node()
        while decode_message(data, node):
            read.append(Node(id=node.id, name=node.name, data_deps=list(node.data_deps)))
        # Node 0 has every field at its default but its name, so it is not empty.
        self.assertEqual(read, nodes)

    def test_a_cut_file_raises(self):
        out = io.BytesIO()
        encode_message(out, Node(id=1, name="cut"))
        with self.assertRaisesRegex(chakrasim.Error, "ends 3 bytes into"):
            decode_message(io.BytesIO(out.getvalue()[:4]), Node())


def tutorial_three_nodes():
    """The HotI 2024 tutorial's three nodes (examples/python/generate_3nodes.py)."""
    def collective(node_id, name, comm_type, size):
        node = ChakraNode()
        node.id = node_id
        node.name = name
        node.type = COMM_COLL_NODE
        node.attr.append(ChakraAttr(name="is_cpu_op", bool_val=False))
        node.attr.append(ChakraAttr(name="comm_type", int64_val=comm_type))
        node.attr.append(ChakraAttr(name="comm_size", uint64_val=size))
        node.attr.append(ChakraAttr(name="involved_dim", bool_list=BoolList(values=[True])))
        return node
    all_reduce = collective(1, "All-Reduce-1MB", ALL_REDUCE, 1 << 20)
    all_gather = collective(2, "All-Gather-2MB", ALL_GATHER, 2 << 20)
    all_gather.data_deps.append(1)
    compute = ChakraNode(id=3, name="Compute-50us", type=COMP_NODE, duration_micros=50, data_deps=[1])
    compute.attr.append(ChakraAttr(name="is_cpu_op", bool_val=False))
    return [all_reduce, all_gather, compute]


class TheCppReaderReadsWhatPythonWrites(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.path = os.path.join(self.dir.name, "3nodes.0.et")
        with open(self.path, "wb") as et:
            encode_message(et, GlobalMetadata(version="0.0.4"))
            for node in tutorial_three_nodes():
                encode_message(et, node)

    def tearDown(self):
        self.dir.cleanup()

    def test_read_trace(self):
        metadata, nodes = chakrasim.et.read_trace(self.path)
        self.assertEqual(metadata, GlobalMetadata(version="0.0.4"))
        self.assertEqual(nodes, tutorial_three_nodes())

    def test_write_trace_writes_the_same_bytes(self):
        again = os.path.join(self.dir.name, "again.0.et")
        chakrasim.et.write_trace(again, GlobalMetadata(version="0.0.4"), tutorial_three_nodes())
        with open(self.path, "rb") as a, open(again, "rb") as b:
            self.assertEqual(a.read(), b.read())

    def test_chakrasim_chakra_jsonize(self):
        out = os.path.join(self.dir.name, "3nodes.json")
        subprocess.run([os.environ["CHAKRASIM_BINARY"], "chakra", "jsonize", self.path, out], check=True,
                       capture_output=True)
        with open(out) as f:
            trace = json.load(f)
        self.assertEqual(trace["metadata"], {"version": "0.0.4"})
        # protobuf's JSON: 64-bit integers as strings, enums by name, defaults left out.
        nodes = trace["nodes"]
        self.assertEqual([(n["id"], n["name"], n["type"]) for n in nodes],
                         [("1", "All-Reduce-1MB", "COMM_COLL_NODE"), ("2", "All-Gather-2MB", "COMM_COLL_NODE"),
                          ("3", "Compute-50us", "COMP_NODE")])
        self.assertNotIn("dataDeps", nodes[0])
        self.assertEqual(nodes[1]["dataDeps"], ["1"])
        self.assertEqual(nodes[2]["dataDeps"], ["1"])
        self.assertEqual(nodes[2]["durationMicros"], "50")
        self.assertEqual(nodes[1]["attr"], [
            {"name": "is_cpu_op", "boolVal": False},
            {"name": "comm_type", "int64Val": str(ALL_GATHER)},
            {"name": "comm_size", "uint64Val": str(2 << 20)},
            {"name": "involved_dim", "boolList": {"values": [True]}},
        ])

    def test_a_missing_file_raises_chakrasims_error(self):
        with self.assertRaisesRegex(chakrasim.Error, "nowhere.0.et"):
            chakrasim.et.read_trace(os.path.join(self.dir.name, "nowhere.0.et"))


if __name__ == "__main__":
    unittest.main()
