"""E6's Range (against np.arange, and Caffe2's length rule), Sign and Swish
(against NumPy formulas; Swish's gradient by finite differences)."""

import numpy as np
import pytest
from ops_testing import check_gradients, gradient_of, random, run1, run_op

from caffe2rnn.errors import ArgumentError, DTypeError


@pytest.mark.parametrize(
    "values",
    [(10,), (np.float32(10.0),), (0,), (0, 0), (10.0, 5.0, -1.0), (2, 10000), (2, 10000, 20000)]
    + [(2, 10000, -1), (1.0, 2.0, 0.3), (np.int64(-3), np.int64(7), np.int64(4))],
)
def test_range_matches_arange(values):
    inputs = {"in%d" % i: np.array(v) for i, v in enumerate(values)}
    out = run1("Range", inputs)
    expected = np.arange(*[np.array(v) for v in values])
    assert out.dtype == np.array(values[0]).dtype
    np.testing.assert_allclose(out, expected.astype(out.dtype), rtol=1e-6)


def test_range_keeps_caffe2s_length_for_a_negative_step_that_does_not_divide():
    out = run1("Range", {"a": np.array(10), "b": np.array(4), "c": np.array(-4)})
    np.testing.assert_array_equal(out, [10])  # np.arange gives [10, 6]


def test_range_refusals():
    with pytest.raises(ArgumentError, match="Step size cannot be 0"):
        run1("Range", {"a": np.array(0), "b": np.array(10), "c": np.array(0)})
    with pytest.raises(DTypeError, match=r"input 1 \('b'\)"):
        run1("Range", {"a": np.array(0), "b": np.array(10.0)})


def test_sign():
    x = np.array([-2.0, 0.0, 3.0, np.nan, -0.0], np.float32)
    np.testing.assert_array_equal(run1("Sign", {"X": x}), [-1, 0, 1, 0, 0])


def test_swish_and_its_gradient():
    x = random((3, 4), 1, np.float64, -4, 4)
    np.testing.assert_allclose(run1("Swish", {"X": x}), x / (1 + np.exp(-x)))
    check_gradients("Swish", {"X": x}, ["Y"])
    ops, _ = gradient_of("Swish", ["X"], ["Y"])
    assert [(o[0], o[2], o[3]) for o in ops] == [
        ("SwishGradient", ["X", "Y", "Y_grad"], ["X_grad"])
    ]
    y, dy = run1("Swish", {"X": x}), random((3, 4), 2, np.float64)
    ws = run_op("SwishGradient", {"X": x, "Y": y, "dY": dy}, ["dY"])  # in place on dY
    s = 1 / (1 + np.exp(-x))
    np.testing.assert_allclose(ws.fetch("dY"), dy * (y + s * (1 - y)))


@pytest.mark.parametrize("name, function", [("Abs", np.abs), ("Sin", np.sin), ("Cos", np.cos)])
def test_abs_sin_cos_and_their_gradients(name, function):
    x = random((3, 4), 1, np.float64, -3, 3)
    np.testing.assert_allclose(run1(name, {"X": x}), function(x))
    check_gradients(name, {"X": x}, ["Y"])
    ops, _ = gradient_of(name, ["X"], ["Y"])
    assert [(o[0], o[2]) for o in ops] == [(name + "Gradient", ["X", "Y_grad"])]


def test_e6_logit_gradient():
    from caffe2rnn import eras

    x = random((3, 4), 1, np.float64, 0.05, 0.95)
    with eras.use("E6"):
        check_gradients("Logit", {"X": x}, ["Y"], eps=1e-3)
    dx = run1("LogitGradient", {"X": np.array([0.5, 1e-9]), "dY": np.array([1.0, 1.0])})
    np.testing.assert_allclose(dx, [4.0, 0.0])  # outside [eps, 1 - eps]: 0
    with eras.use("E5"), pytest.raises(Exception, match="not implemented yet"):
        gradient_of("Logit", ["X"], ["Y"])


def test_e7_keeps_the_e6_logit_gradient():
    from caffe2rnn import eras

    with eras.use("E7"):  # 929c33cee's logit_op.cc registers the same GetLogitGradient
        ops, _ = gradient_of("Logit", ["X"], ["Y"])
    assert [(o[0], o[2], o[3]) for o in ops] == [("LogitGradient", ["X", "Y_grad"], ["X_grad"])]
