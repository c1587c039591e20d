"""The drawn figures (caffe2rnn.viz.figures): valid SVG, readable in the docs column, holding
the labels they must, and drawing facts that match what caffe2rnn and Caffe2 do."""

import os
import re
import shutil
import sys
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from caffe2rnn import core, eras
from caffe2rnn.errors import DrawingError
from caffe2rnn.history.bugs import BUGS
from caffe2rnn.runtime import Workspace
from caffe2rnn.viz import examples, figures, sizing
from caffe2rnn.viz.figures import bptt, forward_rows, history_timeline, lstm_cell, step_net_idea
from caffe2rnn.viz.figures.svg import Canvas, text_width, wrap
from caffe2rnn.viz.rnn_op import RecurrentOp

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import check_site  # noqa: E402  (scripts/check_site.py: the site's own measure)

SVG = "{http://www.w3.org/2000/svg}"
NAMES = list(figures.FIGURES)


def _root(figure):
    return ET.fromstring(figure.svg)


def _texts(figure):
    """Every <text> element's visible text, spans joined."""
    return ["".join(t.itertext()) for t in _root(figure).iter(SVG + "text")]


def _group_texts(figure, cls):
    """The texts inside each <g class=cls ...> group, in order."""
    return [
        ["".join(t.itertext()) for t in g.iter(SVG + "text")]
        for g in _root(figure).iter(SVG + "g")
        if cls in (g.get("class") or "").split()
    ]


@pytest.fixture(scope="module")
def drawn():
    return {name: draw() for name, draw in figures.FIGURES.items()}


def test_the_five_figures_of_the_plan_exist():
    assert set(NAMES) == {
        "fig_forward_rows",
        "fig_bptt",
        "fig_lstm_cell",
        "fig_step_net_idea",
        "fig_history_timeline",
    }
    for name in NAMES:
        assert getattr(figures, name) is figures.FIGURES[name]


@pytest.mark.parametrize("name", NAMES)
def test_each_figure_is_an_svg_document_with_title_and_description(drawn, name):
    figure = drawn[name]
    root = _root(figure)
    assert root.tag == SVG + "svg"
    assert figure.name == name
    width = float(root.get("width"))
    assert width <= sizing.PAGE_PX, "wider than the docs column: shown scaled down"
    assert root.get("viewBox") == "0 0 %s %s" % (root.get("width"), root.get("height"))
    assert root.find(SVG + "title").text and root.find(SVG + "desc").text
    assert figure._repr_svg_() == figure.svg
    assert not list(root.iter(SVG + "image"))


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("column", [check_site.COLUMN_PX, check_site.COLUMN_PX - 16])
def test_each_figure_is_readable_at_page_width(drawn, name, column):
    """The site's own measure, in the docs column and in a notebook's output area."""
    diagram = {"svg": drawn[name].svg, "shown": "column", "column": column}
    _, shown, median, smallest = check_site.measure(diagram)
    assert median >= check_site.MEDIAN_PX and smallest >= check_site.SMALLEST_PX, (
        "%s at %d px: median %.1f px, smallest %.1f px" % (name, shown, median, smallest)
    )


@pytest.mark.parametrize("name", NAMES)
def test_no_text_runs_off_the_figure(drawn, name):
    """Every label, as estimated, stays inside the drawing's width."""
    root = _root(drawn[name])
    width = float(root.get("width"))
    for text in root.iter(SVG + "text"):
        content = "".join(text.itertext())
        size = float(text.get("font-size"))
        x = float(text.get("x"))
        mono = "".join(t.text or "" for t in text if "monospace" in (t.get("font-family") or ""))
        estimate = text_width(content, size, text.get("font-weight") == "bold")
        estimate += len(mono) * size * (0.6 - 0.5)  # monospaced spans: a little wider
        anchor = text.get("text-anchor", "start")
        left = {"start": x, "middle": x - estimate / 2, "end": x - estimate}[anchor]
        assert left >= 0 and left + estimate <= width + 2, (name, content)


# -- what each figure must hold ---------------------------------------------------------------


def test_forward_rows_labels(drawn):
    texts = " | ".join(_texts(drawn["fig_forward_rows"]))
    for label in [
        "hidden_t_prev_states",
        "T + 1 rows",
        "row 0",
        "row 3",
        "h0",
        "input_t = input row 0",
        "hidden_t_prev = row 2",
        "hidden_t = row 3",
        "offset 0",
        "offset 1",
        "hidden_t_all",
        "hidden_t_last",
        "rows 1 … T",
        "offset −1",
        "workspace 2",
        "T + k rows",
    ]:
        assert label in texts, label


def test_forward_rows_draws_the_links_and_aliases_recurrent_net_builds():
    rnn = RecurrentOp(examples.lstm())
    built = {l.internal.split("/")[-1]: l.offset for l in rnn.links}
    for blob, _, offset in forward_rows.LINKS:
        assert built[blob] == offset, blob
    aliases = {a.dst.split("/")[-1]: a.offset for a in rnn.aliases}
    for output, offset in forward_rows.ALIASES:
        assert aliases[output] == offset, output


