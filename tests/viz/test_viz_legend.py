"""One palette: the legend draws exactly the shapes the figure uses; red means +=."""

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


@pytest.mark.parametrize("width", [None, "page"])
@pytest.mark.parametrize("view", ["net", "ssa", "scratches", "backward", "recurrent", "unroll"])
def test_every_blob_look_in_the_figure_is_in_the_legend_and_back(parse_dot, view, width):
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
