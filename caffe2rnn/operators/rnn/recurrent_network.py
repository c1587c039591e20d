"""``RecurrentNetwork``: run a step net over time (Caffe2 042e8ede4's ``RecurrentNetworkOp``).

Inputs: the sequence ``input`` (T x N x ...), the initial recurrent states,
then any other blob the step net reads (parameters...). Outputs: the aliases
(``<state>_all``, ``<state>_last`` ...) and, last, the ``step_workspaces``
blob. One run does, in order:

1. for each recurrent state, resize ``<state>`` to (T + k) x N x D and copy
   the initial state into its first k rows (:mod:`.initial_states`);
2. for t = 0 .. T-1, in step workspace t (:mod:`.step_workspaces`): set the
   int32 ``timestep`` blob to t and run the step net. Its first ops are the
   ``rnn_internal_apply_link`` ops (:mod:`.links`) that make ``input_t``,
   ``hidden_t_prev``, ``hidden_t`` views of row t / t / t + 1, so the cell
   reads the previous state from, and writes the new one into, ``<state>``;
3. make each output alias a view of its state tensor (:mod:`.aliases`).

Arguments (read and checked by :mod:`caffe2rnn.operators.rnn.arguments`):
``step_net`` (NetDef or its text),
``recurrent_states``, ``initial_recurrent_state_ids``, ``link_internal`` /
``link_external`` / ``link_offset`` / ``link_window``, ``alias_src`` /
``alias_dst`` / ``alias_offset``, ``timestep`` (default ``"timestep"``),
``recompute_blobs_on_backward``, ``backward_step_net`` (its presence means one
step workspace per timestep is kept for the gradient), ``num_workspaces``
(forward-only), ``enable_rnn_executor`` (1: run the loop from a plan of bound
kernel calls, :mod:`.executor`, bit-identical to the op-by-op loop; 0: op by
op; absent: on. Steps always run in order, which is what Caffe2's executor's
results were defined by; forward-only, an explicit 1 means 4 step workspaces
instead of 2, as in Caffe2 042e8ede4).

This is the operator of Caffe2 from 2017-09 on (042e8ede4, kept by PyTorch's
``caffe2/operators/rnn``). The class attributes :attr:`~RecurrentNetworkOp.apply_links`
and :attr:`~RecurrentNetworkOp.step_workspaces` are the two behaviours that
differed in 2017; :mod:`caffe2rnn.history.operator_eras` holds the variants a
net of an older era runs with (docs/concepts/history.md).
"""

import functools
from typing import Any

from ...errors import ArgumentError, ShapeError
from ...runtime.registry import register
from ..base import Operator
from ..fc_layout import step_loop
from . import executor
from .aliases import apply_offset_alias
from .arguments import read_recurrent_arguments
from .initial_states import (
    RecurrentInput,
    check_initial_state,
    initial_rows,
    initialize_recurrent_input,
)
from .links import add_apply_link_ops
from .step_net import CheckedOnce, copy_net, run_step
from .step_workspaces import CycleWhenForwardOnly, scratch_of, update_timestep_blob


def sequence_shape(op, i):
    """(T, N) from input ``i``, the T x N x ... sequence."""
    x = op.input(i)
    if x.ndim < 2:
        raise ShapeError(
            "input %d ('%s') has shape %s; expected a sequence of at "
            "least 2 dimensions (T x N x ...)" % (i, op.input_name(i), x.shape)
        )
    return x.shape[0], x.shape[1]


#: The type of the link ops prepended to a step net (:mod:`.links`).
LINK_OP = "rnn_internal_apply_link"


def written_through(step_net, timestep):
    """The names a step net's run may write in an outer workspace: its ops'
    outputs and the timestep. Each is a step-local blob unless a blob of that
    name is visible from the step workspace, which is then the one written
    (Caffe2's ``CreateBlob``); a failed call must put those back
    (:meth:`~caffe2rnn.runtime.Workspace.note_writes`).

    A link op lists its external tensor as an output only to show the
    dependency; the tensor is written only through the link's view, so it is
    counted when an op of the step net writes the view (the input sequence,
    which links only read, is not copied by a rollback journal)."""
    writes = {name for op in step_net.op if op.type != LINK_OP for name in op.output}
    names = [timestep]
    for op in step_net.op:
        if op.type == LINK_OP:
            names.append(op.output[0])
            if op.output[0] in writes:
                names.extend(op.output[1:])
        else:
            names.extend(op.output)
    return names


