"""What the C++ ``RecurrentNetwork`` operators did in each era of 2017.

Today's operators (:mod:`caffe2rnn.operators.rnn`) are Caffe2 042e8ede4 (2017-12).
The Python ``recurrent_net`` of an older era built NetDefs for the operator of
*its* time, and some of its bugs only show on that operator. A net created with
an era (:mod:`caffe2rnn.eras`: marked by the ``recurrent_net`` that built it,
or named in ``workspace.CreateNet(..., era=...)``) instantiates the variant
classes below instead; each overrides only the strategies that differed:

=====  ==========================  =============================================
era    C++ state                   differs from today's operators in
=====  ==========================  =============================================
E2     73f75a980 (2017-03-19)      ``_acc`` + swap for param gradients; the
                                   initial-state gradient is a copy; one step
                                   workspace per timestep, always
E3/E4  89ea32b11 / faaafeccd       ``_acc`` + swap; initial-state gradient
       (2017-04)                   shares ``<state>_grad``; a step workspace
                                   per timestep, always
E5     0c2c95309 (2017-06)         forward-only *resizes* the step-workspace
                                   vector to exactly 2 (bug B10)
E6     042e8ede4                   nothing in the recurrent ops (the names
                                   ``RecurrentNetworkBlobFetcher`` outputs are
                                   ``bytes``: the era's policy
                                   ``fetched_names_are_bytes``)
E7     929c33cee (2018-03-26)      nothing in the recurrent ops; ``LSTMUnit``
                                   and ``GRUUnit`` read ``sequence_lengths``
                                   (policy ``optional_sequence_lengths``), as
                                   today's operators do
E0/E1  3b190c4df / 3913181a4       everything: scratch tensors, no step
                                   workspaces (:mod:`.scratch_operator`)
=====  ==========================  =============================================

Each class below is registered as the *variant* of its operator type for
the eras it covers (:func:`caffe2rnn.runtime.registry.register_variant`):
importing this module is all it takes for nets of those eras to create them.
E6 and E7 register none: their ops are today's, created with the era so
that the era's policies still apply.

Link application and the external-gradient adds were loops in the C++ op
before 2017-05/09 and are ops here in every era: same place in the step, the
same sums.
"""

import numpy as np

from ..errors import DTypeError, EnforceNotMet
from ..operators.base import Operator
from ..operators.rnn.gradient import RecurrentNetworkGradientOp
from ..operators.rnn.links import RNNApplyLinkOp, add_apply_link_ops, read_timestep
from ..operators.rnn.param_gradients import Param
from ..operators.rnn.recurrent_network import RecurrentNetworkOp
from ..operators.rnn.step_workspaces import CycleWhenForwardOnly
from ..runtime.registry import register, register_variant


@register("rnn_history_accumulate_param_gradient", inputs=3, outputs=1, enforce_inplace=[(2, 0)])
class AccumulateParamGradientOp(Operator):
    """What the 2016-12 .. 2017-06 C++ loop did after each backward step.

    Inputs (timestep, ``<param>_grad``, ``<param>_grad_acc``), output the
    accumulator (in place). ``acc += grad`` after every step; after the last
    backward step (t = 0) the two blobs' *contents* are swapped (C++
    ``std::swap(*accGradBlob, *gradBlob)``) so the gradient output holds the
    sum. The swap moves tensors with their buffers, not values: the
    accumulator keeps whatever the gradient blob held, shared buffers included
    (bug B5, fixed by Caffe2 8e01e4c8b).
    """

    def run(self):
        grad, acc = self.inputs[1], self.inputs[2]
        t = read_timestep(self, 0, "accumulating '%s' into '%s'" % (grad.name, acc.name))
        g, a = self.input(1), self.input(2)
        if a.shape != g.shape:
            raise EnforceNotMet(
                "'%s' has shape %s but its accumulator '%s' %s"
                % (grad.name, g.shape, acc.name, a.shape)
            )
        np.add(a, g, out=a)
        if t == 0:
            grad.swap(acc)


class AccumulateAndSwap:
    """Param gradients until 0c2c95309 (2017-06-05): ``_acc`` blob plus swap.

    The per-step gradient is read from the gradient *output* ``<param>_grad``
    (``param_grads`` did not exist before 8e01e4c8b); the accumulator
    ``<param>_grad_acc`` lived in the op's private workspace in C++ and is a
    blob of the op's workspace here, so it can be inspected.
    """

    def param(self, param, grad, cell_grad_blob, step_net):
        return Param(param, grad, grad + "_acc")

    def prepare(self, step_net, params, device_option):
        # The timestep blob is input 0 of the link ops set up just before.
        timestep = next(
            (op.input[0] for op in step_net.op if op.type == "rnn_internal_apply_link"), None
        )
        if params and timestep is None:
            raise EnforceNotMet(
                "backward step net '%s' has no link ops to take "
                "the timestep blob from" % step_net.name
            )
        for p in params:
            op = step_net.op.add()
            op.type = "rnn_history_accumulate_param_gradient"
            op.input.extend([timestep, p.grad, p.cell_gradient])
            op.output.append(p.cell_gradient)
            op.device_option.CopyFrom(device_option)
            step_net.external_input.extend([p.grad, p.cell_gradient])

    def before_backward(self, ws, params):
        for p in params:
            value = ws.blob(p.param).value
            if not hasattr(value, "dtype"):
                raise DTypeError("parameter '%s' is not a tensor" % p.param)
            # ResizeLike without a fill: uninitialised the first time, the
            # previous run's content later.
            ws.create_blob(p.grad).resize(value.shape, value.dtype)
            ws.create_blob(p.cell_gradient).resize(value.shape, value.dtype).fill(0)

    def after_backward(self, ws, seq_len):
        """Nothing: the swap is the accumulate op's own last step."""


