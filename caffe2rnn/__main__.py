"""``python -m caffe2rnn``: ``render`` draws a cell; ``demo`` runs the demo.

    python -m caffe2rnn demo --out demo-out

    python -m caffe2rnn render --cell lstm --version v3 --view ssa -o out.svg
    python -m caffe2rnn render --cell mul --view timeline --steps 4   # DOT to stdout

A *version* is a table of cell builders (cell name -> function returning the
RecurrentNetwork ``OperatorDef``); adding a historical version of
``recurrent_net`` is one more entry in :data:`VERSIONS`.
"""
import argparse
import sys

from . import errors, viz
from .viz import examples
from .viz.gallery import VIEWS

# version -> (description, {cell name: builder}); every cell is built by the
# real recurrent_net / recurrent.LSTM (viz.examples).
VERSIONS = {
    "v3": ("recurrent_net of 2017-06-29..08-17 (seed 000 #2): _accum Sums, "
           "param_grads, _tmpstep", examples.CELLS),
}
VERSION_ALIASES = {"current": "v3"}


def build_cell(cell, version="v3"):
    """The RecurrentNetwork op of ``cell`` as recurrent_net ``version`` builds it."""
    _, cells = VERSIONS[VERSION_ALIASES.get(version, version)]
    return cells[cell]()


def _render_help():
    cells = sorted({c for _, table in VERSIONS.values() for c in table})
    lines = ["views:"] + ["  %-10s %s" % (name, text)
                          for name, (text, _) in VIEWS.items()]
    lines += ["cells: " + ", ".join(cells), "versions:"]
    lines += ["  %-10s %s" % (name, text) for name, (text, _) in VERSIONS.items()]
    lines += ["  %-10s = %s" % (alias, name) for alias, name in VERSION_ALIASES.items()]
    return "\n".join(lines)


def _parser():
    parser = argparse.ArgumentParser(prog="python -m caffe2rnn",
                                     description="See and run Caffe2's recurrent networks.")
    commands = parser.add_subparsers(dest="command", required=True)
    render = commands.add_parser(
        "render", help="draw a cell's nets (Graphviz)",
        description="Draw one view of a cell's RecurrentNetwork op.",
        epilog=_render_help(), formatter_class=argparse.RawDescriptionHelpFormatter)
    render.add_argument("--cell", default="lstm",
                        choices=sorted({c for _, t in VERSIONS.values() for c in t}))
    render.add_argument("--version", default="v3",
                        choices=list(VERSIONS) + list(VERSION_ALIASES))
    render.add_argument("--view", default="recurrent", choices=list(VIEWS))
    render.add_argument("--steps", "-T", type=int, default=3,
                        help="sequence length T for timeline/unroll (default 3)")
    render.add_argument("-o", "--output",
                        help="file to write (.svg, .png, .pdf, .dot); "
                             "without it the DOT text is printed")
    demo = commands.add_parser(
        "demo", help="train an LSTM and an attention decoder, check gradients, "
                     "write a report and every view of the LSTM's op")
    demo.add_argument("--out", default="demo-out", help="output directory")
    demo.add_argument("--steps", type=int, default=300, help="SGD steps per model")
    return parser


def _render(args):
    op = build_cell(args.cell, args.version)
    graph = VIEWS[args.view][1](op, args.steps)
    if args.output is None:
        sys.stdout.write(graph.source)
        return 0
    viz.render(graph, args.output)
    print("wrote %s (%s view of %s, %s)" % (args.output, args.view, args.cell,
                                             args.version))
    return 0


def main(argv=None):
    args = _parser().parse_args(argv)
    if args.command == "demo":
        from . import demo
        _, ok = demo.run(out_dir=args.out, steps=args.steps)
        return 0 if ok else 1
    try:
        return _render(args)
    except errors.Caffe2RNNError as error:
        print("caffe2rnn render: %s" % error, file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