@pytest.mark.parametrize("steps", [2, 4, 5])
def test_forward_rows_and_bptt_draw_t_plus_one_rows(steps):
    for draw in (figures.fig_forward_rows, figures.fig_bptt):
        texts = _texts(draw(steps))
        assert "row %d" % steps in texts and "row %d" % (steps + 1) not in texts


@pytest.mark.parametrize("draw", [figures.fig_forward_rows, figures.fig_bptt])
def test_the_number_of_steps_is_checked(draw):
    for steps in (1, 6, "3"):
        with pytest.raises(DrawingError, match="2 to 5"):
            draw(steps)


def test_bptt_labels(drawn):
    figure = drawn["fig_bptt"]
    texts = " | ".join(_texts(figure))
    for label in [
        "hidden_t_prev_states_grad",
        "zeroed, then",
        "+ _last grad",
        "hidden_t_last_grad",
        "+ once, before the loop",
        "+ GO row 1",
        "reads hidden_t_grad = row 3",
        "writes hidden_t_prev_grad = row 2",
        "writes gates_t_w_grad_tmpstep",
        "runs 1st",
        "runs 3rd",
        "= 0",
        "rnn_internal_accumulate_gradient_input",
    ]:
        assert label in texts, label
    # only the last row is said to be zeroed; the others are written by a step
    rows = _group_texts(figure, "gradient")[0]
    assert [t for t in rows if "zeroed" in t] == ["zeroed, then"]
    assert rows[-4] == "row 3" and sum("written by step" in t for t in rows) == 3
    # one + per step into the state gradient (GO), one into the weight gradient
    assert len(_group_texts(figure, "accumulate_input")) == 3


def test_bptt_draws_the_backward_links_and_the_tmpstep_rename_of_the_op():
    rnn = RecurrentOp(examples.lstm())
    built = {l.internal.split("/")[-1]: l.offset for l in rnn.backward_links}
    for blob, offset in bptt.BACKWARD_LINKS:
        assert built[blob] == offset, blob
    renamed = {v.split("/")[-1] for v in rnn.cpp_backward_step_net().renamed.values()}
    assert bptt.TMPSTEP in renamed


def test_lstm_cell_labels_and_gate_orders(drawn):
    figure = drawn["fig_lstm_cell"]
    texts = " | ".join(_texts(figure))
    for label in [
        "i2h",
        "i2h_w, i2h_b",
        "gates_t_w",
        "gates_t_b",
        "input_t",
        "row t",
        "LSTMUnit",
        "hidden_t",
        "cell_t",
        "seq_lengths",
        "order i f o g",
        "order i f g o",
        "weight_ih_l0",
        "bias_ih_l0 + bias_hh_l0",
        "i2h_b + gates_t_b",
        "PackedSequence",
        "before the loop",
    ]:
        assert label in texts, label
    caffe2, torch = _group_texts(figure, "gates")
    assert caffe2 == ["i", "f", "o", "g"] and torch == ["i", "f", "g", "o"]


def _gate_blocks(gates, order, d):
    return {name: gates[..., k * d : (k + 1) * d] for k, name in enumerate(order)}


def _lstm_step(h_prev, c_prev, gates, order, d):
    blocks = _gate_blocks(gates, order, d)
    sig = lambda x: 1 / (1 + np.exp(-x))  # noqa: E731
    c = sig(blocks["f"]) * c_prev + sig(blocks["i"]) * np.tanh(blocks["g"])
    return sig(blocks["o"]) * np.tanh(c), c


def test_the_caffe2_gate_order_drawn_is_what_lstm_unit_computes():
    n, d = 2, 3
    rng = np.random.default_rng(0)
    h_prev, c_prev = rng.normal(size=(2, 1, n, d)).astype(np.float64)
    gates = rng.normal(size=(1, n, 4 * d)) * 2
    ws = Workspace()
    inputs = {"h": h_prev, "c": c_prev, "g": gates, "len": np.array([5] * n, np.int32),
              "t": np.array([0], np.int32)}  # fmt: skip
    for name, value in inputs.items():
        ws.feed(name, value)
    ws.run_operator_once(core.CreateOperator("LSTMUnit", list(inputs), ["h_t", "c_t"]))
    expected = _lstm_step(h_prev, c_prev, gates, lstm_cell.CAFFE2_GATES, d)
    np.testing.assert_allclose(ws.fetch("h_t"), expected[0], rtol=1e-6)
    np.testing.assert_allclose(ws.fetch("c_t"), expected[1], rtol=1e-6)
    swapped = _lstm_step(h_prev, c_prev, gates, lstm_cell.TORCH_GATES, d)
    assert not np.allclose(ws.fetch("h_t"), swapped[0])


