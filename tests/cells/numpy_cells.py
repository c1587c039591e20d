"""Independent, unrolled NumPy references for the recurrent cells.

Written from the papers' equations, not from caffe2rnn: a plain Python loop
over time, with the LSTM's backward pass through time derived by hand. The
tests compare caffe2rnn's RecurrentNetwork results with these.

Conventions: x is T × N × D; states are N × H; gates are ordered
input, forget, output, candidate (i, f, o, g), as Caffe2's LSTMUnit; a step
t is *valid* for row n iff ``t < seq_lengths[n]``; an invalid step carries
the previous state through (or zeros, with ``drop_states``).
"""

import numpy as np

from caffe2rnn import gradient_checker


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def _split(a):
    h = a.shape[-1] // 4
    return a[:, :h], a[:, h : 2 * h], a[:, 2 * h : 3 * h], a[:, 3 * h :]


def lstm_forward(
    x, h0, c0, w_x, b_x, w_h, b_h, seq_lengths, forget_bias=0.0, drop_states=False, gate_fn=None
):
    """Unrolled LSTM. Returns dict with h_all, c_all (T × N × H) and a cache.

    ``gate_fn(t, x_proj_t, h_prev)`` may replace the usual pre-activation
    ``x_proj_t + h_prev W_hᵀ + b_h`` (MILSTM uses it).
    """
    T, N, _ = x.shape
    H = w_h.shape[1]
    h = np.broadcast_to(h0.reshape(-1, H), (N, H)).copy()
    c = np.broadcast_to(c0.reshape(-1, H), (N, H)).copy()
    x_proj = x @ w_x.T + b_x
    h_all, c_all, cache = [], [], []
    for t in range(T):
        if gate_fn is None:
            a = x_proj[t] + h @ w_h.T + b_h
        else:
            a = gate_fn(t, x_proj[t], h)
        ai, af, ao, ag = _split(a)
        i, f, o, g = sigmoid(ai), sigmoid(af + forget_bias), sigmoid(ao), np.tanh(ag)
        c_new = f * c + i * g
        h_new = o * np.tanh(c_new)
        valid = (t < np.asarray(seq_lengths)).reshape(N, 1)
        keep_h = np.zeros_like(h) if drop_states else h
        keep_c = np.zeros_like(c) if drop_states else c
        cache.append(dict(h_prev=h, c_prev=c, i=i, f=f, o=o, g=g, c_new=c_new, valid=valid))
        h = np.where(valid, h_new, keep_h)
        c = np.where(valid, c_new, keep_c)
        h_all.append(h)
        c_all.append(c)
    return dict(h_all=np.stack(h_all), c_all=np.stack(c_all), x_proj=x_proj, cache=cache)


def lstm_backward(x, h0, c0, w_x, w_h, fwd, grads, drop_states=False):
    """Backward pass through time for :func:`lstm_forward`.

    ``grads`` maps any of h_all, h_last, c_all, c_last to the gradient of the
    loss with respect to that output (h_last/c_last: N × H). Returns the
    gradients of x, h0, c0 (shaped like the given h0/c0), w_x, b_x, w_h, b_h.
    """
    T, N, _ = x.shape
    H = w_h.shape[1]
    dh_all = grads.get("h_all", np.zeros((T, N, H)))
    dc_all = grads.get("c_all", np.zeros((T, N, H)))
    dh = np.array(grads.get("h_last", np.zeros((N, H))), dtype=np.float64).reshape(N, H)
    dc = np.array(grads.get("c_last", np.zeros((N, H))), dtype=np.float64).reshape(N, H)
    dx_proj = np.zeros((T, N, 4 * H))
    dw_h = np.zeros_like(w_h)
    db_h = np.zeros(4 * H)
    for t in reversed(range(T)):
        k = fwd["cache"][t]
        dh = dh + dh_all[t]
        dc = dc + dc_all[t]
        m = k["valid"].astype(np.float64)
        tanh_c = np.tanh(k["c_new"])
        dc_new = m * (dc + dh * k["o"] * (1 - tanh_c**2))
        do = m * dh * tanh_c
        di, df, dg = dc_new * k["g"], dc_new * k["c_prev"], dc_new * k["i"]
        da = np.concatenate(
            [
                di * k["i"] * (1 - k["i"]),
                df * k["f"] * (1 - k["f"]),
                do * k["o"] * (1 - k["o"]),
                dg * (1 - k["g"] ** 2),
            ],
            axis=1,
        )
        dx_proj[t] = da
        dw_h += da.T @ k["h_prev"]
        db_h += da.sum(axis=0)
        through = 0.0 if drop_states else (1 - m)
        dh = da @ w_h + through * dh
        dc = dc_new * k["f"] + through * dc
    dx = dx_proj @ w_x
    dw_x = np.einsum("tna,tnd->ad", dx_proj, x)
    db_x = dx_proj.sum(axis=(0, 1))
    return dict(
        x=dx, h0=_shape_like(dh, h0), c0=_shape_like(dc, c0), w_x=dw_x, b_x=db_x, w_h=dw_h, b_h=db_h
    )


