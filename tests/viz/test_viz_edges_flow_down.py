"""No edge loops around a page figure: links, aliases and recurrent edges run down the page.

A page view (``width="page"``) is read top to bottom, so every edge that carries data
from one place to another — a link between a tensor row and a step-net blob, an alias
from a tensor to an op output, the recurrent edge from step t to step t+1 — should
run downwards. An edge that has to go *up* is routed by Graphviz around the outside
of the boxes it passes (the loops the docs showed). These tests lay each view out
with ``dot`` and read every such edge's path back from the SVG.
"""

import re
import xml.etree.ElementTree as ET

import pytest

from caffe2rnn import viz
from caffe2rnn.viz import examples
from caffe2rnn.viz.render import pipe

SVG = "{http://www.w3.org/2000/svg}"
NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
KINDS = ("link", "alias", "recurrent")
#: A spline that leaves its node sideways may rise a few points before it
#: turns down (the loops these tests catch climb 14 to 470 points).
SLACK = 10.0


def edge_paths(graph):
    """[(kind, title, [(x, y) ...])] of the data edges of a page drawing, y growing down."""
    root = ET.fromstring(pipe(graph, "svg"))
    found = []
    for group in root.iter(SVG + "g"):
        classes = (group.get("class") or "").split()
        if "edge" not in classes or not set(classes) & set(KINDS):
            continue
        path = next(group.iter(SVG + "path"))
        numbers = [float(n) for n in NUMBER.findall(path.get("d"))]
        kind = next(k for k in KINDS if k in classes)
        found.append((kind, group.find(SVG + "title").text, on_curve(numbers)))
    return found


def on_curve(numbers, samples=12):
    """Points along Graphviz's path ``M p0 C p1 p2 p3 p4 p5 p6 ...`` (cubic Béziers;
    the control points themselves may lie off the curve)."""
    points = list(zip(numbers[0::2], numbers[1::2]))
    curve = [points[0]]
    for i in range(1, len(points) - 2, 3):
        p0, p1, p2, p3 = points[i - 1], points[i], points[i + 1], points[i + 2]
        for k in range(1, samples + 1):
            t = k / samples
            a, b, c, d = (1 - t) ** 3, 3 * (1 - t) ** 2 * t, 3 * (1 - t) * t**2, t**3
            curve.append(tuple(a * u + b * v + c * w + d * z for u, v, w, z in zip(p0, p1, p2, p3)))
    return curve


def upward(points):
    """How far (points) the path climbs above its start or dips back above a point it reached."""
    lowest, worst = points[0][1], 0.0
    for _, y in points:
        worst = max(worst, lowest - y)
        lowest = max(lowest, y)
    return worst


VIEWS = {
    "recurrent": lambda op: viz.recurrent(op, width="page"),
    "unroll": lambda op: viz.unroll(op, 3, width="page"),
    "timeline": lambda op: viz.timeline(op, 3, width="page"),
}


@pytest.mark.needs_dot
@pytest.mark.parametrize("view", sorted(VIEWS))
@pytest.mark.parametrize("cell", ["lstm", "two_states", "attention", "mul"])
def test_data_edges_run_down_the_page(view, cell):
    paths = edge_paths(VIEWS[view](examples.OPS[cell]()))
    assert paths, "no link/alias/recurrent edges drawn"
    climbing = [(kind, title, round(upward(p))) for kind, title, p in paths if upward(p) > SLACK]
    assert not climbing, "edges that go up the page (drawn around the boxes): %s" % climbing


@pytest.mark.needs_dot
@pytest.mark.parametrize("cell", ["lstm", "two_states", "attention", "mul"])
def test_backward_links_run_down_the_page(cell):
    """viz.backward on a page draws the gradient tensors the step writes again under the
    net (round 3 of the cold reads: "spaghetti"; before, 13 of these 31 edges climbed, up
    to 2698 points). Attention's context-gradient link leaves its tensor sideways and
    rises 12 points before it turns down: allowed there, and no more."""
    paths = edge_paths(viz.backward(examples.OPS[cell](), width="page"))
    assert paths, "no link edges drawn"
    slack = 15.0 if cell == "attention" else SLACK
    climbing = [(kind, title, round(upward(p))) for kind, title, p in paths if upward(p) > slack]
    assert not climbing, "edges that go up the page (drawn around the boxes): %s" % climbing


def node_rows(graph):
    """{node title: the y of its centre} of a drawing laid out by dot (y growing down;
    nodes of one rank share it whatever their heights)."""
    root = ET.fromstring(pipe(graph, "svg"))
    tops = {}
    for group in root.iter(SVG + "g"):
        if "node" not in (group.get("class") or "").split():
            continue
        ys = []
        for shape in group.iter():
            if shape.tag in (SVG + "polygon", SVG + "path", SVG + "polyline"):
                numbers = NUMBER.findall(shape.get("points") or shape.get("d") or "")
                ys += [float(y) for y in numbers[1::2]]
            elif shape.tag == SVG + "ellipse":
                cy, ry = float(shape.get("cy")), float(shape.get("ry"))
                ys += [cy - ry, cy + ry]
        if ys:
            tops[group.find(SVG + "title").text] = (min(ys) + max(ys)) / 2
    return tops


@pytest.mark.needs_dot
@pytest.mark.parametrize("cell", ["lstm", "two_states", "attention", "mul"])
def test_unrolled_steps_take_the_state_in_at_their_top(cell):
    """The recurrent edge from step t enters step t+1 at its top row, straight down
    (not round the side of the box to a blob half-way down it)."""
    graph = viz.unroll(examples.OPS[cell](), 3, width="page")
    tops = node_rows(graph)
    for kind, title, _ in edge_paths(graph):
        if kind != "recurrent":
            continue
        head = title.split("->")[1]
        step = head.split("/")[0] + "/"
        first_row = min(y for name, y in tops.items() if name.startswith(step))
        assert tops[head] - first_row < 4, "%s enters %s below its top row" % (title, step)
