"""The worked examples of caffe2-core.md §4.3-§4.5, op by op.

Toy ops (gradient_test_ops) stand in for Caffe2's test ops; §4.5 uses the
real FC, Sum and LSTMUnit makers.
"""

import numpy as np
import pytest
from gradient_test_ops import grad_op, texts

from caffe2rnn import core, eras, workspace
from caffe2rnn.core import CreateOperator, GradientRegistry
from caffe2rnn.gradient_checker import numeric_gradient

CUDA1 = core.DeviceOption(1, 1)


def backward(ops, ys):
    return GradientRegistry.GetBackwardPass(ops, ys)


def as_strings(grad_map):
    return {str(k): str(v) for k, v in grad_map.items()}


# --- §4.3 Sum insertion ---------------------------------------------------------
@pytest.mark.parametrize("device", [None, CUDA1])
def test_two_readers_first_generator_keeps_its_name(device):
    ops = [
        CreateOperator("TestDirect", "in", "hidden1"),
        CreateOperator("TestDirect", "in", "hidden2"),
        CreateOperator("TestDirect", ["hidden1", "hidden2"], "out"),
    ]
    sum_op = CreateOperator("Sum", ["in_grad", "_in_grad_autosplit_0"], "in_grad")
    if device is not None:
        for op in ops:
            op.device_option.CopyFrom(device)
        sum_op.device_option.CopyFrom(device)
    grads, grad_map = backward(ops, {"out": "out_grad"})
    assert texts(grads) == texts(
        [
            grad_op("DirectGradient", "out_grad", ["hidden1_grad", "hidden2_grad"], device),
            grad_op("DirectGradient", "hidden2_grad", "in_grad", device),
            grad_op("DirectGradient", "hidden1_grad", "_in_grad_autosplit_0", device),
            sum_op,
        ]
    )
    assert not grads[-1].HasField("is_gradient_op")
    assert as_strings(grad_map)["in"] == "in_grad"


def test_three_readers_and_two_versions():
    """Caffe2's testMultiUseInputAndMultipleVersionsBig: `in` is rewritten,
    so each version gets its own Sum and its own autosplit counter."""
    ops = [
        CreateOperator("TestDirect", "in", "in"),
        CreateOperator("TestDirect", "in", "hidden1"),
        CreateOperator("TestDirect", "in", "hidden2"),
        CreateOperator("TestDirect", ["hidden1", "hidden2"], "in"),
        CreateOperator("TestDirect", "in", "hidden3"),
        CreateOperator("TestDirect", "in", "hidden4"),
        CreateOperator("TestDirect", "in", "hidden5"),
        CreateOperator("TestDirect", ["hidden3", "hidden4", "hidden5"], "out"),
    ]
    grads, _ = backward(ops, {"out": "out_grad"})
    assert texts(grads) == texts(
        [
            grad_op("DirectGradient", "out_grad", ["hidden3_grad", "hidden4_grad", "hidden5_grad"]),
            grad_op("DirectGradient", "hidden5_grad", "in_grad"),
            grad_op("DirectGradient", "hidden4_grad", "_in_grad_autosplit_0"),
            grad_op("DirectGradient", "hidden3_grad", "_in_grad_autosplit_1"),
            CreateOperator(
                "Sum", ["in_grad", "_in_grad_autosplit_0", "_in_grad_autosplit_1"], "in_grad"
            ),
            grad_op("DirectGradient", "in_grad", ["hidden1_grad", "hidden2_grad"]),
            grad_op("DirectGradient", "hidden2_grad", "in_grad"),
            grad_op("DirectGradient", "hidden1_grad", "_in_grad_autosplit_0"),
            CreateOperator("Sum", ["in_grad", "_in_grad_autosplit_0"], "in_grad"),
            grad_op("DirectGradient", "in_grad", "in_grad"),
        ]
    )


def test_reader_without_gradient_adds_nothing():
    ops = [
        CreateOperator("TestDirect", "in", "hidden1"),
        CreateOperator("TestNogradient", "in", "hidden2"),
        CreateOperator("TestDirect", ["hidden1", "hidden2"], "out"),
    ]
    grads, _ = backward(ops, {"out": "out_grad"})
    assert texts(grads) == texts(
        [
            grad_op("DirectGradient", "out_grad", ["hidden1_grad", "hidden2_grad"]),
            grad_op("DirectGradient", "hidden1_grad", "in_grad"),
        ]
    )


