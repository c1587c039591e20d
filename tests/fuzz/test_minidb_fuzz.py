"""Fuzzing ``Load`` (and ``CreateDB`` + ``TensorProtosDBInput``) on truncated,
bit-flipped, spliced and crafted minidb files.

Every case must load or raise a caffe2rnn error (a ``DatabaseError`` naming the
file, or another error of the family), and a failed load must leave the
workspace exactly as it was. Crafted records claim huge lengths and dims,
negative and overlapping segments, wrong data types and field sizes.
"""

import os
import struct
import tempfile

import numpy as np
from fuzz_harness import FUZZ, changes, fuzz_settings, in_family, snapshot
from hypothesis import given
from hypothesis import strategies as st

from caffe2rnn import core
from caffe2rnn.proto import caffe2_pb2
from caffe2rnn.runtime import Workspace, serialization


def _saved_bytes():
    ws = Workspace()
    ws.feed("a", np.arange(6, dtype=np.float32).reshape(2, 3))
    ws.feed("b", np.array([1, 2, 3], np.int64))
    ws.feed("s", b"text")
    records = []
    for name in ("a", "b", "s"):
        records.extend(serialization.records(ws.blob(name).value, name))
    return _frame(records)


def _frame(records):
    return b"".join(
        struct.pack("<ii", len(k.encode()), len(v)) + k.encode() + v for k, v in records
    )


GOOD = _saved_bytes()


@st.composite
def mutated_files(draw):
    data = bytearray(GOOD)
    kind = draw(st.sampled_from(["truncate", "flip", "splice", "garbage"]))
    if kind == "truncate":
        return bytes(data[: draw(st.integers(0, len(data) - 1))])
    if kind == "flip":
        for _ in range(draw(st.integers(1, 8))):
            i = draw(st.integers(0, len(data) - 1))
            data[i] ^= 1 << draw(st.integers(0, 7))
        return bytes(data)
    if kind == "splice":
        i, j = sorted(draw(st.lists(st.integers(0, len(data)), min_size=2, max_size=2)))
        return bytes(data[:i] + draw(st.binary(max_size=32)) + data[j:])
    return draw(st.binary(max_size=200))


@st.composite
def crafted_files(draw):
    """Well-framed records whose BlobProtos lie about their contents."""
    records = []
    for _ in range(draw(st.integers(1, 3))):
        proto = caffe2_pb2.BlobProto(
            name="a", type=draw(st.sampled_from(["Tensor", "Tensor", "std::string", "Mutex"]))
        )
        t = proto.tensor
        t.dims.extend(draw(st.lists(st.sampled_from([-1, 0, 1, 3, 1 << 20, 1 << 40]), max_size=3)))
        t.data_type = draw(st.sampled_from([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 13]))
        t.float_data.extend(draw(st.lists(st.floats(width=32, allow_nan=False), max_size=6)))
        t.int32_data.extend(draw(st.lists(st.integers(-(1 << 31), (1 << 31) - 1), max_size=6)))
        t.int64_data.extend(draw(st.lists(st.integers(-(1 << 63), (1 << 63) - 1), max_size=3)))
        if draw(st.booleans()):
            t.segment.begin = draw(st.integers(-5, 10))
            t.segment.end = draw(st.integers(-5, 10))
        if draw(st.booleans()):
            t.device_detail.device_type = draw(st.sampled_from([0, 1]))
        key = draw(st.sampled_from(["a", "a#%0", "a#%1", "b"]))
        records.append((key, proto.SerializeToString()))
    return _frame(records)


def _load_case(data, load_all, keep_device):
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "db")
        with open(path, "wb") as f:
            f.write(data)
        ws = Workspace()
        ws.feed("a", np.full(2, -1.0, np.float32))
        before = snapshot(ws)
        outputs = [] if load_all else ["a", "b"]
        op = core.CreateOperator(
            "Load",
            [],
            outputs,
            db=path,
            db_type="minidb",
            absolute_path=1,
            load_all=int(load_all),
            keep_device=int(keep_device),
        )
        outcome = in_family(ws.run_operator_once, op)
        if outcome[0] == "error":
            diff = changes(ws, before)
            FUZZ.check(not diff, "mismatches", "a failed Load changed the workspace: %s" % diff)
            text = str(outcome[1])
            FUZZ.check(
                path in text or "Expected to load" in text or "allocation cap" in text,
                "mismatches",
                "a Load error does not name the file: %s" % text,
            )


@fuzz_settings(weight=4)
@given(data=mutated_files(), load_all=st.booleans())
def test_load_of_a_mutated_checkpoint(data, load_all):
    FUZZ.case()
    _load_case(data, load_all, keep_device=False)


@fuzz_settings(weight=4)
@given(data=crafted_files(), load_all=st.booleans(), keep_device=st.booleans())
def test_load_of_crafted_records(data, load_all, keep_device):
    FUZZ.case()
    _load_case(data, load_all, keep_device)


@fuzz_settings(weight=2)
@given(data=st.one_of(mutated_files(), crafted_files()), batch=st.integers(0, 3))
def test_db_input_of_bad_files(data, batch):
    FUZZ.case()
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "db")
        with open(path, "wb") as f:
            f.write(data)
        ws = Workspace()
        create = core.CreateOperator("CreateDB", [], ["r"], db=path, db_type="minidb")
        if in_family(ws.run_operator_once, create)[0] == "ok":
            read = core.CreateOperator("TensorProtosDBInput", ["r"], ["x"], batch_size=batch)
            in_family(ws.run_operator_once, read)
