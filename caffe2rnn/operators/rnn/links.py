"""Links: how a step net sees one timestep of the big tensors, without copies.

A link ``(internal, external, offset, window)`` says: before step t, the step
net's blob ``internal`` is rows ``t + offset ... t + offset + window - 1`` of
the tensor ``external`` (``docs/concepts/links-and-aliases.md``).
``recurrent_net`` made three per recurrent state, e.g. for an LSTM hidden
state::

    ("input_t",        "input",           0)   x_t       = input[t]
    ("hidden_t_prev",  "hidden_t_states", 0)   h_{t-1}   = states[t]
    ("hidden_t",       "hidden_t_states", 1)   h_t       = states[t + 1]

The internal blob is a *view* (NumPy slice; Caffe2's ``ShareExternalPointer``),
so the op computing ``hidden_t`` writes straight into the (T + 1)-row states
tensor, and O(1) in T. The window is how many rows the view spans (1 except
for cells that read several past steps, e.g. a convolution with left padding
provided as several initial rows).

From 2017-09 Caffe2 applied links with an op, ``rnn_internal_apply_link``,
prepended to the step nets (:func:`add_apply_link_ops`), so the dependency of
each cell op on its linked blobs is visible in the net itself.
"""

from dataclasses import dataclass

import numpy as np

from ... import kernels
from ...errors import ArgumentError, DTypeError
from ...kernels import checked
from ...proto import caffe2_pb2
from ...runtime.registry import register
from ...utils import MakeArgument
from ..base import Operator
from ..bound_call import BoundCall
from .step_net import prepend_ops


@dataclass(frozen=True)
class Link:
    """``internal`` = rows ``[t + offset, t + offset + window)`` of ``external``."""

    internal: str
    external: str
    offset: int = 0
    window: int = 1


def apply_link_op_def(link, timestep, device_option):
    """The ``rnn_internal_apply_link`` OperatorDef that applies ``link``."""
    op = caffe2_pb2.OperatorDef()
    op.type = "rnn_internal_apply_link"
    op.input.extend([timestep, link.external])
    op.output.extend([link.internal, link.external])
    op.device_option.CopyFrom(device_option)
    op.arg.extend([MakeArgument("offset", link.offset), MakeArgument("window", link.window)])
    return op


def add_apply_link_ops(links, timestep, device_option, netdef):
    """Prepend one ``rnn_internal_apply_link`` op per link to ``netdef``.

    The policy of Caffe2 from 2017-09 (``AddApplyLinkOps``). Also, the first
    op that *writes* the linked blob without reading it (the op computing
    ``hidden_t``) gets a ``control_input`` on it, so a scheduler keeps it
    after the link op; the blobs become external inputs of the step net.
    """
    ops = []
    for link in links:
        ops.append(apply_link_op_def(link, timestep, device_option))
        for op in netdef.op:
            if link.internal in op.input:
                continue
            if link.internal in op.output:
                op.control_input.append(link.internal)
                break
        netdef.external_input.extend([link.internal, link.external])
    prepend_ops(ops, netdef)


@register("rnn_internal_apply_link", inputs=2, outputs=2, enforce_inplace=[(1, 1)])
class RNNApplyLinkOp(Operator):
    """Make output 0 a view of ``window`` rows of input 1 at ``timestep + offset``.

    Inputs: ``timestep`` (int32, 1 element), the external tensor. Outputs: the
    internal blob, the external tensor again (in place: only there so the
    dependency is visible). Arguments ``offset`` and ``window`` (both >= 0).
    """

    def setup(self):
        self.offset = self.args.single("offset", -1)
        self.window = self.args.single("window", -1)
        self.check(
            self.offset >= 0, "offset not set (argument 'offset' must be >= 0)", ArgumentError
        )
        self.check(
            self.window >= 0, "window not set (argument 'window' must be >= 0)", ArgumentError
        )
        # Its errors name the link: in a step net the op has no number of its
        # own (errors.op_context says "before op #0").
        self.where = "link '%s' -> '%s' (offset %d, window %d)" % (
            self.def_.output[0],
            self.def_.input[1],
            self.offset,
            self.window,
        )

    def run(self):
        self.outputs[0].value = checked.link_view(
            self.inputs[1].value,
            read_timestep(self, 0, self.where),
            self.offset,
            self.window,
            self.where,
        )

    def bind(self):
        # The view of this timestep is made once; each run only re-assigns it.
        blob = self.outputs[0]
        return [BoundCall.assignment(kernels.current().assign_values, [blob], [blob.value])]

    def assigns(self):
        """The blobs :meth:`bind`'s calls set (rather than read or write into)."""
        return [self.outputs[0]]


def read_timestep(op, i, where=None):
    """The timestep held by input ``i`` of ``op`` (an int32 tensor, >= 1 element).
    ``where`` (``link 'h' -> 'states' ...``) starts the error message."""
    value = op.inputs[i].value
    if type(value) is not np.ndarray or value.dtype.kind not in "iu" or not value.size:
        raise DTypeError(
            "%sinput %d ('%s') must be the int32 timestep tensor; got %s"
            % (
                "" if where is None else where + ": ",
                i,
                op.inputs[i].name,
                value.dtype if type(value) is np.ndarray else type(value).__name__,
            )
        )
    return value.item(0)
