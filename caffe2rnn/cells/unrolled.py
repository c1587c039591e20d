"""``UnrolledCell``: a cell copied T times into the net, no RecurrentNetwork op.

``rnn_cell.LSTM(..., static_rnn_unroll_size=T)`` (Caffe2 2017-06) builds the
recurrence as plain ops: the prepared input is ``Split`` into T rows, and step
t's ops are added under name scope ``timestep_<t>/`` with its own constant
``timestep_<t>/timestep`` blob. Inside ``ParameterSharing({'timestep_<t>':
''})`` every step's ``create_param`` resolves to the *same* parameter names a
RecurrentNetwork-built cell uses (``<cell>/gates_t_w``...), so the two are
interchangeable: same parameters, same outputs, same gradients. The
per-state outputs are the T step states ``Concat``-ed on axis 0
(``<state>_concat``) and the last step's state.

Fixed-length only: the sequence length must equal T (``Split`` checks).
"""

import logging
import operator

from .. import core, scope
from ..errors import ArgumentError
from ..modeling.parameter_sharing import ParameterSharing
from ..proto import caffe2_pb2
from .base import RNNCell

logger = logging.getLogger(__name__)


class UnrolledCell(RNNCell):
    """Run ``cell`` over exactly ``T`` steps by copying its step into the net."""

    def __init__(self, cell, T):
        super().__init__(name=cell.name, forward_only=cell.forward_only)
        # Caffe2 looped over range(T): a T that is no integer raised there, and
        # T <= 0 left no step, whose outputs then failed to build.
        try:
            steps = operator.index(T)
        except TypeError:
            steps = 0
        if steps <= 0:
            raise ArgumentError("static_rnn_unroll_size (T) must be a positive int, got %r" % (T,))
        T = steps
        self.cell = cell
        self.T = T

    def get_state_names(self):
        return self.cell.get_state_names()

    def get_output_state_index(self):
        return self.cell.get_output_state_index()

    def get_output_dim(self):
        return self.cell.get_output_dim()

    def prepare_input(self, model, input_blob):
        return self.cell.prepare_input(model, input_blob)

    def _apply(self, model, input_t, seq_lengths, states, timestep, extra_inputs=None):
        return self.cell._apply(model, input_t, seq_lengths, states, timestep, extra_inputs)

    def apply_over_sequence(
        self, model, inputs, seq_lengths=None, initial_states=None, outputs_with_grads=None
    ):
        initial_states = self.cell.default_initial_states(model, initial_states)
        self.check_initial_states(initial_states)
        inputs = self.cell.prepare_input(model, inputs)
        split_inputs = model.net.Split(
            inputs, [str(inputs) + f"_timestep_{t}" for t in range(self.T)], axis=0
        )
        if self.T == 1:
            split_inputs = [split_inputs]

        # Names given as str are the caller's blobs: pin them before the
        # per-step name scopes would prefix them.
        states = [core.BlobReference(str(b)) for b in initial_states]
        if seq_lengths is not None:  # None (E7): no lengths to pin
            seq_lengths = core.BlobReference(str(seq_lengths))
        per_step = []
        for t in range(self.T):
            step_scope = f"timestep_{t}"
            with ParameterSharing({step_scope: ""}), scope.NameScope(step_scope):
                timestep = model.param_init_net.ConstantFill(
                    [],
                    "timestep",
                    value=t,
                    shape=[1],
                    dtype=core.DataType.INT32,
                    device_option=core.DeviceOption(caffe2_pb2.CPU),
                )
                states = self.cell._apply(
                    model=model,
                    input_t=split_inputs[t],
                    seq_lengths=seq_lengths,
                    states=states,
                    timestep=timestep,
                )
            per_step.append(states)

        prefix = len("timestep_0/")
        all_states = [
            model.net.Concat(
                list(step_blobs),
                [
                    str(step_blobs[0])[prefix:] + "_concat",
                    str(step_blobs[0])[prefix:] + "_concat_info",
                ],
                axis=0,
            )[0]
            for step_blobs in zip(*per_step)
        ]
        # (state0_all, state0_last, state1_all, ...), as RecurrentNetwork returns
        outputs = []
        for all_blob, last_blob in zip(all_states, states):
            outputs.extend([all_blob, last_blob])
        outputs = tuple(outputs)

        if outputs_with_grads is None:
            outputs_with_grads = [2 * self.get_output_state_index()]
        # Outputs nobody differentiates still need a (zero) gradient so the
        # backward pass through the unrolled ops is complete.
        without_grad = sorted(set(range(len(outputs))) - set(outputs_with_grads))
        for i in without_grad:
            model.net.ZeroGradient(outputs[i], [])
        logger.debug("Added 0 gradients for blobs: %s", [str(outputs[i]) for i in without_grad])

        return self.cell._prepare_output_sequence(model, outputs), outputs
