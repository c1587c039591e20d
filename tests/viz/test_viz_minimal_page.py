"""The minimal (ops only) net view on a page: what notebook 10 shows of the attention
decoder's step net (14 ops) and notebook 8 of a stacked LSTM's.

Before this layout the attention step net stood 2,006 px tall in the 688 px column,
every edge labelled with a name its box already showed. On a page it is folded into
columns, an edge is labelled only where the box it leaves lists several blobs, and
the full-size drawing keeps every label. Last, notebook 7's backward view on a page:
its same-tensor edge runs down, without a loop around the net.
"""

import re
import xml.etree.ElementTree as ET

import pytest
from test_viz_page import check_site, readable  # scripts/check_site.py: the site's measure
from test_viz_time_order import NUMBER, SVG, left_edges

from caffe2rnn import rnn_cell, viz
from caffe2rnn.attention import AttentionType
from caffe2rnn.model_helper import ModelHelper
from caffe2rnn.viz import examples, netdraw, sizing
from caffe2rnn.viz.render import pipe
from caffe2rnn.viz.rnn_op import RecurrentOp

_SIZE = re.compile(r'<svg\b[^>]*\bwidth="([\d.]+)pt"[^>]*\bheight="([\d.]+)pt"', re.S)


def _attention_step_net():
    """Notebook 10's decoder: LSTMWithAttention, scope "decoder", regular attention."""
    model = ModelHelper(name="regular")
    encoder = rnn_cell.LSTM(model, "encoder_inputs", "seq_lengths", ("enc_h0", "enc_c0"),
                            dim_in=6, dim_out=16, scope="encoder")[0]  # fmt: skip
    rnn_cell.LSTMWithAttention(
        model, "decoder_inputs", "seq_lengths", "dec_h0", "dec_c0", "ctx0",
        encoder_output_dim=16, encoder_outputs=encoder, decoder_input_dim=6,
        decoder_state_dim=16, scope="decoder", attention_type=AttentionType.Regular,
        outputs_with_grads=(0,),
    )  # fmt: skip
    ops = [o for o in model.net.Proto().op if o.type == "RecurrentNetwork"]
    return RecurrentOp(ops[-1]).step_net


def _stacked_step_net():
    """Notebook 8's two-layer LSTM (scope "deep"): 7 ops, 6 deep."""
    model = ModelHelper(name="stacked")
    rnn_cell.LSTM(model, "input", "seq_lengths", ("h0", "c0", "h0", "c0"), 3, [5, 5],
                  scope="deep", return_last_layer_only=False)  # fmt: skip
    (op,) = [o for o in model.net.Proto().op if o.type == "RecurrentNetwork"]
    return RecurrentOp(op).step_net


def _px(svg):
    width, height = _SIZE.search(svg.decode()).groups()
    return float(width) * 4 / 3, float(height) * 4 / 3


def _labelled(dot):
    return {(e[0], e[1]) for e in dot.edges if e[2].get("label")}


def _op_pairs(dot):
    """Each data edge as (producer, reader): a page's upward edge is drawn reader to
    producer with its arrow turned back."""
    return {
        (e[1], e[0]) if e[2].get("dir") == "back" else (e[0], e[1])
        for e in dot.edges
        if e[2].get("style") != "invis"
    }


@pytest.mark.needs_dot
def test_the_attention_step_net_fits_the_column_and_stays_readable():
    step_net = _attention_step_net()
    assert len(step_net.op) == 14
    svg = pipe(viz.net(step_net, minimal=True, width="page"), "svg")
    width, height = _px(svg)
    assert width <= sizing.PAGE_PX and height < 900, (width, height)  # was 474 x 2006
    intrinsic, median, smallest = readable(svg)
    assert median >= check_site.MEDIAN_PX and smallest >= check_site.SMALLEST_PX


@pytest.mark.needs_dot
def test_a_deep_net_is_read_column_by_column_in_op_order():
    graph = viz.net(_attention_step_net(), minimal=True, width="page")
    x = left_edges(graph)
    # the chain Concat .. Add (ops 0-6) is the first column, Tanh .. Reshape (7-12) the second
    first, second = range(0, 7), range(7, 13)
    assert max(x["op#%d" % i] for i in first) < min(x["op#%d" % i] for i in second)
    assert "2 columns" in graph.source


def test_a_page_labels_an_edge_only_where_its_box_lists_several_blobs(parse_dot):
    step_net = _attention_step_net()
    page = parse_dot(viz.net(step_net, minimal=True, width="page"))
    full = parse_dot(viz.net(step_net, minimal=True))
    assert _op_pairs(page) == {(e[0], e[1]) for e in full.edges}  # no dependency lost
    assert _labelled(full) == {(e[0], e[1]) for e in full.edges}  # full size: every label
    several = {"op#%d" % i for i, op in enumerate(step_net.op) if len(op.output) > 1}
    several -= {"op#0", "op#12"}  # Concat, Reshape: their second output is not listed
    expected = {p for p in _op_pairs(page) if p[0] in several}
    assert {"op#3"} <= several and expected  # LSTMUnit: hidden_t and cell_t
    labelled = {(e[1], e[0]) if e[2].get("dir") == "back" else (e[0], e[1])
                for e in page.edges if e[2].get("label")}  # fmt: skip
    assert labelled == expected
    assert len(labelled) < len(_labelled(full)) / 3


