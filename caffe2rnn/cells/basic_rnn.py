"""``BasicRNNCell``: the Elman RNN, Caffe2's last new cell (era E7).

Caffe2 a3d2ebeaf (2018-01-18, "Add ElmanCell and ElmanRNN" — the classes
were named ``BasicRNNCell`` and ``BasicRNN``), written after PyTorch's
``torch.nn.RNNCell``; sequence lengths from 4fc28dbfc (2018-02-05). One
step, with ``f`` = tanh or ReLU (``activation``)::

    i2h     = FC(x)                        # prepare_input: all T steps at once
    gates_t = FC(h_{t-1}) + i2h_t          # 1 × N × H
    h_t     = f(gates_t)

With ``seq_lengths`` (int32, N) a row whose sequence has ended keeps its
state (or gets zeros with ``drop_states``), built from plain ops rather than
a fused unit: ``valid = Cast(seq_lengths > t)``, ``invalid = Cast(seq_lengths
<= t)``, ``h_t = f(gates_t) ⊙ valid + h_{t-1} ⊙ invalid`` (Caffe2's comment
called it "a simple implementation ... to round out compatibility with
ONNX"). Its ``Cast`` ops carry no ``from_type``, so a net that needs their
gradient cannot be built (Caffe2's ``GetCastGradient`` enforced it):
``BasicRNN`` with sequence lengths is for inference (``forward_only``).

Written the E7 way (:mod:`caffe2rnn.cells.base`): the step runs inside
``NameScope(name)``; the state is ``<name>/hidden_t``. The cell has no
initializer (Caffe2 accepted ``initializer=`` and dropped it), and
``forget_bias`` and ``memory_optimization`` are accepted and ignored.
"""

from .. import brew
from ..errors import ArgumentError
from .base import RNNCell

ACTIVATIONS = ("relu", "tanh")


class BasicRNNCell(RNNCell):
    """An Elman RNN layer's step. State: ``(<name>/hidden_t,)``."""

    def __init__(
        self,
        input_size,
        hidden_size,
        forget_bias,
        memory_optimization,
        drop_states=False,
        initializer=None,
        activation=None,
        **kwargs,
    ):
        super().__init__(**kwargs)  # ``initializer`` is not passed on, as in Caffe2
        self.drop_states = drop_states
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.activation = activation
        if activation not in ACTIVATIONS:  # Caffe2: RuntimeError, same words
            raise ArgumentError(
                "BasicRNNCell with unknown activation function (%s); expected 'relu' or 'tanh'"
                % (activation,)
            )

    def _apply(self, model, input_t, seq_lengths, states, timestep, extra_inputs=None):
        return self.scoped_apply(model, input_t, seq_lengths, states, timestep, extra_inputs)

    def apply_override(self, model, input_t, seq_lengths, states, timestep, extra_inputs=None):
        hidden_t_prev = states[0]
        gates_t = brew.fc(
            model,
            hidden_t_prev,
            "gates_t",
            dim_in=self.hidden_size,
            dim_out=self.hidden_size,
            axis=2,
        )
        brew.sum(model, [gates_t, input_t], gates_t)
        nonlinearity = model.net.Tanh if self.activation == "tanh" else model.net.Relu
        hidden_t = nonlinearity(gates_t, "hidden_t")
        if seq_lengths is not None:
            timestep = model.net.CopyFromCPUInput(timestep, "timestep_gpu")
            valid_b = model.net.GT([seq_lengths, timestep], "valid_b", broadcast=1)
            invalid_b = model.net.LE([seq_lengths, timestep], "invalid_b", broadcast=1)
            valid = model.net.Cast(valid_b, "valid", to="float")
            invalid = model.net.Cast(invalid_b, "invalid", to="float")
            hidden_valid = model.net.Mul([hidden_t, valid], "hidden_valid", broadcast=1, axis=1)
            if self.drop_states:
                hidden_t = hidden_valid
            else:
                hidden_invalid = model.net.Mul(
                    [hidden_t_prev, invalid], "hidden_invalid", broadcast=1, axis=1
                )
                hidden_t = model.net.Add([hidden_valid, hidden_invalid], hidden_t)
        return (hidden_t,)

    def prepare_input(self, model, input_blob):
        return brew.fc(
            model,
            input_blob,
            self.scope("i2h"),
            dim_in=self.input_size,
            dim_out=self.hidden_size,
            axis=2,
        )

    def get_state_names(self):
        return (self.scope("hidden_t"),)

    def get_output_dim(self):
        return self.hidden_size
