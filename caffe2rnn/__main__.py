"""``python -m caffe2rnn``: ``render`` draws a cell; ``demo`` runs the demo.

    python -m caffe2rnn demo --out demo-out
    python -m caffe2rnn char-rnn --text book.txt --steps 2000 --out char-rnn-out

    python -m caffe2rnn render --cell lstm --version v3 --view ssa -o out.svg
    python -m caffe2rnn render --cell mul --view timeline --steps 4   # DOT to stdout

A *version* is a table of cell builders (cell name -> function returning the
RecurrentNetwork ``OperatorDef``); adding a historical version of
``recurrent_net`` is one more entry in :data:`VERSIONS`.
"""

import argparse
import sys

from . import eras, errors, viz
from .viz import examples
from .viz.gallery import VIEWS


def _historical(version):
    """{cell: builder} for a historical recurrent_net, built under its own era."""
    from .history import cells
    from .history.compare import built_op

    return {
        name: (lambda name=name: built_op(version, cells.CELLS[name]())) for name in cells.CELLS
    }


def _history_versions():
    from .history import VERSIONS as modules

    return {
        name: ((module.__doc__ or name).strip().splitlines()[0], _historical(name))
        for name, module in modules.items()
    }


# version -> (description, {cell name: builder}). 'current' is caffe2rnn's own
# recurrent_net (v3 with the forward_only fix); the others are caffe2rnn.history.
VERSIONS = dict(
    current=(
        "caffe2rnn.recurrent.recurrent_net: v3 (2017-06-29) "
        "with the forward_only fix of 2017-08-17",
        examples.CELLS,
    ),
    **_history_versions(),
)
VERSION_ALIASES = {}


def build_cell(cell, version="current"):
    """The RecurrentNetwork op of ``cell`` as recurrent_net ``version`` builds it."""
    _, cells = VERSIONS[VERSION_ALIASES.get(version, version)]
    if cell not in cells:
        raise errors.DrawingError(
            "version %s has no cell %r; its cells: %s" % (version, cell, ", ".join(sorted(cells)))
        )
    return cells[cell]()


def _render_help():
    lines = ["views:"] + ["  %-10s %s" % (name, text) for name, (text, _) in VIEWS.items()]
    lines += ["versions (and their cells):"]
    for name, (text, cells) in VERSIONS.items():
        lines += ["  %-10s %s" % (name, text), "  %-10s cells: %s" % ("", ", ".join(sorted(cells)))]
    lines += ["  %-10s = %s" % (alias, name) for alias, name in VERSION_ALIASES.items()]
    return "\n".join(lines)


def _parser():
    parser = argparse.ArgumentParser(
        prog="python -m caffe2rnn", description="See and run Caffe2's recurrent networks."
    )
    commands = parser.add_subparsers(dest="command", required=True)
    render = commands.add_parser(
        "render",
        help="draw a cell's nets (Graphviz)",
        description="Draw one view of a cell's RecurrentNetwork op.",
        epilog=_render_help(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    render.add_argument(
        "--cell", default="lstm", help="a cell of the chosen version (see the list below)"
    )
    render.add_argument(
        "--version", default="current", choices=list(VERSIONS) + list(VERSION_ALIASES)
    )
    render.add_argument("--view", default="recurrent", choices=list(VIEWS))
    render.add_argument(
        "--steps",
        "-T",
        type=int,
        default=3,
        help="sequence length T for timeline/unroll (default 3)",
    )
    render.add_argument(
        "-o",
        "--output",
        help="file to write (.svg, .png, .pdf, .dot); without it the DOT text is printed",
    )
    compare = commands.add_parser(
        "compare",
        help="the historical versions' RecurrentNetwork arguments side by side",
        description="Build one cell with several versions of recurrent_net and "
        "draw their op arguments as a table, changes shaded.",
    )
    compare.add_argument("--cell", default="lstm")
    compare.add_argument(
        "--versions",
        default="v1,april,v2,v3,newest",
        help="comma-separated, oldest first (default: all)",
    )
    compare.add_argument("--only-differences", action="store_true")
    compare.add_argument("-o", "--output", help="file to write; default: DOT to stdout")
    from .demo import add_char_rnn_arguments, add_demo_arguments

    add_demo_arguments(
        commands.add_parser(
            "demo",
            help="the main job: a char-RNN on Python's own source, small tasks, gradient "
            "checks, every view of the LSTM's op, in an HTML report",
        )
    )
    add_char_rnn_arguments(
        commands.add_parser(
            "char-rnn",
            help="train a character-level LSTM on a text file and write a report",
            description="Train a char-RNN (Caffe2's examples/char_rnn.py model) on FILE: "
            "a progress bar, samples as it learns, a loss plot and an HTML report in --out.",
        )
    )
    return parser


def _render(args):
    op = build_cell(args.cell, args.version)
    version = VERSION_ALIASES.get(args.version, args.version)
    if version in eras.VERSION_NAMES:  # a historical op is drawn as its era ran it
        with eras.use(version):
            graph = VIEWS[args.view][1](op, args.steps)
    else:
        graph = VIEWS[args.view][1](op, args.steps)
    if args.output is None:
        sys.stdout.write(graph.source)
        return 0
    viz.render(graph, args.output)
    print("wrote %s (%s view of %s, %s)" % (args.output, args.view, args.cell, args.version))
    return 0


def _compare(args):
    versions = [v for v in args.versions.split(",") if v]
    graph = viz.compare(versions, args.cell, only_differences=args.only_differences)
    if args.output is None:
        sys.stdout.write(graph.source)
    else:
        viz.render(graph, args.output)
        print("wrote %s (%s: %s)" % (args.output, args.cell, ", ".join(versions)))
    return 0


def main(argv=None):
    args = _parser().parse_args(argv)
    if args.command in ("demo", "char-rnn"):
        from . import demo

        return (demo.demo_command if args.command == "demo" else demo.char_rnn_command)(args)
    try:
        return _compare(args) if args.command == "compare" else _render(args)
    except errors.Caffe2RNNError as error:
        print("caffe2rnn render: %s" % error, file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