def _shape_like(grad, init):
    if init.ndim == 1:  # a 1-D initial state was repeated over the batch
        return grad.sum(axis=0)
    return grad.reshape(init.shape)


def milstm_forward(x, h0, c0, w_x, b_x, w_h, b_h, alpha, beta1, beta2, b, seq_lengths, **kw):
    """Multiplicative-integration LSTM (arXiv:1606.06630).

    Pre-activation ``α⊙Wx⊙Uh + β1⊙Uh + β2⊙Wx + b`` with ``Wx`` the input
    projection (with its bias) and ``Uh = h W_hᵀ + b_h``.
    """

    def gate_fn(t, wx, h):
        uh = h @ w_h.T + b_h
        return alpha * wx * uh + beta1 * uh + beta2 * wx + b

    return lstm_forward(x, h0, c0, w_x, b_x, w_h, b_h, seq_lengths, gate_fn=gate_fn, **kw)


def softmax(z, axis=-1):
    e = np.exp(z - z.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def attention_lstm_forward(x, h0, c0, ctx0, enc, seq_lengths, p, recurrent=False):
    """LSTM decoder with additive attention over ``enc`` (S × N × E).

    Per step: gates from ``[h_{t-1}, ctx_{t-1}]``; the new hidden state ``h_t``
    attends: ``e_j = v · tanh(W_e s_j + b_e + W_h h_t + b_h' [+ W_c ctx_{t-1} + b_c])``,
    ``α = softmax_j(e)``, ``ctx_t = Σ_j α_j s_j``. Returns h_all, c_all, ctx_all.
    """
    T, N, _ = x.shape
    H = h0.shape[-1]
    E = enc.shape[-1]
    h = np.broadcast_to(h0.reshape(-1, H), (N, H)).copy()
    c = np.broadcast_to(c0.reshape(-1, H), (N, H)).copy()
    ctx = np.broadcast_to(ctx0.reshape(-1, E), (N, E)).copy()
    x_proj = x @ p["w_x"].T + p["b_x"]
    weighted_enc = enc @ p["w_enc"].T + p["b_enc"]  # S × N × E
    out = {"h_all": [], "c_all": [], "ctx_all": []}
    for t in range(T):
        a = x_proj[t] + np.concatenate([h, ctx], axis=1) @ p["w_g"].T + p["b_g"]
        ai, af, ao, ag = _split(a)
        i, f, o, g = sigmoid(ai), sigmoid(af), sigmoid(ao), np.tanh(ag)
        c_new = f * c + i * g
        h_new = o * np.tanh(c_new)
        valid = (t < np.asarray(seq_lengths)).reshape(N, 1)
        h_next = np.where(valid, h_new, h)
        c = np.where(valid, c_new, c)
        match = weighted_enc + (h_next @ p["w_dec"].T + p["b_dec"])
        if recurrent:
            match = match + (ctx @ p["w_ctx"].T + p["b_ctx"])
        scores = np.tanh(match) @ p["v"].reshape(E)  # S × N
        alpha = softmax(scores.T, axis=1)  # N × S
        ctx = np.einsum("ns,sne->ne", alpha, enc)
        h = h_next
        out["h_all"].append(h)
        out["c_all"].append(c)
        out["ctx_all"].append(ctx)
    return {k: np.stack(v) for k, v in out.items()}


def numeric_gradient(f, x, eps=1e-6):
    """Central-difference gradient of the scalar function ``f()`` (no argument:
    it reads ``x`` through a closure) w.r.t. ``x``, perturbed in place and
    restored (:func:`caffe2rnn.gradient_checker.numeric_gradient`)."""
    return gradient_checker.numeric_gradient(lambda _: f(), x, eps)
