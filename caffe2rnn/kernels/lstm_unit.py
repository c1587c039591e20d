"""LSTM unit: the element-wise half of one LSTM step, forward and backward.

Twin of ``_ext/lstm_unit.pyx`` (same checks, bit-identical results).

``LSTMUnit`` turns the ``4D`` gate pre-activations of each batch row into
the new cell and hidden states; ``LSTMUnitGradient`` runs it backwards. Gate
blocks along the last axis: **input i, forget f, output o, candidate g**::

    i = σ(x_i)   f = σ(x_f + forget_bias)   o = σ(x_o)   g = tanh(x_g)
    c = f·c_prev + i·g                      h = o·tanh(c)

    h_prev, c_prev, c, h  N x D     gates  N x 4D     seq_lengths  N (int32)

Rows whose sequence has ended (``t >= seq_lengths[n]``) carry the previous
state through (zeros with ``drop_states``; ``h = 0`` when ``h_prev`` is None).

Like Caffe2 the maths runs in the input dtype, with σ(x) = 1 / (1 + e^(−x))
and tanh(x) = 2σ(2x) − 1. **Exactness contract with ``_ext/lstm_unit.pyx``**:
every element goes through the same IEEE operations in the same order (the
grouping is spelled out in each formula below), and σ and tanh are the
operations of :mod:`caffe2rnn.kernels.activations` — e^z included, written
out as multiplies and adds rather than taken from a library, so that the
compiled kernel can compute them in the same vectorised loop as the rest of
the step and still give the twin's bits
(``tests/kernels/test_lstm_unit_kernel_parity.py`` checks it).
"""

import numpy as np

from . import contract
from .activations import _exp, _tanh


