"""timeline() and unroll(): rows of the state tensors, steps side by side."""

import re

import pytest

from caffe2rnn import viz
from caffe2rnn.errors import DrawingError
from caffe2rnn.utils import MakeArgument
from caffe2rnn.viz import examples

STATE = "tensor/mul_main/recurrent/h_prev_states"


@pytest.mark.parametrize("t", [0, 1, 2])
def test_timeline_links_offset_0_to_row_t_and_offset_1_to_row_t_plus_1(parse_dot, t):
    dot = parse_dot(viz.timeline(examples.mul(), T=3))
    links = {(e[0], e[1], e[4]): e[2] for e in dot.edges_of("link")}
    read = links[("t%d/h_prev" % t, STATE, "r%d:w" % t)]
    assert read["dir"] == "back"  # the step reads row t
    assert "dir" not in links[("t%d/h" % t, STATE, "r%d:w" % (t + 1))]
    assert dot.nodes["t%d/h_prev" % t]["label"] == "h_prev\nlink +0: row %d" % t
    assert dot.nodes["t%d/h" % t]["label"] == "h\nlink +1: row %d" % (t + 1)
    assert ("t%d/input_t" % t, "tensor/input", "r%d:w" % t) in links


def test_timeline_tables_show_writers_readers_and_alias_rows(parse_dot):
    graph = viz.timeline(examples.mul(), T=2)
    table = parse_dot(graph).nodes[STATE]["label"]
    assert "(3 rows)" in table
    assert (
        '<td port="r1" bgcolor="#FFFFFF">1</td><td align="left">step 0: h</td>'
        '<td align="left">step 1: h_prev</td>' in table
    )
    assert "initial: h0" in table
    # h_all views rows 1..2 ([0], [1]); h_last only row 2
    assert table.count(">[0]<") == 2 and table.count(">[1]<") == 1
    aliases = {(e[1], e[3]): e[2]["label"] for e in parse_dot(graph).edges_of("alias")}
    assert aliases[("io/h_all", "a0:s")] == "alias +1 (rows 1..T)"
    assert aliases[("io/h_last", "a1:s")] == "alias -1 (last row)"


def test_timeline_window_covers_several_rows(parse_dot):
    op = examples.mul()
    op.arg.extend([MakeArgument("link_window", [2, 1, 1])])
    dot = parse_dot(viz.timeline(op, T=3, steps=[1]))
    assert dot.nodes["t1/h_prev"]["label"].endswith("rows 1..2 (window 2)")
    assert "step 1: h_prev" in dot.nodes[STATE]["label"].split('port="r2"')[1]
    assert not any(n.startswith("t0/") for n in dot.nodes)


def test_timeline_and_unroll_reject_bad_lengths():
    with pytest.raises(DrawingError, match="T >= 1, got 0"):
        viz.timeline(examples.mul(), T=0)
    with pytest.raises(DrawingError, match=r"steps \[5\] \(and highlight None\) must lie in 0..2"):
        viz.timeline(examples.mul(), T=3, steps=[5])
    with pytest.raises(DrawingError, match="T >= 1"):
        viz.unroll(examples.mul(), T="3")


def test_unroll_draws_one_column_per_step_and_recurrent_edges(parse_dot):
    graph = viz.unroll(examples.lstm(), T=3)
    for t in range(3):
        assert "subgraph cluster_t%d" % t in graph.source
    dot = parse_dot(graph)
    recurrent = {(e[0], e[1]) for e in dot.edges_of("recurrent")}
    assert recurrent == {
        ("t0/lstm/hidden_t@1", "t1/hidden_t_prev@0"),
        ("t1/lstm/hidden_t@1", "t2/hidden_t_prev@0"),
        ("t0/lstm/cell_t@1", "t1/cell_t_prev@0"),
        ("t1/lstm/cell_t@1", "t2/cell_t_prev@0"),
    }
    dot.edge("io/h0", "t0/hidden_t_prev@0")
    dot.edge("io/input[2]", "t2/input_t@0")
    assert dot.edge("t2/lstm/hidden_t@1", "io/lstm/hidden_t_last")["label"] == "last row"
    assert dot.edge("t1/lstm/hidden_t@1", "io/lstm/hidden_t_all")["label"] == "[1]"


@pytest.mark.parametrize("width", [None, "page"])
@pytest.mark.parametrize("draw, step", [(viz.timeline, "step"), (viz.backward_timeline,
                                                                 "backward step")])  # fmt: skip
def test_a_highlighted_timeline_keys_its_colours_in_the_legend(parse_dot, draw, step, width):
    """highlight=t colours the rows step t reads (blue) and writes (amber): the legend
    says so, in those colours, and says nothing of it without a highlight."""
    from caffe2rnn.viz.timeline import HIGHLIGHT

    graph = draw(examples.mul(), 3, highlight=1, width=width)
    legend = "\n".join(
        a.get("label", "") + " " + a.get("fillcolor", "")
        for n, a in parse_dot(graph).nodes.items()
        if n.startswith("legend/")
    )
    for role, text in (("read", "row read by %s 1"), ("write", "row written by %s 1")):
        assert text % step in legend
        assert HIGHLIGHT[role] in legend
    # the figure uses those colours
    body = "\n".join(graph.body)
    assert body.count(HIGHLIGHT["read"]) > 1 and body.count(HIGHLIGHT["write"]) > 1
    plain = draw(examples.mul(), 3, width=width)
    assert "row read by" not in "\n".join(plain.body)


def test_a_page_timeline_elides_the_middle_rows_of_a_long_sequence(parse_dot):
    """Issue 31: at page width a T = 12 table shows rows 0..2, the highlighted step's rows,
    the last two rows and one '⋮ rows a to b' row for each elided run."""
    table = parse_dot(viz.timeline(examples.mul(), T=12, highlight=6, width="page")).nodes[STATE]
    label = table["label"]
    ports = [int(p) for p in re.findall(r'port="r(\d+)"', label)]
    assert ports == [0, 1, 2, 6, 7, 11, 12], ports
    assert "&#8942; rows 3 to 5: likewise" in label and "&#8942; rows 8 to 10: likewise" in label


def test_a_page_timeline_names_a_columns_blob_once_and_drops_empty_columns(parse_dot):
    """Issue 31: the page table's header says 'written by step t's h' and its cells 'step
    0', not 'step 0: h' on every row; the input's 'written by' column (no step writes the
    input) is left out; the table's text is larger than the nodes' 10 pt."""
    dot = parse_dot(viz.timeline(examples.mul(), T=4, width="page"))
    state = dot.nodes[STATE]["label"]
    assert "<b>written by step t's</b><br/>h<" in state
    assert "<b>read by step t's</b><br/>h_prev<" in state
    assert '<td align="left">step 0</td>' in state and "step 0: h" not in state
    assert state.startswith('<<font point-size="12">')
    inputs = dot.nodes["tensor/input"]["label"]
    assert "written by" not in inputs and "<b>read by step t's</b><br/>input_t<" in inputs