# --- pass-through gradients (Caffe2's TestGradientsAccumulationWith...) ---------
def test_pass_through_add_in_the_middle():
    ops = [
        CreateOperator("TestRelu", "x1", "x2"),
        CreateOperator("TestSoftmax", "x2", "x3"),
        CreateOperator("TestAdd", ["x2", "x3"], "x4"),
    ]
    grads, grad_map = backward(ops, {"x4": "x4_grad"})
    assert texts(grads) == texts(
        [
            grad_op("SoftmaxGradient", ["x3", "x4_grad"], "x2_grad"),
            CreateOperator("Sum", ["x2_grad", "x4_grad"], "x2_grad"),
            grad_op("ReluGradient", ["x2", "x2_grad"], "x1_grad"),
        ]
    )
    assert as_strings(grad_map) == {
        "x4": "x4_grad",
        "x2": "x2_grad",
        "x3": "x4_grad",
        "x1": "x1_grad",
    }


def test_pass_through_add_at_the_leaves():
    ops = [
        CreateOperator("TestAdd", ["x1", "x2"], "x4"),
        CreateOperator("TestAdd", ["x2", "x3"], "x5"),
        CreateOperator("TestDotProduct", ["x4", "x5"], "x6"),
    ]
    grads, grad_map = backward(ops, {"x6": "x6_grad"})
    assert texts(grads) == texts(
        [
            grad_op("DotProductGradient", ["x4", "x5", "x6_grad"], ["x4_grad", "x5_grad"]),
            CreateOperator("Sum", ["x5_grad", "x4_grad"], "x2_grad"),
        ]
    )
    assert as_strings(grad_map) == {
        "x6": "x6_grad",
        "x4": "x4_grad",
        "x5": "x5_grad",
        "x2": "x2_grad",
        "x3": "x5_grad",
        "x1": "x4_grad",
    }


def test_pass_through_only_generators_sum_into_input_grad():
    ops = [
        CreateOperator("TestAdd", ["x1", "x2"], "x4"),
        CreateOperator("TestAdd", ["x2", "x3"], "x5"),
        CreateOperator("TestAdd", ["x4", "x5"], "x6"),
    ]
    grads, grad_map = backward(ops, {"x6": "x6_grad"})
    assert texts(grads) == texts([CreateOperator("Sum", ["x6_grad", "x6_grad"], "x2_grad")])
    assert as_strings(grad_map) == {
        "x6": "x6_grad",
        "x4": "x6_grad",
        "x5": "x6_grad",
        "x2": "x2_grad",
        "x3": "x6_grad",
        "x1": "x6_grad",
    }


def test_pass_through_sub_at_the_leaves():
    ops = [
        CreateOperator("TestSub", ["x1", "x2"], "x4"),
        CreateOperator("TestSub", ["x2", "x3"], "x5"),
        CreateOperator("TestDotProduct", ["x4", "x5"], "x6"),
    ]
    grads, grad_map = backward(ops, {"x6": "x6_grad"})
    assert texts(grads[-1:]) == texts([CreateOperator("Sum", ["x2_grad", "x5_grad"], "x2_grad")])
    assert grads[-2].output[0] == "x2_grad"  # Negative(x4_grad), kept
    assert as_strings(grad_map)["x3"] == "x3_grad"
    assert as_strings(grad_map)["x1"] == "x4_grad"


def test_accumulation_runs_at_a_first_reader_without_gradient():
    """A Print-like op (no outputs) reads x2 first: the Sum comes there."""
    ops = [
        CreateOperator("TestRelu", "x1", "x2"),
        CreateOperator("Print", "x2", []),
        CreateOperator("TestSoftmax", "x2", "x3"),
        CreateOperator("TestDotProduct", ["x2", "x3"], "x4"),
    ]
    grads, _ = backward(ops, ["x4"])
    assert [op.type for op in grads] == [
        "ConstantFill",
        "DotProductGradient",
        "SoftmaxGradient",
        "Sum",
        "ReluGradient",
    ]
    assert list(grads[-2].input) == ["x2_grad", "_x2_grad_autosplit_0"]
    assert list(grads[-2].output) == ["x2_grad"]


# --- autogen gradients -----------------------------------------------------------
def test_autogen_gradient_of_a_y_read_inside_is_accumulated():
    ops = [
        CreateOperator("TestMul", ["input", "two"], "mul_1"),
        CreateOperator("TestMul", ["mul_1", "three"], "mul_2"),
    ]
    grads, grad_map = backward(ops, ["mul_2", "mul_1"])
    assert texts(grads) == texts(
        [
            CreateOperator("ConstantFill", "mul_2", "mul_2_autogen_grad", value=1.0),
            CreateOperator("ConstantFill", "mul_1", "mul_1_autogen_grad", value=1.0),
            grad_op("Mul", ["mul_2_autogen_grad", "three"], "_mul_1_grad_autosplit_0"),
            grad_op("Mul", ["mul_2_autogen_grad", "mul_1"], "three_grad"),
            CreateOperator(
                "Sum", ["mul_1_autogen_grad", "_mul_1_grad_autosplit_0"], "mul_1_autogen_grad"
            ),
            grad_op("Mul", ["mul_1_autogen_grad", "two"], "input_grad"),
            grad_op("Mul", ["mul_1_autogen_grad", "input"], "two_grad"),
        ]
    )
    assert as_strings(grad_map) == {
        "mul_2": "mul_2_autogen_grad",
        "mul_1": "mul_1_autogen_grad",
        "three": "three_grad",
        "input": "input_grad",
        "two": "two_grad",
    }


