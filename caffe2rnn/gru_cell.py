"""``caffe2.python.gru_cell``: the GRU cell and layer (Caffe2 486f549da, 2017-07; era E6).

One GRU step (Cho et al., arXiv:1406.1078, in Caffe2's arrangement)::

    x_r, x_z, x_o = Split(i2h_t)                        # prepare_input: FC to 3H
    r   = σ(x_r + FC_r(h_{t-1}))                        # reset gate, in the step net
    u_o = x_o + FC_o(r ⊙ h_{t-1})                       # candidate pre-activation
    u_z = x_z + FC_z(h_{t-1})
    h_t = GRUUnit(h_{t-1}, [r, u_z, u_o], seq_lengths, timestep)
        = σ(u_z) ⊙ h_{t-1} + (1 − σ(u_z)) ⊙ tanh(u_o)

The reset gate must act *before* the candidate's FC, so it lives in the step
net; ``GRUUnit`` (:mod:`caffe2rnn.operators.gru_unit`) does the rest. One
state, ``<name>/hidden_t``; ``GRU(...)`` returns ``(hidden_all, hidden_last)``
per layer and needs explicit ``initial_states`` (one blob per layer).
``forget_bias`` is accepted and ignored, as in Caffe2.

``GRUCell`` and ``GRU`` exist from era E6 on (``with eras.use("E6")``); era
E7 adds ``linear_before_reset=True`` (the reset gate applied after the
candidate's FC, as cuDNN and ``torch.nn.GRU``) and ``seq_lengths=None``. The
cell itself lives with the others, in :mod:`caffe2rnn.cells.gru`.
"""

import functools

from . import eras
from .cells.gru import GRUCell as _GRUCell
from .cells.layers import _LSTM

_GRU = functools.partial(_LSTM, _GRUCell)
_GRU.__doc__ = """``GRU(model, input_blob, seq_lengths, initial_states, dim_in, dim_out,
scope, ...)``: GRU layers with the options of ``rnn_cell.LSTM``; outputs
``(hidden_all, hidden_last)`` (per layer unless ``return_last_layer_only``)."""

_ERA_NAMES = {"GRUCell": _GRUCell, "GRU": _GRU}


def __getattr__(name):
    if name in _ERA_NAMES:
        if eras.current().late_2017_cells:
            return _ERA_NAMES[name]
        raise AttributeError(
            "gru_cell.%s arrived in Caffe2 486f549da (2017-07-10, era E6); the era in force "
            "is %s: use eras.use('E6')" % (name, eras.current().name)
        )
    raise AttributeError("module %r has no attribute %r" % (__name__, name))
