"""The figure of the E7 history page: an LSTM's step net with sequence lengths
beside the same step net without them (Caffe2 2bf8d0cd4, era E7).

``lstm_step_nets()`` builds both with ``rnn_cell.LSTM`` under era E7 and
returns their step NetDefs; ``lstm_step_nets_svg()`` draws them with
``caffe2rnn.viz.net`` (page width) and sets the two drawings side by side in
one SVG, over one legend; ``lstm_step_nets_html()`` is the page's figure (one
above the other, side by side behind a click). docs/concepts/history-e7.md
calls it in a code cell; from the command line it writes the SVG (a build
output, never committed):

    python docs/make_e7_diagrams.py [--out docs/_static/diagrams]

Needs Graphviz's ``dot``.
"""

import argparse
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from caffe2rnn import eras, rnn_cell  # noqa: E402
from caffe2rnn.model_helper import ModelHelper  # noqa: E402
from caffe2rnn.viz import net  # noqa: E402
from caffe2rnn.viz.page import stack_svg  # noqa: E402
from caffe2rnn.viz.render import page_html  # noqa: E402

#: Horizontal gap between the two drawings, in points.
GAP = 18.0
_SIZE = re.compile(r'<svg\b[^>]*\bwidth="([\d.]+)pt"[^>]*\bheight="([\d.]+)pt"', re.S)
_ID = re.compile(r'\bid="(a_)?((?:graph|node|edge|clust)\d+[^"]*)"')


def lstm_step_nets(hidden=4, input_dim=3):
    """``{"with seq_lengths": NetDef, "without": NetDef}``: the step net of a
    one-layer ``rnn_cell.LSTM`` built under era E7, given the blob
    ``seq_lengths`` and given None."""
    nets = {}
    with eras.use("E7"):
        for key, lengths in (("with seq_lengths", "seq_lengths"), ("without", None)):
            model = ModelHelper(name="lstm")
            rnn_cell.LSTM(
                model, "input", lengths, ["h0", "c0"], input_dim, hidden, "lstm", forward_only=True
            )
            (op,) = [o for o in model.net.Proto().op if o.type == "RecurrentNetwork"]
            (step,) = [a.n for a in op.arg if a.name == "step_net"]
            step.name = "step net, %s" % key
            nets[key] = step
    return nets


def side_by_side(svgs):
    """One SVG holding Graphviz SVGs ``svgs`` (bytes) left to right, top-aligned."""
    parts = []
    for i, svg in enumerate(svgs):
        text = svg.decode("utf-8")
        width, height = map(float, _SIZE.search(text).groups())
        start = text.index(">", text.index("<svg")) + 1
        inner = _ID.sub(r'id="\1s%d_\2"' % i, text[start : text.rindex("</svg>")])
        parts.append((width, height, inner))
    width = sum(w for w, _, _ in parts) + GAP * (len(parts) - 1)
    height = max(h for _, h, _ in parts)
    out = [
        '<?xml version="1.0" encoding="UTF-8" standalone="no"?>\n'
        '<svg width="%gpt" height="%gpt" viewBox="0.00 0.00 %.2f %.2f" '
        'xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink">\n'
        % (width, height, width, height)
    ]
    x = 0.0
    for i, (w, _, inner) in enumerate(parts):
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


def lstm_step_nets_html():
    """The figure for the page: the two step nets one above the other (each at
    the text column's width), side by side behind the "full size" click."""
    return page_html(
        lstm_step_nets_svg(beside=False),
        lstm_step_nets_svg(beside=True),
        alt="an LSTM's step net with seq_lengths and without (era E7)",
    )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--out", default=os.path.join(os.path.dirname(__file__), "_static", "diagrams")
    )
    args = parser.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, "e7_lstm_step_nets.svg")
    with open(path, "wb") as handle:
        handle.write(lstm_step_nets_svg())
    print("wrote", path)


if __name__ == "__main__":
    main()
