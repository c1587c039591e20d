"""FC and FCGradient: Y = X₂ · W₂ᵀ + b at ``axis`` (and ``axis_w`` in E6)."""

import numpy as np
import pytest
from ops_testing import check_gradients, gradient_of, random, run1, run_op

from caffe2rnn import core, eras
from caffe2rnn.errors import ArgumentError, ArgumentTypeError, DTypeError, ShapeError
from caffe2rnn.runtime import Workspace


def fc_reference(x, w, b, axis=1):
    m, k = int(np.prod(x.shape[:axis])), int(np.prod(x.shape[axis:]))
    return (x.reshape(m, k) @ w.reshape(w.shape[0], k).T + b).reshape(
        x.shape[:axis] + (w.shape[0],)
    )


@pytest.mark.parametrize(
    "x_shape, axis", [((4, 3), 1), ((1, 4, 3), 2), ((2, 2, 3), -1), ((2, 3, 1), 1), ((0, 3), 1)]
)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_forward(x_shape, axis, dtype):
    k = int(np.prod(x_shape[axis % len(x_shape) :]))
    x, w, b = random(x_shape, 1, dtype), random((5, k), 2, dtype), random((5,), 3, dtype)
    y = run1("FC", {"X": x, "W": w, "b": b}, axis=axis)
    assert y.dtype == dtype
    np.testing.assert_allclose(y, fc_reference(x, w, b, axis % len(x_shape)), rtol=1e-5)


def test_forward_reuses_output_memory_and_follows_shape_changes():
    ws = Workspace()
    w, b = random((5, 3), 2), random((5,), 3)
    ws.feed("W", w)
    ws.feed("b", b)
    ws.feed("X", random((4, 3), 1))
    net = ws.create_net(_net([core.CreateOperator("FC", ["X", "W", "b"], ["Y"])]))
    net.run()
    memory = ws.blob("Y").value
    ws.feed("X", random((4, 3), 4))
    net.run()
    assert ws.blob("Y").value is memory
    np.testing.assert_allclose(ws.fetch("Y"), fc_reference(ws.fetch("X"), w, b), rtol=1e-5)
    ws.feed("X", random((2, 3), 5))  # a new batch size: shapes re-validated
    net.run()
    np.testing.assert_allclose(ws.fetch("Y"), fc_reference(ws.fetch("X"), w, b), rtol=1e-5)
    ws.feed("X", random((2, 4), 6))
    with pytest.raises(ShapeError, match="Dimension mismatch"):
        net.run()


def test_repeated_runs_see_new_and_changed_arrays():
    ws = Workspace()
    for name, value in {
        "X": random((3, 4), 1),
        "W": random((2, 4), 2),
        "b": random((2,), 3),
    }.items():
        ws.feed(name, value)
    net = ws.create_net(_net([core.CreateOperator("FC", ["X", "W", "b"], ["Y"])]))
    net.run()
    ws.feed("W", random((2, 4), 4))  # a new array of the same shape
    ws.blob("X").value *= 2  # the same array, changed in place
    ws.feed("Y", np.zeros((2, 3), np.float32))  # an output array fed from outside
    net.run()
    x, w, b = ws.fetch("X"), ws.fetch("W"), ws.fetch("b")
    np.testing.assert_allclose(ws.fetch("Y"), fc_reference(x, w, b), rtol=1e-5)


def test_non_contiguous_input_changed_in_place_is_reread():
    ws = Workspace()
    ws.feed("W", random((2, 4), 2))
    ws.feed("b", random((2,), 3))
    base = random((4, 3), 1)
    ws.create_blob("X").value = base.T  # a non-contiguous view
    net = ws.create_net(_net([core.CreateOperator("FC", ["X", "W", "b"], ["Y"])]))
    net.run()
    base += 1  # changes X through its base
    net.run()
    np.testing.assert_allclose(
        ws.fetch("Y"), fc_reference(base.T, ws.fetch("W"), ws.fetch("b")), rtol=1e-5
    )


def _net(ops):
    from caffe2rnn.proto import caffe2_pb2

    netdef = caffe2_pb2.NetDef()
    netdef.name = "fc_test"
    netdef.op.extend(ops)
    return netdef


