"""The figures of the E7 history page (docs/concepts/history-e7.md): an LSTM
built with sequence lengths beside the same LSTM built without them (Caffe2
2bf8d0cd4, 2018-01-26; era E7, 929c33cee).

* ``fig_sequence_lengths()`` is the page's figure, drawn by hand with
  :mod:`caffe2rnn.viz.figures.svg` at the text column's width. Everything it
  shows is read from what caffe2rnn builds and runs under era E7: the inputs
  and the ``sequence_lengths`` argument of each step net's ``LSTMUnit`` (the
  only op that differs), and which (t, n) entries of ``hidden_all`` a run with
  lengths [3, 1] computed and which repeat the step before.
* ``lstm_step_nets_svg()`` draws the two whole step nets with
  ``caffe2rnn.viz.net`` (every op and blob), side by side over one legend:
  the page shows it behind a click.
* ``e7_figure_html()`` is what the page's hidden code cell displays: the
  figure, then the two step nets in a closed "full" box.

From the command line it writes both SVGs (build outputs, never committed):

    python docs/make_e7_diagrams.py [--out docs/_static/diagrams]

Needs Graphviz's ``dot`` for the step nets.
"""

import argparse
import base64
import html
import os
import re
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from caffe2rnn import eras, rnn_cell, workspace  # noqa: E402
from caffe2rnn.errors import DrawingError  # noqa: E402
from caffe2rnn.model_helper import ModelHelper  # noqa: E402
from caffe2rnn.viz import net  # noqa: E402
from caffe2rnn.viz.figures import parts, style  # noqa: E402
from caffe2rnn.viz.figures.svg import Canvas, Figure, text_width  # noqa: E402
from caffe2rnn.viz.page import stack_svg  # noqa: E402

#: Horizontal gap between the two Graphviz drawings, in points.
GAP = 18.0
_SIZE = re.compile(r'<svg\b[^>]*\bwidth="([\d.]+)pt"[^>]*\bheight="([\d.]+)pt"', re.S)
_ID = re.compile(r'\bid="(a_)?((?:graph|node|edge|clust)\d+[^"]*)"')

#: The two ways of building: (key, the ``seq_lengths`` argument of rnn_cell.LSTM).
FORMS = (("with seq_lengths", "seq_lengths"), ("without", None))
#: The figure's run: T steps, one length per batch row.
FIGURE_T, FIGURE_LENGTHS = 3, (3, 1)

#: What differs between the two forms: the warm highlight of the figure.
CHANGE_FILL, CHANGE_EDGE = "#FEEFC3", "#A85400"
#: A step that computed a new state, and one that kept the previous one.
STEP_FILL, STEP_EDGE = "#CEEAD6", "#137333"
KEEP_FILL, KEEP_EDGE = "#F1F3F4", style.MUTED


def _build(lengths, hidden, input_dim, name):
    """A one-layer E7 ``rnn_cell.LSTM`` named "lstm", forward only: (model, h_all)."""
    with eras.use("E7"):
        model = ModelHelper(name=name)
        outputs = rnn_cell.LSTM(
            model, "input", lengths, ["h0", "c0"], input_dim, hidden, "lstm", forward_only=True
        )
    return model, outputs[0]


def _step_net(model):
    (op,) = [o for o in model.net.Proto().op if o.type == "RecurrentNetwork"]
    (step,) = [a.n for a in op.arg if a.name == "step_net"]
    return step


def lstm_step_nets(hidden=4, input_dim=3):
    """``{"with seq_lengths": NetDef, "without": NetDef}``: the step net of a
    one-layer ``rnn_cell.LSTM`` built under era E7, given the blob
    ``seq_lengths`` and given None."""
    nets = {}
    for key, lengths in FORMS:
        step = _step_net(_build(lengths, hidden, input_dim, "lstm")[0])
        step.name = "step net, %s" % key
        nets[key] = step
    return nets


