"""``python -m caffe2rnn``: ``render`` draws a cell or a net; ``demo`` runs the demo.

    python -m caffe2rnn demo --out demo-out
    python -m caffe2rnn char-rnn --text book.txt --steps 2000 --out char-rnn-out

    python -m caffe2rnn render --cell lstm --version v3 --view ssa -o out.svg
    python -m caffe2rnn render --cell mul --view timeline --steps 4   # DOT to stdout
    python -m caffe2rnn render --net predict_net.pb -o net.svg      # your own NetDef

A *version* is a table of cell builders (cell name -> function returning the
RecurrentNetwork ``OperatorDef``); adding a historical version of
``recurrent_net`` is one more entry in :data:`VERSIONS`.

Every mistake on the command line (an unknown cell, a sequence length out of
range, an output file that cannot be written, a net file that does not
parse) is one line on stderr naming the argument and what it accepts, and
exit status 2 -- argparse's own convention -- never a traceback.
"""

import argparse
import os
import sys
from contextlib import nullcontext

from . import eras, errors, viz
from .history import catalog
from .viz import examples, netdraw, sources
from .viz.gallery import VIEWS
from .viz.sizing import WIDTHS

# version -> (description, {cell name: builder}). 'current' is caffe2rnn's own
# recurrent_net (v3 with the forward_only fix); the others are caffe2rnn.history.
VERSIONS = dict(
    current=(
        "caffe2rnn.recurrent.recurrent_net: v3 (2017-06-29) "
        "with the forward_only fix of 2017-08-17",
        examples.OPS,
    ),
    **catalog.versions(),
)

# Upper bounds for numeric arguments: drawings grow with T (the unroll view
# draws the step net T times, the timeline a (T+1)-row table per state), and
# dot's layout time grows faster than that.
MAX_DRAWN_STEPS = 64
MAX_SGD_STEPS = 100_000


def build_cell(cell, version="current"):
    """The RecurrentNetwork op of ``cell`` as recurrent_net ``version`` builds it."""
    if version not in VERSIONS:
        raise errors.DrawingError(
            "unknown version %r; versions: %s" % (version, ", ".join(VERSIONS))
        )
    _, cells = VERSIONS[version]
    if cell not in cells:
        raise errors.DrawingError(
            "version %s has no cell %r; its cells: %s" % (version, cell, ", ".join(sorted(cells)))
        )
    return cells[cell]()


def _render_help():
    lines = ["views:"] + ["  %-10s %s" % (name, text) for name, (text, _) in VIEWS.items()]
    lines += ["versions of recurrent_net (and the cells each can build):"]
    for name, (text, cells) in VERSIONS.items():
        lines += ["  %-10s %s" % (name, text), "  %-10s cells: %s" % ("", ", ".join(sorted(cells)))]
    return "\n".join(lines)


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line (argparse prints the usage
    block first); the exit status stays argparse's 2."""

    def error(self, message):
        self.exit(2, "%s: error: %s (see --help)\n" % (self.prog, message))


class _Help(argparse.RawDescriptionHelpFormatter):
    """Keeps the epilog's line breaks and appends "(default: ...)" to options
    that have a default worth showing."""

    def _get_help_string(self, action):
        text = action.help or ""
        if action.default not in (None, False, argparse.SUPPRESS) and "default" not in text:
            text += " (default: %(default)s)"
        return text


def _bounded_int(low, high, what):
    def parse(text):
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError("%r is not a whole number" % text) from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(
                "%s must be between %d and %d, got %d" % (what, low, high, value)
            )
        return value

    return parse


