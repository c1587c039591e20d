"""gradient_checker's Caffe2 API: GradientChecker.CheckSimple and NetGradientChecker.

Caffe2's test utilities (hypothesis_test_util.assertGradientChecks) and its
gradient_check_test.py call these; the loss (½ Σ y²), the step and the
tolerance rule are Caffe2's (caffe2/python/gradient_checker.py, 0cdd09da6).
"""

import shutil

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


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot is not installed")
def test_compare_nets_prints_net_images_as_caffe2_named_them(tmp_path, monkeypatch):
    """Caffe2 wrote caffe2_net_forward_<i><name>.png, then caffe2_net_<i><name>.png
    for the gradient nets (net_drawer); the drawing layer registers the drawer."""
    monkeypatch.chdir(tmp_path)
    x = np.array([0.5, -1.0], np.float32)
    net = core.Net("double")
    net.Scale(["x"], "out", scale=2.0)
    NetGradientChecker.CompareNets([net], [["out"]], [0], ["x"], {"x": x}, print_net_images=True)
    written = sorted(p.name for p in tmp_path.iterdir())
    assert written == ["caffe2_net_0double_copy.png", "caffe2_net_forward_0double.png"]
    for name in written:
        assert (tmp_path / name).read_bytes().startswith(b"\x89PNG")
