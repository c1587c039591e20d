"""MaxPool, AveragePool, LpPool: forward against window-by-window NumPy loops in 1-3
spatial dims and both orders, the padding rules of ``conv_pool_base``, gradients
against finite differences, and bad input."""

import itertools

import numpy as np
import pytest
from ops_testing import check_gradients, gradient_of, random, run1, run_fails, run_op

from caffe2rnn.errors import ArgumentError, DTypeError, ShapeError
from caffe2rnn.operators.conv_pool_base import size_and_pad


def reference(x, kind, kernel, stride, heads, out, p=2.0):
    """Pool an NCHW ``x`` one output element at a time, from the definition."""
    y = np.zeros(x.shape[:2] + tuple(out), np.float64)
    for index in itertools.product(*(range(n) for n in y.shape)):
        window = [slice(index[0], index[0] + 1), slice(index[1], index[1] + 1)]
        for o, k, s, head, size in zip(index[2:], kernel, stride, heads, x.shape[2:]):
            start = o * s - head
            window.append(slice(max(start, 0), min(start + k, size)))
        values = x[tuple(window)].astype(np.float64)
        if kind == "MaxPool":
            y[index] = values.max()
        elif kind == "AveragePool":
            y[index] = values.mean()
        else:
            y[index] = np.sum(np.abs(values) ** p) ** (1.0 / p)
    return y


def nhwc(x):
    return np.moveaxis(x, 1, -1)


def nchw(x):
    return np.moveaxis(x, -1, 1)


CASES = [  # (X's NCHW shape, arguments, kernel, stride, heads, out)
    ((2, 3, 7), dict(kernels=[3], strides=[2], pads=[1, 2]), [3], [2], [1], [4]),
    ((1, 2, 6, 5), dict(kernel=3, stride=2, pad=1), [3, 3], [2, 2], [1, 1], [3, 3]),
    (
        (2, 1, 7, 6),
        dict(kernel_h=3, kernel_w=2, stride_h=1, stride_w=3, pad_t=2, pad_l=0, pad_b=0, pad_r=1),
        [3, 2],
        [1, 3],
        [2, 0],
        [7, 2],
    ),
    (
        (1, 2, 4, 5, 3),
        dict(kernels=[2, 3, 2], strides=[2, 1, 1], pads=[1] * 6),
        [2, 3, 2],
        [2, 1, 1],
        [1, 1, 1],
        [3, 5, 4],
    ),  # fmt: skip
    ((1, 2, 6, 5), dict(kernel=3, stride=2, legacy_pad=1), [3, 3], [2, 2], [0, 0], [2, 2]),
    ((1, 2, 6, 5), dict(kernel=3, stride=2, legacy_pad=2), [3, 3], [2, 2], [0, 1], [3, 3]),
    ((1, 2, 6, 5), dict(kernel=2, stride=2, pad=1, legacy_pad=3), [2, 2], [2, 2], [1, 1], [4, 3]),
    ((2, 3, 4, 5), dict(global_pooling=1), [4, 5], [1, 1], [0, 0], [1, 1]),
    ((2, 3, 6), dict(global_pooling=1), [6], [1], [0], [1]),
]


@pytest.mark.parametrize("kind", ["MaxPool", "AveragePool"])
@pytest.mark.parametrize("order", ["NCHW", "NHWC"])
@pytest.mark.parametrize("shape, args, kernel, stride, heads, out", CASES)
def test_forward(kind, order, shape, args, kernel, stride, heads, out):
    x = random(shape, 1)
    y = run1(kind, {"X": nhwc(x) if order == "NHWC" else x}, order=order, **args)
    expected = reference(x, kind, kernel, stride, heads, out)
    np.testing.assert_allclose(nchw(y) if order == "NHWC" else y, expected, rtol=1e-5)


@pytest.mark.parametrize("order", ["NCHW", "NHWC"])
@pytest.mark.parametrize("shape, args, kernel, stride, heads, out", CASES[1:3] + CASES[-2:-1])
def test_lp_pool_forward(order, shape, args, kernel, stride, heads, out):
    x = random(shape, 2)
    y = run1("LpPool", {"X": nhwc(x) if order == "NHWC" else x}, order=order, p=3.0, **args)
    expected = reference(x, "LpPool", kernel, stride, heads, out, p=3.0)
    np.testing.assert_allclose(nchw(y) if order == "NHWC" else y, expected, rtol=1e-5)


GRADIENT_CASES = [
    (kind, shape, args)
    for kind in ("MaxPool", "AveragePool", "LpPool")
    for shape, args, *_ in CASES
    if kind != "LpPool" or len(shape) == 4  # LpPool is 2-D only
]