def lstm_unit_forms():
    """``{key: (inputs, sequence_lengths argument)}`` of the ``LSTMUnit`` of
    each step net, after checking that every other op of the two is the same."""
    nets = lstm_step_nets()
    others = {key: [op for op in n.op if op.type != "LSTMUnit"] for key, n in nets.items()}
    if others["with seq_lengths"] != others["without"]:
        raise DrawingError("the two E7 step nets differ outside LSTMUnit: the figure is wrong")
    forms = {}
    for key, netdef in nets.items():
        (unit,) = [op for op in netdef.op if op.type == "LSTMUnit"]
        (flag,) = [a.i for a in unit.arg if a.name == "sequence_lengths"]
        forms[key] = (list(unit.input), flag)
    return forms


def stepped_entries(T=FIGURE_T, lengths=FIGURE_LENGTHS, hidden=3, input_dim=2):
    """``{key: T x N bool array}``: whether entry (t, n) of ``hidden_all`` is a
    new state (True) or repeats entry (t - 1, n) exactly (False), from one
    forward run of each form on the same random inputs and parameters, in a
    workspace of its own. Row 0 always steps (it reads the initial state)."""
    N = len(lengths)
    rng = np.random.default_rng(1)
    found = {}
    with workspace.WorkspaceGuard("make_e7_diagrams"):
        workspace.ResetWorkspace()
        workspace.FeedBlob("input", rng.normal(size=(T, N, input_dim)).astype(np.float32))
        workspace.FeedBlob("h0", rng.normal(size=(1, N, hidden)).astype(np.float32))
        workspace.FeedBlob("c0", rng.normal(size=(1, N, hidden)).astype(np.float32))
        workspace.FeedBlob("seq_lengths", np.array(lengths, np.int32))
        for i, (key, blob) in enumerate(FORMS):
            model, h_all = _build(blob, hidden, input_dim, "run_%d" % i)
            if i == 0:
                workspace.RunNetOnce(model.param_init_net)  # both read these parameters
            workspace.RunNetOnce(model.net)
            h = workspace.FetchBlob(str(h_all))
            same = np.all(h[1:] == h[:-1], axis=2)
            found[key] = np.vstack([np.ones((1, N), bool), ~same])
    return found


# --- the drawn figure -------------------------------------------------------------------

_MONO = style.SMALL
_PITCH = 26.0  # one input slot
_PILL_H = 20.0


def _pill(canvas, x, y, w, text, changed):
    fill, edge = (CHANGE_FILL, CHANGE_EDGE) if changed else (style.INPUT_FILL, style.INPUT_EDGE)
    canvas.box(x, y - _PILL_H / 2, w, _PILL_H, "`%s`" % text, fill, edge, _MONO,
               rx=_PILL_H / 2, width=1.6 if changed else 1.0)  # fmt: skip


def _unit_column(canvas, x, top, inputs, flag, reference):
    """One form's LSTMUnit: its inputs as numbered slots, arrows into the op box,
    the argument under it. Inputs not at the same index in ``reference`` (the
    other form's inputs) are highlighted. Returns the y below."""
    pill_w = max(text_width("`%s`" % name, _MONO) for name in inputs) + 18
    pill_x, box_x, box_w = x + 20, x + 20 + pill_w + 40, 92
    ys = [top + _PITCH / 2 + i * _PITCH for i in range(len(inputs))]
    box_top, box_h = top + 2, 5 * _PITCH - 4
    for i, (name, y) in enumerate(zip(inputs, ys)):
        changed = i >= len(reference) or reference[i] != name
        canvas.text(x + 10, y, str(i), style.SMALL, "middle", True,
                    CHANGE_EDGE if changed else style.MUTED)  # fmt: skip
        _pill(canvas, pill_x, y, pill_w, name, changed)
        target = box_top + box_h * (i + 0.5) / 5
        canvas.arrow(pill_x + pill_w + 2, y, box_x - 1, target, style.MUTED, 1.0)
    canvas.box(box_x, box_top, box_w, box_h, "LSTMUnit", style.ACTIVATION, style.ACTIVATION,
               style.LABEL, True, "#FFFFFF", 3)  # fmt: skip
    below = top + 5 * _PITCH + 12
    canvas.text(box_x + box_w / 2, below, "`sequence_lengths=%d`" % flag, _MONO, "middle",
                fill=CHANGE_EDGE, bold=True)  # fmt: skip
    return below + 10


