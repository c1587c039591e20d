"""Initial recurrent states: copied into the states tensor, and their gradient.

Forward (Caffe2's ``initializeRecurrentInput``): each recurrent state has an
initial-state input ``h0`` and a tensor ``<state>`` resized on every run to
(T + k) x N x D, whose first k rows receive ``h0``:

* ``h0`` of shape (D,)      -> k = 1, repeated over the N batch rows;
* ``h0`` of shape (N, D)    -> k = 1;
* ``h0`` of shape (k, N, D) -> k rows (left padding for windowed links).

Backward: the gradient of ``h0`` is the first k rows of ``<state>_grad``,
which the backward step net wrote through the link at offset 0. For ``h0``
of 2 or 3 dimensions the gradient output *shares memory* with those rows
(``d25223b79``); a 1-D ``h0`` was broadcast, so its gradient sums the N batch
rows (``AddStripedBatch``, ``35ed0b222``) — :class:`ShareOrStripe`.
"""

from dataclasses import dataclass

import numpy as np

from ...errors import DTypeError, ShapeError
from ...kernels import checked
from ..base import FLOAT_TYPES


@dataclass(frozen=True)
class RecurrentInput:
    """State tensor ``state`` starts from the op input ``input``."""

    state: str
    input: str


def initial_rows(h0):
    """k: the number of rows ``h0`` fills at the start of the states tensor."""
    return h0.shape[0] if h0.ndim == 3 else 1


def check_initial_state(h0, name, batch):
    if type(h0) is not np.ndarray or h0.dtype not in FLOAT_TYPES:
        raise DTypeError(
            "initial state '%s' must be a float32/float64 tensor; got %s"
            % (name, getattr(h0, "dtype", type(h0).__name__))
        )
    if not 1 <= h0.ndim <= 3:
        raise ShapeError(
            "initial state '%s' has shape %s; expected (D,), (N, D) or (k, N, D)" % (name, h0.shape)
        )
    if h0.ndim >= 2 and h0.shape[-2] != batch:
        raise ShapeError(
            "initial state '%s' has shape %s; expected a batch dimension "
            "of %d (dim 1 of the input sequence)" % (name, h0.shape, batch)
        )


def initialize_recurrent_input(ri, seq_len, batch, ws):
    """Resize ``ri.state`` to (T + k) x N x D and copy the initial state in."""
    h0 = ws.blob(ri.input).value
    check_initial_state(h0, ri.input, batch)
    k, d = initial_rows(h0), h0.shape[-1]
    state = ws.blob(ri.state).resize((seq_len + k, batch, d), h0.dtype)
    if h0.ndim >= 2:
        np.copyto(state[:k], h0.reshape(k, batch, d))
    else:
        checked.repeat_copy(h0, state[0], "initial state '%s'" % ri.input)
    return state


class ShareOrStripe:
    """Today's initial-state gradient (042e8ede4): a view for >= 2-D, a batch sum for 1-D."""

    def write(self, out_blob, states_grad, h0, batch):
        if h0.ndim >= 2:
            out_blob.value = states_grad.reshape(-1)[: h0.size].reshape(h0.shape)
            return
        out = out_blob.resize(h0.shape, states_grad.dtype)
        out.fill(0)
        checked.add_striped_batch(
            states_grad, out, h0.shape[0], batch, "gradient of initial state %s" % out_blob.name
        )
