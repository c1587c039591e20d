"""``scratches(cell, backward)``: what each forward step must keep for backward.

The backward step net of a RecurrentNetwork runs, for step t, in step t's
forward workspace: every forward blob it reads must still be there. Blobs
that arrive through links (cell inputs and outputs live in the state
tensors) and references (weights) are safe. The rest are ``recurrent_net``'s
*scratches*: written in the cell (SSA version > 0), read before written in
the backward net, and not a cell external output. Caffe2 kept them in one
workspace per timestep — that is the memory an RNN's backward pass costs.
``recompute_blobs_on_backward`` trades it for compute: the ops producing
those blobs are copied to the front of the backward net, so the blobs are
written there and stop being scratches.

The list comes from :func:`caffe2rnn.recurrent_stages.find_scratches`, the
function ``recurrent_net`` itself uses.
"""

from .. import core
from ..recurrent_stages import find_scratches
from . import sizing, sources
from .canvas import Canvas
from .rnn_op import RecurrentOp
from .ssa import draw_versions

_TIPS = {
    "scratch": "scratch: read by the backward step, kept in each step's workspace",
    "recompute": "recomputed at the start of the backward step",
    "read_by_backward": "read by the backward step; arrives through a link or reference",
}


def scratches(cell_net, backward_net, recompute=None, params=None, rankdir="TB", width=None):
    """The forward cell with scratch, recompute and read-by-backward blobs marked.

    ``recompute`` defaults to the outputs of backward ops that are copies of
    cell ops (how ``recurrent_net`` inserts recompute ops); ``width="page"``
    lays it out for a text column (:mod:`~caffe2rnn.viz.sizing`).
    """
    cell = sources.as_netdef(cell_net)
    backward = sources.as_netdef(backward_net)
    scratch = find_scratches(cell, backward)
    backward_ssa, _ = core.get_ssa(backward)
    read_back = core.get_undefined_blobs(backward_ssa)
    if recompute is None:
        cell_ops = {op.SerializeToString() for op in cell.op}
        recompute = [
            o for op in backward.op if op.SerializeToString() in cell_ops for o in op.output
        ]
    recompute = set(map(str, recompute))
    name = cell.name or "cell"
    title = "cell '%s': scratches kept per step =\n[%s]" % (name, ", ".join(scratch))
    canvas = Canvas("scratches_" + name, title, rankdir, width)
    tooltips = {}
    _, versions = core.get_ssa(cell)

    def kinds(blob, version):
        if version != versions.get(blob, 0):
            return []
        for kind, chosen in (
            ("scratch", blob in scratch),
            ("recompute", blob in recompute),
            ("read_by_backward", blob in read_back),
        ):
            if chosen:
                tooltips[blob] = _TIPS[kind]
                return [kind]
        return []

    draw_versions(
        canvas,
        canvas.graph,
        cell,
        extra_kinds=kinds,
        always_version=False,
        params=sources.param_names(cell_net, cell, params),
        tooltips=tooltips,
    )
    graph = canvas.finish()
    if canvas.page:
        full = dict(recompute=recompute, params=params, rankdir=rankdir)
        sizing.with_full_size(graph, lambda: scratches(cell_net, backward_net, **full))
    return graph


def scratches_of(op, rankdir="TB", width=None):
    """:func:`scratches` for a RecurrentNetwork op's own step nets."""
    rnn = RecurrentOp(op)
    backward = [] if rnn.backward_step_net is None else rnn.backward_step_net
    return scratches(
        rnn.step_net,
        backward,
        recompute=rnn.recompute,
        params={rnn.inputs[i] for i in rnn.params},
        rankdir=rankdir,
        width=width,
    )
