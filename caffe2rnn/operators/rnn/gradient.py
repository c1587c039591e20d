"""``RecurrentNetworkGradient`` and the gradient maker of ``RecurrentNetwork``.

The gradient op (Caffe2 042e8ede4's ``RecurrentNetworkGradientOp``) runs the backward
step net for t = T-1 .. 0 in the step workspaces the forward op kept, so each
step sees its own forward intermediates. Inputs (made by
:class:`GetRecurrentNetworkGradient`): ``GO(j)`` for each j in
``outputs_with_grads``, then every forward input, then every forward output
(the last is the ``step_workspaces`` blob). Outputs: the gradient of the
sequence input, of each ``param``, of each initial state. All forward
arguments are copied onto it, plus ``backward_step_net``, ``param_grads``,
``backward_link_*``, ``outputs_with_grads`` and memonger ``<blob>.rename``.

Set-up edits the backward step net: ``_tmpstep`` renames of the cell's
parameter gradients, then [apply-link ops][accumulate ops][cell][param Sums].
A run:

1. zero each parameter gradient; resize each ``<state>_grad`` like its state
   and zero its last row (``caffe2rnn_zero_tail_rows``: its last k rows, see
   :func:`zero_states_gradient_tail`); size the input gradient;
2. add ``_last`` output gradients into the last row of ``<state>_grad``;
3. pre-create, in the shared-blobs workspace, every backward-op output that
   step workspace 0 does not have (``CreateSharedBlobs``: backward
   intermediates are shared by all steps, only forward ones are per step);
4. run the backward step net in step workspace t for t = T-1 .. 0;
5. write the initial-state gradients from the first rows of ``<state>_grad``.

The class attributes (:attr:`~RecurrentNetworkGradientOp.external_gradients`,
``param_gradients``, ``initial_state_gradient``, ``apply_links``) are the
behaviours that differed in 2017; :mod:`caffe2rnn.history.operator_eras`
holds the older variants.
"""

from typing import Any

from ... import eras
from ...errors import ArgumentError, EnforceNotMet, GradientError, ShapeError
from ...runtime import Workspace, registry
from ...runtime.arguments import ArgumentHelper
from ...runtime.registry import register, register_gradient
from ..base import Operator
from ..fc_layout import step_loop
from ..gradient_maker import GradientMaker, get_gradient_for_op
from . import executor
from .accumulate import AccumulateOpsAndLast, RecurrentGradient
from .arguments import read_recurrent_arguments
from .initial_states import ShareOrStripe, initial_rows
from .links import Link, add_apply_link_ops
from .param_gradients import BatchedOverTime, TmpstepSum
from .recurrent_network import sequence_shape, written_through
from .step_net import CheckedOnce, copy_net, run_step
from .step_workspaces import ScratchWorkspaces


def zero_states_gradient_tail(g, k, all_tail_rows=False):
    """Zero the last row of a (T + k)-row states gradient, as Caffe2 did
    (042e8ede4, "Fill the last timestep with zeros for the gradient").

    With k > 1 initial rows (a windowed link reading rows t .. t + k - 1) the
    rows T .. T + k - 2 are not written by any link before the backward step
    net reads them either: Caffe2 left them uninitialised on the first run and
    holding the previous run's values later, so a second backward run differs
    from the first. ``all_tail_rows`` (op argument ``caffe2rnn_zero_tail_rows``,
    a caffe2rnn option) zeroes all k rows instead, which makes every run equal
    (for k = 1 both are the same).
    """
    g[g.shape[0] - (k if all_tail_rows else 1) :] = 0


def _same_index(t):
    """Backward step t runs in step workspace t (the forward's own)."""
    return t