def test_autogen_gradient_before_caf92c215_is_lost():
    """E4: ys were not uses and fills not generators, so the inner gradient
    simply replaced mul_1's autogenerated one (the bug caf92c215 fixed)."""
    ops = [
        CreateOperator("TestMul", ["input", "two"], "mul_1"),
        CreateOperator("TestMul", ["mul_1", "three"], "mul_2"),
    ]
    with eras.use("E4"):
        grads, grad_map = backward(ops, ["mul_2", "mul_1"])
    assert [op.type for op in grads] == ["ConstantFill"] * 2 + ["Mul"] * 4
    assert list(grads[2].output) == ["mul_1_grad"]
    assert list(grads[4].input) == ["mul_1_grad", "two"]
    assert as_strings(grad_map)["mul_1"] == "mul_1_grad"


def test_supplied_gradient_of_an_inner_y_gets_no_accumulation():
    ops = [
        CreateOperator("TestDirect", "in", "hidden"),
        CreateOperator("TestDirect", "hidden", "out"),
    ]
    grads, grad_map = backward(ops, {"hidden": "hidden_grad", "out": "out_grad"})
    assert texts(grads) == texts(
        [
            grad_op("DirectGradient", "out_grad", "hidden_grad"),
            grad_op("DirectGradient", "hidden_grad", "in_grad"),
        ]
    )
    # ... whereas autogenerated ones are generators and do get summed:
    grads, _ = backward(ops, ["hidden", "out"])
    assert [op.type for op in grads] == [
        "ConstantFill",
        "ConstantFill",
        "DirectGradient",
        "Sum",
        "DirectGradient",
    ]
    assert list(grads[3].input) == ["hidden_autogen_grad", "_hidden_grad_autosplit_0"]


# --- §4.5 the LSTM step net -------------------------------------------------------
LSTM_INPUTS = ["hidden_t_prev", "cell_t_prev", "lstm/gates_t", "seq_lengths", "timestep"]


def lstm_step_ops(**lstm_args):
    return [
        CreateOperator(
            "FC", ["hidden_t_prev", "lstm/gates_t_w", "lstm/gates_t_b"], ["lstm/gates_t"], axis=2
        ),
        CreateOperator("Sum", ["lstm/gates_t", "input_t"], ["lstm/gates_t"]),
        CreateOperator("LSTMUnit", LSTM_INPUTS, ["lstm/hidden_t", "lstm/cell_t"], **lstm_args),
    ]


LSTM_YS = {"lstm/cell_t": "lstm/cell_t_grad", "lstm/hidden_t": "lstm/hidden_t_grad"}
FC_GRADIENT_TEXT = """\
input: "hidden_t_prev"
input: "lstm/gates_t_w"
input: "lstm/gates_t_grad"
output: "lstm/gates_t_w_grad"
output: "lstm/gates_t_b_grad"
output: "_hidden_t_prev_grad_autosplit_0"
name: ""
type: "FCGradient"
arg {
  name: "axis"
  i: 2
}
is_gradient_op: true
"""


@pytest.mark.parametrize("lstm_args", [{}, {"forget_bias": 1.0, "drop_states": 1}])
def test_lstm_step_net_backward(lstm_args):
    grads, grad_map = backward(lstm_step_ops(**lstm_args), LSTM_YS)
    assert texts(grads) == texts(
        [
            grad_op(
                "LSTMUnitGradient",
                LSTM_INPUTS
                + ["lstm/hidden_t", "lstm/cell_t", "lstm/hidden_t_grad", "lstm/cell_t_grad"],
                ["hidden_t_prev_grad", "cell_t_prev_grad", "lstm/gates_t_grad"],
                **lstm_args,
            ),
            grad_op(
                "FCGradient",
                ["hidden_t_prev", "lstm/gates_t_w", "lstm/gates_t_grad"],
                ["lstm/gates_t_w_grad", "lstm/gates_t_b_grad", "_hidden_t_prev_grad_autosplit_0"],
                axis=2,
            ),
            CreateOperator(
                "Sum",
                ["hidden_t_prev_grad", "_hidden_t_prev_grad_autosplit_0"],
                ["hidden_t_prev_grad"],
            ),
        ]
    )
    assert str(grads[1]) == FC_GRADIENT_TEXT
    assert grads[2].HasField("name") and not grads[2].HasField("is_gradient_op")
    assert as_strings(grad_map) == {
        "lstm/cell_t": "lstm/cell_t_grad",
        "lstm/hidden_t": "lstm/hidden_t_grad",
        "hidden_t_prev": "hidden_t_prev_grad",
        "cell_t_prev": "cell_t_prev_grad",
        "lstm/gates_t": "lstm/gates_t_grad",
        "input_t": "lstm/gates_t_grad",
        "lstm/gates_t_w": "lstm/gates_t_w_grad",
        "lstm/gates_t_b": "lstm/gates_t_b_grad",
    }
    assert all(
        type(k) is core.BlobReference and type(v) is core.BlobReference for k, v in grad_map.items()
    )