def _gate_values(gates, forget_bias):
    """i, f, o, g as one contiguous (4, N, D) array: σ of the first three
    blocks, tanh of the last — with one e^z over all four (the same
    operations per element as :func:`~.activations._sigmoid` and
    :func:`~.activations._tanh`, in fewer NumPy calls)."""
    n, d4 = gates.shape
    act = np.empty((4, n, d4 // 4), dtype=gates.dtype)
    np.copyto(act, gates.reshape(n, 4, d4 // 4).transpose(1, 0, 2))
    act[1] += forget_bias  # always (+0 changes nothing σ can see)
    with np.errstate(all="ignore"):  # as activations: nothing is reported
        np.negative(act[:3], out=act[:3])  # σ(x) = 1 / (e^(−x) + 1)
        np.multiply(act[3], -2, out=act[3])  # tanh(x) = 2 / (e^(x·−2) + 1) − 1
        _exp(act, act)
        act += 1
        np.reciprocal(act, out=act)
        act[3] += act[3]
        act[3] -= 1
    return act


def _finished_rows(seq_lengths, t):
    """(N, 1) mask of the rows whose sequence has ended, or None if none has."""
    if seq_lengths.size and seq_lengths.min() <= t:
        return (seq_lengths <= t)[:, None]
    return None


def _check_forward(k, h_prev, c_prev, gates, seq_lengths, t, forget_bias, h_out, c_out):
    """The compiled kernel's checks, in its order: arrays, dtypes, numbers, sizes, overlap."""
    contract.array(c_prev, k, "c_prev")
    contract.matrix(k, "c_prev", c_prev)
    contract.array(gates, k, "gates")
    contract.array(seq_lengths, k, "seq_lengths", "int32")
    if h_prev is not None:
        contract.array(h_prev, k, "h_prev")
    contract.array(h_out, k, "h_out", writable=True)
    contract.array(c_out, k, "c_out", writable=True)
    for name, a in (("gates", gates), ("h_prev", h_prev), ("h_out", h_out), ("c_out", c_out)):
        if a is not None:
            contract.same_dtype(k, "c_prev", c_prev, name, a)
    t = contract.index(t, k, "t")
    forget_bias = contract.real(forget_bias, k, "forget_bias")
    n, d = c_prev.shape
    contract.same_size(k, "gates", gates, 4 * n * d)
    contract.same_size(k, "seq_lengths", seq_lengths, n)
    for name, a in (("h_prev", h_prev), ("h_out", h_out), ("c_out", c_out)):
        if a is not None:
            contract.same_size(k, name, a, n * d)
    contract.no_overlap(k, *forward_arrays(h_prev, c_prev, gates, seq_lengths, h_out, c_out))
    return t, forget_bias


def forward_arrays(h_prev, c_prev, gates, seq_lengths, h_out, c_out):
    """``(written, read)``: the forward kernel's (name, array) pairs, as
    :func:`~caffe2rnn.kernels.contract.no_overlap` takes them."""
    written = [("h_out", h_out), ("c_out", c_out)]
    read = [("h_prev", h_prev), ("c_prev", c_prev), ("gates", gates), ("seq_lengths", seq_lengths)]
    return written, read


def backward_arrays(c_prev, gates, seq_lengths, c, dh, dc, dh_prev_out, dc_prev_out, dgates_out):
    """``(written, read)``: the backward kernel's (name, array) pairs."""
    written = [("dh_prev_out", dh_prev_out), ("dc_prev_out", dc_prev_out)]
    written.append(("dgates_out", dgates_out))
    read = [("c_prev", c_prev), ("gates", gates), ("seq_lengths", seq_lengths)]
    read += [("c", c), ("dh", dh), ("dc", dc)]
    return written, read


def lstm_unit_forward(
    h_prev, c_prev, gates, seq_lengths, t, forget_bias, drop_states, h_out, c_out
):
    """One LSTM step into ``h_out``, ``c_out`` (N x D; must not overlap the inputs).

    ``c = (f·c_prev) + (i·g)``, ``h = o·tanh(c)``; ``h_prev`` may be None
    (Caffe2's 4-input form: finished rows then get h = 0).
    """
    t, forget_bias = _check_forward(
        "lstm_unit_forward", h_prev, c_prev, gates, seq_lengths, t, forget_bias, h_out, c_out
    )
    drop_states = bool(drop_states)
    gates, h_out, c_out = (
        gates.reshape(c_prev.shape[0], -1),
        h_out.reshape(c_prev.shape),
        c_out.reshape(c_prev.shape),
    )
    if h_prev is not None:
        h_prev = h_prev.reshape(c_prev.shape)
    with np.errstate(over="ignore"):
        i, f, o, g = _gate_values(gates, forget_bias)
        np.multiply(f, c_prev, out=c_out)
        np.multiply(i, g, out=i)
        c_out += i
        _tanh(c_out, f)
    np.multiply(o, f, out=h_out)
    rows = _finished_rows(seq_lengths, t)
    if rows is not None:
        np.copyto(c_out, 0 if drop_states else c_prev, where=rows)
        np.copyto(h_out, 0 if drop_states or h_prev is None else h_prev, where=rows)


def _check_backward(
    k, c_prev, gates, seq_lengths, t, c, dh, dc, forget_bias, dh_prev_out, dc_prev_out, dgates_out
):
    """The compiled kernel's checks, in its order (see :func:`_check_forward`)."""
    contract.array(c_prev, k, "c_prev")
    contract.matrix(k, "c_prev", c_prev)
    contract.array(gates, k, "gates")
    contract.array(seq_lengths, k, "seq_lengths", "int32")
    contract.array(c, k, "c")
    contract.array(dh, k, "dh")
    contract.array(dc, k, "dc")
    if dh_prev_out is not None:
        contract.array(dh_prev_out, k, "dh_prev_out", writable=True)
    contract.array(dc_prev_out, k, "dc_prev_out", writable=True)
    contract.array(dgates_out, k, "dgates_out", writable=True)
    arrays = [
        ("gates", gates),
        ("c", c),
        ("dh", dh),
        ("dc", dc),
        ("dh_prev_out", dh_prev_out),
        ("dc_prev_out", dc_prev_out),
        ("dgates_out", dgates_out),
    ]
    for name, a in arrays:
        if a is not None:
            contract.same_dtype(k, "c_prev", c_prev, name, a)
    t = contract.index(t, k, "t")
    forget_bias = contract.real(forget_bias, k, "forget_bias")
    n, d = c_prev.shape
    contract.same_size(k, "gates", gates, 4 * n * d)
    contract.same_size(k, "seq_lengths", seq_lengths, n)
    for name, a in arrays[1:]:
        if a is not None:
            contract.same_size(k, name, a, (4 if name == "dgates_out" else 1) * n * d)
    arrays = backward_arrays(
        c_prev, gates, seq_lengths, c, dh, dc, dh_prev_out, dc_prev_out, dgates_out
    )
    contract.no_overlap(k, *arrays)
    return t, forget_bias


def lstm_unit_backward(
    c_prev,
    gates,
    seq_lengths,
    t,
    c,
    dh,
    dc,
    forget_bias,
    drop_states,
    dh_prev_out,
    dc_prev_out,
    dgates_out,
):
    """Gradients of one step into ``dh_prev_out`` (or None), ``dc_prev_out``,
    ``dgates_out`` (N x 4D). ``c`` is the forward cell output; the gate values
    are recomputed from ``gates``. For a running row::

        c_term  = (((1 − tanh²c)·o)·dh) + dc     dc_prev = c_term·f   dh_prev = 0
        d_o = dh·(((1 − o)·o)·tanh c)            d_i = c_term·(((1 − i)·i)·g)
        d_f = c_term·(((1 − f)·f)·c_prev)        d_g = c_term·((1 − g·g)·i)

    (h_prev reaches the loss only through the gates, so its gradient comes
    from the FC gradient.) A finished row passes ``dh``/``dc`` through (zeros
    with ``drop_states``) and has zero gate gradients.
    """
    t, forget_bias = _check_backward(
        "lstm_unit_backward",
        c_prev,
        gates,
        seq_lengths,
        t,
        c,
        dh,
        dc,
        forget_bias,
        dh_prev_out,
        dc_prev_out,
        dgates_out,
    )
    drop_states = bool(drop_states)
    n, d = c_prev.shape
    gates, c, dh, dc = gates.reshape(n, 4 * d), c.reshape(n, d), dh.reshape(n, d), dc.reshape(n, d)
    dc_prev_out = dc_prev_out.reshape(n, d)
    if dh_prev_out is not None:
        dh_prev_out = dh_prev_out.reshape(n, d)
    with np.errstate(over="ignore"):
        i, f, o, g = _gate_values(gates, forget_bias)
        tanh_c = np.empty_like(c_prev)
        _tanh(c, tanh_c)
    c_term = np.empty_like(c_prev)
    slope = np.empty_like(c_prev)  # the local derivative of each gate
    di, df, do, dg = dgates_out.reshape(n, 4, d).transpose(1, 0, 2)

    np.multiply(tanh_c, tanh_c, out=c_term)
    np.subtract(1, c_term, out=c_term)
    c_term *= o
    c_term *= dh
    c_term += dc

    np.subtract(1, o, out=slope)
    slope *= o
    slope *= tanh_c
    np.multiply(dh, slope, out=do)

    np.subtract(1, i, out=slope)
    slope *= i
    slope *= g
    np.multiply(c_term, slope, out=di)

    np.subtract(1, f, out=slope)
    slope *= f
    slope *= c_prev
    np.multiply(c_term, slope, out=df)

    np.multiply(g, g, out=slope)
    np.subtract(1, slope, out=slope)
    slope *= i
    np.multiply(c_term, slope, out=dg)

    np.multiply(c_term, f, out=dc_prev_out)
    if dh_prev_out is not None:
        dh_prev_out.fill(0)
    rows = _finished_rows(seq_lengths, t)
    if rows is not None:
        np.copyto(dgates_out, 0, where=rows)
        np.copyto(dc_prev_out, 0 if drop_states else dc, where=rows)
        if dh_prev_out is not None and not drop_states:
            np.copyto(dh_prev_out, dh, where=rows)