def _grid(canvas, x, top, stepped, lengths):
    """Entries (t, n) of hidden_all: a row per batch row n, a column per step t."""
    T, N = stepped.shape
    label_w, cell_w, cell_h = 104, 62, 23
    for t in range(T):
        canvas.text(x + label_w + (t + 0.5) * cell_w, top + 6, "t = %d" % t, style.SMALL,
                    "middle", fill=style.MUTED)  # fmt: skip
    for n in range(N):
        y = top + 16 + n * (cell_h + 4)
        canvas.text(x + 4, y + cell_h / 2, "row %d, length %d" % (n, lengths[n]), style.SMALL)
        for t in range(T):
            cx = x + label_w + t * cell_w
            if stepped[t, n]:
                canvas.box(cx + 2, y, cell_w - 4, cell_h, "step", STEP_FILL, STEP_EDGE,
                           style.SMALL, True, STEP_EDGE, 3)  # fmt: skip
            else:
                canvas.box(cx + 2, y, cell_w - 4, cell_h, "= t\u22121", KEEP_FILL, KEEP_EDGE,
                           style.SMALL, False, style.MUTED, 3, dash="3 2")  # fmt: skip
    return top + 16 + N * (cell_h + 4)


def fig_sequence_lengths():
    """The page's figure: LSTMUnit's inputs with and without sequence lengths,
    and what each batch row does at each step of a run with lengths [3, 1]."""
    forms = lstm_unit_forms()
    stepped = stepped_entries()
    (with_inputs, with_flag), (without_inputs, without_flag) = (forms[k] for k, _ in FORMS)
    canvas = Canvas(
        style.WIDTH,
        "An LSTM's step net with and without sequence lengths (era E7)",
        "rnn_cell.LSTM given seq_lengths builds LSTMUnit with five inputs, seq_lengths fourth "
        "and timestep fifth, and sequence_lengths=1; given None it builds LSTMUnit with four "
        "inputs, timestep fourth, and sequence_lengths=0. The FC and Sum of the step net are "
        "the same. With lengths [3, 1], batch row 1 computes a new state at step 0 only and "
        "repeats it at steps 1 and 2; without lengths both rows compute every step.",
    )
    top = (
        parts.heading(
            canvas,
            canvas.title,
            "`rnn_cell.LSTM(model, x, seq_lengths, ...)` and `rnn_cell.LSTM(model, x, None, ...)` "
            "build the same `FC` and `Sum`; only the last op, `LSTMUnit`, differs.",
        )
        + 8
    )
    half = (canvas.width - 20 - 24) / 2
    left, right = 10.0, 10.0 + half + 24
    headers = ("given `seq_lengths` (the only form before E7)", "given `None` (new in E7)")
    for x, header in zip((left, right), headers):
        canvas.text(x, top + 8, header, style.LABEL, bold=True)
    top += 22
    bottom = max(
        _unit_column(canvas, left, top, with_inputs, with_flag, without_inputs),
        _unit_column(canvas, right, top, without_inputs, without_flag, with_inputs),
    )
    canvas.text_block(right + 20, top + 4 * _PITCH + _PITCH / 2, "no fifth input: `timestep`"
                      "\nmoved up one place", style.SMALL, fill=CHANGE_EDGE)  # fmt: skip
    canvas.line(10, bottom + 4, canvas.width - 10, bottom + 4, "#DADCE0", 1.0)
    top = bottom + 20
    canvas.text(10, top, "What each batch row does at each step: T = %d, lengths %s"
                % (FIGURE_T, list(FIGURE_LENGTHS)), style.LABEL, bold=True)  # fmt: skip
    top += 14
    bottom = max(
        _grid(canvas, left, top, stepped["with seq_lengths"], FIGURE_LENGTHS),
        _grid(canvas, right, top, stepped["without"], FIGURE_LENGTHS),
    )
    notes = (
        "Past its length a row repeats its last state (`drop_states=True`: zeros).",
        "Every row steps at every step: each length is taken as T.",
    )
    for x, note in zip((left, right), notes):
        canvas.text_block(x + 4, bottom + 10, note, style.SMALL, width=half - 8, fill=style.MUTED)
    parts.key(
        canvas,
        canvas.bottom + 18,
        [
            ("box", (STEP_FILL, STEP_EDGE), "a new state from the cell"),
            ("box", (KEEP_FILL, KEEP_EDGE), "the state of step t\u22121, repeated"),
            ("box", (CHANGE_FILL, CHANGE_EDGE), "what differs between the two forms"),
        ],
    )
    return Figure("e7_sequence_lengths", canvas.svg())


