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
from caffe2rnn.viz.figures import (
    attention_step,
    backward_step_net,
    bptt,
    forward_rows,
    gru_cell,
    history_timeline,
    lstm_cell,
    masking,
    models,
    name_prefixes,
    recurrent_gradient_op,
    recurrent_net_stages,
    recurrent_op,
    shared_blobs_ws,
    step_net_idea,
)
from caffe2rnn.viz.figures import style as figure_style
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


def test_the_figures_of_the_plan_exist():
    assert set(NAMES) == {
        "fig_forward_rows",
        "fig_models",
        "fig_recurrent_op",
        "fig_recurrent_net_stages",
        "fig_pass_through_link",
        "fig_name_prefixes",
        "fig_bptt",
        "fig_tmpstep",
        "fig_shared_blobs_ws",
        "fig_backward_step_net",
        "fig_recurrent_gradient_op",
        "fig_lstm_cell",
        "fig_gru_cell",
        "fig_masking",
        "fig_attention_step",
        "fig_step_net_idea",
        "fig_history_timeline",
        "fig_history_2017",
        "fig_history_2018",
        "fig_parent_workspace",
        "fig_gradient_ops",
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
    assert check_site.is_drawn_figure(diagram)
    assert median >= check_site.MEDIAN_PX and smallest >= check_site.FIGURE_SMALLEST_PX, (
        "%s at %d px: median %.1f px, smallest %.1f px" % (name, shown, median, smallest)
    )


#: No label of a drawn figure, a subscript or a footnote included, is under this at 100 %
#: (the site check's floor for drawn figures, the figures' own smallest size).
FIGURE_SMALLEST_PX = check_site.FIGURE_SMALLEST_PX
assert FIGURE_SMALLEST_PX == figure_style.MIN_PX == figure_style.NOTE >= 10.5


def label_sizes(svg_text):
    """(px size, text) of every <text> and <tspan> holding text, each at the size
    it is drawn (a <tspan>'s own font-size, else its parent's)."""
    found = []

    def walk(element, size):
        size = float(element.get("font-size") or size or 0)
        if element.tag in (SVG + "text", SVG + "tspan") and (element.text or "").strip():
            found.append((size, element.text.strip()))
        for child in element:
            walk(child, size)
            if child.tail and child.tail.strip() and element.tag == SVG + "text":
                found.append((size, child.tail.strip()))

    walk(ET.fromstring(svg_text), None)
    return found


def test_label_sizes_sees_subscripts_and_text_between_spans():
    canvas = Canvas(200, "t")
    canvas.text(10, 10, "h_{t−1} and `x`", 12)
    assert sorted(label_sizes(canvas.svg())) == [(10.5, "t−1"), (12.0, "and"), (12.0, "h"),
                                                 (12.0, "x")]  # fmt: skip


@pytest.mark.parametrize("name", NAMES)
def test_every_label_is_at_least_the_floor_at_the_page_width(drawn, name):
    """Every label, subscripts and footnotes too, as a reader sees it: a figure
    is drawn at most as wide as the column, so it is shown at 100 %."""
    figure = drawn[name]
    assert float(_root(figure).get("width")) <= check_site.COLUMN_PX - 16
    small = [(size, text) for size, text in label_sizes(figure.svg) if size < FIGURE_SMALLEST_PX]
    assert not small, "%s: labels under %s px: %s" % (name, FIGURE_SMALLEST_PX, small[:8])


@pytest.mark.parametrize("name", NAMES)
def test_a_figure_has_labels_not_paragraphs(drawn, name):
    """The round-6 readers: short labels and at most a one-line subtitle in a figure,
    the explaining in the page's text. No line of a figure is a sentence-long note
    (:func:`parts.heading` refuses a subtitle that wraps), and no note wraps to a
    third line (three or more lines in a row at one x, size and colour)."""
    root = _root(drawn[name])
    lines = [(float(t.get("x")), float(t.get("y")), t.get("font-size"), t.get("fill"),
              "".join(t.itertext())) for t in root.iter(SVG + "text")]  # fmt: skip
    long = [text for *_, text in lines if len(text.split()) > 24]
    assert not long, long
    prose = [line for line in lines if len(line[4].split()) >= 4]  # a table cell is not prose
    for x, y, size, fill, text in prose:
        step = float(size) * 1.3  # text_block's leading
        below = [t for t in prose if (t[0], t[2], t[3]) == (x, size, fill)
                 and min(abs(t[1] - y - step), abs(t[1] - y - 2 * step)) < 0.6]  # fmt: skip
        assert len(below) < 2, "%s: a paragraph from %r" % (name, text)


@pytest.mark.parametrize("name", NAMES)
def test_a_figure_has_at_most_a_one_line_subtitle(drawn, name):
    subtitles = [t for t in _root(drawn[name]).iter(SVG + "text") if t.get("class") == "subtitle"]
    assert len(subtitles) <= 1, [("".join(t.itertext())) for t in subtitles]


@pytest.mark.parametrize("name", NAMES)
def test_the_full_size_drawing_is_the_page_drawing_enlarged(drawn, name):
    """What a click opens has the same drawing and text, every label 1.5 times the page's."""
    page, full = drawn[name], drawn[name].full_size()
    assert full.svg.split(">", 1)[1] == page.svg.split(">", 1)[1]
    assert float(_root(full).get("width")) == 1.5 * float(_root(page).get("width"))
    assert min(s for s, _ in label_sizes(page.svg)) * 1.5 >= 1.5 * FIGURE_SMALLEST_PX


def test_recurrent_op_gathers_the_three_references_into_the_op(drawn):
    """Inputs 3, 4, 5 (lstm/gates_t_w, lstm/gates_t_b, seq_lengths: read every step) are
    all gathered by one bracket whose arrow goes down into the step net."""
    figure = drawn["fig_recurrent_op"]
    (group,) = [g for g in _root(figure).iter(SVG + "g") if g.get("class") == "references"]
    paths = [p.get("d") for p in group.iter(SVG + "path")]
    bracket, arrow = paths[0], paths[1]
    ys = [float(v.split(",")[1]) for v in re.findall(r"[\d.]+,[\d.]+", bracket)]
    pills = {}
    for g in _root(figure).iter(SVG + "g"):
        if g.get("class") == "input":
            text = "".join(g.find(SVG + "text").itertext())
            rect = g.find(SVG + "rect")
            pills[text] = (float(rect.get("y")), float(rect.get("y")) + float(rect.get("height")))
    for name in ("lstm/gates_t_w", "lstm/gates_t_b", "seq_lengths"):
        top, bottom = pills[name]
        assert min(ys) <= top and bottom <= max(ys) + 2, name
    (op,) = [g for g in _root(figure).iter(SVG + "g") if g.get("class") == "step"][:1]
    step_top = float(op.find(SVG + "rect").get("y"))
    end_y = float(re.findall(r"[\d.]+,([\d.]+)", arrow)[-1])
    assert end_y <= step_top and end_y > max(ys)


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
        "lstm/lstm/hidden_t_prev_states",
        "lstm/lstm/cell_t_prev_states",
        "lstm/i2h: T rows",
        "T + 1 rows",
        "row 0",
        "row 3",
        "h0",
        "input_t = input row 0",
        "lstm/hidden_t_prev = row 2",
        "lstm/hidden_t = row 3",
        "offset 0",
        "offset 1",
        "lstm/hidden_t_all",
        "lstm/hidden_t_last",
        "rows 1 … T",
        "offset −1",
        "workspace 2",
    ]:
        assert label in texts, label