def test_the_torch_gate_order_drawn_is_torchs():
    torch = pytest.importorskip("torch")
    d = 3
    cell = torch.nn.LSTMCell(2, d)
    x, h, c = torch.randn(1, 2), torch.randn(1, d), torch.randn(1, d)
    with torch.no_grad():
        gates = (x @ cell.weight_ih.T + cell.bias_ih + h @ cell.weight_hh.T + cell.bias_hh).numpy()
        h_t, c_t = cell(x, (h, c))
    expected = _lstm_step(h.numpy(), c.numpy(), gates, lstm_cell.TORCH_GATES, d)
    np.testing.assert_allclose(h_t.detach().numpy(), expected[0], rtol=1e-5, atol=1e-6)


def test_step_net_idea_labels_and_the_cell_it_draws(drawn):
    texts = " | ".join(_texts(drawn["fig_step_net_idea"]))
    for label in [
        "T = 3",
        "T = 5",
        "a net of 9 ops",
        "a net of 15 ops",
        "RecurrentNetwork",
        "step_net",
        "run T times",
        "the same NetDef",
        "Recurrent",
        "2 and reuses",
    ]:
        assert label in texts, label  # fmt: skip
    types = [op.type for op in RecurrentOp(examples.lstm()).step_net.op]
    assert [name for name, _ in step_net_idea.CELL_OPS] == types


def test_timeline_labels(drawn):
    texts = " | ".join(_texts(drawn["fig_history_timeline"]))
    for label in ["E%d" % i for i in range(8)] + ["B%d" % i for i in range(1, 11)]:
        assert re.search(r"\b%s\b" % label, texts), label
    for label in [
        "43084f228",  # single-threaded executor, 2017-05-01
        "476e9e30d",  # threaded, 2017-08-15
        "44e868108",  # reverted the next day
        "dc775484e",  # for good, 2017-09-06
        "rnn_internal_apply_link",
        "201087e1e",  # step nets as NetDef, 2017-10-10
        "929c33cee",
        "PyTorch",
        "2018-03-30",
    ]:
        assert label in texts, label


def test_timeline_eras_match_caffe2rnn_eras():
    for name, version, commit, date in history_timeline.ERAS:
        era = eras.ERAS.get(name)
        if era is None:  # E7 arrives with its own branch (issue 32): its commit and date
            assert (name, commit, date) == ("E7", "929c33cee", "2018-03-26")
            continue
        assert (era.commit, era.date, era.version) == (commit, date, version), name
    assert {name for name, *_ in history_timeline.ERAS} >= set(eras.ERAS)


def test_timeline_bugs_match_the_gallery():
    drawn_ids = {bug for bug, *_ in history_timeline.BUG_FIXES}
    assert drawn_ids == {bug for bug in BUGS if re.fullmatch(r"B\d+", bug)}
    for bug, commit, date, _ in history_timeline.BUG_FIXES:
        assert commit in BUGS[bug].commit and date in BUGS[bug].commit, bug


def test_timeline_executor_dates():
    events = {(e.commit, e.date) for e in history_timeline.EVENTS}
    assert ("43084f228", "2017-05-01") in events
    assert ("476e9e30d", "2017-08-15") in events
    assert ("44e868108", "2017-08-16") in events
    assert ("dc775484e", "2017-09-06") in events
    assert ("201087e1e", "2017-10-10") in events


# -- the object a figure is ---------------------------------------------------------------


def test_save_writes_svg_and_refuses_other_formats(tmp_path):
    figure = figures.fig_step_net_idea()
    path = figure.save(str(tmp_path / "sub" / "x.svg"))
    with open(path, encoding="utf-8") as handle:
        assert handle.read() == figure.svg
    with pytest.raises(DrawingError, match="expected .svg or .png"):
        figure.save(str(tmp_path / "x.pdf"))
    assert "fig_step_net_idea" in repr(figure)


@pytest.mark.skipif(shutil.which("rsvg-convert") is None, reason="no rsvg-convert")
def test_save_renders_png(tmp_path):
    path = figures.fig_forward_rows().save(str(tmp_path / "x.png"))
    with open(path, "rb") as handle:
        head = handle.read(24)
    assert head[:8] == b"\x89PNG\r\n\x1a\n"
    assert int.from_bytes(head[16:20], "big") == 672


def test_canvas_text_escapes_and_keeps_code_and_subscripts():
    canvas = Canvas(100, "a <b> & c")
    canvas.text(5, 10, "x < `y&z` h_{t−1}")
    root = ET.fromstring(canvas.svg())
    text = next(root.iter(SVG + "text"))
    assert "".join(text.itertext()) == "x < y&z ht−1"
    spans = list(text)
    assert "monospace" in spans[0].get("font-family") and spans[0].text == "y&z"
    assert spans[1].get("dy") and spans[1].text == "t−1"
    assert root.find(SVG + "title").text == "a <b> & c"


def test_wrap_keeps_code_spans_whole():
    lines = wrap("reads `a very long name` then more words", 60, 10)
    assert all(line.count("`") % 2 == 0 for line in lines)
    assert " ".join(lines) == "reads `a very long name` then more words"
