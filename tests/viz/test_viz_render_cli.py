"""Rendering (SVG parses, titles present), the missing-`dot` error, the CLI."""

import xml.etree.ElementTree as ET

import pytest

from caffe2rnn import viz
from caffe2rnn.__main__ import main
from caffe2rnn.errors import DrawingError, GraphvizNotFoundError
from caffe2rnn.viz import examples
from caffe2rnn.viz.render import Figure
from caffe2rnn.viz.rnn_op import RecurrentOp

SVG = "{http://www.w3.org/2000/svg}"


def _titles(path):
    root = ET.parse(path).getroot()
    assert root.tag == SVG + "svg"
    return {t.text for t in root.iter(SVG + "title")}


def _views(op):
    step = RecurrentOp(op).step_net
    return {
        "net": viz.net(step),
        "ssa": viz.ssa(step),
        "scratches": viz.scratches_of(op),
        "recurrent": viz.recurrent(op),
        "backward": viz.backward(op),
        "timeline": viz.timeline(op, 2),
        "unroll": viz.unroll(op, 2),
    }


# A node's <title> is its id; edges are "tail->head"; clusters "cluster_<name>".
EXPECTED_TITLES = {
    "net": {"op#1", "lstm/gates_t#0", "lstm/gates_t#1", "cluster_legend"},
    "ssa": {"lstm/gates_t@1", "lstm/gates_t@2", "lstm/gates_t@1->op#1"},
    "scratches": {"lstm/gates_t@2"},
    "recurrent": {
        "cluster_rnn",
        "cluster_step",
        "cluster_backward",
        "state/lstm/hidden_t_prev_states",
        "fwd/lstm/hidden_t@1->state/lstm/hidden_t_prev_states:s",
    },
    "backward": {"cluster_backward", "bwd/op#0", "bwd/lstm/gates_t_w_grad_tmpstep@1"},
    "timeline": {"tensor/lstm/hidden_t_prev_states", "t1/hidden_t_prev"},
    "unroll": {"cluster_t0", "cluster_t1", "t0/lstm/hidden_t@1->t1/hidden_t_prev@0"},
}


@pytest.mark.needs_dot
@pytest.mark.parametrize("view", sorted(EXPECTED_TITLES))
def test_every_view_renders_to_svg_with_its_titles(tmp_path, view):
    path = viz.render(_views(examples.lstm())[view], str(tmp_path / (view + ".svg")))
    titles = _titles(path)
    missing = EXPECTED_TITLES[view] - titles
    assert not missing, "titles missing from %s: %s" % (view, missing)


@pytest.mark.needs_dot
def test_render_png_and_jupyter_svg(tmp_path):
    graph = viz.ssa(RecurrentOp(examples.mul()).step_net)
    png = viz.render(graph, str(tmp_path / "sub" / "mul.png"))
    with open(png, "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"
    bundle = Figure(graph)._repr_mimebundle_()
    assert ET.fromstring(bundle["image/svg+xml"].split("?>", 1)[-1].lstrip()).tag == SVG + "svg"


def test_missing_dot_says_how_to_install_it_and_keeps_the_dot_text(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))  # no `dot` anywhere
    graph = viz.ssa(RecurrentOp(examples.mul()).step_net)
    with pytest.raises(GraphvizNotFoundError) as info:
        viz.render(graph, str(tmp_path / "out.svg"))
    message = str(info.value)
    for hint in (
        "apt-get install graphviz",
        "brew install graphviz",
        "conda install -c conda-forge graphviz",
        "graph.source",
    ):
        assert hint in message
    assert isinstance(info.value, RuntimeError)
    assert not (tmp_path / "out.svg").exists()
    assert "h_prev@0" in graph.source
    bundle = Figure(graph)._repr_mimebundle_()
    assert "apt-get install graphviz" in bundle["text/plain"]
    assert "h_prev@0" in bundle["text/html"]
    viz.render(graph, str(tmp_path / "out.dot"))  # DOT needs no binary
    assert (tmp_path / "out.dot").read_text() == graph.source


def test_unknown_format_is_a_drawing_error(tmp_path):
    with pytest.raises(DrawingError, match="format 'jpeg2000'"):
        viz.render(viz.ssa(RecurrentOp(examples.mul()).step_net), str(tmp_path / "x.jpeg2000"))


def test_cli_help_lists_views_cells_and_versions(capsys):
    with pytest.raises(SystemExit):
        main(["render", "--help"])
    text = capsys.readouterr().out
    for word in (
        "net",
        "ssa",
        "scratches",
        "backward",
        "recurrent",
        "timeline",
        "unroll",
        "lstm",
        "mul",
        "sum_mul",
        "v3",
        "current",
    ):
        assert word in text


def test_cli_prints_dot_or_writes_a_file(tmp_path, capsys):
    assert main(["render", "--cell", "mul", "--version", "current", "--view", "ssa"]) == 0
    assert '"h_prev@0"' in capsys.readouterr().out
    out = tmp_path / "t.dot"
    assert (
        main(["render", "--cell", "sum_mul", "--view", "timeline", "-T", "4", "-o", str(out)]) == 0
    )
    assert "(5 rows)" in out.read_text()


def test_cli_reports_errors(tmp_path, capsys):
    assert main(["render", "--cell", "mul", "--view", "ssa", "-o", str(tmp_path / "x.gif")]) == 2
    assert "format 'gif'" in capsys.readouterr().err


def test_cli_lstm_cell_comes_from_recurrent_lstm(capsys):
    assert main(["render", "--cell", "lstm", "--view", "scratches"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("digraph")  # no banner on stdout
    assert "scratches kept per step =\n[lstm/gates_t]" in out


def test_render_draws_a_historical_version(capsys):
    assert main(["render", "--cell", "lstm", "--version", "v1", "--view", "recurrent"]) == 0
    out = capsys.readouterr().out
    assert "lstm/step_workspaces_" in out  # v1's global counter in the blob name
    with pytest.raises(SystemExit) as stop:
        main(["render", "--cell", "attention", "--version", "v1"])
    assert stop.value.code == 2
    assert "version v1 has no cell 'attention'" in capsys.readouterr().err


def test_compare_table_shades_when_each_argument_changed(parse_dot):
    from caffe2rnn.viz.compare import CHANGED

    graph = viz.compare(["v2", "v3", "newest"], "lstm", only_differences=True)
    table = parse_dot(graph).nodes["table"]["label"]
    rows = {row.split("</b>")[0].rsplit("<b>", 1)[-1]: row for row in table.split("<tr>")[2:]}
    assert "param_grads" in rows and "enable_rnn_executor" in rows
    assert "inputs" not in rows  # identical in every version
    # param_grads first appears in v3; enable_rnn_executor in newest
    cells = rows["param_grads"].split("<td")[2:]
    assert CHANGED in cells[1] and CHANGED not in cells[0] and CHANGED not in cells[2]
    assert CHANGED in rows["enable_rnn_executor"].split("<td")[-1]


def test_compare_cli(tmp_path, capsys):
    assert (
        main(["compare", "--cell", "sum_mul", "--versions", "v1,april", "--only-differences"]) == 0
    )
    assert "backward_link_internal" in capsys.readouterr().out
