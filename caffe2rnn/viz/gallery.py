"""Every view of one RecurrentNetwork op, by name (used by the CLI and the demo)."""

from .backward_timeline import backward_timeline
from .netdraw import net
from .recurrent import backward, recurrent
from .rnn_op import RecurrentOp
from .scratches import scratches_of
from .ssa import ssa
from .timeline import timeline
from .unroll import unroll


def _step(graph_of):
    return lambda op, T: graph_of(RecurrentOp(op).step_net)


# view -> (description, function(op, T) -> graphviz.Digraph)
VIEWS = {
    "net": ("the step net, net_drawer style (ops and blobs)", _step(net)),
    "ssa": ("the step net's blob versions name@v", _step(ssa)),
    "scratches": (
        "the step net with the blobs the backward step reads",
        lambda op, T: scratches_of(op),
    ),
    "backward": ("the backward step net as the C++ op runs it", lambda op, T: backward(op)),
    "recurrent": (
        "the RecurrentNetwork op: step nets, links, aliases",
        lambda op, T: recurrent(op),
    ),
    "timeline": ("the (T+1)-row state tensors and the rows each step uses", timeline),
    "unroll": ("one column per timestep, left to right, recurrent edges between them", unroll),
    "backward_timeline": (
        "the backward steps in the order they run and the gradient rows each reads and writes",
        backward_timeline,
    ),
}


def view(op, name, T=3):
    """The drawing ``name`` (a key of :data:`VIEWS`) of RecurrentNetwork ``op``."""
    return VIEWS[name][1](op, T)


def all_views(op, T=3):
    """``{view name: graphviz.Digraph}`` for every view of ``op``."""
    return {name: view(op, name, T) for name in VIEWS}