def test_forward_rows_draws_the_links_and_aliases_of_the_paths_lstm():
    """The names and offsets drawn are exactly rnn_cell.LSTM's (scope "lstm")."""
    rnn = RecurrentOp(examples.rnn_cell_lstm())
    built = {(l.internal, l.external, l.offset) for l in rnn.links}
    assert set(forward_rows.LINKS) <= built
    aliases = {(a.dst, a.offset) for a in rnn.aliases}
    assert set(forward_rows.ALIASES) <= aliases
    cell_states, cell_prev, cell_written = forward_rows.CELL_STATES
    assert {(cell_prev, cell_states, 0), (cell_written, cell_states, 1)} <= built


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
        "lstm/lstm/hidden_t_prev_states_grad",
        "zeroed, + _last grad",
        "lstm/hidden_t_last_grad",
        "lstm/hidden_t_all_grad",
        "+ once, before the loop",
        "only if the loss uses _last too",
        "+ GO row 1",
        "reads lstm/hidden_t_grad = row 3",
        "writes lstm/hidden_t_prev_grad = row 2",
        "writes lstm/gates_t_w_grad_tmpstep",
        "lstm/gates_t_w_grad",
        "runs 1st",
        "runs 3rd",
        "= 0",
    ]:
        assert label in texts, label
    # row 0 drawn at the top, as step 8's figure, but the loop starts at the bottom: the
    # figure says where it starts and joins each timestep to the one that runs next
    # (round 13: a reader took the steps top-down)
    order = _group_texts(figure, "loop_order")
    assert sorted(order) == [["start: t = T−1 = 2"], ["then t = 0"], ["then t = 1"]]
    # only the last row is said to be zeroed; the others are written by a step;
    # every row t + 1 says it gets GO row t, where the arrow shows it (the last too)
    rows = _group_texts(figure, "gradient")[0]
    assert [t for t in rows if "zeroed" in t] == ["zeroed, + _last grad"]
    assert rows[-4] == "row 3" and sum("written by timestep" in t for t in rows) == 3
    assert [t for t in rows if t.startswith("+ GO")] == ["+ GO row 0", "+ GO row 1", "+ GO row 2"]
    # the k > 1 caveat is a page's (round 6: no paragraphs in a figure): the optional
    # page on k initial rows (round 13: off the path)
    with open(
        os.path.join(ROOT, "docs", "concepts", "initial-state-rows.md"), encoding="utf-8"
    ) as f:
        page = f.read()
    fold = " ".join(page[page.index("(backward-k-rows)=") :].split())
    assert "The state gradient has $T + k$ rows" in fold
    assert "rows $T \\dots T + k - 2$ of the state gradient are read before" in fold
    assert "tail_rows" not in texts  # the gallery's id, undefined where this figure stands
    # one + per step into the state gradient (GO), one into the weight gradient
    assert len(_group_texts(figure, "accumulate_input")) == 3
    # which way the loop runs, on the figure itself (round 15, reader Q needed the title)
    assert _group_texts(figure, "loop_direction") == [["the loop runs upward"]]


def test_bptt_draws_the_backward_links_and_the_tmpstep_rename_of_the_paths_lstm():
    rnn = RecurrentOp(examples.rnn_cell_lstm())
    built = {(l.internal, l.offset) for l in rnn.backward_links if l.external == bptt.STATES_GRAD}
    assert set(bptt.BACKWARD_LINKS) == built
    cpp = rnn.cpp_backward_step_net()
    assert cpp.renamed[bptt.WEIGHT_GRAD] == bptt.TMPSTEP
    accumulate = [op for op in cpp.net.op if op.type == "rnn_internal_accumulate_gradient_input"]
    assert [list(op.input[1:]) for op in accumulate] == [[bptt.ALL_GRAD, bptt.STATES_GRAD]]
    assert rnn.aliases[1].dst + "_grad" == bptt.LAST_GRAD and rnn.outputs_with_grads == [0]


def test_lstm_cell_labels_and_gate_orders(drawn):
    figure = drawn["fig_lstm_cell"]
    texts = " | ".join(_texts(figure))
    for label in [
        "lstm/i2h",
        "lstm/i2h_w",
        "lstm/i2h_b",
        "lstm/gates_t_w",
        "lstm/gates_t_b",
        "lstm/hidden_t_prev",
        "lstm/cell_t_prev",
        "lstm/gates_t: N × 4H",
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
        "lstm/i2h_b + lstm/gates_t_b",
        "PackedSequence",
        "before the loop",
        # the path's row numbering (step 8's row-convention), torch's named once
        ": row t",
        ": row t + 1",
        "torch's docs number from h",
    ]:
        assert label in texts, label
    caffe2, torch = _group_texts(figure, "gates")
    assert caffe2 == ["i", "f", "o", "g"] and torch == ["i", "f", "g", "o"]


def test_lstm_cell_table_and_labels_read_at_the_column_width(drawn):
    """Step 1's figure (theme 17 of the round-3 review): the map a reader reads row by row
    is set at 11 px, every other label at 10 px or more but subscripts (9 px at least)."""
    figure = drawn["fig_lstm_cell"]
    (table,) = [g for g in _root(figure).iter(SVG + "g") if g.get("class") == "mapping"]
    table_sizes = [size for size, _ in label_sizes(ET.tostring(table, encoding="unicode"))]
    assert table_sizes and min(table_sizes) >= lstm_cell.TABLE >= 11
    subscripts = {"t", "t−1", "t+1", "hh", "ih"}
    small = [(s, t) for s, t in label_sizes(figure.svg) if s < 10 and t not in subscripts]
    assert not small, small


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


def test_models_draws_the_two_nets_brew_fc_builds(drawn):
    """The page's model (docs/concepts/models.md): every net name, op, blob and shape drawn
    is the model's, and the parameters sit between the net that fills them and the one
    that reads them."""
    from caffe2rnn import brew, model_helper

    model = model_helper.ModelHelper(name="mlp")
    brew.fc(model, "x", "y", dim_in=3, dim_out=2)
    figure = drawn["fig_models"]
    texts = " | ".join(_texts(figure))
    init, net = model.param_init_net.Proto(), model.net.Proto()
    for label in [init.name, net.name, "model.param_init_net", "model.net", "one workspace",
                  "run once", "run every iteration", "2 × 3", "N × 3, fed", "N × 2"]:  # fmt: skip
        assert label in texts, label
    assert [op.type for op in init.op] == ["XavierFill", "ConstantFill"]
    (init_group,) = _group_texts(figure, "param_init_net")
    init_types = [op.type for op in init.op]
    assert [t for t in init_group if t in init_types] == init_types
    (net_group,) = _group_texts(figure, "net")
    assert [op.type for op in net.op] == ["FC"] and "FC" in net_group
    assert "reads %s" % ", ".join(net.op[0].input) in net_group
    (ws_group,) = _group_texts(figure, "workspace")
    assert [t for t in ws_group if t in {"x", "y_w", "y_b", "y"}] == ["x", "y_w", "y_b", "y"]
    (params_group,) = _group_texts(figure, "params")
    assert params_group == ["model.params = [%s]" % ", ".join(map(str, model.params))]


def test_models_changes_with_the_build(monkeypatch):
    """Another build, another drawing: names, shapes and fill ops come from the model the
    figure builds, none is written into it."""
    texts = " | ".join(_texts(figures.fig_models("enc", "h_in", "h", dim_in=4, dim_out=5)))
    for label in ["enc_init", "h_w", "h_b", "5 × 4", "N × 4, fed", "N × 5", "h_in",
                  "model.params = [h_w, h_b]"]:  # fmt: skip
        assert label in texts, label
    assert "y_w" not in texts and "mlp" not in texts
    from caffe2rnn import brew

    fc = brew.fc
    monkeypatch.setattr(
        brew, "fc", lambda *args, **kwargs: fc(*args, weight_init=("GaussianFill", {}), **kwargs)
    )
    changed = " | ".join(_texts(figures.fig_models()))
    assert "GaussianFill" in changed and "XavierFill" not in changed
    assert models.build()[3] == {"y_w": (2, 3), "y_b": (2,)}


