"""MaxPoolGradient / AveragePoolGradient against the loops of Caffe2's
PoolGradientOp::RunOnDeviceWithOrderNCHW (pool_gradient_op.cc at 042e8ede4),
transcribed loop for loop in float32: windows ascending, ``dx += scale * dy``
with ``float scale = 1. / (hend - hstart) / ...`` (double, then float), and
``if (x == y) dx += dy``. Overlapping windows make the order of the float sums
matter; the results must be equal, not close."""

import itertools

import numpy as np
import pytest

from caffe2rnn import core
from caffe2rnn.runtime import Workspace

f32 = np.float32


def cpp_pool_gradient(kind, x, y, dy, kernel, stride, pads):
    dx = np.zeros_like(x)
    n_, c_ = x.shape[:2]
    spatial, pooled = x.shape[2:], dy.shape[2:]
    for n, c in itertools.product(range(n_), range(c_)):
        for p in itertools.product(*(range(k) for k in pooled)):
            starts, ends = [], []
            for d, o in enumerate(p):
                start = o * stride[d] - pads[d]
                ends.append(min(start + kernel[d], spatial[d]))
                starts.append(max(start, 0))
            scale = 1.0
            for s, e in zip(starts, ends):
                scale = scale / (e - s)  # double, divided dim by dim
            scale = f32(scale)
            for q in itertools.product(*(range(s, e) for s, e in zip(starts, ends))):
                if kind == "Average":
                    dx[(n, c) + q] += scale * dy[(n, c) + p]
                elif x[(n, c) + q] == y[(n, c) + p]:
                    dx[(n, c) + q] += dy[(n, c) + p]
    return dx


@pytest.mark.parametrize("kind", ["Average", "Max"])
@pytest.mark.parametrize(
    "shape, kernel, stride, pad",
    [
        ((2, 2, 9), [3], [1], 1),
        ((1, 2, 7, 6), [3, 2], [1, 1], 1),
        ((1, 1, 5, 4, 6), [3, 2, 3], [1, 2, 1], 1),
    ],
)
def test_pool_gradient_equals_the_cpp_loops(kind, shape, kernel, stride, pad):
    rng = np.random.default_rng(len(shape) * 10 + len(kind))
    x = rng.integers(-3, 4, shape).astype(f32)  # ties: several maxima per window
    op = core.CreateOperator(
        kind + "Pool",
        ["x"],
        ["y"],
        kernels=kernel,
        strides=stride,
        pads=[pad] * (2 * len(kernel)),
        order="NCHW",
    )
    ws = Workspace()
    ws.feed("x", x)
    ws.run_operator_once(op)
    y = ws.fetch("y")
    dy = (rng.standard_normal(y.shape) * 1.37).astype(f32)
    ws.feed("dy", dy)
    ws.run_operator_once(
        core.CreateOperator(
            kind + "PoolGradient",
            ["x", "y", "dy"],
            ["dx"],
            kernels=kernel,
            strides=stride,
            pads=[pad] * (2 * len(kernel)),
            order="NCHW",
        )
    )
    want = cpp_pool_gradient(kind, x, y, dy, kernel, stride, [pad] * len(kernel))
    np.testing.assert_array_equal(ws.fetch("dx"), want)


def test_max_pool_gradient_skips_an_infinite_dy_off_the_maximum():
    """``if (x_data == y_data) dx_data += dy_data;``: no 0 * inf = NaN elsewhere."""
    x = np.array([[[1.0, 5.0]]], f32)
    ws = Workspace()
    ws.feed("x", x)
    ws.feed("y", np.array([[[5.0]]], f32))
    ws.feed("dy", np.array([[[np.inf]]], f32))
    ws.run_operator_once(
        core.CreateOperator("MaxPoolGradient", ["x", "y", "dy"], ["dx"], kernels=[2], strides=[1])
    )
    np.testing.assert_array_equal(ws.fetch("dx"), [[[0.0, np.inf]]])
