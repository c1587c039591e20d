"""Im2Col against a loop over windows written here (NCHW and NHWC, with
stride, dilation and pad), and Col2Im as its adjoint: ⟨Im2Col(x), c⟩ =
⟨x, Col2Im(c)⟩."""

import numpy as np
import pytest
from ops_testing import random, run1, run_op

from caffe2rnn.errors import ArgumentError, ShapeError


def im2col_reference(x, k, stride, dilation, pad):
    n, c, h, w = x.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    span = dilation * (k - 1) + 1
    oh, ow = (h + 2 * pad - span) // stride + 1, (w + 2 * pad - span) // stride + 1
    y = np.zeros((n, c, k, k, oh, ow))
    for i in range(k):
        for j in range(k):
            for a in range(oh):
                for b in range(ow):
                    y[:, :, i, j, a, b] = xp[
                        :, :, a * stride + i * dilation, b * stride + j * dilation
                    ]
    return y


@pytest.mark.parametrize(
    "k, stride, dilation, pad", [(2, 1, 1, 0), (3, 2, 1, 1), (2, 1, 2, 2), (1, 3, 1, 0)]
)
def test_im2col_both_orders_and_col2im_adjoint(k, stride, dilation, pad):
    x = random((2, 3, 7, 6), 1, np.float64)
    args = dict(kernel=k, stride=stride, dilation=dilation, pad=pad)
    ref = im2col_reference(x, k, stride, dilation, pad)
    n, c, _, _, oh, ow = ref.shape
    y = run1("Im2Col", {"X": x}, **args)
    np.testing.assert_array_equal(y, ref.reshape(n, c * k * k, oh, ow))
    y_nhwc = run1("Im2Col", {"X": x.transpose(0, 2, 3, 1)}, order="NHWC", **args)
    np.testing.assert_array_equal(y_nhwc, ref.transpose(0, 4, 5, 2, 3, 1).reshape(n, oh, ow, -1))
    cols = random(y.shape, 2, np.float64)
    back = run1("Col2Im", {"cols": cols, "like": x}, **args)
    assert back.shape == x.shape
    np.testing.assert_allclose((y * cols).sum(), (x * back).sum())
    cols_nhwc = cols.reshape(n, c, k * k, oh, ow).transpose(0, 3, 4, 2, 1)
    back_nhwc = run1(
        "Col2Im", {"cols": cols_nhwc, "like": x.transpose(0, 2, 3, 1)}, order="NHWC", **args
    )
    np.testing.assert_allclose(back_nhwc, back.transpose(0, 2, 3, 1))


def test_im2col_refusals():
    x = random((1, 1, 3, 3))
    with pytest.raises(ArgumentError, match="must be > 0"):
        run1("Im2Col", {"X": x})  # no kernel
    with pytest.raises(ShapeError, match="at least the dilated kernel 5"):
        run1("Im2Col", {"X": x}, kernel=3, dilation=2, pad=2)
    with pytest.raises(ShapeError, match=r"input 0 \('cols'\)"):
        run_op("Col2Im", {"cols": random((1, 4, 2, 3)), "like": x}, ["out"], kernel=2)