def test_lstm_step_net_backward_before_b80ac2b2a_renames_every_generator():
    with eras.use("E4"):
        grads, grad_map = backward(lstm_step_ops(), LSTM_YS)
    assert [op.type for op in grads] == ["LSTMUnitGradient", "FCGradient", "Sum"]
    assert grads[0].output[0] == "_hidden_t_prev_grad_autosplit_0"
    assert grads[1].output[2] == "_hidden_t_prev_grad_autosplit_1"
    assert texts(grads[2:]) == texts(
        [
            CreateOperator(
                "Sum",
                ["_hidden_t_prev_grad_autosplit_0", "_hidden_t_prev_grad_autosplit_1"],
                "hidden_t_prev_grad",
            )
        ]
    )
    assert as_strings(grad_map)["hidden_t_prev"] == "hidden_t_prev_grad"


# --- the built backward ops compute the right numbers -------------------------------
def _run_forward(ops, feeds):
    workspace.ResetWorkspace()
    for name, value in feeds.items():
        workspace.FeedBlob(name, value)
    workspace.RunOperatorsOnce(ops)


def _numeric_gradient(ops, feeds, name, loss_weights, eps=1e-6):
    """Central differences of loss = Σ sum(y ⊙ w) with respect to feeds[name]."""

    def loss(value):
        _run_forward(ops, dict(feeds, **{name: value}))
        return sum(float(np.sum(workspace.FetchBlob(y) * w)) for y, w in loss_weights.items())

    return numeric_gradient(loss, np.array(feeds[name]), eps)


@pytest.mark.kernels  # runs once per kernel path (tests/conftest.py)
def test_lstm_step_net_backward_matches_finite_differences():
    """hidden_t_prev's gradient is the Sum of the LSTMUnit and FC parts; row 1
    is past its sequence end, so LSTMUnit passes dh straight through there."""
    rng = np.random.RandomState(0)
    n, d = 2, 3
    feeds = {
        "hidden_t_prev": rng.randn(1, n, d),
        "cell_t_prev": rng.randn(1, n, d),
        "input_t": rng.randn(1, n, 4 * d),
        "lstm/gates_t_w": rng.randn(4 * d, d),
        "lstm/gates_t_b": rng.randn(4 * d),
        "seq_lengths": np.array([2, 1], np.int32),
        "timestep": np.array([1], np.int32),
    }
    weights = {"lstm/hidden_t": rng.randn(1, n, d), "lstm/cell_t": rng.randn(1, n, d)}
    ops = lstm_step_ops()
    grads, grad_map = backward(ops, LSTM_YS)
    _run_forward(ops, feeds)
    for y, w in weights.items():
        workspace.FeedBlob(LSTM_YS[y], w)
    workspace.RunOperatorsOnce(grads)
    names = ["hidden_t_prev", "cell_t_prev", "input_t", "lstm/gates_t_w", "lstm/gates_t_b"]
    analytic = {name: workspace.FetchBlob(str(grad_map[name])) for name in names}
    for name in names:
        numeric = _numeric_gradient(ops, feeds, name, weights)
        np.testing.assert_allclose(analytic[name], numeric, rtol=1e-6, atol=1e-8, err_msg=name)


@pytest.mark.parametrize(
    "ys, expected",
    [
        # d(mul_2 + mul_1)/d input = two * three + two
        (["mul_2", "mul_1"], 2.0 * 3.0 + 2.0),
        (["mul_2"], 2.0 * 3.0),
    ],
)
def test_autogen_accumulation_runs(ys, expected):
    """Caffe2's test_two_grads, through Net.AddGradientOperators."""
    net = core.Net("test_two_grads")
    input_, two, three = net.AddExternalInput("input", "two", "three")
    mul_1 = net.Mul([input_, two], "mul_1")
    net.Mul([mul_1, three], "mul_2")
    grad_map = net.AddGradientOperators(ys)
    workspace.FeedBlob("input", np.array([1.0], np.float32))
    workspace.FeedBlob("two", np.array([2.0], np.float32))
    workspace.FeedBlob("three", np.array([3.0], np.float32))
    workspace.RunNetOnce(net)
    assert workspace.FetchBlob(str(grad_map["input"])).tolist() == [expected]
