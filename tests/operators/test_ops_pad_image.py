"""PadImage against np.pad (constant, reflect, edge; NCHW and NHWC; negative
pads crop), its gradient by finite differences, and its refusals."""

import numpy as np
import pytest
from ops_testing import check_gradients, gradient_of, random, run1

from caffe2rnn.errors import ArgumentError

PADS = [(1, 2, 0, 3), (2, 2, 2, 2), (0, 0, 0, 0), (3, 1, 2, 0)]


@pytest.mark.parametrize("mode", ["constant", "reflect", "edge"])
@pytest.mark.parametrize("order", ["NCHW", "NHWC"])
@pytest.mark.parametrize("pads", PADS)
def test_pad_image_matches_np_pad(mode, order, pads):
    t, left, b, r = pads
    x = random((2, 3, 5, 4) if order == "NCHW" else (2, 5, 4, 3), 1, np.float64)
    spatial = ((t, b), (left, r))
    width = ((0, 0), (0, 0)) + spatial if order == "NCHW" else ((0, 0),) + spatial + ((0, 0),)
    args = dict(pad_t=t, pad_l=left, pad_b=b, pad_r=r, mode=mode, order=order)
    np.testing.assert_array_equal(run1("PadImage", {"X": x}, **args), np.pad(x, width, mode))
    check_gradients("PadImage", {"X": x}, ["Y"], **args)


def test_pad_image_value_pads_list_and_crop():
    x = random((1, 1, 3, 3), 1, np.float64)
    y = run1("PadImage", {"X": x}, pads=[1, 0, 0, 1], value=7.0)
    np.testing.assert_array_equal(y, np.pad(x, ((0, 0), (0, 0), (1, 0), (0, 1)), constant_values=7))
    cropped = run1("PadImage", {"X": x}, pad=-1)
    np.testing.assert_array_equal(cropped, x[:, :, 1:2, 1:2])
    check_gradients("PadImage", {"X": x}, ["Y"], pad=-1)


def test_pad_image_gradient_maker_copies_arguments():
    ops, _ = gradient_of("PadImage", ["X"], ["Y"], pad=2, mode="edge")
    assert ops == [
        ("PadImageGradient", "", ["Y_grad"], ["X_grad"], [("pad", 2), ("mode", "edge")], True)
    ]


def test_pad_image_refusals():
    x = random((1, 1, 3, 3))
    with pytest.raises(ArgumentError, match="one reflection only"):
        run1("PadImage", {"X": x}, pad=3, mode="reflect")
    with pytest.raises(ArgumentError, match="Unknown padding mode"):
        run1("PadImage", {"X": x}, pad=1, mode="wrap")
    with pytest.raises(ArgumentError, match="stride"):
        run1("PadImage", {"X": x}, pad=1, stride=2)


def _cpp_pad_image_gradient_nchw(dy, mode, t, l, b, r):
    """PadImageGradientOp<float, CPUContext>::RunOnDeviceWithOrderNCHW (pad_op.cc at
    042e8ede4), loop for loop: dX[h * width + w] += dY[ph * padded_width + pw]."""
    n_, c_, ph_, pw_ = dy.shape
    height, width = ph_ - t - b, pw_ - l - r
    dx = np.zeros((n_, c_, height, width), np.float32)
    for n in range(n_):
        for c in range(c_):
            for ph in range(ph_):
                for pw in range(pw_):
                    h, w = ph - t, pw - l
                    if mode == "constant":
                        if h < 0 or w < 0 or h >= height or w >= width:
                            continue
                    elif mode == "reflect":
                        h = max(h, -h)
                        h = min(h, 2 * height - h - 2)
                        w = max(w, -w)
                        w = min(w, 2 * width - w - 2)
                    else:
                        h = min(height - 1, max(ph - t, 0))
                        w = min(width - 1, max(pw - l, 0))
                    dx[n, c, h, w] += dy[n, c, ph, pw]
    return dx


@pytest.mark.parametrize("mode", ["constant", "reflect", "edge"])
@pytest.mark.parametrize("order", ["NCHW", "NHWC"])
def test_pad_image_gradient_sums_as_the_cpp(mode, order):
    rng = np.random.default_rng(11)
    t, l, b, r = (2, 1, 2, 3) if mode != "reflect" else (2, 1, 1, 2)
    dy = (rng.standard_normal((2, 3, 3 + t + b, 4 + l + r)) * 1.7).astype(np.float32)
    want = _cpp_pad_image_gradient_nchw(dy, mode, t, l, b, r)
    feed = dy if order == "NCHW" else np.ascontiguousarray(dy.transpose(0, 2, 3, 1))
    got = run1(
        "PadImageGradient",
        {"dy": feed},
        mode=mode,
        pad_t=t,
        pad_l=l,
        pad_b=b,
        pad_r=r,
        order=order,
    )
    if order == "NHWC":
        got = got.transpose(0, 3, 1, 2)
    np.testing.assert_array_equal(got, want)
