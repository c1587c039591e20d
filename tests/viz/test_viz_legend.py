"""One palette: the legend draws exactly the shapes the figure uses; red means +=."""

import re

import pytest

from caffe2rnn import viz
from caffe2rnn.viz import examples
from caffe2rnn.viz.gallery import all_views
from caffe2rnn.viz.rnn_op import RecurrentOp
from caffe2rnn.viz.style import OP_FAMILIES


def _look(attrs):
    return (
        attrs.get("shape", "ellipse"),
        attrs.get("fillcolor"),
        attrs.get("style"),
        attrs.get("color"),
    )


def _swatch(attrs):
    """A node's look as the page legend's swatch shows it: fill, border, dash, rounded."""
    styles = (attrs.get("style") or "").split(",")
    fill = attrs.get("fillcolor", "#FFFFFF") if "filled" in styles else "#FFFFFF"
    dash = next((s for s in ("dashed", "dotted") if s in styles), "")
    rounded = attrs.get("shape", "ellipse") == "ellipse" or "rounded" in styles
    return (fill, attrs.get("color", "#202124"), dash, rounded)


def _swatches(label):
    """The looks of the swatch cells of the page legend's table."""
    found = set()
    for cell in re.findall(r"<td bgcolor=[^>]*>", label):
        attrs = dict(re.findall(r'(\w+)="([^"]*)"', cell))
        styles = attrs.get("style", "").split(",")
        dash = next((s for s in ("dashed", "dotted") if s in styles), "")
        found.add((attrs["bgcolor"], attrs["color"], dash, "rounded" in styles))
    return found


@pytest.mark.parametrize("view", ["net", "ssa", "scratches", "backward", "recurrent", "unroll"])
def test_the_page_legend_is_one_small_table_of_the_looks_the_figure_uses(parse_dot, view):
    dot = parse_dot(all_views(examples.lstm(), 2, "page")[view])
    legend = [n for n in dot.nodes if n.startswith("legend/")]
    assert legend == ["legend/table"]
    label = dot.nodes["legend/table"]["label"]
    figure = {
        _swatch(a)
        for n, a in dot.nodes.items()
        if {"blob", "op"} & set(a.get("class", "").split()) and "table" not in a.get("class", "")
    }
    assert figure and _swatches(label) == figure
    # a few lines, not a box of rows: at most one line per four entries, plus the notes
    lines = label.count('<table border="0" cellspacing="2"')
    entries = label.count("<td bgcolor=") + label.count("&#9654;") + label.count("&#183;")
    assert lines <= max(2, entries // 2)


@pytest.mark.parametrize("view", ["net", "ssa", "scratches", "backward", "recurrent", "unroll"])
def test_every_blob_look_in_the_figure_is_in_the_legend_and_back(parse_dot, view, width=None):
    dot = parse_dot(all_views(examples.lstm(), 2, width)[view])
    legend = {n: a for n, a in dot.nodes.items() if n.startswith("legend/")}
    figure_blobs = {
        _look(a)
        for n, a in dot.nodes.items()
        if "blob" in a.get("class", "").split() and "table" not in a.get("class", "")
    }
    legend_looks = {
        _look(a) for a in legend.values() if a.get("shape") not in ("plaintext", "point")
    }
    assert figure_blobs, view
    missing = figure_blobs - legend_looks
    assert not missing, "drawn but not in the legend: %s" % missing
    figure_ops = {_look(a) for n, a in dot.nodes.items() if "op" in a.get("class", "").split()}
    unused = legend_looks - figure_blobs - figure_ops
    assert not unused, "in the legend but never drawn: %s" % unused


def test_a_forward_sum_is_compute_a_backward_sum_is_accumulate(parse_dot):
    forward = parse_dot(viz.ssa(RecurrentOp(examples.lstm()).step_net))
    sums = [a for a in forward.nodes.values() if a.get("label", "").startswith("Sum")]
    assert sums and all(a["fillcolor"] == OP_FAMILIES["compute"][0] for a in sums)
    backward = parse_dot(viz.backward(examples.lstm()))
    sums = [a for a in backward.nodes.values() if "Sum" in a.get("label", "")]
    assert sums and all(a["fillcolor"] == OP_FAMILIES["accumulate"][0] for a in sums)