def _parser():
    parser = _Parser(
        prog="python -m caffe2rnn",
        description="See and run Caffe2's recurrent networks.",
        formatter_class=_Help,
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    render = commands.add_parser(
        "render",
        help="draw a cell's RecurrentNetwork op, or your own NetDef file (Graphviz)",
        description="Draw one view of a cell's RecurrentNetwork op, or of a NetDef file.",
        epilog=_render_help(),
        formatter_class=_Help,
    )
    source = render.add_mutually_exclusive_group()
    source.add_argument("--cell", default="lstm", help="a cell of the chosen version (see below)")
    source.add_argument(
        "--net",
        metavar="FILE",
        help="draw this NetDef file instead (binary protobuf or protobuf text); "
        "nets nested in op arguments (step nets) are drawn too",
    )
    render.add_argument(
        "--op",
        type=_bounded_int(0, 10**9, "--op"),
        metavar="INDEX",
        help="with --net: which RecurrentNetwork op the RNN views draw "
        "(its index in the net; default: the first one)",
    )
    render.add_argument(
        "--nested",
        choices=netdraw.NESTED,
        default="auto",
        help="net and recurrent views: draw step nets op by op (expand) or as one box "
        "listing their ops (collapse); auto collapses big ones",
    )
    render.add_argument(
        "--version",
        default="current",
        choices=list(VERSIONS),
        help="which recurrent_net builds the cell (see below)",
    )
    render.add_argument(
        "--view",
        default=None,
        choices=list(VIEWS),
        help="default: recurrent for a cell, net for --net",
    )
    render.add_argument(
        "--steps",
        "-T",
        type=_bounded_int(1, MAX_DRAWN_STEPS, "--steps (the sequence length T drawn)"),
        default=3,
        help="sequence length T drawn by the timeline and unroll views",
    )
    render.add_argument(
        "--width",
        choices=WIDTHS,
        default="full",
        help="full: Graphviz's natural layout; page: laid out for a ~700 px text column "
        "(top to bottom, rows, legend below, long sequences collapsed)",
    )
    render.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        help="file to write (.svg, .png, .pdf, .dot); without it the DOT text is printed",
    )
    compare = commands.add_parser(
        "compare",
        help="the historical versions' RecurrentNetwork arguments side by side",
        description="Build one cell with several versions of recurrent_net and "
        "draw their op arguments as a table, changes shaded.",
        formatter_class=_Help,
    )
    compare.add_argument("--cell", default="lstm", help="one of: " + ", ".join(_history_cells()))
    compare.add_argument(
        "--versions",
        default=",".join(_history_names()),
        help="comma-separated versions of recurrent_net, oldest first",
    )
    compare.add_argument(
        "--only-differences", action="store_true", help="leave out arguments no version changed"
    )
    compare.add_argument(
        "--width", choices=WIDTHS, default="full", help="page: cells wrapped for a text column"
    )
    compare.add_argument(
        "-o", "--output", metavar="FILE", help="file to write; without it the DOT text is printed"
    )
    demo = commands.add_parser(
        "demo",
        help="the main job: a char-RNN on Python's own source, small tasks, gradient "
        "checks, every view of the LSTM's op, in an HTML report",
        formatter_class=_Help,
    )
    demo.add_argument("--out", default="demo-out", help="output directory")
    demo.add_argument(
        "--steps",
        type=_bounded_int(1, MAX_SGD_STEPS, "--steps (the char-RNN's training steps)"),
        default=1200,
        help="the char-RNN's training steps",
    )
    demo.add_argument(
        "--small-steps",
        type=_bounded_int(1, MAX_SGD_STEPS, "--small-steps (SGD steps per small task)"),
        default=400,
        help="SGD steps per small task",
    )
    char_rnn = commands.add_parser(
        "char-rnn",
        help="train a character-level LSTM on a text file and write a report",
        description="Train a char-RNN (the model of Caffe2's examples/char_rnn.py) on FILE:\n"
        "a progress bar, samples as it learns, a loss plot and an HTML report in --out.",
        formatter_class=_Help,
    )
    _char_rnn_arguments(char_rnn)
    parser.commands = {"render": render, "compare": compare, "demo": demo, "char-rnn": char_rnn}
    return parser


def _positive_number(what):
    def parse(text):
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError("%r is not a number" % text) from None
        if not 0 < value < float("inf"):
            raise argparse.ArgumentTypeError("%s must be a positive number, got %s" % (what, text))
        return value

    return parse


def _char_rnn_arguments(parser):
    """``char-rnn``'s options (the training itself checks nothing twice: these
    bounds are what the command line accepts)."""
    parser.add_argument("--text", required=True, metavar="FILE", help="a UTF-8 text file")
    counts = [
        ("--steps", MAX_SGD_STEPS, 1000, "training steps"),
        ("--seq-len", 10_000, 32, "characters each stream reads per step (T)"),
        ("--hidden", 8192, 128, "LSTM hidden units"),
        ("--batch", 8192, 32, "parallel streams of the text (N)"),
        ("--sample-every", MAX_SGD_STEPS, None, "steps between samples (default: steps / 5)"),
        ("--sample-length", 100_000, 300, "characters drawn per sample"),
    ]
    for option, high, default, text in counts:
        kind = _bounded_int(1, high, option)
        parser.add_argument(option, type=kind, default=default, help=text)
    parser.add_argument(
        "--learning-rate",
        type=_positive_number("--learning-rate"),
        default=0.01,
        help="Adam's rate",
    )
    parser.add_argument(
        "--temperature",
        type=_positive_number("--temperature"),
        default=0.8,
        help="sampling temperature: below 1 sharper, above 1 more random",
    )
    parser.add_argument(
        "--prime", default="", help="text each sample starts from (default: a random character)"
    )
    parser.add_argument(
        "--seed",
        type=_bounded_int(0, 2**32 - 1, "--seed"),
        default=0,
        help="random seed (default: 0)",
    )
    parser.add_argument("--out", default="char-rnn-out", metavar="DIR", help="output directory")


def _history_cells():
    from .history import cells

    return sorted(cells.HISTORICAL)


def _history_names():
    from .history import VERSIONS as modules

    return list(modules)


