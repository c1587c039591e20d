"""The drawn figures of steps 2 and 4 (issue 31): the parent/child workspace lookup and
what AddGradientOperators appends. Every name drawn is the real run's or build's."""

import os
import re
import sys
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from caffe2rnn import core, eras
from caffe2rnn.errors import DrawingError
from caffe2rnn.runtime import Workspace
from caffe2rnn.viz import figures
from caffe2rnn.viz.figures import gradient_ops, parent_workspace, style

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SVG = "{http://www.w3.org/2000/svg}"


def _texts(figure, cls=None):
    """The texts of the figure, or of its <g class=cls> groups."""
    root = ET.fromstring(figure.svg)
    holders = [root] if cls is None else [
        g for g in root.iter(SVG + "g") if cls in (g.get("class") or "").split()
    ]  # fmt: skip
    return ["".join(t.itertext()) for h in holders for t in h.iter(SVG + "text")]


def _sizes(figure):
    """The font size of every <text> and <tspan> that holds text."""
    found = []

    def walk(element, size):
        size = float(element.get("font-size") or size or 0)
        if element.tag in (SVG + "text", SVG + "tspan") and "".join(element.itertext()).strip():
            found.append(size)
        for child in element:
            walk(child, size)

    walk(ET.fromstring(figure.svg), None)
    return found


@pytest.mark.parametrize("draw", [figures.fig_parent_workspace, figures.fig_gradient_ops])
def test_every_label_is_11_px_or_more_at_page_width(draw):
    figure = draw()
    assert float(ET.fromstring(figure.svg).get("width")) == style.WIDTH  # shown at 100 %
    assert min(_sizes(figure)) >= 11


def test_make_diagrams_writes_both_svgs(tmp_path):
    sys.path.insert(0, os.path.join(ROOT, "docs"))
    import make_diagrams

    make_diagrams.write_figures(str(tmp_path))
    for name in ("fig_parent_workspace", "fig_gradient_ops"):
        for suffix in ("", "_full"):
            svg = (tmp_path / ("%s%s.svg" % (name, suffix))).read_text(encoding="utf-8")
            assert ET.fromstring(svg).tag == SVG + "svg"
            assert svg == getattr(figures, name)().svg or suffix


# -- step 2: a child workspace and its parent ------------------------------------------------


def test_parent_workspace_draws_the_pages_run():
    """The page's predict (docs/concepts/netdef.md): x and y in the parent, a child runs
    Scale(x) -> h, Add(h, y) -> y. Run here independently of the figure's code."""
    parent = Workspace(name="parent")
    parent.feed("x", np.ones(3, np.float32))
    parent.feed("y", np.zeros(3, np.float32))
    net = core.Net("step_test")
    net.Scale("x", "h", scale=2.0)
    net.Add(["h", "y"], "y")
    child = Workspace(parent=parent, name="child")
    child.run_net_once(net.Proto())
    assert parent.local_blobs() == ["x", "y"] and child.local_blobs() == ["h"]
    np.testing.assert_array_equal(parent.fetch("y"), [2, 2, 2])

    ops, parent_blobs, child_blobs, changed = parent_workspace.run()
    assert ops == [("Scale", ["x"], ["h"]), ("Add", ["h", "y"], ["y"])]
    assert (parent_blobs, child_blobs, changed) == (["x", "y"], ["h"], ["y"])
    figure = figures.fig_parent_workspace()
    parent_texts = _texts(figure, "parent")
    assert "x" in parent_texts and "y" in parent_texts and "h" not in parent_texts
    child_texts = _texts(figure, "child")
    assert {"Scale", "Add", "h"} <= set(child_texts) and "x" not in child_texts
    assert "the parent has no h" in child_texts
    write = _texts(figure, "write")
    assert write == ["writes y:", "the parent's"]
    desc = ET.fromstring(figure.svg).find(SVG + "desc").text
    for fact in ("Scale(x) -> h", "Add(h, y) -> y", "the parent has no h",
                 "lands in the parent's y"):  # fmt: skip
        assert fact in desc, fact


def test_parent_workspace_write_goes_up_into_the_parents_y_in_red():
    root = ET.fromstring(figures.fig_parent_workspace().svg)
    (write,) = [g for g in root.iter(SVG + "g") if g.get("class") == "write"]
    path = write.find(".//" + SVG + "path")
    ys = [float(v) for v in re.findall(r"[\d.]+,([\d.]+)", path.get("d"))]
    assert ys[-1] < ys[0], "the write's arrow points up, into the parent"
    assert path.get("stroke") == style.ACCUMULATE
    (parent,) = [g for g in root.iter(SVG + "g") if g.get("class") == "parent"]
    strokes = [r.get("stroke") for r in parent.iter(SVG + "rect")]
    assert strokes.count(style.ACCUMULATE) == 1  # the parent's y, highlighted