def test_recurrent_net_stages_follow_the_page_and_name_what_each_stage_made(drawn):
    """The stages in the order of the stage table (docs/concepts/recurrent-net-gradient-rules.md,
    "caffe2rnn's six stages", which step 15 links), each box with the Caffe2 concept the
    table's row names in bold, and what the stages return for the path's LSTM. Round 15
    (reader X): caffe2rnn's function names are not drawn; the table lists them."""
    figure = drawn["fig_recurrent_net_stages"]
    rules = os.path.join(ROOT, "docs", "concepts", "recurrent-net-gradient-rules.md")
    with open(rules, encoding="utf-8") as f:
        page = f.read()
    rows = re.findall(r"^\| (\d) `(\w+)` \| (.*)$", page, re.M)
    boxes = [texts for texts in _group_texts(figure, "stage")]
    numbered = dict((t[0], t[1]) for t in boxes if t[0].isdigit())
    assert list(numbered) == ["1", "2", "3", "4", "5", "6"]
    assert {n for n, _, _ in rows} >= {"1", "2", "3", "4", "5"}
    from caffe2rnn import recurrent_stages

    texts = " | ".join(_texts(figure))
    for number, function, what in rows:
        assert callable(getattr(recurrent_stages, function)), function
        assert function not in texts, function
        if number != "6":  # the table's bold concept is the box's title
            bold = re.search(r"\*\*(.+?)\*\*", what).group(1).replace("`", "")
            assert bold.lower() in numbered[number].lower(), (bold, numbered[number])
    rnn = RecurrentOp(examples.rnn_cell_lstm())
    for name in list(rnn.op.input) + list(rnn.op.output) + list(rnn.states):
        assert name in texts, name
    for label in ["LSTMUnitGradient", "FCGradient", "lstm/gates_t", "rows 1…T", "row T",
                  "lstm/hidden_t_prev = row t", "lstm/hidden_t = row t+1",
                  "lstm/hidden_t_prev\u00a0←\u00a0lstm/hidden_t,",
                  "lstm/cell_t_prev\u00a0←\u00a0lstm/cell_t",
                  "lstm/gates_t_grad = row t of lstm/i2h_grad", "nothing to rename",
                  "FCGradient writes its gradient as …_accum, then a Sum adds it",
                  "%d arguments" % len(rnn.op.arg)]:  # fmt: skip
        assert label in texts, label
    (scratch,) = _group_texts(figure, "scratch")
    assert scratch == ["lstm/gates_t"]
    # the op's box reads top down in stage order (round 16, reader S: its tags had run
    # 6, 1, 6, 2, ...): the stage tags after its title, in document order
    all_texts = _texts(figure)
    out = next(i for i, t in enumerate(all_texts) if t.startswith("out: one"))
    tags = [t for t in all_texts[out:] if t in {"1", "2", "3", "4", "5", "6"}]
    assert tags == ["1", "2", "3", "4", "5", "6"], tags


def test_recurrent_net_stages_are_rerun_on_the_op_and_give_it_back():
    """run_stages re-runs recurrent_stages on the op's cell and checks it gets the op back;
    the drawing follows another build."""
    stages = recurrent_net_stages.run_stages(recurrent_net_stages.build_op())
    assert stages.references == ["lstm/gates_t_w", "lstm/gates_t_b", "seq_lengths"]
    assert stages.scratches == ["lstm/gates_t"] and stages.accum == []
    two = recurrent_net_stages.run_stages(recurrent_net_stages.build_op(dim_out=[4, 4]))
    assert ("FCGradient", "lstm/layer_0/hidden_t_grad",
            "lstm/layer_0/hidden_t_grad_accum") in two.accum  # fmt: skip
    texts = " | ".join(_texts(figures.fig_recurrent_net_stages(scope="enc", dim_out=5)))
    assert "enc/enc/hidden_t_prev_states" in texts and "lstm/" not in texts
    assert "writes its gradient as …_accum" in texts and "layer_0" not in texts


def test_recurrent_net_stages_refuses_a_stage_that_disagrees_with_the_op(monkeypatch):
    """A stage that no longer does what recurrent_net did (here: no _accum rewrite) cannot
    be drawn: the two-layer op was built with the rewrite, the re-run lacks it."""
    from caffe2rnn import recurrent_stages

    op = recurrent_net_stages.build_op(dim_out=[4, 4])
    monkeypatch.setattr(recurrent_stages, "accumulate_linked_gradients", lambda net: None)
    with pytest.raises(DrawingError, match="backward_step_net"):
        recurrent_net_stages.run_stages(op)


def test_recurrent_net_stages_refuses_references_that_are_not_the_ops_last_inputs(monkeypatch):
    """The op's box lists the sequence and the states, then says the references of stage 1
    follow: an op whose inputs are in another order cannot be drawn that way."""
    run_stages = recurrent_net_stages.run_stages

    def reordered(op):
        stages = run_stages(op)
        stages.op_inputs = stages.op_inputs[-1:] + stages.op_inputs[:-1]
        return stages

    monkeypatch.setattr(recurrent_net_stages, "run_stages", reordered)
    with pytest.raises(DrawingError, match="then its references"):
        recurrent_net_stages.fig_recurrent_net_stages()


def test_pass_through_link_draws_what_recurrent_net_built(drawn, monkeypatch):
    """Step 15's worked example, read off the op: input_t's only reader is the Sum, no
    backward op writes input_t_grad, x's backward link views elman/pre_t_grad (Caffe2
    0cdd09da6, recurrent.py: backward_mapping[input_t]); a different op cannot be drawn."""
    from caffe2rnn.viz.figures import pass_through_link

    cell_ops, backward_ops, links = pass_through_link.run()
    assert [t for t, ins, _ in cell_ops if "input_t" in ins] == ["Sum"]
    assert not [t for t, _, outs in backward_ops if "input_t_grad" in outs]
    assert ("elman/pre_t_grad", "x_grad", 0) in links
    texts = " | ".join(_texts(drawn["fig_pass_through_link"]))
    for label in ("input_t_grad", "elman/pre_t_grad = row t of x_grad", "TanhGradient",
                  "the only op that reads input_t", "so no op writes it"):  # fmt: skip
        assert label in texts, label
    links = [link for link in links if link[1] != "x_grad"]
    links.append(("input_t_grad", "x_grad", 0))  # as if an op wrote input_t_grad
    monkeypatch.setattr(pass_through_link, "run", lambda: (cell_ops, backward_ops, links))
    with pytest.raises(DrawingError, match="input_t"):
        pass_through_link.fig_pass_through_link()


def _drawn_names(figure):
    """Each drawn name as its parts: [(part, fill), ...] per <g class="name">."""
    names = []
    for g in _root(figure).iter(SVG + "g"):
        if g.get("class") == "name":
            fills = [r.get("fill") for r in g.iter(SVG + "rect")]
            parts = ["".join(t.itertext()) for t in g.iter(SVG + "text")]
            names.append(list(zip(parts, fills)))
    return names


def test_name_prefixes_splits_the_names_the_builds_make(drawn):
    """Every drawn name joins back to a name the op of that build carries, and the path's
    state tensor is lstm/ (op scope) + lstm/ (cell) + hidden_t_prev_states."""
    figure = drawn["fig_name_prefixes"]
    drawn_names = _drawn_names(figure)
    built = [n for ns, scope in name_prefixes.BUILDS for n in name_prefixes.build_names(ns, scope)]
    assert ["".join(p for p, _ in name) for name in drawn_names] == built
    fill = {source: f for source, (f, _, _) in name_prefixes.SOURCES.items()}
    assert drawn_names[0] == [("lstm/", fill["op"]), ("lstm/", fill["cell"]),
                              ("hidden_t_prev_states", fill["own"])]  # fmt: skip
    decoder_state = drawn_names[8]
    assert "".join(p for p, _ in decoder_state) == "decoder/decoder/decoder/hidden_t_prev_states"
    assert [f for _, f in decoder_state] == [fill["op"], fill["ns"], fill["cell"], fill["own"]]
    # not one order: in NameScope("decoder"), scope="lstm", the state tensor puts the op's
    # scope before the name scope, the weight the name scope first; nothing about step
    # workspaces (the page meets them later), and the title says so
    assert [f for _, f in drawn_names[4]] == [fill["op"], fill["ns"], fill["cell"], fill["own"]]
    assert drawn_names[7] == [("decoder/", fill["ns"]), ("lstm/", fill["cell"]),
                              ("gates_t_w", fill["own"])]  # fmt: skip
    texts = " ".join(_texts(figure))
    assert "step_workspaces" not in texts and "one order" not in texts
    assert "three prefixes, added by three pieces of code" in texts


