"""The history comparison grid shades what a reader can see differ, and nothing else."""

import html

from caffe2rnn import core, viz
from caffe2rnn.history.compare import Row
from caffe2rnn.proto import caffe2_pb2
from caffe2rnn.viz.compare import (
    CHANGED,
    DIFFERS,
    LEGEND,
    REORDERED,
    SAME,
    net_changes,
    reordered,
    table,
    visible,
)


def _net(name, fc_output="gates_t", args=()):
    net = caffe2_pb2.NetDef()
    net.name = name
    net.op.extend(
        [
            core.CreateOperator("FC", ["h", "w", "b"], [fc_output], **dict(args)),
            core.CreateOperator("Sum", [fc_output, "input_t"], [fc_output]),
        ]
    )
    net.external_input.extend(["h", "w", "b", "input_t"])
    return net


def _shown(cell):
    """A cell's text as a reader reads it (lines joined, entities decoded)."""
    return html.unescape(cell.replace("<br/>", " "))


def test_values_that_differ_where_no_text_shows_are_not_shaded():
    """Two step nets differing only in their name, and two long lists differing
    only past the lines the cell shows: equal as shown, so not shaded."""
    versions = ["v2", "v3"]
    names = Row("step_net", (_net("cell"), _net("cell_v3")), True)
    long_a = ["blob_%02d" % i for i in range(60)]
    long_b = long_a[:-1] + ["other"]
    lists = Row("outputs", (long_a, long_b), True)
    for row in (names, lists):
        assert row.values[0] != row.values[1]  # the values do differ ...
        texts, shades, differs = visible(versions, row, 40)
        assert texts[0] == texts[1]  # ... but not where the reader looks
        assert shades == [SAME, SAME] and not differs
    graph = table(versions, [names, lists], "t")
    grid = graph.source.split("\ttable [")[1]  # the grid, not its legend
    assert CHANGED not in grid and DIFFERS not in grid
    assert "step_net" in graph.source  # drawn, unshaded
    only = table(versions, [names, lists], "t", only_differences=True)
    assert "step_net" not in only.source and "outputs" not in only.source


def test_a_step_net_changed_inside_says_what_changed_and_is_shaded():
    versions = ["v2", "v3", "newest"]
    old = _net("cell", "gates_t")
    new = _net("cell", "gates_t_renamed", {"order": "NCHW"})
    row = Row("step_net", (old, new, new), True)
    texts, shades, differs = visible(versions, row, 200)
    assert _shown(texts[0]) == "type '', 2 ops: FC, Sum; 4 external inputs"
    assert "vs v2: op#0 outputs, args +order; op#1 inputs, outputs" in _shown(texts[1])
    assert shades == [DIFFERS, CHANGED, DIFFERS] and differs  # newest = v3: not darker
    assert net_changes(new, new) == [] and net_changes(_net("x"), _net("y")) == []


def test_the_lstm_grid_of_the_history_page_shades_only_shown_changes():
    graph = viz.compare(["v2", "v3", "newest"], "lstm", only_differences=True)
    rows = {r.split("</b>")[0].rsplit("<b>", 1)[-1]: r for r in graph.source.split("<tr>")[2:]}
    backward = rows["backward_step_net"].split("<td")[2:]
    # v3 renamed outputs and added FC arguments (brew's argument scope): said and shaded
    assert "vs v2: op#0 outputs" in _shown(backward[1]) and CHANGED in backward[1]
    # newest runs the same backward step net as v3: not shaded darker
    assert CHANGED not in backward[2]


def test_links_that_only_moved_are_the_same_links_and_not_shaded():
    """v1 -> april: backward_link_internal and _offset reordered together (the
    same (internal, external, offset) triples): said, not shaded."""
    versions = ["v1", "april"]
    rows = [
        Row("backward_link_internal", (["a_prev_grad", "a_grad"], ["a_grad", "a_prev_grad"]), True),
        Row("backward_link_external", (["s_grad", "s_grad"], ["s_grad", "s_grad"]), False),
        Row("backward_link_offset", ([0, 1], [1, 0]), True),
    ]
    moved = reordered(rows)
    assert moved == {"backward_link_internal": {1}, "backward_link_offset": {1}}
    for row in rows:
        texts, shades, differs = visible(versions, row, 60, moved.get(row.argument, ()))
        assert shades == [SAME, SAME] and not differs, row.argument
    assert html.unescape(REORDERED) in _shown(visible(versions, rows[0], 60, {1})[0][1])
    # an offset that really changed (same internal order) is a change
    changed = [
        Row("backward_link_internal", (["a", "b"], ["a", "b"]), False),
        Row("backward_link_offset", ([0, 1], [1, 0]), True),
    ]
    assert reordered(changed) == {}


def test_the_history_grid_does_not_shade_the_v1_to_april_reorder():
    graph = viz.compare(["v1", "april"], "lstm", only_differences=True)
    assert "backward_link_internal" not in graph.source
    assert "backward_link_offset" not in graph.source


def test_every_comparison_says_what_its_shades_mean():
    for graph in (
        viz.compare(["v2", "v3"], "lstm"),
        viz.compare(["v2", "v3"], "lstm", width="page"),
    ):
        source = graph.source
        for colour, text in LEGEND:
            assert colour in source and html.escape(text) in source, text


def test_values_a_reader_meets_only_here_are_explained_under_the_legend():
    """v1's numbered step_workspaces_<n> blob and v3's step net type 'rnn' are said
    under the legend when the grid shows them, and only then."""
    from caffe2rnn.viz.compare import VALUE_NOTES

    notes = [html.escape(note) for _, note in VALUE_NOTES]
    for width in (None, "page"):
        source = viz.compare(["v1", "v3"], "lstm", only_differences=True, width=width).source
        source = source.replace('<br align="left"/>', " ")
        joined = " ".join(source.split())
        for note in notes:
            assert " ".join(note.split()) in joined, note[:40]
    plain = viz.compare(["v2", "april"], "lstm", only_differences=True).source
    assert not any(note[:30] in plain for note in notes)
