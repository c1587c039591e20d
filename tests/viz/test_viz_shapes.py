"""Blobs labelled with the shapes (and, in tooltips, the values) a run left behind."""

import ast

import numpy as np
import pytest

from caffe2rnn import core, viz, workspace
from caffe2rnn.errors import DrawingError
from caffe2rnn.runtime import Workspace


def _ran():
    net = core.Net("tiny")
    x, w, b = net.AddExternalInputs("x", "w", "b")
    h = net.FC([x, w, b], "h")
    net.Relu(h, h)
    ws = Workspace(name="shapes")
    ws.feed("x", np.arange(6, dtype=np.float32).reshape(2, 3))
    ws.feed("w", np.ones((4, 3), np.float32))
    ws.feed("b", np.zeros(4, np.float32))
    ws.run_net_once(net.Proto())
    return net, ws


def test_ssa_labels_final_versions_with_shape_and_values(parse_dot):
    net, ws = _ran()
    dot = parse_dot(viz.ssa(net, shapes=ws))
    assert dot.nodes["h@2"]["label"] == "h@2\n2×4 float32"
    assert dot.nodes["h@1"]["label"] == "h@1"  # overwritten in place: no value survives
    assert dot.nodes["x@0"]["label"] == "x@0\n2×3 float32"
    assert dot.nodes["x@0"]["tooltip"].startswith("x = [0., 1., 2., 3., 4., 5.]")
    relu = np.maximum(ws.fetch("x") @ np.ones((3, 4)), 0)  # [[3, 3, 3, 3], [12, ...]]
    shown = dot.nodes["h@2"]["tooltip"].split("= ", 1)[1]
    np.testing.assert_array_equal(np.array(ast.literal_eval(shown)), relu.ravel())


def test_net_view_takes_the_workspace_module_or_a_dict(parse_dot):
    net, ws = _ran()
    workspace.ResetWorkspace()
    for name in ("x", "w", "b", "h"):
        workspace.FeedBlob(name, ws.fetch(name))
    dot = parse_dot(viz.net(net, shapes=workspace))
    assert dot.nodes["h#1"]["label"] == "h\n2×4 float32"
    dot = parse_dot(viz.net(net, shapes={"w": np.zeros((4, 3), np.float64)}))
    assert dot.nodes["w#0"]["label"] == "w\n4×3 float64" and dot.nodes["x#0"]["label"] == "x"
    with pytest.raises(DrawingError, match="shapes=.*expected a Workspace"):
        viz.net(net, shapes=[1, 2])