def test_parent_workspace_refuses_a_run_that_does_not_write_the_parent(monkeypatch):
    ops, parent_blobs, child_blobs, _ = parent_workspace.run()
    monkeypatch.setattr(parent_workspace, "run", lambda: (ops, parent_blobs, child_blobs, []))
    with pytest.raises(DrawingError, match="write the parent's 'y'"):
        figures.fig_parent_workspace()


# -- step 4: what AddGradientOperators appends -------------------------------------------


def _real_build():
    """The page's net and its gradient ops, built here as a reader would."""
    with eras.use("E5"):
        net = core.Net("gradients_test")
        t = net.Tanh("x", "t")
        s = net.Sigmoid("x", "s")
        loss = net.SumElements(net.Mul([t, s], "y"), "loss")
        first = len(net.Proto().op)
        net.AddGradientOperators([loss])
    return [(op.type, list(op.input), list(op.output)) for op in net.Proto().op[first:]]


def test_gradient_ops_draws_the_real_builds_ops_and_names_in_run_order():
    backward = _real_build()
    forward, found, grads = gradient_ops.roles()
    assert sorted(found.values()) == [(i + 1,) + op for i, op in enumerate(backward)]
    figure = figures.fig_gradient_ops()
    drawn = _texts(figure, "backward")
    for number, (op_type, _, outputs) in enumerate(backward, 1):
        assert op_type in drawn and str(number) in drawn, op_type
        for name in outputs:
            assert name in drawn, name
    # each op chip carries its number in the run order of the real build
    root = ET.fromstring(figure.svg)
    (group,) = [g for g in root.iter(SVG + "g") if g.get("class") == "backward"]
    chips = [["".join(t.itertext()) for t in g.iter(SVG + "text")]
             for g in group.iter(SVG + "g") if g.get("class") == "op"]  # fmt: skip
    assert sorted((int(n), op_type) for op_type, n in chips) == [
        (i + 1, op[0]) for i, op in enumerate(backward)
    ]
    forward_texts = _texts(figure, "forward")
    for op_type, inputs, outputs in forward:
        assert op_type in forward_texts and all(n in forward_texts for n in inputs + outputs)
    assert grads["x"] == "x_grad"


def test_gradient_ops_shows_the_autosplit_meeting_in_a_sum():
    backward = _real_build()
    (sum_op,) = [op for op in backward if op[0] == "Sum"]
    assert sum_op[2] == ["x_grad"] and "x_grad" in sum_op[1]
    (renamed,) = [n for n in sum_op[1] if n != "x_grad"]
    assert "autosplit" in renamed
    figure = figures.fig_gradient_ops()
    root = ET.fromstring(figure.svg)
    red = [p for p in root.iter(SVG + "path") if p.get("stroke") == style.ACCUMULATE]
    assert len(red) == 2  # the two contributions, each an arrow into the Sum
    ends = [float(re.findall(r"[\d.]+,([\d.]+)", p.get("d"))[-1]) for p in red]
    assert abs(ends[0] - ends[1]) < 1, "both contributions end level with the Sum"
    assert renamed in _texts(figure, "backward")
    desc = root.find(SVG + "desc").text
    assert "%s(%s) -> x_grad" % (sum_op[0], ", ".join(sum_op[1])) in desc
    assert "Tanh(x) -> t" in desc and "Mul(t, s) -> y" in desc


def test_gradient_ops_follows_the_build_and_refuses_another_shape(monkeypatch):
    forward, backward, grads = gradient_ops.build()
    renamed = [(t, i, ["x_grad_B" if n == "x_grad" else n for n in o]) for t, i, o in backward]
    no_sum = [op for op in backward if op[0] != "Sum"]
    monkeypatch.setattr(gradient_ops, "build", lambda: (forward, no_sum, grads))
    with pytest.raises(DrawingError):
        figures.fig_gradient_ops()
    renamed[-1] = ("Sum", ["x_grad_B", "_x_grad_autosplit_0"], ["x_grad_B"])
    monkeypatch.setattr(gradient_ops, "build",
                        lambda: (forward, renamed, dict(grads, x="x_grad_B")))  # fmt: skip
    assert "x_grad_B" in _texts(figures.fig_gradient_ops(), "backward")
