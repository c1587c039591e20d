"""SSA helpers (spec §3) and the §4.5 LSTM step net's blob versions."""

import pytest

from caffe2rnn import core
from caffe2rnn.errors import BlobNotFoundError
from caffe2rnn.proto import caffe2_pb2


def lstm_step_net():
    """The E3 ``recurrent.LSTM`` step net of spec §4.5 (scope ``lstm``)."""
    net = core.Net("lstm_cell")
    input_t, timestep, cell_t_prev, hidden_t_prev = net.AddScopedExternalInputs(
        "input_t", "timestep", "cell_t_prev", "hidden_t_prev"
    )
    gates_t = net.FC([hidden_t_prev, "lstm/gates_t_w", "lstm/gates_t_b"], "lstm/gates_t", axis=2)
    gates_t = net.Sum([gates_t, input_t], gates_t)
    hidden_t, cell_t = net.LSTMUnit(
        [hidden_t_prev, cell_t_prev, gates_t, "seq_lengths", timestep],
        ["lstm/hidden_t", "lstm/cell_t"],
    )
    net.AddExternalOutputs(cell_t, hidden_t)
    return net


def lstm_backward_ops():
    """The backward ops spec §4.5 lists for that step net (E5 rules)."""
    return [
        core.CreateOperator(
            "LSTMUnitGradient",
            [
                "hidden_t_prev",
                "cell_t_prev",
                "lstm/gates_t",
                "seq_lengths",
                "timestep",
                "lstm/hidden_t",
                "lstm/cell_t",
                "lstm/hidden_t_grad",
                "lstm/cell_t_grad",
            ],
            ["hidden_t_prev_grad", "cell_t_prev_grad", "lstm/gates_t_grad"],
        ),
        core.CreateOperator(
            "FCGradient",
            ["hidden_t_prev", "lstm/gates_t_w", "lstm/gates_t_grad"],
            ["lstm/gates_t_w_grad", "lstm/gates_t_b_grad", "_hidden_t_prev_grad_autosplit_0"],
            axis=2,
        ),
        core.CreateOperator(
            "Sum", ["hidden_t_prev_grad", "_hidden_t_prev_grad_autosplit_0"], ["hidden_t_prev_grad"]
        ),
    ]


def test_lstm_step_net_external_inputs():
    proto = lstm_step_net().Proto()
    assert list(proto.external_input) == [
        "input_t",
        "timestep",
        "cell_t_prev",
        "hidden_t_prev",
        "lstm/gates_t_w",
        "lstm/gates_t_b",
        "seq_lengths",
    ]
    assert list(proto.external_output) == ["lstm/cell_t", "lstm/hidden_t"]


def test_get_ssa_of_lstm_step_net():
    net = lstm_step_net()
    ssa, blob_versions = core.get_ssa(net)
    assert list(blob_versions.items()) == [
        ("input_t", 0),
        ("timestep", 0),
        ("cell_t_prev", 0),
        ("hidden_t_prev", 0),
        ("lstm/gates_t_w", 0),
        ("lstm/gates_t_b", 0),
        ("seq_lengths", 0),
        ("lstm/gates_t", 2),
        ("lstm/hidden_t", 1),
        ("lstm/cell_t", 1),
    ]
    assert ssa[0] == (
        [("hidden_t_prev", 0), ("lstm/gates_t_w", 0), ("lstm/gates_t_b", 0)],
        [("lstm/gates_t", 1)],
    )
    # the §3.1 example: Sum in place after FC reads version 1, writes 2
    assert ssa[1] == ([("lstm/gates_t", 1), ("input_t", 0)], [("lstm/gates_t", 2)])
    assert ssa[2][1] == [("lstm/hidden_t", 1), ("lstm/cell_t", 1)]
    assert core.get_ssa(net.Proto())[0] == ssa  # a NetDef works too


def test_scratches_of_lstm_step_net():
    """recurrent_net's scratch rule (seed 000 #2) gives ['lstm/gates_t']."""
    cell_net = lstm_step_net()
    backward = core.Net("RecurrentBackwardStep")
    backward.Proto().op.extend(lstm_backward_ops())
    backward_ssa, _ = core.get_ssa(backward.Proto())
    undefined = core.get_undefined_blobs(backward_ssa)
    _, blob_versions = core.get_ssa(cell_net.Proto())
    scratches = [
        blob
        for blob, ver in blob_versions.items()
        if ver > 0 and blob in undefined and blob not in cell_net.Proto().external_output
    ]
    assert scratches == ["lstm/gates_t"]
    assert undefined == {
        "hidden_t_prev",
        "cell_t_prev",
        "lstm/gates_t",
        "seq_lengths",
        "timestep",
        "lstm/hidden_t",
        "lstm/cell_t",
        "lstm/hidden_t_grad",
        "lstm/cell_t_grad",
        "lstm/gates_t_w",
    }


def test_nets_without_external_inputs_insert_inputs_at_first_read():
    proto = caffe2_pb2.NetDef()
    proto.op.extend(
        [core.CreateOperator("Relu", "b", "c"), core.CreateOperator("Sum", ["a", "c", "b"], "c")]
    )
    ssa, versions = core.get_ssa(proto)
    assert list(versions.items()) == [("b", 0), ("c", 2), ("a", 0)]
    assert ssa[1] == ([("a", 0), ("c", 1), ("b", 0)], [("c", 2)])
    assert core.get_undefined_blobs(ssa) == {"a", "b"}


def test_declared_external_inputs_keep_undeclared_inputs_out_of_the_dict():
    proto = caffe2_pb2.NetDef(external_input=["x"])
    proto.op.extend([core.CreateOperator("Sum", ["x", "hidden"], "y")])
    ssa, versions = core.get_ssa(proto)
    assert versions == {"x": 0, "y": 1}
    assert ssa[0][0] == [("x", 0), ("hidden", 0)]


def test_get_ssa_mutates_and_returns_the_given_dict():
    proto = caffe2_pb2.NetDef()
    proto.op.extend([core.CreateOperator("Relu", "x", "x")])
    given = {"x": 3}
    ssa, versions = core.get_ssa(proto, given)
    assert versions is given and given == {"x": 4}
    assert ssa == [([("x", 3)], [("x", 4)])]


def test_get_ssa_rejects_other_types():
    with pytest.raises(TypeError, match="core.Net or a NetDef"):
        core.get_ssa([core.CreateOperator("Relu", "x", "y")])


def test_output_producers_and_op_ids_in_path():
    proto = caffe2_pb2.NetDef()
    proto.op.extend(
        [
            core.CreateOperator("Relu", "a", "b"),  # 0
            core.CreateOperator("Relu", "x", "unused"),  # 1
            core.CreateOperator("Sum", ["b", "a"], "c"),  # 2
            core.CreateOperator("Relu", "c", "c"),  # 3
        ]
    )
    ssa, versions = core.get_ssa(proto)
    assert core.get_output_producers(ssa) == {
        ("b", 1): 0,
        ("unused", 1): 1,
        ("c", 1): 2,
        ("c", 2): 3,
    }
    assert core.get_op_ids_in_path(ssa, versions, ["a"], ["c"]) == [0, 2, 3]
    assert core.get_op_ids_in_path(ssa, versions, ["b"], ["c"]) == [2, 3]
    assert core.get_op_ids_in_path(ssa, versions, [], ["unused"]) == [1]
    with pytest.raises(BlobNotFoundError, match="'nope'"):
        core.get_op_ids_in_path(ssa, versions, ["a"], ["nope"])
