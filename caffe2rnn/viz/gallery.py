"""Every view of one RecurrentNetwork op, by name (used by the CLI, the docs and the demo)."""

from .backward_timeline import backward_timeline
from .netdraw import net
from .recurrent import backward, recurrent
from .rnn_op import RecurrentOp
from .scratches import scratches_of
from .ssa import ssa
from .timeline import timeline
from .unroll import unroll


def _step(graph_of):
    return lambda op, T, width=None: graph_of(RecurrentOp(op).step_net, width=width)


# view -> (description, function(op, T, width=None) -> graphviz.Digraph)
VIEWS = {
    "net": ("the step net, net_drawer style (ops and blobs)", _step(net)),
    "ssa": ("the step net's blob versions name@v", _step(ssa)),
    "scratches": (
        "the step net with the blobs the backward step reads",
        lambda op, T, width=None: scratches_of(op, width=width),
    ),
    "backward": (
        "the backward step net as the C++ op runs it",
        lambda op, T, width=None: backward(op, width=width),
    ),
    "recurrent": (
        "the RecurrentNetwork op: step nets, links, aliases",
        lambda op, T, width=None: recurrent(op, width=width),
    ),
    "timeline": (
        "the (T+1)-row state tensors and the rows each step uses",
        lambda op, T, width=None: timeline(op, T, width=width),
    ),
    "unroll": (
        "one column per timestep, left to right, recurrent edges between them",
        lambda op, T, width=None: unroll(op, T, width=width),
    ),
    "backward_timeline": (
        "the backward steps in the order they run and the gradient rows each reads and writes",
        lambda op, T, width=None: backward_timeline(op, T, width=width),
    ),
}


def view(op, name, T=3, width=None):
    """The drawing ``name`` (a key of :data:`VIEWS`) of RecurrentNetwork ``op``;
    ``width="page"`` lays it out for a text column (:mod:`~caffe2rnn.viz.sizing`)."""
    return VIEWS[name][1](op, T, width)


def all_views(op, T=3, width=None):
    """``{view name: graphviz.Digraph}`` for every view of ``op``."""
    return {name: view(op, name, T, width) for name in VIEWS}