# --- the two step nets, every op and blob (Graphviz) -------------------------------------


def side_by_side(svgs):
    """One SVG holding Graphviz SVGs ``svgs`` (bytes) left to right, top-aligned."""
    pieces = []
    for i, svg in enumerate(svgs):
        text = svg.decode("utf-8")
        width, height = map(float, _SIZE.search(text).groups())
        start = text.index(">", text.index("<svg")) + 1
        inner = _ID.sub(r'id="\1s%d_\2"' % i, text[start : text.rindex("</svg>")])
        pieces.append((width, height, inner))
    width = sum(w for w, _, _ in pieces) + GAP * (len(pieces) - 1)
    height = max(h for _, h, _ in pieces)
    out = [
        '<?xml version="1.0" encoding="UTF-8" standalone="no"?>\n'
        '<svg width="%gpt" height="%gpt" viewBox="0.00 0.00 %.2f %.2f" '
        'xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink">\n'
        % (width, height, width, height)
    ]
    x = 0.0
    for i, (w, _, inner) in enumerate(pieces):
        out.append('<g id="side%d" transform="translate(%.2f 0)">%s</g>\n' % (i, x, inner))
        x += w + GAP
    out.append("</svg>\n")
    return "".join(out).encode("utf-8")


def lstm_step_nets_svg(beside=True):
    """The two step nets of :func:`lstm_step_nets`, each drawn by ``viz.net`` at
    page width (title and net), side by side (``beside``) or one above the
    other, over one legend (both drawings' legends are the same)."""
    drawings = [net(netdef, width="page") for netdef in lstm_step_nets().values()]
    columns = [stack_svg([part.pipe(format="svg") for part in d.parts[:-1]]) for d in drawings]
    figure = side_by_side(columns) if beside else stack_svg(columns)
    return stack_svg([figure, drawings[0].parts[-1].pipe(format="svg")])


def _data_uri(svg):
    data = svg if isinstance(svg, bytes) else svg.encode("utf-8")
    return "data:image/svg+xml;base64," + base64.b64encode(data).decode("ascii")


def e7_figure_html():
    """The page's figure (at the column's width; a click opens it at 100 %), then
    the two whole step nets side by side in a closed box."""
    figure = fig_sequence_lengths()
    alt = html.escape(figure.title, quote=True)
    nets_alt = "the two E7 LSTM step nets, every op and blob: with seq_lengths and without"
    return (
        '<figure class="c2r-figure" style="margin:0">'
        '<img class="c2r-diagram" alt="%s" src="%s" style="max-width:100%%;height:auto">'
        "</figure>"
        '<details class="c2r-full"><summary>the two step nets in full, every op and blob '
        "(Graphviz; scroll to pan)</summary>"
        '<div style="overflow:auto;max-height:85vh">'
        '<img alt="%s" src="%s" style="max-width:none">'
        "</div></details>"
        % (alt, _data_uri(figure.svg), nets_alt, _data_uri(lstm_step_nets_svg(beside=True)))
    )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--out", default=os.path.join(os.path.dirname(__file__), "_static", "diagrams")
    )
    args = parser.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    figure = fig_sequence_lengths()
    path = os.path.join(args.out, figure.name + ".svg")
    figure.save(path)
    print("wrote", path)
    path = os.path.join(args.out, "e7_lstm_step_nets.svg")
    with open(path, "wb") as handle:
        handle.write(lstm_step_nets_svg())
    print("wrote", path)


if __name__ == "__main__":
    main()