@register("RecurrentNetwork", inputs=(1, None), outputs=(2, None))
class RecurrentNetworkOp(Operator):
    """Run ``step_net`` for every timestep of input 0 (see the module docstring)."""

    #: ``rnn_internal_apply_link`` ops prepended to the step net (dc775484e).
    apply_links = staticmethod(add_apply_link_ops)
    #: one step workspace per timestep, or a few cycled when forward-only.
    step_workspaces: Any = CycleWhenForwardOnly()  # a policy object; eras swap in their own
    #: the era this operator was created for (None: today's); its step nets
    #: are created with it too.
    era = None

    def setup(self):
        # Parsed and checked before anything is created (arguments.py).
        self.arguments = a = read_recurrent_arguments(self.def_, where="")
        self.timestep = a.timestep
        self.step_net = copy_net(a.step_net)  # edited below; the parsed one stays as given
        self.step_net_checked = CheckedOnce()  # its T instances: checks once
        self.links = list(a.links)
        self.aliases = list(a.aliases)
        self.recompute_blobs = list(a.recompute_blobs)
        self.has_backward_pass = a.backward_step_net is not None
        # Forward-only, an explicit 1 sizes the step-workspace cycle as
        # Caffe2's executor did (whether the executor runs: executor.enabled).
        self.enable_rnn_executor = a.enable_rnn_executor
        self.num_workspaces = self.step_workspaces.num_workspaces(
            a.num_workspaces, a.enable_rnn_executor
        )
        # The state tensors live in the op's workspace (forward and backward share them).
        self.recurrent_inputs = [
            RecurrentInput(state, a.inputs[i]) for state, i in zip(a.states, a.initial_state_ids)
        ]
        for ri in self.recurrent_inputs:
            self.ws.create_blob(ri.state)

        self.step_net.external_input.append(self.timestep)
        self.apply_links(self.links, self.timestep, self.def_.device_option, self.step_net)
        # The RNN executor (executor.py): the same loop from a plan of bound calls.
        self.executor = executor.create(a, self.step_net, self.era, self.timestep)
        # State tensors an op of the step net writes through a link wider than
        # one row (see run()).
        written = {name for op in a.step_net.op for name in op.output}
        self.zero_filled_states = {
            link.external for link in self.links if link.window > 1 and link.internal in written
        }
        # What a run may write besides its outputs, for an open rollback journal.
        self.written_through = written_through(self.step_net, self.timestep)
        self.written_through += [ri.state for ri in self.recurrent_inputs]
        self.written_through += [alias.dst for alias in self.aliases]

    def run(self):
        seq_len, batch = sequence_shape(self, 0)
        for alias in self.aliases:
            # Caffe2's applyOffsetAlias wrote through ws->GetBlob(dst): any blob of
            # that name (usually an output) is overwritten; none is a null pointer.
            if self.ws.get_blob(alias.dst) is None:
                raise ArgumentError(
                    "argument 'alias_dst' names '%s', which is neither an output of the op "
                    "nor a blob of its workspace" % alias.dst
                )
        # Initial states, and the rows steps and aliases read, are checked before any write.
        rows = {}
        for ri in self.recurrent_inputs:
            h0 = self.ws.blob(ri.input).value
            check_initial_state(h0, ri.input, batch)
            rows[ri.state] = initial_rows(h0)
        self.arguments.check_rows(seq_len, rows)
        self.ws.note_writes(self.written_through)
        for ri in self.recurrent_inputs:
            state = initialize_recurrent_input(ri, seq_len, batch, self.ws)
            if ri.state in self.zero_filled_states:
                # A link of window w > 1 is written by an op whose output may be
                # smaller than the view (Resize keeps the front of the buffer):
                # the rows it leaves are zeros here, uninitialised in Caffe2.
                state[rows[ri.state] :] = 0

        scratch = scratch_of(self.outputs[-1])
        shared = scratch.shared(self.ws)
        # Blobs recomputed on backward need no per-step copy: pre-creating
        # them here makes every step's net write the same buffer.
        for name in self.recompute_blobs:
            shared.create_blob(name)

        workspaces = self.step_workspaces
        workspaces.prepare(scratch, seq_len, self.has_backward_pass, self.num_workspaces)
        with step_loop():  # parameters are fixed in the loop (fc_layout)
            if self.executor is not None:  # the RNN executor: same steps, from a plan
                index = functools.partial(
                    workspaces.index,
                    has_backward_pass=self.has_backward_pass,
                    num_workspaces=self.num_workspaces,
                )
                self.executor.run(scratch, range(seq_len), (index, index.keywords))
            else:
                for t in range(seq_len):
                    i = workspaces.index(t, self.has_backward_pass, self.num_workspaces)
                    step_ws = scratch.step(i)
                    update_timestep_blob(step_ws, self.timestep, t)
                    run_step(step_ws, self.step_net, t, self.era, self.step_net_checked)

        for alias in self.aliases:
            apply_offset_alias(alias, self.ws)