@register("RecurrentNetworkGradient")
class RecurrentNetworkGradientOp(Operator):
    """Backward pass through time of a ``RecurrentNetwork`` (module docstring)."""

    apply_links = staticmethod(add_apply_link_ops)
    #: ``_all`` gradients by prepended accumulate ops, ``_last`` added once.
    external_gradients = AccumulateOpsAndLast()
    #: ``_tmpstep`` rename plus appended in-place Sum (0c2c95309).
    param_gradients: Any = TmpstepSum()  # a policy object; eras swap in their own
    #: a view of ``<state>_grad`` (>= 2-D), a striped batch sum (1-D).
    initial_state_gradient: Any = ShareOrStripe()
    era = None

    def remapped(self, name):
        """The memonger rename of ``name`` (argument ``<name>.rename``), if any."""
        return self.arguments.renamed(name)

    def setup(self):
        # Parsed and checked before anything is created (arguments.py).
        self.arguments = a = read_recurrent_arguments(self.def_, where="")
        self.timestep = a.timestep
        self.grad_inputs = list(a.outputs_with_grads)
        self.zero_tail_rows = self.args.single("caffe2rnn_zero_tail_rows", False, bool)
        self.n_go = len(self.grad_inputs)
        self.step_net = copy_net(a.backward_step_net)
        self.step_net_checked = CheckedOnce()  # its T instances: checks once
        if self.step_net.name == a.step_net.name:
            raise ArgumentError(
                "backward_step_net is named '%s' like step_net: both are instantiated "
                "in the same step workspaces and cached by name, so they need "
                "different names" % a.step_net.name
            )
        self.links = [
            Link(self.remapped(l.internal), self.remapped(l.external), l.offset, l.window)
            for l in a.links + a.backward_links
        ]
        if a.batch_param_gradients and self.era is None:
            self.param_gradients = BatchedOverTime(self.links)
        self.params = self._params()
        self.recurrent_gradients = self._recurrent_gradients()
        self.initial_state_ids = list(a.initial_state_ids)

        device = self.def_.device_option
        self.step_net.external_input.append(self.timestep)
        self.external_gradients.prepare(
            self.step_net, self.recurrent_gradients, self.links, self.timestep, device
        )
        self.apply_links(self.links, self.timestep, device, self.step_net)
        self.param_gradients.prepare(self.step_net, self.params, device)
        # The RNN executor (executor.py); the forward op set the timestep blobs.
        self.executor = executor.create(a, self.step_net, self.era, None)
        # What a run may write besides its outputs, for an open rollback journal.
        self.written_through = written_through(self.step_net, self.timestep)
        self.written_through += [rg.grad for rg in self.recurrent_gradients]
        self.written_through += [p.grad for p in self.params]
        self.written_through.append(self.remapped(self.def_.input[self.n_go] + "_grad"))

    def _params(self):
        a = self.arguments
        policy = self.param_gradients
        params = []
        for i, param_id in enumerate(a.params):
            grad = self.def_.output[i + 1]
            cell = self.remapped(a.param_grads[i]) if a.param_grads else grad
            # Caffe2: input(param[i] + len(outputs_with_grads)), any forward input or output
            param = self.def_.input[self.n_go + param_id]
            params.append(policy.param(param, grad, cell, self.step_net))
        return params

    def _recurrent_gradients(self):
        a = self.arguments
        result = []
        for state in a.states:
            rg = RecurrentGradient(state, self.remapped(state + "_grad"))
            for j, alias in a.state_aliases(state):
                go = a.output_gradient(j)
                if go is None:
                    continue
                # The reader allows only these two offsets for an alias with a gradient.
                if alias.offset == 1:
                    rg.external_grad = go
                else:
                    rg.last_external_grad = go
            result.append(rg)
        return result

    def run(self):
        seq_len, _ = sequence_shape(self, self.n_go)
        scratch = self.inputs[-1].value
        if not isinstance(scratch, ScratchWorkspaces):
            raise EnforceNotMet(
                "last input '%s' must hold the forward op's step workspaces" % self.inputs[-1].name
            )
        if len(scratch.step_workspaces) < seq_len:
            raise EnforceNotMet(
                "'%s' holds %d step workspaces for %d timesteps: run the forward "
                "RecurrentNetwork with a backward_step_net (not forward-only) first"
                % (self.inputs[-1].name, len(scratch.step_workspaces), seq_len)
            )
        batch = self.input(0).shape[1] if self.input(0).ndim > 1 else 0

        # Rows no backward step writes would be read uninitialised: refused before any
        # write. An op of a named era reproduces its era's reads (before 96bafa3b2 a
        # state gradient behind a pass-through Sum was never written; 042e8ede4 zeroes
        # one tail row of k), so only today's operator checks.
        if self.era is None:
            self._check_own_timesteps(scratch, seq_len)
            self._check_state_rows(seq_len)
            self.arguments.check_gradient_rows(
                seq_len,
                {
                    rg.param: initial_rows(self.input(state_id + self.n_go))
                    for rg, state_id in zip(self.recurrent_gradients, self.initial_state_ids)
                },
                zeroed_tail_rows=None if self.zero_tail_rows else 1,
            )
        self.ws.note_writes(self.written_through)
        self.param_gradients.before_backward(self.ws, self.params)
        for rg, state_id in zip(self.recurrent_gradients, self.initial_state_ids):
            state = self.ws.blob(rg.param).value
            if getattr(state, "ndim", 0) != 3:
                raise ShapeError(
                    "state '%s' must be a 3-D tensor; run the forward op first" % rg.param
                )
            g = self.ws.create_blob(rg.grad).resize(state.shape, state.dtype)
            k = initial_rows(self.input(state_id + self.n_go))
            zero_states_gradient_tail(g, k, self.zero_tail_rows)
        x = self.input(self.n_go)
        input_grad = self.ws.get_blob(self.remapped(self.def_.input[self.n_go] + "_grad"))
        if input_grad is None:
            raise EnforceNotMet(
                "input gradient blob '%s' does not exist"
                % self.remapped(self.def_.input[self.n_go] + "_grad")
            )
        input_grad.resize(x.shape, x.dtype)
        self.external_gradients.before_backward(self.ws, self.recurrent_gradients)

        if scratch.step_workspaces:
            self._create_shared_blobs(scratch.step(0), scratch.shared_blobs_ws)
        with step_loop():  # parameters are fixed in the loop (fc_layout)
            if self.executor is not None:  # the RNN executor: same steps, from a plan
                self.executor.run(scratch, range(seq_len - 1, -1, -1), (_same_index, None))
            else:
                for t in range(seq_len - 1, -1, -1):
                    run_step(scratch.step(t), self.step_net, t, self.era, self.step_net_checked)
        self.param_gradients.after_backward(self.ws, seq_len)

        for i, (rg, state_id) in enumerate(zip(self.recurrent_gradients, self.initial_state_ids)):
            self.initial_state_gradient.write(
                self.outputs[1 + len(self.params) + i],
                self.ws.blob(rg.grad).value,
                self.input(state_id + self.n_go),
                batch,
            )

    def _check_own_timesteps(self, scratch, seq_len):
        """Each backward step reads the timestep its forward step left in its
        step workspace (the gradient op does not set it, 042e8ede4). A
        timestep named like a blob of an outer workspace was written *there*
        (``CreateBlob`` returns the outer blob): one blob for all steps, so
        every backward step would read the last t and the links would leave
        the other rows of the gradients unwritten. Refused before any write."""
        step0 = scratch.step_workspaces[0]
        if seq_len > 1 and step0 is not None and not step0.has_local_blob(self.timestep):
            raise ArgumentError(
                "argument 'timestep' names '%s', a blob of an outer workspace, so all "
                "%d steps shared one timestep and the backward steps would leave rows "
                "of the gradients unwritten; name the timestep apart from the "
                "workspace's blobs" % (self.timestep, seq_len)
            )

    def _check_state_rows(self, seq_len):
        """The state tensors hold the forward's T + k rows, and the gradient's
        rows are laid out for this input's T: another T (an input fed anew
        between forward and backward) would make the backward steps read
        rows of ``<state>_grad`` that nothing zeroed or wrote. Refused before
        any write."""
        for rg, state_id in zip(self.recurrent_gradients, self.initial_state_ids):
            state = self.ws.blob(rg.param).value
            k = initial_rows(self.input(state_id + self.n_go))
            if getattr(state, "ndim", 0) == 3 and state.shape[0] != seq_len + k:
                raise ShapeError(
                    "state '%s' has %d rows, but input '%s' has %d timesteps and %d "
                    "initial rows (%d): the forward op ran on another sequence; run it "
                    "on this input first"
                    % (
                        rg.param,
                        state.shape[0],
                        self.def_.input[self.n_go],
                        seq_len,
                        k,
                        seq_len + k,
                    )
                )

    def _create_shared_blobs(self, step0, shared):
        """Backward-op outputs not in step workspace 0 are shared by all steps."""
        for op in self.step_net.op:
            for name in op.output:
                if not step0.has_blob(name):
                    shared.create_blob(name)