class CopyInitialStateGradient:
    """Until d25223b79 (2017-03): the initial-state gradient is a *copy* of the
    first rows of ``<state>_grad`` (66ad84303; a 1-D initial state sums the N
    rows, 9e7a26027)."""

    def write(self, out_blob, states_grad, h0, batch):
        out = out_blob.resize(h0.shape, states_grad.dtype)
        if h0.ndim >= 2:
            np.copyto(out, states_grad.reshape(-1)[: h0.size].reshape(h0.shape))
        else:
            np.copyto(out, states_grad[0].reshape(batch, -1).sum(axis=0))


class StepWorkspacePerTimestep:
    """Before 5cf13df48 (2017-04-24) there was no forward-only mode: the op
    always kept one step workspace per timestep."""

    def num_workspaces(self, requested, enable_rnn_executor=False):
        return 0

    def prepare(self, scratch, seq_len, has_backward_pass, num_workspaces):
        scratch.grow(seq_len)

    def index(self, t, has_backward_pass, num_workspaces):
        return t


class ResizeToTwoWhenForwardOnly(CycleWhenForwardOnly):
    """Forward-only from 18fbc13a6 (2017-05-15) to 359776004 (2017-08-17).

    Without a backward pass the op resized the step-workspace vector to
    *exactly* 2 whenever it had another size, deleting the workspaces a
    training op sharing the same blob had kept for its gradient (bug B10).
    No ``num_workspaces`` argument and no executor yet.
    """

    def num_workspaces(self, requested, enable_rnn_executor=False):
        return 2

    def prepare(self, scratch, seq_len, has_backward_pass, num_workspaces):
        if has_backward_pass:
            scratch.grow(seq_len)
        elif len(scratch.step_workspaces) != 2:
            kept = scratch.step_workspaces[:2]
            scratch.step_workspaces[:] = kept + [None] * (2 - len(kept))


@register_variant("RecurrentNetwork", eras=["E2", "E3", "E4"])
class PerTimestepForward(RecurrentNetworkOp):
    """Forward op of 2017-03 .. 2017-04: a step workspace per timestep, always."""

    step_workspaces = StepWorkspacePerTimestep()


@register_variant("RecurrentNetwork", eras=["E5"])
class ResizeToTwoForward(RecurrentNetworkOp):
    """Forward op of 2017-05 .. 2017-08: forward-only resizes to 2 workspaces."""

    step_workspaces = ResizeToTwoWhenForwardOnly()


@register_variant("RecurrentNetworkGradient", eras=["E2"])
class AccumulateSwapCopyGradient(RecurrentNetworkGradientOp):
    """Gradient op of 2017-03 (73f75a980): ``_acc`` + swap, initial-state copy."""

    param_gradients = AccumulateAndSwap()
    initial_state_gradient = CopyInitialStateGradient()


@register_variant("RecurrentNetworkGradient", eras=["E3", "E4"])
class AccumulateSwapGradient(RecurrentNetworkGradientOp):
    """Gradient op of 2017-04 (faaafeccd): ``_acc`` + swap, initial state shared."""

    param_gradients = AccumulateAndSwap()


@register("rnn_history_apply_link_once", inputs=2, outputs=2, enforce_inplace=[(1, 1)])
class ApplyLinkOnceOp(RNNApplyLinkOp):
    """A link as Caffe2 839f180a2 .. 7686919a9 (2017-03-14 .. 18) applied it:
    only when its step workspace was created. A reused step workspace kept
    the views of the previous run, whatever happened to the tensors since
    (bug B2; backed out by 1c28bcc56 / 7686919a9, redone with the links
    re-applied every run by f81113a1a)."""

    applied = False

    def run(self):
        if not self.applied:
            super().run()
            self.applied = True


def add_apply_link_once_ops(links, timestep, device_option, netdef):
    add_apply_link_ops(links, timestep, device_option, netdef)
    for op in netdef.op:
        if op.type == "rnn_internal_apply_link":
            op.type = "rnn_history_apply_link_once"


class RecreateWhenLonger(StepWorkspacePerTimestep):
    """a096e83f3 (2017-03-14): the step workspaces are made anew only when the
    sequence is longer than before; otherwise the old ones (and their
    step-net instances) are reused."""

    def prepare(self, scratch, seq_len, has_backward_pass, num_workspaces):
        if seq_len > len(scratch.step_workspaces):
            scratch.step_workspaces[:] = [None] * seq_len


class StaleLinksForward(RecurrentNetworkOp):
    """Forward op of 2017-03-14 .. 18 (not an era of its own: the Python text
    of the time is v1's): links applied once per step workspace (bug B2)."""

    apply_links = staticmethod(add_apply_link_once_ops)
    step_workspaces = RecreateWhenLonger()