def test_name_prefixes_follows_other_builds_and_refuses_a_wrong_rule():
    """Distinct strings show the order: the op's scope, then the name scope, then the cell."""
    figure = figures.fig_name_prefixes(builds=(("ns", "cell"),))
    names = ["".join(p for p, _ in name) for name in _drawn_names(figure)]
    assert names[0] == "cell/ns/cell/hidden_t_prev_states"
    assert names[-1] == "ns/cell/gates_t_w"
    with pytest.raises(DrawingError, match="does not start with"):
        name_prefixes.split("lstm/hidden_t_prev", ("op", "ns", "cell"), "decoder", "lstm")


def test_figures_that_build_a_model_draw_a_fresh_processs_names_and_leave_no_trace():
    """Caffe2 never reuses a net name in a process: drawn after other nets of the same
    name, the figures still show the names a fresh notebook prints (mlp, mlp_init), and
    the reader's next ModelHelper("mlp") is still named mlp."""
    from caffe2rnn import brew, core, model_helper

    earlier = model_helper.ModelHelper(name="mlp")
    brew.fc(earlier, "x", "y", dim_in=3, dim_out=2)
    used = set(core.Net._net_names_used)
    from caffe2rnn import workspace

    blobs = sorted(workspace.Blobs())
    for name in ("fig_models", "fig_recurrent_net_stages", "fig_name_prefixes", "fig_masking",
                 "fig_recurrent_gradient_op"):  # fmt: skip
        svg = figures.FIGURES[name]().svg
        assert "mlp_1" not in svg and "lstm_1" not in svg, name
        assert core.Net._net_names_used == used, name
        assert sorted(workspace.Blobs()) == blobs, name  # ran in a workspace of its own
    assert '"mlp_init"' in " | ".join(_texts(figures.fig_models()))
    assert model_helper.ModelHelper(name="mlp").net.Name() == "mlp_1"  # as in Caffe2


def test_step_net_idea_labels_and_the_cell_it_draws(drawn):
    texts = " | ".join(_texts(drawn["fig_step_net_idea"]))
    for label in [
        "T = 3",
        "T = 5",
        "1 + 9 + 6 = 16 ops",
        "1 + 15 + 6 = 22 ops",
        "1 + 3T + 6 ops",
        "Split into T rows",
        "2 Concat",
        "3 ZeroGradient",
        "2 ops (the input FC, RecurrentNetwork);",
        "3 ops in the step net",
        "lstm/i2h",
        "RecurrentNetwork",
        "step_net",
        "run T times",
        "the same NetDef",
        "Recurrent",
        "input x: T rows",
    ]:
        assert label in texts, label  # fmt: skip
    # page 1's memory story is the T + 1-row tensor: no step workspaces here
    assert "workspace" not in texts
    types = [op.type for op in RecurrentOp(examples.rnn_cell_lstm()).step_net.op]
    assert [name for name, _ in step_net_idea.CELL_OPS] == types
    # both panels draw the input FC, once: one per T-net on the left, one on the right
    root = _root(drawn["fig_step_net_idea"])
    assert len([r for r in root.iter(SVG + "rect") if r.get("class") == "input-fc"]) == 3


def test_step_net_idea_counts_the_ops_the_path_lstm_builds():
    """The right panel's "2 ops" and "3 ops in the step net" are what rnn_cell.LSTM builds
    (the path's LSTM, start-here.md), and the left's 1 + 3T is its unrolled op count."""
    from caffe2rnn import model_helper, rnn_cell

    model = model_helper.ModelHelper(name="idea")
    rnn_cell.LSTM(model, "x", "seq_lengths", ("h0", "c0"), dim_in=3, dim_out=4, scope="lstm")
    ops = [op.type for op in model.net.Proto().op]
    assert ops == ["FC", "RecurrentNetwork"]
    fc = model.net.Proto().op[0]
    assert list(fc.input)[0] == step_net_idea.INPUT_FC[0]
    assert list(fc.output) == [step_net_idea.INPUT_FC[1]]
    step_net = RecurrentOp(model.net.Proto().op[1]).step_net
    assert len(step_net.op) == len(step_net_idea.CELL_OPS) == 3


@pytest.mark.parametrize("steps", [3, 5, 50])
def test_step_net_idea_counts_the_ops_of_the_unrolled_build(drawn, steps):
    """The left panel's count, 1 + 3T + 6, is what ``rnn_cell.LSTM(...,
    static_rnn_unroll_size=T)`` builds: the input FC, the cell's ops T times and the
    bookkeeping ops the figure names (16, 22 and 157 ops for T = 3, 5, 50)."""
    from collections import Counter

    from caffe2rnn import model_helper, rnn_cell

    model = model_helper.ModelHelper(name="unrolled")
    rnn_cell.LSTM(model, "x", "seq_lengths", ("h0", "c0"), dim_in=3, dim_out=4, scope="lstm",
                  static_rnn_unroll_size=steps)  # fmt: skip
    built = Counter(op.type for op in model.net.Proto().op)
    drawn_ops = Counter({"FC": 1})  # the input FC
    for name, _ in step_net_idea.CELL_OPS:
        drawn_ops[name] += steps
    for name, n, _ in step_net_idea.BOOKKEEPING_OPS:
        drawn_ops[name] += n
    assert built == drawn_ops
    count = sum(built.values())
    assert count == step_net_idea.unrolled_op_count(steps) == {3: 16, 5: 22, 50: 157}[steps]
    lines = " ".join(_texts(drawn["fig_step_net_idea"]))  # a wrapped sentence reads whole
    assert ("= %d ops" if steps < 50 else "%d for T = 50") % count in lines


def test_timeline_labels(drawn):
    figure = drawn["fig_history_timeline"]
    texts = " | ".join(_texts(figure))
    for label in ["E%d" % i for i in range(8)] + ["B%d" % i for i in range(1, 11)]:
        assert re.search(r"\b%s\b" % label, texts), label
    for label in ["929c33cee", "PyTorch", "2018-03-30"]:
        assert label in texts, label
    # every event's commit is in the description (the drawing keeps only the eras')
    description = _root(figure).find(SVG + "desc").text
    era_commits = {commit for _, _, commit, _ in history_timeline.ERAS}
    for event in history_timeline.EVENTS:
        assert event.commit in description, event
        assert event.commit in era_commits or event.commit not in texts, event


def test_timeline_halves_split_the_story_at_2017_07(drawn):
    first, second = (" | ".join(_texts(drawn[n])) for n in ("fig_history_2017", "fig_history_2018"))
    for label in ["E0", "E5", "B1", "B8"]:
        assert re.search(r"\b%s\b" % label, first), label
    for label in ["E5", "E6", "E7", "B9", "B10", "PyTorch", "929c33cee"]:
        assert re.search(r"\b%s\b" % label, second), label
    assert "2017-08" not in first and "2017-06" not in second
    assert "since 17-06-29" in second  # E5 runs in from the first half


