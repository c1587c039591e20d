"""ReduceFront/BackSum and Mean, SumElements, AveragedLoss and their gradients."""

import numpy as np
import pytest
from ops_testing import check_gradients, gradient_of, random, run1

from caffe2rnn import core
from caffe2rnn.errors import ArgumentError, DTypeError, ShapeError
from caffe2rnn.runtime import Workspace


@pytest.mark.parametrize("num", [0, 1, 2, 3])
@pytest.mark.parametrize("kind, reduce", [("Sum", np.sum), ("Max", np.max)])
def test_reduce_front_and_back(num, kind, reduce):
    """Sum in every era; E6's Max (over no dim: the input itself)."""
    x = random((2, 3, 4), 1, np.float64)
    front = run1("ReduceFront" + kind, {"X": x}, num_reduce_dim=num)
    back = run1("ReduceBack" + kind, {"X": x}, num_reduce_dim=num)
    np.testing.assert_allclose(front, reduce(x, axis=tuple(range(num))))
    np.testing.assert_allclose(back, reduce(x, axis=tuple(range(3 - num, 3))))
    assert front.shape == x.shape[num:] and back.shape == x.shape[: 3 - num]


@pytest.mark.parametrize("num", [0, 1, 2, 3])
def test_reduce_front_and_back_mean(num):
    x = random((2, 3, 4), 1, np.float64)
    front = run1("ReduceFrontMean", {"X": x}, num_reduce_dim=num)
    back = run1("ReduceBackMean", {"X": x}, num_reduce_dim=num)
    np.testing.assert_allclose(front, x.mean(axis=tuple(range(num))) if num else x)
    np.testing.assert_allclose(back, x.mean(axis=tuple(range(3 - num, 3))) if num else x)
    assert front.shape == x.shape[num:] and back.shape == x.shape[: 3 - num]


def test_reduce_mean_over_no_element_is_zero():
    x = np.zeros((0, 3), np.float32)
    np.testing.assert_array_equal(run1("ReduceFrontMean", {"X": x}), np.zeros(3))
    x = np.zeros((3, 0), np.float32)
    np.testing.assert_array_equal(run1("ReduceBackMean", {"X": x}), np.zeros(3))
    dx = run1("ReduceFrontMeanGradient", {"dY": np.ones(3, np.float32), "dims": np.array([0, 3])})
    assert dx.shape == (0, 3)


def test_reduce_mean_gradient_op_formula():
    dy = random((2, 3), 1, np.float64)
    dx = run1("ReduceBackMeanGradient", {"dY": dy, "dims": np.array([2, 3, 4])})
    np.testing.assert_allclose(dx, np.repeat(dy[:, :, None], 4, axis=2) / 4)
    dx = run1("ReduceFrontMeanGradient", {"dY": dy, "dims": np.array([5, 2, 3])}, num_reduce_dim=1)
    np.testing.assert_allclose(dx, np.broadcast_to(dy / 5, (5, 2, 3)))


@pytest.mark.parametrize(
    "op_type", ["ReduceFrontSum", "ReduceBackSum", "ReduceFrontMean", "ReduceBackMean"]
)
@pytest.mark.parametrize("num", [1, 2])
def test_reduce_sum_gradients(op_type, num):
    check_gradients(op_type, {"X": random((2, 3, 2), 1)}, ["Y"], num_reduce_dim=num)


@pytest.mark.parametrize(
    "op_type", ["ReduceFrontSum", "ReduceBackSum", "ReduceFrontMean", "ReduceBackMean"]
)
def test_reduce_sum_gradient_maker_reads_the_shape(op_type):
    ops, g_input = gradient_of(op_type, ["X"], ["Y"], num_reduce_dim=2)
    assert ops == [
        ("Shape", "", ["X"], ["_Y_dims"], [("num_reduce_dim", 2)], True),
        (
            op_type + "Gradient",
            "",
            ["Y_grad", "_Y_dims"],
            ["X_grad"],
            [("num_reduce_dim", 2)],
            True,
        ),
    ]
    assert g_input == ["X_grad"]


