"""Write one SVG of every caffe2rnn.viz view (and the version comparison) to docs/_static/diagrams/.

Run at docs build time (the SVGs are build outputs, never committed):

    python docs/make_diagrams.py [--cell rnn_cell_lstm] [--prefix lstm]
                                 [--out docs/_static/diagrams]
                                 [--stepper-out docs/_static/stepper]

The views are drawn from the LSTM the learner's path builds (docs/start-here.md):
``rnn_cell.LSTM(model, "x", "seq_lengths", ("h0", "c0"), dim_in=3, dim_out=4,
scope="lstm")`` on a ``ModelHelper``, default era (the example cell
``rnn_cell_lstm``), so every drawing carries the blob names the pages print
(``lstm/hidden_t_prev``, ``lstm/lstm/hidden_t_prev_states``, ``lstm/i2h``...).
Each view is written twice: ``<prefix>_<view>.svg`` laid out for the text column
(``width="page"``, what the pages show) and ``<prefix>_<view>_full.svg`` at full
size (what a click on it opens). It also writes the time stepper,
``<prefix>_stepper.html``: a kernel-free HTML fragment (one pre-rendered
page-width SVG per step and direction) the "Step through time" page embeds,
and, with matplotlib, ``bug_<id>.svg``: the gradient errors of each bug of
the gallery (``caffe2rnn.viz.plots.plot_bug``: per timestep for B3 and B7,
bars of run 1 and run 2 for B4 and B5), its text kept as text
(``svg.fonttype: none``) so the site check can measure it.

``<prefix>_compare.svg`` is the one drawing of the April API: the historical
versions of ``recurrent_net`` side by side (the history page), which only the
2017-04 ``recurrent.LSTM`` cell (example cell ``lstm``) can be built by.

The drawn figures (``caffe2rnn.viz.figures``, pure Python, no Graphviz) are
written as ``fig_<name>.svg`` (``caffe2rnn.viz.figures.FIGURES``) and, 1.5 times
larger, ``fig_<name>_full.svg``: the docs build (``docs/conf.py``) links every
``fig_<name>.svg`` image on a page to it, as the views' ``:target:`` does.

Needs Graphviz's ``dot``; without it the .dot sources are written instead,
and the script says how to install Graphviz.
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from caffe2rnn.__main__ import VIEWS, build_cell  # noqa: E402
from caffe2rnn.errors import GraphvizNotFoundError  # noqa: E402
from caffe2rnn.viz import compare, render, stepper_html  # noqa: E402
from caffe2rnn.viz.figures import FIGURES  # noqa: E402

#: The LSTM of the learner's path: rnn_cell.LSTM on a ModelHelper (example_cells).
PATH_CELL = "rnn_cell_lstm"
#: The cell the historical versions can build: the April API's recurrent.LSTM.
HISTORY_CELL = "lstm"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cell", default=PATH_CELL)
    parser.add_argument("--prefix", default="lstm", help="file names: <prefix>_<view>.svg")
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument(
        "--out", default=os.path.join(os.path.dirname(__file__), "_static", "diagrams")
    )
    parser.add_argument(
        "--stepper-out", default=os.path.join(os.path.dirname(__file__), "_static", "stepper")
    )
    args = parser.parse_args(argv)
    write_figures(args.out)
    # the bug plots first: a bug that reads memory nobody wrote (B3, B4) finds
    # fresh memory here more often than after the views (the plots say which)
    write_bug_plots(args.out)
    op = build_cell(args.cell)
    fmt = "svg"
    drawings = {view: draw(op, args.steps, "page") for view, (_, draw) in VIEWS.items()}
    # the historical versions side by side (the history page)
    versions = ["v1", "april", "v2", "v3", "newest"]
    drawings["compare"] = compare(versions, HISTORY_CELL, only_differences=True, width="page")
    for view, graph in drawings.items():
        for suffix, drawing in (("", graph), ("_full", graph.full_size())):
            path = os.path.join(args.out, "%s_%s%s.%s" % (args.prefix, view, suffix, fmt))
            try:
                render(drawing, path)
            except GraphvizNotFoundError as error:
                print(error, file=sys.stderr)
                fmt = "dot"
                path = render(drawing, path[: -len("svg")] + fmt)
            print("wrote", path)
    if fmt == "svg":
        os.makedirs(args.stepper_out, exist_ok=True)
        path = os.path.join(args.stepper_out, "%s_stepper.html" % args.prefix)
        title = "rnn_cell.LSTM's RecurrentNetwork" if args.cell == PATH_CELL else None
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(stepper_html(op, args.steps, title=title, width="page"))
        print("wrote", path)
    return 0


def write_figures(out):
    """The drawn figures, ``<name>.svg`` each and its ``<name>_full.svg`` (no Graphviz needed)."""
    for name, draw in FIGURES.items():
        figure = draw()
        print("wrote", figure.save(os.path.join(out, name + ".svg")))
        print("wrote", figure.full_size().save(os.path.join(out, name + "_full.svg")))


def write_bug_plots(out):
    """One SVG per bug shown by gradients (B9 fails while building: no numbers)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        plt.rcParams["svg.fonttype"] = "none"  # text stays text: measurable, searchable
    except ImportError:
        print("matplotlib is not installed: no bug plots", file=sys.stderr)
        return
    from caffe2rnn.history.bugs import BUGS
    from caffe2rnn.viz import plots

    for bug_id, bug in BUGS.items():
        if bug.runner is not None:
            continue
        ax = plots.plot_bug(bug_id)
        path = os.path.join(out, "bug_%s.svg" % bug_id)
        ax.figure.savefig(path, bbox_inches="tight")
        plt.close(ax.figure)
        print("wrote", path)


if __name__ == "__main__":
    sys.exit(main())
