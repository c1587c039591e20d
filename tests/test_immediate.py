"""Immediate mode: ops run as they are created, in a workspace of their own."""

import os

import numpy as np
import pytest

from caffe2rnn import compat, core, errors, workspace


@pytest.fixture(autouse=True)
def _immediate_off():
    yield
    workspace.StopImmediate()


def test_round_trip_and_the_normal_workspace_stays_untouched():
    workspace.StartImmediate(i_know=True)
    assert workspace.IsImmediate()
    net = core.Net("test-net")
    net.ConstantFill([], "testblob", shape=[1, 2, 3, 4], value=1.0)
    assert workspace.ImmediateBlobs() == ["testblob"]
    content = workspace.FetchImmediate("testblob")
    np.testing.assert_array_equal(content, np.ones((1, 2, 3, 4), np.float32))
    with pytest.raises(errors.BlobNotFoundError):  # a RuntimeError, as in Caffe2
        workspace.FetchBlob("testblob")
    assert workspace.CurrentWorkspace() == "default"
    content[:] = 2.0
    assert workspace.FeedImmediate("testblob", content) is True
    np.testing.assert_array_equal(workspace.FetchImmediate("testblob"), 2.0)
    folder = workspace._immediate_root_folder
    assert os.path.isdir(folder)
    workspace.StopImmediate()
    assert not workspace.IsImmediate()
    assert workspace._immediate_root_folder == "" and not os.path.exists(folder)
    with pytest.raises(RuntimeError):
        workspace.FetchImmediate("testblob")


def test_ops_computed_immediately_match_numpy_including_gradient_ops():
    workspace.StartImmediate(i_know=True)
    x = np.array([[-1.0, 2.0], [3.0, -4.0]], np.float32)
    workspace.FeedImmediate("x", x)
    net = core.Net("relu")
    y = net.Relu(["x"], ["y"])
    np.testing.assert_array_equal(workspace.FetchImmediate("y"), np.maximum(x, 0))
    grads = net.AddGradientOperators([y])  # the ConstantFill of dy and ReluGradient run now
    np.testing.assert_array_equal(workspace.FetchImmediate(grads[y]), np.ones_like(x))
    dx = workspace.FetchImmediate(grads["x"])
    np.testing.assert_array_equal(dx, (x > 0).astype(np.float32))
    assert not workspace.HasBlob("y")


def test_an_op_that_cannot_run_raises_at_creation_and_the_workspace_is_restored():
    workspace.StartImmediate(i_know=True)
    with pytest.raises(errors.BlobNotFoundError, match="missing"):
        core.CreateOperator("Relu", ["missing"], ["out"])
    assert workspace.CurrentWorkspace() == "default"
    assert "out" not in workspace.ImmediateBlobs()


def test_nothing_runs_when_immediate_mode_is_off():
    core.CreateOperator("ConstantFill", [], ["z"], shape=[1])
    assert not workspace.IsImmediate()
    assert workspace.Blobs() == []
    workspace.StopImmediate()  # stopping when off does nothing


def test_starting_again_starts_empty_and_the_warning_is_printed(capsys):
    own_root = workspace.RootFolder()
    workspace.StartImmediate()
    assert "immediate mode is on" in capsys.readouterr().out
    first = workspace._immediate_root_folder
    core.CreateOperator("ConstantFill", [], ["z"], shape=[1])
    workspace.StartImmediate(i_know=True)
    assert capsys.readouterr().out == ""
    assert workspace.ImmediateBlobs() == []
    assert not os.path.exists(first) and os.path.isdir(workspace._immediate_root_folder)
    assert workspace.RootFolder() == own_root  # the default workspace's own root


def test_immediate_program_written_for_caffe2_runs_unchanged():
    program = """
from caffe2.python import core, workspace
import numpy as np

workspace.StartImmediate(i_know=True)
workspace.FeedImmediate("a", np.arange(3, dtype=np.float32))
net = core.Net("n")
net.Scale("a", "b", scale=3.0)
b = workspace.FetchImmediate("b")
names = workspace.ImmediateBlobs()
workspace.StopImmediate()
"""
    compat.install()
    try:
        namespace = compat.py2_namespace()
        exec(compile(program, "<caffe2 immediate program>", "exec"), namespace)
    finally:
        compat.uninstall()
    np.testing.assert_array_equal(namespace["b"], 3 * np.arange(3, dtype=np.float32))
    assert namespace["names"] == ["a", "b"]