@pytest.mark.parametrize("order", ["NCHW", "NHWC"])
@pytest.mark.parametrize("kind, shape, args", GRADIENT_CASES)
def test_gradients(kind, order, shape, args):
    # distinct values far from 0: no ties for MaxPool, no kink for LpPool's |x|
    x = np.random.RandomState(3).permutation(np.prod(shape)).reshape(shape) * 0.1 + 0.5
    x = nhwc(x) if order == "NHWC" else x
    check_gradients(kind, {"X": x}, ["Y"], order=order, **args)


def test_max_pool_gradient_goes_to_every_tied_element():
    x = np.array([[[[1.0, 3.0], [3.0, 2.0]]]], np.float32)
    y = np.array([[[[3.0]]]], np.float32)
    ws = run_op("MaxPoolGradient", {"X": x, "Y": y, "dY": np.full_like(y, 5.0)}, ["dX"], kernel=2)
    np.testing.assert_array_equal(ws.fetch("dX"), [[[[0.0, 5.0], [5.0, 0.0]]]])


def test_max_pool_skips_nan_and_starts_from_the_lowest_float():
    x = np.array([[[np.nan, 1.0, -np.inf, -np.inf]]], np.float32)
    y = run1("MaxPool", {"X": x}, kernels=[2], strides=[2])
    assert y.tolist() == [[[1.0, float(np.finfo(np.float32).min)]]]


def test_gradient_maker_and_the_1d_2d_3d_names():
    ops, g_input = gradient_of("MaxPool2D", ["X"], ["Y"], kernel=2)
    assert ops == [
        ("MaxPool2DGradient", "", ["X", "Y", "Y_grad"], ["X_grad"], [("kernel", 2)], True)
    ]
    assert g_input == ["X_grad"]
    x = random((1, 2, 4, 4))
    for name in ("AveragePool", "AveragePool1D", "AveragePool2D", "AveragePool3D"):
        np.testing.assert_allclose(
            run1(name, {"X": x}, kernel=2),
            reference(x, "AveragePool", [2, 2], [1, 1], [0, 0], [3, 3]),
            rtol=1e-6,
        )


@pytest.mark.parametrize(
    "size, kernel, stride, legacy_pad, pads, expected",
    [
        (7, 3, 2, 0, (1, 1), (1, 1, 4)),
        (2, 3, 2, 1, (0, 0), (0, 0, 1)),  # C++ division: -1 / 2 is 0
        (2, 3, 1, 1, (0, 0), (0, 0, 0)),
        (7, 3, 2, 2, (0, 0), (1, 1, 4)),
        (9, 1, 5, 2, (0, 0), (-1, -2, 2)),  # SAME may pad negatively
        (6, 3, 2, 3, (0, 0), (0, 2, 3)),  # Caffe's ceil mode
        (5, 2, 2, 3, (1, 1), (1, 1, 3)),  # ... minus the window that would start in the pad
    ],
)
def test_size_and_pad(size, kernel, stride, legacy_pad, pads, expected):
    assert size_and_pad(size, kernel, stride, 1, legacy_pad, *pads) == expected


@pytest.mark.parametrize(
    "args, error, match",
    [
        (dict(kernel=2, pad=2), ArgumentError, "Pad should be smaller than kernel"),
        (dict(kernel=2, dilation=2), ArgumentError, "does not support dilation"),
        (dict(stride=2), ArgumentError, "every kernel dim must be > 0"),
        (dict(global_pooling=1, stride=2), ArgumentError, "global_pooling"),
        (dict(kernel=2, legacy_pad=1, pad=0), ArgumentError, "legacy padding VALID or SAME"),
        (dict(kernel=2, legacy_pad=4), ArgumentError, "legacy_pad is 4"),
        (dict(kernels=[2]), ShapeError, "'X'.*1 or 2 or 3 spatial dims"),
        (dict(kernel=5), ShapeError, "'X'\\), spatial dim 0: .*smaller than the kernel"),
        (dict(kernel=2, order="NCWH"), ArgumentError, "Unknown storage order"),
        (dict(kernel=2, strides=[1]), ArgumentError, "1 strides for a 2-D kernel"),
    ],
)
def test_bad_arguments(args, error, match):
    run_fails("MaxPool", {"X": random((1, 2, 4, 4))}, error, match, **args)


def test_bad_inputs():
    run_fails("LpPool", {"X": random((1, 2, 4))}, ShapeError, "'X'.*2 spatial dims", kernels=[2])
    run_fails("AveragePool", {"X": np.ones((1, 1, 3, 3), np.int32)}, DTypeError, "'X'", kernel=2)
    run_fails("AveragePool", {"X": random((0, 1, 3, 3))}, ShapeError, "'X'.*non-empty", kernel=2)
    x, y = random((1, 2, 4, 4)), random((1, 2, 3, 3))
    run_fails(
        "AveragePoolGradient",
        {"X": x, "Y": y, "dY": random((1, 3, 3, 3))},
        ShapeError,
        "'dY'",
        kernel=2,
    )
