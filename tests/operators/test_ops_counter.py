"""Counter ops (Caffe2 counter_ops.h, 0cdd09da6): the count-down/up semantics,
a counter saved and loaded as Caffe2 serialized it, GetAllBlobNames, Net.Const."""

import numpy as np
import pytest
from test_ops_load_save import read_minidb

from caffe2rnn import core
from caffe2rnn.errors import ArgumentError, DTypeError
from caffe2rnn.runtime import Workspace


def run(ws, op_type, inputs, outputs, **args):
    ws.run_operator_once(core.CreateOperator(op_type, inputs, outputs, **args))


def test_count_down_up_retrieve_reset():
    ws = Workspace()
    run(ws, "CreateCounter", [], ["c"], init_count=1)
    run(ws, "CountDown", ["c"], ["t"])  # 1 -> 0: not done yet
    assert ws.fetch("t") == np.bool_(False) and ws.fetch("t").shape == ()
    run(ws, "CountDown", ["c"], ["t"])  # 0 -> -1: done
    assert ws.fetch("t")
    run(ws, "CheckCounterDone", ["c"], ["d"])
    assert ws.fetch("d")
    run(ws, "CountUp", ["c"], ["before"])  # -1 -> 0
    assert ws.fetch("before") == -1 and ws.fetch("before").dtype == np.int64
    run(ws, "ResetCounter", ["c"], ["old"], init_count=5)
    assert ws.fetch("old") == 0
    run(ws, "RetrieveCount", ["c"], ["n"])
    assert ws.fetch("n") == 5


def test_a_counter_saves_and_loads_as_caffe2_serialized_it(tmp_path):
    ws = Workspace()
    run(ws, "CreateCounter", [], ["c"], init_count=22)
    path = str(tmp_path / "db")
    run(ws, "Save", ["c"], [], db=path, db_type="minidb", absolute_path=1)
    ((key, proto),) = read_minidb(path)
    assert key == "c" and proto.type == "std::unique_ptr<Counter<int64_t>>"
    assert list(proto.tensor.int64_data) == [22] and list(proto.tensor.dims) == [1]
    for _ in range(10):
        run(ws, "CountDown", ["c"], ["t"])
    run(ws, "Load", [], ["c"], db=path, db_type="minidb", absolute_path=1)
    run(ws, "RetrieveCount", ["c"], ["n"])
    assert ws.fetch("n") == 22


def test_counter_refusals():
    ws = Workspace()
    with pytest.raises(ArgumentError, match="negative init_count"):
        run(ws, "CreateCounter", [], ["c"], init_count=-1)
    ws.feed("x", np.zeros(1, np.float32))
    with pytest.raises(DTypeError, match=r"input 0 \('x'\) must be a counter"):
        run(ws, "CountDown", ["x"], ["t"])


def test_get_all_blob_names():
    parent = Workspace()
    parent.feed("p", np.zeros(1))
    ws = Workspace(parent=parent)
    ws.feed("b", np.zeros(1))
    ws.feed("a", np.zeros(1))
    run(ws, "GetAllBlobNames", [], ["names"])
    assert list(ws.fetch("names")) == ["a", "b", "names", "p"]  # its output exists already
    run(ws, "GetAllBlobNames", [], ["names"], include_shared=0)
    assert sorted(ws.fetch("names")) == ["a", "b", "names"]


def test_net_const():
    net = core.Net("const")
    a, b = net.Const([1, 2], "a"), net.Const(np.array([[0.5]]), "b")
    c, flag = net.Const(["x", "yz"], "c"), net.Const(False, "flag")
    types = [op.type for op in net.Proto().op]
    assert types == [
        "GivenTensorInt64Fill",
        "GivenTensorFill",
        "GivenTensorStringFill",
        "ConstantFill",
    ]
    ws = Workspace()
    ws.run_net_once(net.Proto())
    np.testing.assert_array_equal(ws.fetch("a"), [1, 2])
    assert ws.fetch("b").dtype == np.float32 and ws.fetch("b").shape == (1, 1)
    assert list(ws.fetch("c")) == ["x", "yz"] and ws.fetch("flag") == np.bool_(False)
    assert (str(a), str(b), str(c), str(flag)) == ("a", "b", "c", "flag")
