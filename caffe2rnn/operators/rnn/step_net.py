"""The step nets a recurrent op carries in its arguments, and edits made to them.

``RecurrentNetwork`` runs a *step net* once per timestep; its gradient runs a
*backward step net* once per timestep in reverse. Both travel inside the op as
arguments: until 2017-08 as the protobuf *text* of the
NetDef in ``Argument.s`` (``str(net.Proto())``), later as a NetDef in
``Argument.n``. Caffe2's ``detail::extractNetDef`` accepted either; so does
:meth:`caffe2rnn.runtime.arguments.ArgumentHelper.net`.

The ops then edit their private copy before instantiating it: ops are
prepended (links, gradient accumulation), appended (parameter-gradient
``Sum``), blobs renamed (``<grad>_tmpstep``), external inputs added. The
helpers for those edits live here too.
"""

from ...proto import caffe2_pb2
from ...runtime.net import with_context


def copy_net(netdef):
    """A deep copy of ``netdef`` (the ops edit their own copy of a step net)."""
    net = caffe2_pb2.NetDef()
    net.CopyFrom(netdef)
    return net


def prepend_ops(ops, netdef):
    """Put ``ops`` (in order) before the existing ops of ``netdef``."""
    existing = list(netdef.op)
    del netdef.op[:]
    netdef.op.extend(list(ops) + existing)


def rename_op_input_output(netdef, from_name, to_name):
    """Rename every op input and output ``from_name`` to ``to_name``."""
    for op in netdef.op:
        for i, name in enumerate(op.input):
            if name == from_name:
                op.input[i] = to_name
        for i, name in enumerate(op.output):
            if name == from_name:
                op.output[i] = to_name


def get_or_create_net(ws, netdef, era=None, checked=None):
    """The net called ``netdef.name`` in ``ws``, instantiating it the first time
    (with ``era``, the era of the recurrent op that runs it).

    Each step workspace keeps its own instance of the step net (bound to that
    step's blobs); later runs of the recurrent op reuse it, as Caffe2 did.
    ``checked`` (a :class:`CheckedOnce`, or None) lets the T instances of one
    step net skip the creation checks the first one passed.
    """
    net = ws.get_net(netdef.name)
    if net is None:
        done = checked is not None and checked.done
        net = ws.create_net(netdef, era=era, checked=done)
        if checked is not None:
            checked.done = True
    return net


class CheckedOnce:
    """Whether one step net (a NetDef its op edited at setup and does not
    change after) has passed Caffe2's creation checks in some step workspace:
    then the other timesteps' instances skip them
    (:class:`~caffe2rnn.runtime.net.NetInstance`'s ``checked``)."""

    __slots__ = ("done",)

    def __init__(self):
        self.done = False


def run_step(ws, netdef, t, era=None, checked=None):
    """Run the step net of timestep ``t`` in ``ws``; errors say which timestep."""
    try:
        get_or_create_net(ws, netdef, era, checked).run()
    except Exception as exc:
        raise with_context(exc, "timestep %d" % t) from exc
