"""``RecurrentNetworkGradient`` and the gradient maker of ``RecurrentNetwork``.

The gradient op (seed 004's ``RecurrentNetworkGradientOp``) runs the backward
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

from ...errors import ArgumentError, EnforceNotMet, GradientError, ShapeError
from ..base import Operator
from ..fc_layout import step_loop
from ..gradient_maker import GradientMaker
from ..registry import register, register_gradient
from . import executor
from .accumulate import AccumulateOpsAndLast, RecurrentGradient
from .initial_states import ShareOrStripe, initial_rows
from .links import Link, add_apply_link_ops, extract_links
from .param_gradients import TmpstepSum
from .recurrent_network import sequence_shape
from .step_net import extract_net_def, run_step
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
    param_gradients = TmpstepSum()
    #: a view of ``<state>_grad`` (>= 2-D), a striped batch sum (1-D).
    initial_state_gradient = ShareOrStripe()
    era = None

    def remapped(self, name):
        """The memonger rename of ``name`` (argument ``<name>.rename``), if any."""
        return self.args.single(name + ".rename", name, str)

    def setup(self):
        args = self.args
        self.timestep = args.single("timestep", "timestep", str)
        self.zero_tail_rows = args.single("caffe2rnn_zero_tail_rows", False, bool)
        self.grad_inputs = args.repeated("outputs_with_grads", kind=int)
        self.n_go = len(self.grad_inputs)
        self.step_net = extract_net_def(self.def_, "backward_step_net")
        forward_name = extract_net_def(self.def_, "step_net").name
        if self.step_net.name == forward_name:
            raise ArgumentError(
                "backward_step_net is named '%s' like step_net: both are instantiated "
                "in the same step workspaces and cached by name, so they need "
                "different names" % forward_name
            )
        self.links = [
            Link(self.remapped(l.internal), self.remapped(l.external), l.offset, l.window)
            for l in extract_links(
                args, "link_internal", "link_external", "link_offset", "link_window"
            )
            + extract_links(
                args, "backward_link_internal", "backward_link_external", "backward_link_offset"
            )
        ]
        self.params = self._params()
        self.recurrent_gradients = self._recurrent_gradients()
        self.initial_state_ids = args.repeated("initial_recurrent_state_ids", kind=int)
        if len(self.initial_state_ids) != len(self.recurrent_gradients):
            raise ArgumentError(
                "initial_recurrent_state_ids has %d entries for %d "
                "recurrent_states" % (len(self.initial_state_ids), len(self.recurrent_gradients))
            )
        expected = 1 + len(self.params) + len(self.recurrent_gradients)
        if len(self.def_.output) != expected:
            raise ArgumentError(
                "expected %d outputs (input, %d param and %d initial-"
                "state gradients), got %d"
                % (expected, len(self.params), len(self.recurrent_gradients), len(self.def_.output))
            )

        device = self.def_.device_option
        self.step_net.external_input.append(self.timestep)
        self.external_gradients.prepare(
            self.step_net, self.recurrent_gradients, self.links, self.timestep, device
        )
        self.apply_links(self.links, self.timestep, device, self.step_net)
        self.param_gradients.prepare(self.step_net, self.params, device)
        # The RNN executor (executor.py); the forward op set the timestep blobs.
        self.executor = (
            executor.StepNetExecutor(self.step_net, self.era, None)
            if executor.enabled(args)
            else None
        )

    def _forward_input(self, i, what):
        if not 0 <= i < len(self.def_.input) - self.n_go:
            raise ArgumentError("%s: %d is not a forward input index" % (what, i))
        return self.def_.input[i + self.n_go]

    def _params(self):
        ids = self.args.repeated("param", kind=int)
        cell_grads = self.args.repeated("param_grads", kind=str)
        if cell_grads and len(cell_grads) != len(ids):
            raise ArgumentError(
                "param has %d entries but param_grads %d" % (len(ids), len(cell_grads))
            )
        policy = self.param_gradients
        params = []
        for i, param_id in enumerate(ids):
            grad = self.def_.output[i + 1] if i + 1 < len(self.def_.output) else ""
            cell = self.remapped(cell_grads[i]) if cell_grads else grad
            params.append(
                policy.param(self._forward_input(param_id, "param"), grad, cell, self.step_net)
            )
        return params

    def _recurrent_gradients(self):
        states = self.args.repeated("recurrent_states", kind=str)
        alias_src = self.args.repeated("alias_src", kind=str)
        alias_offset = self.args.repeated("alias_offset", kind=int)
        result = []
        for state in states:
            rg = RecurrentGradient(state, self.remapped(state + "_grad"))
            for j, src in enumerate(alias_src):
                if src != state or j not in self.grad_inputs:
                    continue
                go = self.def_.input[len(self.grad_inputs) - 1 - self.grad_inputs[::-1].index(j)]
                if alias_offset[j] == 1:
                    rg.external_grad = go
                elif alias_offset[j] == -1:
                    rg.last_external_grad = go
                else:
                    raise ArgumentError(
                        "alias %d ('%s' of '%s') has a gradient but offset %d; only "
                        "offsets 1 (_all) and -1 (_last) can take one"
                        % (j, self.args.repeated("alias_dst", kind=str)[j], state, alias_offset[j])
                    )
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
                    run_step(scratch.step(t), self.step_net, t, self.era)

        for i, (rg, state_id) in enumerate(zip(self.recurrent_gradients, self.initial_state_ids)):
            self.initial_state_gradient.write(
                self.outputs[1 + len(self.params) + i],
                self.ws.blob(rg.grad).value,
                self.input(state_id + self.n_go),
                batch,
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
        if not outputs_with_grads:
            raise GradientError(
                "RecurrentNetwork: argument 'outputs_with_grads' must list at least one output"
            )
        inputs = [self.GO(j) for j in outputs_with_grads]
        inputs += list(self.def_.input) + list(self.def_.output)
        outputs = [self.GI(0)]
        outputs += [self.GI(i) for i in self.arg("param", [])]
        outputs += [self.GI(i) for i in self.arg("initial_recurrent_state_ids", [])]
        return [self.op_def("RecurrentNetworkGradient", inputs, outputs)]