def test_a_page_lists_only_concats_and_reshapes_first_output(parse_dot):
    step_net = _attention_step_net()
    page = parse_dot(viz.net(step_net, minimal=True, width="page"))
    full = parse_dot(viz.net(step_net, minimal=True))
    for i, op in enumerate(step_net.op):
        text = page.nodes["op#%d" % i]["label"].replace("\\n", "").replace("\n", "")
        full_text = full.nodes["op#%d" % i]["label"].replace("\\n", "").replace("\n", "")
        assert op.output[0] in text
        for name in op.output[1:]:
            assert name in full_text
            assert (name in text) == (op.type not in netdraw.SHAPE_RECORD_OPS), (op.type, name)
    legend = viz.net(step_net, minimal=True, width="page").source
    assert "second output (the shape they record) is not" in legend


def test_a_shallow_net_is_not_folded(parse_dot):
    graph = viz.net(_stacked_step_net(), minimal=True, width="page")
    assert len(graph.parts) == 3  # title, net, legend
    assert "columns" not in graph.source
    assert not [n for n in parse_dot(graph).nodes if n.startswith("page/spine")]


@pytest.mark.needs_dot
def test_the_stacked_lstm_fits_the_column():
    svg = pipe(viz.net(_stacked_step_net(), minimal=True, width="page"), "svg")
    width, height = _px(svg)
    assert width <= sizing.PAGE_PX and height < 650, (width, height)  # was 466 x 742


def test_the_full_size_is_the_unchanged_view(parse_dot):
    step_net = _attention_step_net()
    graph = viz.net(step_net, minimal=True, width="page")
    assert graph.full_size().source == viz.net(step_net, minimal=True).source


@pytest.mark.needs_dot
@pytest.mark.parametrize("cell", ["lstm", "mul", "two_states"])
def test_the_backward_page_views_same_tensor_edge_runs_down_without_a_loop(cell):
    """viz.backward on a page (notebook 7): the accumulate op's output and the gradient
    tensor drawn under the net are one tensor; the dotted edge between them ran up and
    around the net (constraint=false) and now runs straight down."""
    svg = pipe(viz.backward(examples.OPS[cell](), width="page"), "svg").decode()
    root = ET.fromstring(svg)
    paths = [
        group.find(SVG + "path").get("d")
        for group in root.iter(SVG + "g")
        if (group.get("class") or "").split()[:2] == ["edge", "inplace"]
    ]
    assert paths, "no same-tensor edge drawn"
    for d in paths:
        ys = [float(y) for y in NUMBER.findall(d)[1::2]]
        assert all(b >= a - 1 for a, b in zip(ys, ys[1:])), ys  # never climbs back


@pytest.mark.parametrize("cell", ["lstm", "mul", "two_states"])
def test_the_backward_ops_only_view_draws_ops_and_the_accumulate_link(cell, parse_dot):
    """Issue 31: notebook 7 draws its backward step net ops only (viz.backward(...,
    minimal=True)): one box per op the C++ op runs, no blob nodes, and the accumulate op
    joined to the op that reads its row through the link (no blob name connects them)."""
    op = examples.OPS[cell]()
    cpp = RecurrentOp(op).cpp_backward_step_net()
    graph = viz.backward(op, minimal=True, width="page")
    dot = parse_dot(graph)
    ops = [n for n in dot.nodes if n.startswith("op#")]
    assert len(ops) == len(cpp.net.op) and all(
        n.startswith(("op#", "page/", "legend/")) for n in dot.nodes
    )
    links = dot.edges_of("link")
    assert cpp.prepended and links, links
    for tail, head, attrs in [(e[0], e[1], e[2]) for e in links]:
        i, j = int(tail[3:]), int(head[3:])
        assert i < cpp.prepended <= j and "views row t+1" in attrs["label"].replace("\n", "")
    assert graph.full_size().source == viz.backward(op, minimal=True).source


@pytest.mark.needs_dot
def test_the_backward_ops_only_view_is_far_shorter_than_the_full_one():
    """Issue 31: at page width notebook 7's backward view stood ~1,287 px tall; ops only
    it stands at most 60 % of the detailed page view's height (the mul cell: 28 %, the
    LSTM: 53 %)."""
    for cell in ("mul", "lstm"):
        heights = []
        for minimal in (False, True):
            svg = pipe(viz.backward(examples.OPS[cell](), minimal=minimal, width="page"), "svg")
            width, height = (float(v) * 4 / 3 for v in _SIZE.search(svg.decode()).groups())
            heights.append(height * min(1.0, sizing.PAGE_PX / width))
        assert heights[1] < 0.6 * heights[0], (cell, heights)