def test_reduce_back_sum_gradient_op_formula():
    dy = random((2, 3), 1, np.float64)
    dx = run1("ReduceBackSumGradient", {"dY": dy, "dims": np.array([2, 3, 4])})
    np.testing.assert_array_equal(dx, np.repeat(dy[:, :, None], 4, axis=2))


def test_reduce_sum_errors():
    with pytest.raises(
        ArgumentError,
        match=r"num_reduce_dim 3 exceeds the 2 dimensions of "
        r"input 0 \('X', shape \(2, 3\)\)",
    ):
        run1("ReduceFrontSum", {"X": random((2, 3))}, num_reduce_dim=3)
    with pytest.raises(ArgumentError, match="num_reduce_dim must be >= 0"):
        run1("ReduceBackSum", {"X": random((2, 3))}, num_reduce_dim=-1)
    with pytest.raises(ShapeError, match=r"input 0 \('dY'\) has shape \(4,\); expected \(3,\)"):
        run1("ReduceFrontSumGradient", {"dY": random((4,)), "dims": np.array([2, 3])})
    ws = Workspace()  # until E6 input 1 is X's shape; from E7 a float one is X itself
    ws.feed("dY", random((3,)))
    ws.feed("dims", random((2,)))
    with pytest.raises(DTypeError, match=r"input 1 \('dims'\).*1-D integer"):
        op = core.CreateOperator("ReduceFrontSumGradient", ["dY", "dims"], ["out"])
        ws.run_operator_once(op, era="E6")


@pytest.mark.parametrize("average", [0, 1])
def test_sum_elements(average):
    x = random((3, 4), 1, np.float64)
    y = run1("SumElements", {"X": x}, average=average)
    assert y.shape == ()
    np.testing.assert_allclose(y, x.mean() if average else x.sum())
    check_gradients("SumElements", {"X": x}, ["Y"], average=average)
    ops, _ = gradient_of("SumElements", ["X"], ["Y"], average=average)
    assert ops == [
        ("SumElementsGradient", "", ["X", "Y_grad"], ["X_grad"], [("average", average)], True)
    ]


def test_averaged_loss():
    x = random((2, 5), 1)
    y = run1("AveragedLoss", {"X": x})
    assert y.shape == () and y.dtype == np.float32
    np.testing.assert_allclose(y, x.mean(), rtol=1e-6)
    check_gradients("AveragedLoss", {"X": x}, ["loss"])
    ops, g_input = gradient_of("AveragedLoss", ["X"], ["loss"])
    assert ops == [("AveragedLossGradient", "", ["X", "loss_grad"], ["X_grad"], [], True)]
    dx = run1("AveragedLossGradient", {"X": x, "dY": np.array(3.0, np.float32)})
    np.testing.assert_allclose(dx, np.full((2, 5), 0.3), rtol=1e-6)


def test_sum_elements_gradient_checks_dy():
    with pytest.raises(ShapeError, match=r"input 1 \('dY'\) has shape \(2,\); expected a single"):
        run1("SumElementsGradient", {"X": random((3,)), "dY": random((2,))})


@pytest.mark.parametrize("op_type", ["ReduceFrontMax", "ReduceBackMax"])
@pytest.mark.parametrize("num", [1, 2])
def test_e6_reduce_max_gradients(op_type, num):
    check_gradients(op_type, {"X": random((3, 4, 5), 1, np.float64)}, ["Y"], num_reduce_dim=num)
    ops, _ = gradient_of(op_type, ["X"], ["Y"])
    assert ops[0][:4] == (op_type + "Gradient", "", ["Y_grad", "X", "Y"], ["X_grad"])


def test_reduce_max_gradient_goes_to_every_tie():
    x = np.array([[1.0, 3.0, 3.0]], np.float32)
    dx = run1(
        "ReduceBackMaxGradient",
        {"dY": np.array([2.0], np.float32), "X": x, "Y": np.array([3.0], np.float32)},
    )
    np.testing.assert_array_equal(dx, [[0.0, 2.0, 2.0]])