def _check_output(parser, path):
    """Refuse an output file that cannot be written before drawing anything."""
    if path is None:
        return
    directory = os.path.dirname(os.path.abspath(path))
    existing = directory
    while not os.path.isdir(existing):  # render() makes missing directories
        if os.path.exists(existing):
            parser.error("-o %s: %s is not a directory" % (path, existing))
        existing = os.path.dirname(existing)
    if os.path.isdir(path):
        parser.error("-o %s: is a directory; give a file name" % path)
    target = path if os.path.exists(path) else existing
    if not os.access(target, os.W_OK):
        parser.error("-o %s: not writable (permission denied on %s)" % (path, target))


def _check_args(parser, args):
    """Cross-argument checks argparse cannot express, each a one-line usage error."""
    _check_output(parser, args.output)
    if args.command == "render":
        if args.net is None:
            for name in ("op",):
                if getattr(args, name) is not None:
                    parser.error("--%s needs --net FILE" % name)
            cells = VERSIONS[args.version][1]
            if args.cell not in cells:
                parser.error(
                    "argument --cell: version %s has no cell %r (choose from %s)"
                    % (args.version, args.cell, ", ".join(sorted(cells)))
                )
    elif args.command == "compare":
        known = _history_names()
        versions = [v for v in args.versions.split(",") if v]
        unknown = [v for v in versions if v not in known]
        if unknown or not versions:
            parser.error(
                "argument --versions: %s (choose from %s)"
                % (
                    "unknown %s" % ", ".join(map(repr, unknown)) if unknown else "empty",
                    ", ".join(known),
                )
            )
        if args.cell not in _history_cells():
            parser.error(
                "argument --cell: %r is not a cell of the historical versions (choose from %s)"
                % (args.cell, ", ".join(_history_cells()))
            )


def _rnn_op_of(netdef, index, path):
    """The RecurrentNetwork op the RNN views draw from a user's net."""
    from .viz.rnn_op import RNN_TYPES

    if index is not None:
        if index >= len(netdef.op):
            raise errors.DrawingError(
                "--op %d: %s has %d ops (0..%d)" % (index, path, len(netdef.op), len(netdef.op) - 1)
            )
        return netdef.op[index]
    for op in netdef.op:
        if op.type in RNN_TYPES:
            return op
    raise errors.DrawingError(
        "%s has no RecurrentNetwork op for this view; draw it with --view net or ssa" % path
    )


def _render(args):
    if args.net is not None:
        netdef = sources.load_netdef(args.net)
        what = args.net
        view = args.view or "net"
        if view == "net":
            graph = viz.net(netdef, nested=args.nested, width=args.width)
        elif view == "ssa":
            graph = viz.ssa(netdef, width=args.width)
        elif view == "recurrent":
            op = _rnn_op_of(netdef, args.op, args.net)
            graph = viz.recurrent(op, nested=args.nested, width=args.width)
        else:
            graph = VIEWS[view][1](_rnn_op_of(netdef, args.op, args.net), args.steps, args.width)
    else:
        view = args.view or "recurrent"
        what = "%s, %s" % (args.cell, args.version)
        op = build_cell(args.cell, args.version)
        # A historical op is drawn as its era ran it (its gradient op, its renames).
        era = eras.use(args.version) if args.version in eras.VERSION_NAMES else nullcontext()
        with era:
            if view == "recurrent":
                graph = viz.recurrent(op, nested=args.nested, width=args.width)
            else:
                graph = VIEWS[view][1](op, args.steps, args.width)
    if args.output is None:
        sys.stdout.write(graph.source)
        return 0
    viz.render(graph, args.output)
    print("wrote %s (%s view of %s)" % (args.output, view, what))
    return 0


def _compare(args):
    versions = [v for v in args.versions.split(",") if v]
    graph = viz.compare(
        versions, args.cell, only_differences=args.only_differences, width=args.width
    )
    if args.output is None:
        sys.stdout.write(graph.source)
    else:
        viz.render(graph, args.output)
        print("wrote %s (%s: %s)" % (args.output, args.cell, ", ".join(versions)))
    return 0


def main(argv=None):
    parser = _parser()
    args = parser.parse_args(argv)
    if args.command in ("render", "compare"):
        _check_args(parser.commands[args.command], args)
    try:
        if args.command in ("demo", "char-rnn"):
            from . import demo

            return (demo.demo_command if args.command == "demo" else demo.char_rnn_command)(args)
        return _compare(args) if args.command == "compare" else _render(args)
    except (errors.Caffe2RNNError, OSError) as error:
        # Bad input files, an unwritable disk: one line. A missing `dot`
        # keeps its install instructions (one line each).
        lines = str(error).strip().splitlines() or [type(error).__name__]
        if isinstance(error, OSError) and error.filename:
            lines = ["%s: %s" % (error.filename, error.strerror or error)]
        if not isinstance(error, errors.GraphvizNotFoundError):
            lines = lines[:1]
        print("caffe2rnn %s: %s" % (args.command, "\n".join(lines)), file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
