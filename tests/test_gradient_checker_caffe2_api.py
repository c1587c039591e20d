"""gradient_checker's Caffe2 API: GradientChecker.CheckSimple and NetGradientChecker.

Caffe2's test utilities (hypothesis_test_util.assertGradientChecks) and its
gradient_check_test.py call these; the loss (½ Σ y²), the step and the
tolerance rule are Caffe2's (caffe2/python/gradient_checker.py, 0cdd09da6).
"""

import numpy as np
import pytest

from caffe2rnn import core, workspace
from caffe2rnn.gradient_checker import GradientChecker, NetGradientChecker, _dense


def tanh_op():
    return core.CreateOperator("Tanh", ["x"], ["y"])


def test_check_simple_passes_a_right_gradient_and_returns_caffe2s_values():
    x = np.linspace(-1, 1, 6).astype(np.float32).reshape(2, 3)
    original = x.copy()
    workspace.FeedBlob("kept", np.ones(1, np.float32))
    ok, grad, estimate = GradientChecker(0.005, 0.05).CheckSimple(tanh_op(), [x], 0, [0])
    assert ok
    y = np.tanh(original)
    np.testing.assert_allclose(grad, y * (1 - y * y), rtol=1e-5)  # d(½ Σ y²)/dx
    np.testing.assert_allclose(estimate, grad, atol=1e-3)
    np.testing.assert_array_equal(x, original)  # perturbed in place, then restored
    # It ran in its own workspace, reset after; the caller's is current again.
    assert workspace.CurrentWorkspace() == "default" and workspace.HasBlob("kept")
    assert not workspace.HasBlob("y")


def test_check_simple_fails_a_wrong_gradient():
    x = np.linspace(-1, 1, 4).astype(np.float32)
    wrong = [core.CreateOperator("Copy", ["y_grad"], ["x_grad"])]  # forgets tanh'
    ok, grad, estimate = GradientChecker(0.005, 0.01).CheckSimple(
        tanh_op(), [x], 0, [0], grad_ops=wrong
    )
    assert not ok
    np.testing.assert_allclose(grad, np.tanh(x), rtol=1e-6)


def test_sparse_gradients_are_added_up_row_by_row():
    workspace.FeedBlob("indices", np.array([2, 0, 2], np.int64))
    workspace.FeedBlob("values", np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], np.float32))
    dense = _dense(core.GradientSlice("indices", "values"), np.zeros((4, 2)))
    np.testing.assert_array_equal(dense, [[3, 4], [0, 0], [6, 8], [0, 0]])


def test_net_gradient_checker_check_and_compare():
    x = np.linspace(-1, 1, 3).astype(np.float32)
    net = core.Net("check")
    net.Tanh("x", "y")
    mean, largest = NetGradientChecker.Check(net, ["y"], {"x": x}, "x", step_size=1e-3)
    assert largest < 0.05 and mean <= largest

    def scaled(name, op, **args):
        n = core.Net(name)
        getattr(n, op)(["x"] if op == "Scale" else ["x", "x"], "out_" + name, **args)
        return n

    double, added = scaled("double", "Scale", scale=2.0), scaled("added", "Add")
    NetGradientChecker.CompareNets(
        [double, added], [["out_double"], ["out_added"]], [0], ["x"], {"x": x}
    )
    with pytest.raises(AssertionError, match="Different forward pass results"):
        NetGradientChecker.CompareNets(
            [double, scaled("triple", "Scale", scale=3.0)],
            [["out_double"], ["out_triple"]],
            [0],
            ["x"],
            {"x": x},
        )