@pytest.mark.parametrize(
    "inputs, error, pattern",
    [
        (
            {"X": random((4, 3)), "W": random((5, 2)), "b": random((5,))},
            ShapeError,
            r"Dimension mismatch: input 1 \('W'\) has shape \(5, 2\).*expected K = 3",
        ),
        (
            {"X": random((4, 3)), "W": random((5, 3, 1)), "b": random((5,))},
            ShapeError,
            r"input 1 \('W'\) has shape \(5, 3, 1\); expected a 2-D matrix",
        ),
        (
            {"X": random((4, 3)), "W": random((5, 3)), "b": random((4,))},
            ShapeError,
            r"input 2 \('b'\) has shape \(4,\); expected \(5,\)",
        ),
        (
            {"X": random((4, 3)), "W": random((5, 3), dtype=np.float64), "b": random((5,))},
            DTypeError,
            r"input 1 \('W'\) has type float64; expected float32",
        ),
        (
            {"X": random((4, 3)), "W": random((5, 3)), "b": random((5,), dtype=np.float64)},
            DTypeError,
            r"input 2 \('b'\) has type float64",
        ),
        (
            {"X": np.ones((4, 3), np.int32), "W": random((5, 3)), "b": random((5,))},
            DTypeError,
            r"input 0 \('X'\) has type int32",
        ),
    ],
)
def test_bad_inputs_name_the_blob_and_write_nothing(inputs, error, pattern):
    ws = Workspace()
    with pytest.raises(error, match=pattern):
        run_op("FC", inputs, ["Y"], ws=ws)
    assert not ws.has_blob("Y")


def test_bad_arguments():
    inputs = {"X": random((4, 3)), "W": random((5, 3)), "b": random((5,))}
    with pytest.raises(ArgumentTypeError, match="'axis' must be an integer"):
        run1("FC", inputs, axis=1.0)
    with pytest.raises(ArgumentError, match=r"axis 3 is out of range for input 0 \('X'\)"):
        run1("FC", inputs, axis=3)


def test_axis_w_flattens_w_from_era_e6():
    x, w, b = random((2, 6), 1), random((5, 2, 3), 2), random((5,), 3)
    with eras.use("E6"):
        y = run1("FC", {"X": x, "W": w, "b": b})
        np.testing.assert_allclose(y, x @ w.reshape(5, 6).T + b, rtol=1e-5)
        w2 = random((2, 3, 6), 4)
        y = run1("FC", {"X": x, "W": w2, "b": random((6,), 5)}, axis_w=2)
        np.testing.assert_allclose(y, x @ w2.reshape(6, 6).T + random((6,), 5), rtol=1e-5)
    with pytest.raises(ShapeError, match="2-D"):
        run1("FC", {"X": x, "W": w, "b": b})


@pytest.mark.parametrize("x_shape, axis", [((4, 3), 1), ((1, 2, 3), 2), ((2, 3, 2), 1)])
def test_gradients(x_shape, axis):
    k = int(np.prod(x_shape[axis:]))
    check_gradients(
        "FC",
        {"X": random(x_shape, 1), "W": random((4, k), 2), "b": random((4,), 3)},
        ["Y"],
        axis=axis,
    )


def test_gradient_maker_copies_arguments():
    ops, g_input = gradient_of("FC", ["X", "W", "b"], ["Y"], axis=2, order="NCHW")
    assert ops == [
        (
            "FCGradient",
            "",
            ["X", "W", "Y_grad"],
            ["W_grad", "b_grad", "X_grad"],
            [("axis", 2), ("order", "NCHW")],
            True,
        )
    ]
    assert g_input == ["X_grad", "W_grad", "b_grad"]


def test_gradient_op_with_two_outputs_and_bad_dy():
    x, w, dy = (
        random((4, 3), 1, np.float64),
        random((5, 3), 2, np.float64),
        random((4, 5), 3, np.float64),
    )
    ws = run_op("FCGradient", {"X": x, "W": w, "dY": dy}, ["dW", "db"])
    np.testing.assert_allclose(ws.fetch("dW"), dy.T @ x)
    np.testing.assert_allclose(ws.fetch("db"), dy.sum(axis=0))
    assert not ws.has_blob("dX")
    with pytest.raises(ShapeError, match=r"input 2 \('dY'\).*4 x 5 = 20 elements"):
        run_op(
            "FCGradient", {"X": x, "W": w, "dY": random((4, 4), 3, np.float64)}, ["dW", "db", "dX"]
        )
