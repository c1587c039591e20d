"""Why Caffe2's E6 LayerNormLSTM gradient check fails now and then — on Caffe2 too.

``rnn_cell_test.py::test_lstm_main`` (Caffe2 042e8ede4) checks the gradients
of ``rnn_cell.LayerNormLSTM`` with central differences of step 0.005 and
tolerance 0.01, on random inputs that are often all zero. It sometimes fails
for input ``.../i2h``. The cause is the check, not the gradient:

* caffe2rnn's ``LayerNormGradient`` equals the gradient formula of Caffe2's
  C++ ``LayerNormGradientOp`` (caffe2/operators/layer_norm_op.cc, 042e8ede4),
  written out below from its comments (the ``dstdev_end``, ``dmean_end``,
  ``dx_end`` ... terms), and both equal float64 finite differences;
* where a row's values are (nearly) equal, ``σ = sqrt(var + 1e-5)`` bends
  over a width of ``sqrt(1e-5) ≈ 0.003``, smaller than the step: the check's
  own estimate is wrong there, whoever computes the forward pass.
"""

import numpy as np

from caffe2rnn.gradient_checker import numeric_gradient
from caffe2rnn.operators.gradient_maker import get_gradient_for_op
from caffe2rnn.proto import caffe2_pb2
from caffe2rnn.runtime import Workspace
from caffe2rnn.utils import MakeArgument

EPSILON = 1e-5  # Caffe2's LayerNorm default


def layer_norm(x):
    """Caffe2's forward: rows over the last axis, σ = sqrt(E[x²] − μ² + ε)."""
    mean = x.mean(axis=-1, keepdims=True)
    stdev = np.sqrt((x * x).mean(axis=-1, keepdims=True) - mean * mean + EPSILON)
    return (x - mean) / stdev, mean, stdev


def caffe2_layer_norm_gradient(dout, x, mean, stdev):
    """The terms of Caffe2's LayerNormGradientOp, as its comments name them."""
    d = x.shape[-1]
    dstdev_end = -1.0 / stdev**2 * ((x - mean) * dout).sum(axis=-1, keepdims=True)
    dmean_end = (-1.0 / stdev * dout).sum(axis=-1, keepdims=True)
    dx_end = dout / stdev
    dmean_stdev = -mean / stdev * dstdev_end
    dx_stdev = x / (d * stdev) * dstdev_end
    dx_mean = (dmean_end + dmean_stdev) / d
    return dx_end + dx_stdev + dx_mean


def caffe2rnn_gradient(x, dout):
    op = caffe2_pb2.OperatorDef(type="LayerNorm", input=["x"], output=["y", "mean", "stdev"])
    op.arg.add().CopyFrom(MakeArgument("axis", 1))
    ws = Workspace(name="layer_norm_check")
    ws.feed("x", x)
    ws.run_operator_once(op)
    grad_ops, g_input = get_gradient_for_op(op, ["y_grad", None, None])
    ws.feed("y_grad", dout)
    for grad_op in grad_ops:
        ws.run_operator_once(grad_op)
    return ws.fetch(g_input[0])


def test_caffe2rnn_computes_caffe2s_layer_norm_gradient():
    rng = np.random.default_rng(0)
    for x in (rng.standard_normal((3, 4)), np.zeros((3, 4)), np.full((3, 4), 0.7)):
        dout = rng.standard_normal(x.shape)
        _, mean, stdev = layer_norm(x)
        np.testing.assert_allclose(
            caffe2rnn_gradient(x, dout),
            caffe2_layer_norm_gradient(dout, x, mean, stdev),
            rtol=1e-10,
            atol=1e-10,
        )


def test_at_a_constant_row_the_step_of_the_check_is_too_wide():
    rng = np.random.default_rng(1)
    w = rng.standard_normal((1, 4))
    x = np.zeros((1, 4))  # an all-zero input: every row constant
    _, mean, stdev = layer_norm(x)
    exact = caffe2_layer_norm_gradient(w, x, mean, stdev)

    def loss(v):
        return float((layer_norm(v)[0] * w).sum())

    fine = numeric_gradient(loss, x.copy(), eps=1e-7)
    coarse = numeric_gradient(loss, x.copy(), eps=0.005)  # the step of Caffe2's test
    np.testing.assert_allclose(fine, exact, rtol=1e-5)
    np.testing.assert_allclose(caffe2rnn_gradient(x, w), exact, rtol=1e-10)
    # The test's estimate is far outside its tolerance (0.01 absolute + 0.01
    # relative), though the gradient is exact: the check fails, in float64 too.
    assert not np.allclose(coarse, exact, atol=0.01, rtol=0.01)
    assert np.abs(coarse - exact).max() > 10 * (0.01 + 0.01 * np.abs(exact).max())