@register_gradient("RecurrentNetwork")
class GetRecurrentNetworkGradient(GradientMaker):
    """``RecurrentNetworkGradient([GO(j) for j in outputs_with_grads] + inputs +
    outputs) -> [GI(0)] + [GI(p) for p in param] + [GI(s) for s in
    initial_recurrent_state_ids]``, all forward arguments copied."""

    def get_gradient_defs(self):
        outputs_with_grads = self.arg("outputs_with_grads", [])
        if not outputs_with_grads:  # CAFFE_ENFORCE(outputs_with_grads.size() > 0)
            raise GradientError(
                "RecurrentNetwork: argument 'outputs_with_grads' must list at least one output"
            )
        # Caffe2's maker read GO(j) and GI(i) with bounds-checked accessors
        # (std::out_of_range) and protobuf reads out of range.
        _check_index_range("outputs_with_grads", outputs_with_grads, len(self.def_.output))
        for argument in ("param", "initial_recurrent_state_ids"):
            _check_index_range(argument, self.arg(argument, []), len(self.def_.input))
        inputs = [self.GO(j) for j in outputs_with_grads]
        inputs += list(self.def_.input) + list(self.def_.output)
        outputs = [self.GI(0)]
        outputs += [self.GI(i) for i in self.arg("param", [])]
        outputs += [self.GI(i) for i in self.arg("initial_recurrent_state_ids", [])]
        return [self.op_def("RecurrentNetworkGradient", inputs, outputs)]


