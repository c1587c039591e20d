"""NumPy references for the cells Caffe2 added in 2018 (era E7): the GRU with
``linear_before_reset``, the Elman RNN (``BasicRNN``) and the layer-normalised
MILSTM. Written from the equations (PyTorch's ``torch.nn.GRU``/``RNN``
documentation for the first two, arXiv:1606.06630 and arXiv:1607.06450 for
the third) in Caffe2's arrangement of the gate blocks; forward only — the
tests take gradients of these by central differences.

``seq_lengths=None`` means every row is valid at every step.
"""

import numpy as np
from numpy_cells import lstm_forward, sigmoid
from numpy_cells_late import layer_norm


def _valid(t, seq_lengths, n):
    if seq_lengths is None:
        return np.ones((n, 1), bool)
    return (t < np.asarray(seq_lengths)).reshape(n, 1)


def gru_forward(
    x,
    h0,
    w_x,
    b_x,
    w_r,
    b_r,
    w_z,
    b_z,
    w_o,
    b_o,
    seq_lengths=None,
    drop_states=False,
    linear_before_reset=False,
):
    """GRU over T × N × D; input projection blocks r, z, o.

    ``r = σ(x_r + h W_rᵀ + b_r)``, ``z = σ(x_z + h W_zᵀ + b_z)``; the candidate
    is ``tanh(x_o + (r ⊙ h) W_oᵀ + b_o)``, or with ``linear_before_reset``
    ``tanh(x_o + r ⊙ (h W_oᵀ + b_o))`` (PyTorch's ``n_t``); ``h' = z ⊙ h +
    (1 − z) ⊙ candidate``.
    """
    T, N, _ = x.shape
    H = w_r.shape[0]
    h = np.broadcast_to(h0.reshape(-1, H), (N, H)).copy()
    x_proj = x @ w_x.T + b_x
    out = []
    for t in range(T):
        x_r, x_z, x_o = x_proj[t, :, :H], x_proj[t, :, H : 2 * H], x_proj[t, :, 2 * H :]
        r = sigmoid(x_r + h @ w_r.T + b_r)
        z = sigmoid(x_z + h @ w_z.T + b_z)
        if linear_before_reset:
            candidate = np.tanh(x_o + r * (h @ w_o.T + b_o))
        else:
            candidate = np.tanh(x_o + (r * h) @ w_o.T + b_o)
        h_new = z * h + (1 - z) * candidate
        h = np.where(_valid(t, seq_lengths, N), h_new, np.zeros_like(h) if drop_states else h)
        out.append(h)
    return np.stack(out)


def elman_forward(
    x, h0, w_x, b_x, w_h, b_h, seq_lengths=None, activation="tanh", drop_states=False
):
    """``h_t = f(x_t W_xᵀ + b_x + h_{t−1} W_hᵀ + b_h)`` with f = tanh or ReLU;
    an ended row keeps ``h_{t−1}`` (zeros with ``drop_states``)."""
    T, N, _ = x.shape
    H = w_h.shape[0]
    f = np.tanh if activation == "tanh" else (lambda a: np.maximum(a, 0.0))
    h = np.broadcast_to(h0.reshape(-1, H), (N, H)).copy()
    out = []
    for t in range(T):
        h_new = f(x[t] @ w_x.T + b_x + h @ w_h.T + b_h)
        h = np.where(_valid(t, seq_lengths, N), h_new, np.zeros_like(h) if drop_states else h)
        out.append(h)
    return np.stack(out)


def layer_norm_milstm_forward(
    x, h0, c0, w_x, b_x, w_h, b_h, alpha, beta1, beta2, b, scale, bias, seq_lengths, eps=1e-4
):
    """MILSTM whose gate pre-activations ``α⊙Wx⊙Uh + β1⊙Uh + β2⊙Wx + b`` are
    layer-normalised over the 4H units (then the learned scale and bias)."""

    def gate_fn(t, wx, h):
        uh = h @ w_h.T + b_h
        return layer_norm(alpha * wx * uh + beta1 * uh + beta2 * wx + b, scale, bias, eps)

    return lstm_forward(x, h0, c0, w_x, b_x, w_h, b_h, seq_lengths, gate_fn=gate_fn)
