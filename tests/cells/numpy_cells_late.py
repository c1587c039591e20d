"""NumPy references for the late-2017 (era E6) cells: GRU, layer-normalised
LSTM gates, and the attention decoder with Dot / SoftCoverage attention and
encoder-length masking. Written from the papers' equations as Caffe2
arranged them (gate order, where each bias sits); forward only — the tests
take gradients of these by central differences.
"""

import numpy as np
from numpy_cells import _split, lstm_forward, sigmoid, softmax


def gru_forward(x, h0, w_x, b_x, w_r, b_r, w_z, b_z, w_o, b_o, seq_lengths, drop_states=False):
    """GRU over T × N × D: gate blocks of the input projection are r, z, o.

    ``r = σ(x_r + h W_rᵀ + b_r)``, ``z = σ(x_z + h W_zᵀ + b_z)``,
    ``o = tanh(x_o + (r ⊙ h) W_oᵀ + b_o)``, ``h' = z ⊙ h + (1 − z) ⊙ o``.
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
        o = np.tanh(x_o + (r * h) @ w_o.T + b_o)
        h_new = z * h + (1 - z) * o
        valid = (t < np.asarray(seq_lengths)).reshape(N, 1)
        h = np.where(valid, h_new, np.zeros_like(h) if drop_states else h)
        out.append(h)
    return np.stack(out)


def layer_norm(a, scale, bias, epsilon):
    mean = a.mean(axis=-1, keepdims=True)
    var = a.var(axis=-1, keepdims=True)
    return (a - mean) / np.sqrt(var + epsilon) * scale + bias


def layer_norm_lstm_forward(x, h0, c0, w_x, b_x, w_h, b_h, scale, bias, seq_lengths, eps=1e-4):
    """LSTM whose summed gate pre-activations are layer-normalised (then gain, bias)."""

    def gate_fn(t, wx, h):
        return layer_norm(wx + h @ w_h.T + b_h, scale, bias, eps)

    return lstm_forward(x, h0, c0, w_x, b_x, w_h, b_h, seq_lengths, gate_fn=gate_fn)


def attention_decoder_forward(x, h0, c0, ctx0, enc, seq_lengths, p, kind, enc_lengths=None):
    """LSTM decoder attending over ``enc`` (S × N × E); ``kind`` is 'regular',
    'recurrent', 'dot' or 'coverage'. Returns h_all, c_all, ctx_all (and
    cov_all for coverage)."""
    T, N, _ = x.shape
    S, _, E = enc.shape
    H = h0.shape[-1]
    h = np.broadcast_to(h0.reshape(-1, H), (N, H)).copy()
    c = np.broadcast_to(c0.reshape(-1, H), (N, H)).copy()
    ctx = np.broadcast_to(ctx0.reshape(-1, E), (N, E)).copy()
    cov = np.zeros((N, S))
    x_proj = x @ p["w_x"].T + p["b_x"]
    if kind != "dot":
        weighted_enc = enc @ p["w_enc"].T + p["b_enc"]  # S × N × E
    if kind == "coverage":
        cov_w = enc @ p["w_cov"].T + p["b_cov"]  # S × N × E
    out = {"h_all": [], "c_all": [], "ctx_all": [], "cov_all": []}
    for t in range(T):
        a = x_proj[t] + np.concatenate([h, ctx], axis=1) @ p["w_g"].T + p["b_g"]
        ai, af, ao, ag = _split(a)
        i, f, o, g = sigmoid(ai), sigmoid(af), sigmoid(ao), np.tanh(ag)
        c_new = f * c + i * g
        h_new = o * np.tanh(c_new)
        valid = (t < np.asarray(seq_lengths)).reshape(N, 1)
        h = np.where(valid, h_new, h)
        c = np.where(valid, c_new, c)
        if kind == "dot":
            q = h @ p["w_dec"].T + p["b_dec"] if "w_dec" in p else h  # N × E
            scores = np.einsum("sne,ne->ns", enc, q)
        else:
            match = weighted_enc + (h @ p["w_dec"].T + p["b_dec"])
            if kind == "recurrent":
                match = match + (ctx @ p["w_ctx"].T + p["b_ctx"])
            if kind == "coverage":
                match = match + cov.T[:, :, None] * cov_w
            scores = (np.tanh(match) @ p["v"].reshape(E)).T  # N × S
        if enc_lengths is not None:
            masked = np.arange(S)[None, :] >= np.asarray(enc_lengths)[:, None]
            scores = np.where(masked, -np.inf, scores)
        alpha = softmax(scores, axis=1)
        ctx = np.einsum("ns,sne->ne", alpha, enc)
        cov = cov + alpha
        out["h_all"].append(h)
        out["c_all"].append(c)
        out["ctx_all"].append(ctx)
        out["cov_all"].append(cov)
    return {k: np.stack(v) for k, v in out.items()}