def prepared_backward_step_net(op_def, era=None):
    """The backward step net exactly as ``RecurrentNetworkGradient`` will run it.

    ``op_def`` is a ``RecurrentNetwork`` (its gradient op is made by the
    registered gradient maker, for the outputs in ``outputs_with_grads``) or a
    ``RecurrentNetworkGradient``. The gradient op is set up in a scratch
    workspace — as the operator of ``era`` if given, else of the era of an
    enclosing ``eras.use(...)`` block, else today's — and its edited copy
    returned: ``rnn_internal_apply_link`` ops for every link, the
    ``rnn_internal_accumulate_gradient_input`` ops of the ``_all`` output
    gradients, the ``<grad>_tmpstep`` renames and per-parameter ``Sum`` ops
    (or an older era's accumulate-and-swap ops). Nothing runs. For drawings
    and teaching (``docs/concepts/recurrent-gradient-plumbing.md``, "The prepared
    backward step net").
    """
    grad_def = op_def
    if op_def.type == "RecurrentNetwork":
        if not ArgumentHelper(op_def).has_net("backward_step_net"):
            raise ArgumentError(
                "%s: argument 'backward_step_net' is absent (a forward-only op): "
                "there is no backward step net" % op_def.type
            )
        with_grads = {
            arg.name: list(arg.ints) for arg in op_def.arg if arg.name == "outputs_with_grads"
        }.get("outputs_with_grads", [])
        g_output = [
            name + "_grad" if j in with_grads else None for j, name in enumerate(op_def.output)
        ]
        grad_def = get_gradient_for_op(op_def, g_output)[0][0]
    scratch = Workspace(name="prepared_backward_step_net")
    for name in grad_def.input:
        scratch.create_blob(name)
    era = eras.get(era) if era is not None else eras.named()
    cls = registry.operator_class("RecurrentNetworkGradient", era)
    return copy_net(cls(grad_def, scratch, era).step_net)


def _check_index_range(argument, indices, size):
    for i in indices:
        if not 0 <= i < size:
            raise GradientError(
                "RecurrentNetwork: argument '%s' holds %d; the op has %d %s (0..%d)"
                % (
                    argument,
                    i,
                    size,
                    "outputs" if argument == "outputs_with_grads" else "inputs",
                    size - 1,
                )
            )