@pytest.mark.parametrize("name", ["fig_history_timeline", "fig_history_2017", "fig_history_2018"])
def test_timeline_text_is_set_at_11_px_or_more_but_the_day_and_commit(drawn, name):
    events = [
        float(t.get("font-size"))
        for g in _root(drawn[name]).iter(SVG + "g")
        if (g.get("class") or "").startswith("event")
        for t in g.iter(SVG + "text")
    ]
    assert events and min(events) >= 10 and sorted(events)[len(events) // 2] >= 11


def test_recurrent_op_names_inputs_outputs_states_and_links_of_the_paths_lstm(drawn):
    rnn = RecurrentOp(examples.rnn_cell_lstm())
    assert [name for name, _ in recurrent_op.INPUTS] == list(rnn.op.input)
    assert [name for name, _, _ in recurrent_op.OUTPUTS] == list(rnn.op.output)
    assert list(rnn.op.output)[-1].endswith("step_workspaces")
    roles = dict(recurrent_op.INPUTS)
    assert {rnn.inputs[i] for i in rnn.initial_state_ids} == {
        n for n, r in roles.items() if r == "initial"
    }
    assert {rnn.inputs[i] for i in rnn.params} == {n for n, r in roles.items() if r == "param"}
    links = {(l.internal, l.external, l.offset) for l in rnn.links}
    for states, initial, read, written in recurrent_op.STATES:
        assert states in rnn.states and rnn.initial_state(states) == initial
        assert {(read, states, 0), (written, states, 1)} <= links
    blob, sequence, offset = recurrent_op.SEQUENCE_LINK
    assert (blob, sequence, offset) in links
    aliases = {(a.dst, a.src, a.offset) for a in rnn.aliases}
    assert {o for o in recurrent_op.OUTPUTS if o[1]} == aliases
    assert tuple(op.type for op in rnn.step_net.op) == recurrent_op.STEP_OPS
    texts = " | ".join(_texts(drawn["fig_recurrent_op"]))
    for name in [n for n, _ in recurrent_op.INPUTS] + [n for n, _, _ in recurrent_op.OUTPUTS]:
        assert name in texts, name
    for label in ["recurrent_states", "step_net", "timestep", "link_offset", "alias_src",
                  "row t", "row t+1", "T + 1 rows"]:  # fmt: skip
        assert label in texts, label


def test_backward_step_net_is_what_the_gradient_op_runs(drawn):
    rnn = RecurrentOp(examples.rnn_cell_lstm())
    cpp = rnn.cpp_backward_step_net()
    assert [t for _, t, _ in backward_step_net.OPS] == [op.type for op in cpp.net.op]
    # who puts each op there: the C++ op first (accumulate) and last (one Sum a parameter)
    assert [w for _, _, w in backward_step_net.OPS] == (
        ["op"] * cpp.prepended + ["cell"] * len(rnn.backward_step_net.op) + ["op"] * cpp.appended
    )
    written = {name for op in cpp.net.op for name in op.output}
    read = {name for op in cpp.net.op for name in op.input}
    b = backward_step_net.BLOBS
    for key in ("hidden_prev_grad", "cell_prev_grad", "gates_grad", "autosplit", "w_tmpstep",
                "b_tmpstep", "w_grad", "b_grad", "states_grad"):  # fmt: skip
        assert b[key] in written, key
    for key in ("go", "hidden_grad", "cell_grad"):
        assert b[key] in read, key
    autosplit = next(op for op in cpp.net.op if b["autosplit"] in op.input and op.type == "Sum")
    assert list(autosplit.output) == [b["hidden_prev_grad"]]
    links = {(l.internal, l.external) for l in rnn.backward_links}
    assert (b["gates_grad"], b["input_grad"]) in links
    texts = " | ".join(_texts(drawn["fig_backward_step_net"]))
    for name in b.values():
        assert name in texts, name
    for op_type in ("rnn_internal_accumulate_gradient_input", "LSTMUnitGradient", "FCGradient"):
        assert op_type in texts


def _gradient_op_of_a_build(outputs_with_grads):
    """The forward op, the RecurrentNetworkGradient op and the gradient map of step 1's LSTM
    with a loss summing the outputs ``outputs_with_grads`` lists (a build of the test's own)."""
    from caffe2rnn import model_helper, rnn_cell

    model = model_helper.ModelHelper(name="test_gradient_op")
    outputs = rnn_cell.LSTM(model, "x", "seq_lengths", ("h0", "c0"), dim_in=3, dim_out=4,
                            scope="lstm", outputs_with_grads=list(outputs_with_grads))  # fmt: skip
    sums = [model.net.SumElements(outputs[i], "s%d" % i) for i in outputs_with_grads]
    grad_map = model.AddGradientOperators([model.net.Sum(sums, "loss")])
    ops = list(model.net.Proto().op)
    (forward,) = [op for op in ops if op.type == "RecurrentNetwork"]
    (gradient,) = [op for op in ops if op.type == "RecurrentNetworkGradient"]
    return forward, gradient, {str(k): str(v) for k, v in grad_map.items()}


def _pins(figure, cls):
    """(number, name, y centre of the pill) of each <g class="pin ..."> of ``cls``."""
    found = []
    for g in _root(figure).iter(SVG + "g"):
        classes = (g.get("class") or "").split()
        if classes[:1] == ["pin"] and cls in classes:
            number, name = ["".join(t.itertext()) for t in g.iter(SVG + "text")]
            rect = g.find(SVG + "g").find(SVG + "rect")
            found.append((int(number), name, float(rect.get("y")) + float(rect.get("height")) / 2))
    return found


@pytest.mark.parametrize("outputs_with_grads", [(0,), (0, 1)])
def test_gradient_op_draws_the_built_gradient_ops_inputs_and_outputs(drawn, outputs_with_grads):
    """Every input and output of the gradient op AddGradientOperators makes is drawn, with its
    number, in order; each output on the row of the forward input it is the gradient of."""
    default = outputs_with_grads == recurrent_gradient_op.OUTPUTS_WITH_GRADS
    figure = (drawn["fig_recurrent_gradient_op"] if default
              else figures.fig_recurrent_gradient_op(outputs_with_grads))  # fmt: skip
    forward, gradient, grad_map = _gradient_op_of_a_build(outputs_with_grads)
    inputs = _pins(figure, "go") + _pins(figure, "forward-input") + _pins(figure, "forward-output")
    assert [(n, name) for n, name, _ in inputs] == list(enumerate(gradient.input))
    outputs = sorted(_pins(figure, "output"))
    assert [(n, name) for n, name, _ in outputs] == list(enumerate(gradient.output))
    row = {name: y for _, name, y in _pins(figure, "forward-input")}
    for _, name, y in outputs:
        (of,) = [i for i in forward.input if grad_map.get(i) == name]
        assert y == row[of], (name, of)
    # the forward inputs without a gradient: a "no gradient" pill on their row
    absent = [float(g.find(SVG + "rect").get("y")) + 10 for g in _root(figure).iter(SVG + "g")
              if g.get("class") == "absent"]  # fmt: skip
    assert sorted(absent) == sorted(row[i] for i in forward.input if i not in grad_map)
    assert absent == [row["seq_lengths"]]
    assert inputs[-1][1] == "lstm/step_workspaces" == list(forward.output)[-1]


def test_gradient_op_order_is_the_order_of_caffe2s_gradient_maker():
    """GetRecurrentNetworkGradient (Caffe2 0cdd09da6, recurrent_network_op.cc): inputs
    GO(i) for i in outputs_with_grads, then I(0..), then O(0..); outputs GI(0), GI(p) for p
    in param, GI(i) for i in initial_recurrent_state_ids. The figure reads these."""
    forward, gradient, grad_map = _gradient_op_of_a_build((0, 1))
    args = {a.name: list(a.ints) for a in forward.arg}
    go = [grad_map[forward.output[i]] for i in args["outputs_with_grads"]]
    assert list(gradient.input) == go + list(forward.input) + list(forward.output)
    ids = [0] + args["param"] + args["initial_recurrent_state_ids"]
    assert list(gradient.output) == [grad_map[forward.input[i]] for i in ids]
    ports = recurrent_gradient_op.read_ports(forward, gradient, grad_map)
    assert [(i, n, k) for i, n, k, _ in ports.gos] == [(0, go[0], 0), (1, go[1], 1)]
    roles = {name: role for _, name, role, _ in ports.inputs}
    assert [n for n, r in roles.items() if r == "param"] == [forward.input[i] for i in
                                                            args["param"]]  # fmt: skip
    assert roles["lstm/i2h"] == "sequence" and roles["seq_lengths"] == "reference"
    assert ports.param_grads == ("lstm/gates_t_w_grad", "lstm/gates_t_b_grad")
    assert ports.tmpstep == ("lstm/gates_t_w_grad_tmpstep", "lstm/gates_t_b_grad_tmpstep")


def test_gradient_op_refuses_a_gradient_op_out_of_order():
    forward, gradient, grad_map = _gradient_op_of_a_build((0,))
    swapped = list(gradient.input)
    swapped[1], swapped[2] = swapped[2], swapped[1]
    del gradient.input[:]
    gradient.input.extend(swapped)
    with pytest.raises(DrawingError, match="fig_recurrent_gradient_op.*GOs, then the forward op's"):
        recurrent_gradient_op.read_ports(forward, gradient, grad_map)


def test_gradient_op_marks_param_grads_and_the_step_workspaces(drawn):
    figure = drawn["fig_recurrent_gradient_op"]
    texts = " | ".join(_texts(figure))
    for label in [
        "RecurrentNetworkGradient",
        "outputs_with_grads",
        "param_grads",
        "lstm/gates_t_w_grad_tmpstep",
        "backward_step_net",
        "AddGradientOperators",
        "no gradient",
        "the step workspaces",
        "runs in step workspace",
    ]:
        assert label in texts, label
    (bracket,) = [g for g in _root(figure).iter(SVG + "g") if g.get("class") == "param-grads"
                  and g.find(SVG + "path") is not None]  # fmt: skip
    ys = [float(v) for v in re.findall(r"[\d.]+,([\d.]+)", bracket.find(SVG + "path").get("d"))]
    params = [y for _, name, y in _pins(figure, "output") if name.startswith("lstm/gates_t_")]
    assert len(params) == 2 and min(ys) < min(params) and max(params) < max(ys)


def test_backward_step_net_colours_ops_by_origin_and_shapes_them_by_kind(drawn):
    """Colour = who put the op there (the C++ op or backward_step_net), shape = a Sum or
    not: Sum 3 (the cell's autosplit) is green like the cell's ops, Sums 4 and 5 purple."""
    root = _root(drawn["fig_backward_step_net"])
    drawn_ops = []
    for g in root.iter(SVG + "g"):
        classes = (g.get("class") or "").split()
        if classes[:1] != ["op"]:
            continue
        shape = next(e for e in g if e.tag in (SVG + "rect", SVG + "polygon"))
        number = "".join(list(g.iter(SVG + "text"))[-1].itertext())
        drawn_ops.append((int(number), classes[1], classes[2], shape.get("fill"), shape.tag))
    want = [(n, who, "sum" if t == "Sum" else "op") for n, t, who in backward_step_net.OPS]
    assert [op[:3] for op in drawn_ops] == want
    for _, who, kind, fill, tag in drawn_ops:
        assert fill == backward_step_net.ORIGIN[who]
        assert tag == (SVG + "polygon" if kind == "sum" else SVG + "rect")


def test_backward_step_net_edges_stay_inside_the_boxes_span(drawn):
    """No edge runs out past the drawn ops and blobs (the bias _tmpstep edge once looped
    round the right edge of the figure)."""
    root = _root(drawn["fig_backward_step_net"])
    right = 0.0
    for g in root.iter(SVG + "g"):
        if (g.get("class") or "").split()[:1] in (["op"], ["blob"]):
            for e in g:
                if e.tag == SVG + "rect":
                    right = max(right, float(e.get("x")) + float(e.get("width")))
    xs = [float(x) for p in root.iter(SVG + "path")
          for x in re.findall(r"[ML]([0-9.]+),", p.get("d"))]  # fmt: skip
    assert xs and max(xs) <= right


def test_gru_cell_draws_caffe2s_gru_of_e6(drawn):
    rnn = RecurrentOp(examples.op_of("gru"))
    assert tuple(op.type for op in rnn.step_net.op) == gru_cell.STEP_OPS
    names = {n for op in rnn.step_net.op for n in list(op.input) + list(op.output)}
    for key, value in gru_cell.BLOBS.items():
        for name in value if isinstance(value, tuple) else (value,):
            assert name in names or name == rnn.sequence_input, (key, name)
    # the reset gate multiplies hidden_t_prev before the output gate's FC
    mul = next(op for op in rnn.step_net.op if op.type == "Mul")
    assert set(mul.input) == {gru_cell.BLOBS["reset_sigmoid"], gru_cell.BLOBS["hidden_t_prev"]}
    texts = " | ".join(_texts(drawn["fig_gru_cell"]))
    labels = ["gru/i2h", "gru/hidden_t_prev", "gru/input_t_reset", "gru/gates_t", "GRUUnit",
              "linear_before_reset", "torch.nn.GRU"]  # fmt: skip
    for label in labels:
        assert label in texts, label


def test_gru_unit_computes_the_drawn_update():
    """h = u * h_prev + (1 - u) * tanh(o), u = sigmoid(update block), reset block ignored."""
    n, d = 2, 3
    rng = np.random.default_rng(1)
    h_prev = rng.normal(size=(1, n, d))
    gates = rng.normal(size=(1, n, 3 * d))
    ws = Workspace()
    inputs = {"h": h_prev, "g": gates, "len": np.array([5] * n, np.int32),
              "t": np.array([0], np.int32)}  # fmt: skip
    for name, value in inputs.items():
        ws.feed(name, value)
    with eras.use("E6"):
        ws.run_operator_once(core.CreateOperator("GRUUnit", list(inputs), ["h_t"]))
    u = 1 / (1 + np.exp(-gates[..., d : 2 * d]))
    expected = u * h_prev + (1 - u) * np.tanh(gates[..., 2 * d :])
    np.testing.assert_allclose(ws.fetch("h_t"), expected, rtol=1e-5)


def test_attention_step_is_lstm_with_attentions_step_net(drawn):
    from caffe2rnn import model_helper, rnn_cell
    from caffe2rnn.attention import AttentionType

    model = model_helper.ModelHelper(name="attention_figure")
    # scope "decoder", as docs/concepts/cells.md and notebooks/10_attention.ipynb build it
    assert attention_step.SCOPE == "decoder"
    rnn_cell.LSTMWithAttention(model, "decoder_input", "seq_lengths", "h0", "c0", "context0",
                               2, "encoder_outputs", 3, 4, scope=attention_step.SCOPE,
                               attention_type=AttentionType.Regular)  # fmt: skip
    ops = list(model.net.Proto().op)
    (op,) = [o for o in ops if o.type == "RecurrentNetwork"]
    rnn = RecurrentOp(op)
    assert tuple(o.type for o in rnn.step_net.op) == attention_step.STEP_OPS
    before = [(o.type, o.input[0], o.output[0]) for o in ops[: ops.index(op)]]
    drawn_before = [b for b in before if b in attention_step.BEFORE_LOOP]
    assert drawn_before == list(attention_step.BEFORE_LOOP)  # all of them, in the order they run
    names = {n for o in rnn.step_net.op for n in list(o.input) + list(o.output)}
    for key, name in attention_step.BLOBS.items():
        assert name in names or name == rnn.sequence_input, (key, name)
    # Luong's timing: the score's FC reads this step's hidden state (LSTMUnit's output)
    unit = next(o for o in rnn.step_net.op if o.type == "LSTMUnit")
    score = [o for o in rnn.step_net.op if o.type == "FC"][1]
    assert score.input[0] == unit.output[0] == attention_step.BLOBS["hidden_t"]
    texts = " | ".join(_texts(drawn["fig_attention_step"]))
    for label in ["before the loop", "decoder/weighted_encoder_outputs", "Softmax", "BatchMatMul",
                  "Luong", "Bahdanau", "decoder/attention_weights_3d", "decoder/decoder/hidden_t",
                  "decoder/encoder_outputs_transposed"]:  # fmt: skip
        assert label in texts, label
    # every name drawn is a blob of the op built with the pages' scope: none of another scope
    assert "att/" not in texts


def test_timeline_eras_match_caffe2rnn_eras():
    drawn = [(name, commit, date) for name, _, commit, date in history_timeline.ERAS]
    known = sorted(((e.name, e.commit, e.date) for e in eras.ERAS.values()), key=lambda e: e[2])
    assert drawn == known
    versions = {name: version for name, version, *_ in history_timeline.ERAS}
    assert versions == {e.name: e.version or "last" for e in eras.ERAS.values()}


def test_timeline_bugs_match_the_gallery():
    drawn_ids = {bug for bug, *_ in history_timeline.BUG_FIXES}
    assert drawn_ids == {bug for bug in BUGS if re.fullmatch(r"B\d+", bug)}
    for bug, commit, date, _ in history_timeline.BUG_FIXES:
        assert commit in BUGS[bug].commit and date in BUGS[bug].commit, bug


def test_timeline_dates_agree_with_the_history_page():
    """Every commit the timeline draws that docs/concepts/history.md dates, it dates the
    same day (the link ops 2017-05-10 tried, 08-15 tried, 09-06 for good; B7 at
    f49200962, 2017-06-07, when its fix took effect)."""
    with open(os.path.join(ROOT, "docs", "concepts", "history.md"), encoding="utf-8") as handle:
        page = handle.read()
    checked = 0
    for event in history_timeline.EVENTS:
        for found in re.finditer(re.escape(event.commit), page):
            dated = re.match(r"`?,?\s*\(?(\d{4}-\d\d-\d\d)", page[found.end() : found.end() + 20])
            if dated:
                assert dated.group(1) == event.date, (event, dated.group(1))
                checked += 1
    assert checked >= 20
    texts = " | ".join(_texts(figures.fig_history_timeline()))
    assert "param_grads, the _accum rewrite" not in texts
    bugs = {bug: (commit, date) for bug, commit, date, _ in history_timeline.BUG_FIXES}
    assert bugs["B7"] == ("f49200962", "2017-06-07")


def test_timeline_b8_is_not_drawn_as_a_fix_and_every_bar_colour_has_a_key(drawn):
    root = _root(drawn["fig_history_timeline"])
    texts = " | ".join(_texts(drawn["fig_history_timeline"]))
    assert "Bugs fixed" not in texts and "never shipped" in texts
    b8 = [t for t in root.iter(SVG + "text") if "".join(t.itertext()).startswith("never shipped")]
    assert b8 and all(t.get("font-style") == "italic" for t in b8)
    bars = {r.get("fill") for r in root.iter(SVG + "rect") if r.get("width") == "4"}
    keys = [g for g in root.iter(SVG + "g") if g.get("class") == "key"]
    swatches = {r.get("fill") for g in keys for r in g.iter(SVG + "rect")}
    assert len(bars) == 3 and bars <= swatches


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


def test_recurrent_op_does_not_answer_the_pages_predict(drawn):
    """recurrent-op.md (step 10) asks for `param` and `initial_recurrent_state_ids` from
    its input table: the figure above it numbers the inputs but states neither list (nor
    `outputs_with_grads`, step 12's)."""
    svg = drawn["fig_recurrent_op"].svg
    texts = " | ".join(_texts(drawn["fig_recurrent_op"]))
    for answer in ("[3, 4]", "[1, 2]", "= [0]", "param =", "initial_recurrent_state_ids ="):
        assert answer not in texts and answer not in svg, answer
    assert "param" in texts and "outputs_with_grads" in texts  # named, for step 12


def test_forward_rows_in_a_notebooks_own_names():
    """Notebook 04 (step 9) runs a one-state cell with blobs x, states, h_all, h_last:
    the figure can be drawn in those names, without the LSTM's cell-state note."""
    names = dict(sequence="x", states="states", prev="hidden_t_prev", written="hidden_t",
                 all="h_all", last="h_last", ops="the cell's ops")  # fmt: skip
    names["cell"] = "this notebook's cell"
    figure = figures.fig_forward_rows(5, names=names)
    texts = " | ".join(_texts(figure))
    for label in ["x: T rows", "hidden_t_prev = row 4", "hidden_t = row 5", "h_all", "h_last",
                  "the cell's ops", "row 5"]:  # fmt: skip
        assert label in texts, label
    assert "lstm/" not in texts and "LSTMUnit" not in texts and "cell state" not in texts
    with pytest.raises(DrawingError, match="unknown key.*hidden"):
        figures.fig_forward_rows(3, names={"hidden": "h"})


def test_bptt_in_a_notebooks_own_names():
    names = dict(read="hidden_t_grad", written="hidden_t_prev_grad", states_grad="states_grad",
                 all_grad="h_all_grad", last_grad="h_last_grad", weight_grad="W_grad")  # fmt: skip
    names.update(tmpstep="W_grad_tmpstep", cell="this notebook's cell")
    texts = " | ".join(_texts(figures.fig_bptt(4, names=names)))
    for label in ["reads hidden_t_grad = row 4", "writes hidden_t_prev_grad = row 3", "W_grad",
                  "states_grad", "h_all_grad", "h_last_grad"]:  # fmt: skip
        assert label in texts, label
    assert "lstm/" not in texts
    assert figures.fig_bptt(3, names={}).svg == figures.fig_bptt(3).svg
    with pytest.raises(DrawingError, match="unknown key"):
        figures.fig_bptt(3, names={"W": "x"})


def _elman_op_run(T=5, N=2, D=3):
    """Step 13's Elman op (notebooks/06_backward_by_hand.ipynb), built by hand with its
    backward step net and links, run forward and backward: (op's workspace, the op's
    ScratchWorkspaces)."""
    from caffe2rnn import workspace

    step = core.Net("elman_step")
    step.AddExternalInputs("input_t", "hidden_t_prev", "W", "b")
    step.FC(["hidden_t_prev", "W", "b"], "pre_t", axis=2)
    step.Sum(["pre_t", "input_t"], "pre_t")
    step.AddExternalOutputs(step.Tanh("pre_t", "hidden_t"))
    back = core.Net("elman_step_backward")
    back.TanhGradient(["hidden_t", "hidden_t_grad"], "pre_t_grad")
    back.FCGradient(["hidden_t_prev", "W", "pre_t_grad"],
                    ["W_grad", "b_grad", "hidden_t_prev_grad"], axis=2)  # fmt: skip
    back.Copy("pre_t_grad", "input_t_grad")
    states = "hidden_t_prev_states"
    links = [("hidden_t_prev", states, 0), ("hidden_t", states, 1), ("input_t", "x", 0)]
    grad_links = [
        ("hidden_t_grad", states + "_grad", 1),
        ("hidden_t_prev_grad", states + "_grad", 0),
        ("input_t_grad", "x_grad", 0),
    ]
    net = core.Net("elman")
    net.RecurrentNetwork(
        ["x", "h0", "W", "b"], ["hidden_t_all", "hidden_t_last", "step_workspaces"],
        step_net=str(step.Proto()), recurrent_states=[states],
        initial_recurrent_state_ids=[1],
        link_internal=[l[0] for l in links], link_external=[l[1] for l in links],
        link_offset=[l[2] for l in links],
        alias_src=[states, states], alias_dst=["hidden_t_all", "hidden_t_last"],
        alias_offset=[1, -1], timestep="timestep",
        backward_step_net=str(back.Proto()),
        backward_link_internal=[l[0] for l in grad_links],
        backward_link_external=[l[1] for l in grad_links],
        backward_link_offset=[l[2] for l in grad_links],
        param=[2, 3], outputs_with_grads=[0, 1],
    )  # fmt: skip
    net.AddExternalInputs("hidden_t_all_grad", "hidden_t_last_grad")
    net.AddGradientOperators({"hidden_t_all": "hidden_t_all_grad",
                              "hidden_t_last": "hidden_t_last_grad"})  # fmt: skip
    rng = np.random.default_rng(0)
    feeds = {"x": (T, N, D), "h0": (1, N, D), "W": (D, D), "b": (D,),
             "hidden_t_all_grad": (T, N, D), "hidden_t_last_grad": (1, N, D)}  # fmt: skip
    workspace.ResetWorkspace()
    for name, shape in feeds.items():
        workspace.FeedBlob(name, rng.standard_normal(shape).astype(np.float32))
    workspace.RunNetOnce(net)
    ws = workspace.C_Workspace()
    return ws, ws.blob("step_workspaces").value


def test_shared_blobs_ws_labels(drawn):
    figure = drawn["fig_shared_blobs_ws"]
    texts = " | ".join(_texts(figure))
    for label in [
        "op's workspace",
        "shared_blobs_ws",
        "one for all timesteps",
        "pre_t_grad",
        "one blob, created",
        "TanhGradient",
        "step ws 4",
        "step ws 0",
        "runs 1st",
        "runs 5th",
        "hidden_t, pre_t",
        "W_grad",
        "hidden_t_prev_states_grad",
    ]:
        assert label in texts, label  # fmt: skip
    assert len(_group_texts(figure, "write")) == 5  # one write per timestep, to one blob
    assert len(_group_texts(figure, "step_workspace")) == 5
    assert len(_group_texts(figures.fig_shared_blobs_ws(3), "write")) == 3
    with pytest.raises(DrawingError, match="2 to 5"):
        figures.fig_shared_blobs_ws(6)


def test_shared_blobs_ws_draws_where_the_op_keeps_each_blob_of_step_13s_elman_cell():
    """Each level holds what the figure draws in it, after the op's forward and backward
    pass: the totals and gradient tensors in the op's workspace, one pre_t_grad in
    shared_blobs_ws and none in a step workspace, the forward's blobs in every step
    workspace."""
    from caffe2rnn import workspace

    try:
        op_ws, spaces = _elman_op_run()
        for name in shared_blobs_ws.FOUND:
            assert op_ws.has_local_blob(name), name
        shared = spaces.shared_blobs_ws
        assert shared.parent is op_ws
        assert shared.has_local_blob(shared_blobs_ws.SHARED)
        for step in spaces.step_workspaces:
            assert step.parent is shared
            assert not step.has_local_blob(shared_blobs_ws.SHARED)
            for name in shared_blobs_ws.PER_STEP:
                assert step.has_local_blob(name), name
        assert not op_ws.has_local_blob(shared_blobs_ws.SHARED)
    finally:
        workspace.ResetWorkspace()


# -- fig_masking: every claim measured ---------------------------------------------------------


def test_masking_draws_what_the_run_shows(drawn):
    """Row 1 (length 3): steps 3, 4 of hidden_t_all hold h₃ (shaded), torch's are 0, both
    last states h₃; the gradient note says 3 (h₃ counted three times). h_t is row t of the
    state tensor, as on every page: h0 the initial state, timestep t writes h_(t+1)."""
    texts = _texts(drawn["fig_masking"])
    cells = _group_texts(drawn["fig_masking"], "cell")
    # t-major, Caffe2's grid then torch's: n = 0, n = 1 per row
    ours = ["".join(c) for c in cells[:10]]
    theirs = ["".join(c) for c in cells[10:]]
    assert ours == ["h1", "h1", "h2", "h2", "h3", "h3", "h4", "h3", "h5", "h3"]
    assert theirs == ["h1", "h1", "h2", "h2", "h3", "h3", "h4", "0", "h5", "0"]
    lines = " ".join(texts)
    for label in ["lstm/hidden_t_all", "lstm/hidden_t_last", "pad_packed_sequence(output)",
                  "h_n", "seq_lengths = [5, 3]", "timestep t writes ht+1 (row t + 1",
                  "d loss / d h3 = 3 for n = 1 (row 3 of lstm/lstm/hidden_t_prev_states_grad)",
                  "padded rows' gradient goes to h3"]:  # fmt: skip
        assert label in lines, label
    # the row the note names is the row the run measured: the gradient of h3 is row 3
    run = masking.measure()
    assert run.state_grad[1] == 3.0


def test_masking_measures_repeats_zero_gradients_and_the_state_gradient():
    run = masking.measure()
    assert run.repeats == [{}, {3: 2, 4: 2}] and run.last == [4, 2]
    np.testing.assert_array_equal(run.hidden_last[0, 1], run.hidden_all[2, 1])
    assert run.zero_rows == [[], [3, 4]] and run.state_grad == [1.0, 3.0]
    dropped = masking.measure(drop_states=True)
    assert dropped.zeros == [[], [3, 4]] and not np.any(dropped.hidden_last[0, 1])
    assert dropped.state_grad == [1.0, 1.0]  # zeros pass no gradient back
    # other lengths: the rule, not the numbers 5 and 3
    other = masking.measure(lengths=(2, 4), steps=4)
    assert other.repeats == [{2: 1, 3: 1}, {}] and other.last == [1, 3]
    assert other.zero_rows == [[2, 3], []] and other.state_grad == [3.0, 1.0]


def test_masking_gradient_of_the_padded_rows_is_step_2s_by_finite_differences():
    """d/dx of sum(hidden_t_all) equals d/dx of a loss that reads row 1's real rows and its
    h₂ twice more (central differences of caffe2rnn's own forward), and the analytic x_grad
    agrees; x's padded rows get nothing."""
    from caffe2rnn import model_helper, rnn_cell
    from caffe2rnn.runtime import Workspace

    T, N, D, H = masking.STEPS, 2, 2, 3
    model = model_helper.ModelHelper(name="masking_fd")
    h_all, _, _, _ = rnn_cell.LSTM(model, "x", "seq_lengths", ("h0", "c0"), dim_in=D,
                                   dim_out=H, scope="lstm")  # fmt: skip
    forward = model.net.Proto().op[:]
    model.AddGradientOperators([model.net.SumElements([h_all], "loss")])
    ws = Workspace()
    ws.run_net_once(model.param_init_net.Proto())
    rng = np.random.default_rng(1)
    x = rng.normal(size=(T, N, D))
    ws.feed("seq_lengths", np.asarray(masking.LENGTHS, np.int32))
    for name in ("h0", "c0"):
        ws.feed(name, np.zeros((1, N, H), np.float32))
    ws.feed("x", x.astype(np.float32))
    ws.run_net_once(model.net.Proto())
    x_grad = ws.fetch("x_grad").astype(np.float64)
    only_forward = core.Net("masking_fd_forward")
    only_forward.Proto().op.extend(forward)

    def loss(values, weights):
        ws.feed("x", values.astype(np.float32))
        ws.run_net_once(only_forward.Proto())
        return float((ws.fetch(str(h_all)).astype(np.float64) * weights).sum())

    every = np.ones((T, N, H))
    real = np.ones((T, N, H))
    real[3:, 1] = 0
    real[2, 1] = 3  # h₂ read three times
    eps = 1e-2
    numeric = {}
    for key, weights in (("every", every), ("real", real)):
        grad = np.zeros_like(x)
        for index in np.ndindex(*x.shape):
            up, down = x.copy(), x.copy()
            up[index] += eps
            down[index] -= eps
            grad[index] = (loss(up, weights) - loss(down, weights)) / (2 * eps)
        numeric[key] = grad
    np.testing.assert_allclose(numeric["every"], numeric["real"], atol=1e-6)
    np.testing.assert_allclose(x_grad, numeric["every"], atol=2e-3)
    assert not np.any(x_grad[3:, 1]) and np.all(np.abs(x_grad[:3, 1]).max(axis=1) > 1e-3)


def test_masking_torch_side_is_torchs():
    """torch's padded output holds zeros where Caffe2 repeats h₂, h_n is h₂ as in Caffe2,
    and the padded rows pass no gradient (torch 2.x, CPU)."""
    torch = pytest.importorskip("torch")
    from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

    torch.manual_seed(0)
    lstm = torch.nn.LSTM(2, 3)
    x = torch.randn(masking.STEPS, 2, 2, requires_grad=True)
    packed = pack_padded_sequence(x, torch.tensor(masking.LENGTHS))
    output, (h_n, _) = lstm(packed)
    output, _ = pad_packed_sequence(output)
    assert not output[3:, 1].any() and torch.equal(h_n[0, 1], output[2, 1])
    output.sum().backward()
    assert not x.grad[3:, 1].any()


def test_forward_rows_draws_step_9s_elman_cell_in_its_own_names():
    """Step 9's figure (round 16, reader Z: it was labelled with the LSTM's names): the
    variant cell="elman" draws notebook 04's lists, the ones caffe2rnn.exercises checks
    the learner's loop with, and nothing of the LSTM; step 8's default is unchanged."""
    from caffe2rnn import exercises

    names = forward_rows.ELMAN_NAMES
    drawn = {(names["input"], names["sequence"], 0),
             (names["prev"], names["states"], 0),
             (names["written"], names["states"], 1)}  # fmt: skip
    assert drawn == set(exercises.LINKS)
    assert {(names["states"], names["all"], 1), (names["states"], names["last"], -1)} == set(
        exercises.ALIASES
    )
    texts = " | ".join(_texts(figures.fig_forward_rows(5, cell="elman")))
    for label in ["x: T rows", "hidden_t_prev = row 4", "hidden_t = row 5", "hidden_t_all",
                  "hidden_t_last", "step(ws) above", "hidden_t_prev_states"]:  # fmt: skip
        assert label in texts, label
    assert "lstm" not in texts and "LSTMUnit" not in texts and "cell state" not in texts
    assert "lstm/i2h" in " | ".join(_texts(figures.fig_forward_rows(3)))
    with pytest.raises(DrawingError, match="cell='gru'"):
        figures.fig_forward_rows(3, cell="gru")
