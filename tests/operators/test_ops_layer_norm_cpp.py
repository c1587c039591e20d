"""LayerNorm / LayerNormGradient against LayerNormOp / LayerNormGradientOp
(layer_norm_op.cc at 042e8ede4), transcribed row by row in float32: the gradient
from X, mean and stdev (Y unread), term by term as the Eigen expressions."""

import numpy as np
import pytest

from caffe2rnn import core
from caffe2rnn.errors import ShapeError
from caffe2rnn.runtime import Workspace

f = np.float32


def cpp_layer_norm_gradient(dout, mean, stdev, x):
    left, right = x.shape
    g = np.empty_like(x)
    for i in range(left):
        s, m = stdev[i, 0], mean[i, 0]
        dstdev_end = (f(-1.0) / (s * s)) * f(sum((x[i] - m) * dout[i]))  # neg_recip(sqr(stdev))
        dmean_end = f(sum((f(-1.0) / s) * dout[i]))
        dx_end = (f(1.0) / s) * dout[i]
        dmean_stdev = ((f(-1.0) / s) * m) * dstdev_end
        dx_stdev = (f(1.0) / f(right)) * ((x[i] / s) * dstdev_end)
        dx_mean = (f(1.0) / f(right)) * (dmean_end + dmean_stdev)
        g[i] = dx_end + dx_stdev + dx_mean
    return g


@pytest.mark.parametrize("shape, axis", [((4, 6), 1), ((2, 3, 5), 1), ((2, 3, 5), -1)])
def test_layer_norm_gradient_is_the_cpp_formula(shape, axis):
    rng = np.random.default_rng(3)
    x = rng.standard_normal(shape).astype(f) * f(3) + f(1)
    ws = Workspace()
    ws.feed("x", x)
    ws.run_operator_once(
        core.CreateOperator("LayerNorm", ["x"], ["y", "mean", "std"], axis=axis, epsilon=1e-4)
    )
    dy = rng.standard_normal(shape).astype(f)
    ws.feed("dy", dy)
    ws.feed("y_other", np.zeros(shape, f))  # Input(1) is not read by the C++
    ws.run_operator_once(
        core.CreateOperator(
            "LayerNormGradient", ["dy", "y_other", "mean", "std", "x"], ["dx"], axis=axis
        )
    )
    canonical = axis % len(shape)
    left = int(np.prod(shape[:canonical]))
    want = cpp_layer_norm_gradient(
        dy.reshape(left, -1),
        ws.fetch("mean").reshape(left, 1),
        ws.fetch("std").reshape(left, 1),
        x.reshape(left, -1),
    )
    np.testing.assert_allclose(ws.fetch("dx").reshape(left, -1), want, rtol=2e-6, atol=1e-7)


def test_layer_norm_needs_two_dims():
    """``CAFFE_ENFORCE_GE(input.dims().size(), 2, "LayerNorm requires input dim >= 2")``."""
    ws = Workspace()
    ws.feed("x", np.ones(4, f))
    with pytest.raises(ShapeError, match="LayerNorm requires input dim >= 2"):
        ws.run_operator_once(core.CreateOperator("LayerNorm", ["x"], ["y", "m", "s"], axis=0))
