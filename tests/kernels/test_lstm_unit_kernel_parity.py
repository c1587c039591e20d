"""The LSTM unit kernels: compiled and Python paths bit-identical, and checked.

The compiled kernel computes a row's gates, cell and hidden state in one
vectorised loop (σ and tanh from ``_ext/_activations.pxi``); the twin runs the
same IEEE operations with NumPy ufuncs. Their
results must be equal bit for bit (not merely close), for both dtypes, at
saturating inputs, with finished rows, ``forget_bias`` and ``drop_states``.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from caffe2rnn import errors, kernels
from caffe2rnn.kernels import checked

PY = kernels.implementation("python")
CY = pytest.importorskip("caffe2rnn._ext.lstm_unit") and kernels.implementation("cython")


def step_arrays(seed, n, d, dtype, scale):
    rng = np.random.RandomState(seed)

    def a(*shape):
        return (rng.standard_normal(shape) * scale).astype(dtype)

    return dict(
        h_prev=a(n, d),
        c_prev=a(n, d),
        gates=a(n, 4 * d),
        dh=a(n, d),
        dc=a(n, d),
        seq_lengths=rng.randint(0, 5, n).astype(np.int32),
    )


def run_path(path, x, t, forget_bias, drop_states, with_hidden):
    n, d = x["c_prev"].shape
    dtype = x["c_prev"].dtype
    h_prev = x["h_prev"] if with_hidden else None
    h, c = np.full((n, d), np.nan, dtype), np.full((n, d), np.nan, dtype)
    path.lstm_unit_forward(
        h_prev, x["c_prev"], x["gates"], x["seq_lengths"], t, forget_bias, drop_states, h, c
    )
    dh_prev = np.full((n, d), np.nan, dtype) if with_hidden else None
    dc_prev, dgates = np.full((n, d), np.nan, dtype), np.full((n, 4 * d), np.nan, dtype)
    path.lstm_unit_backward(
        x["c_prev"],
        x["gates"],
        x["seq_lengths"],
        t,
        c,
        x["dh"],
        x["dc"],
        forget_bias,
        drop_states,
        dh_prev,
        dc_prev,
        dgates,
    )
    return [h, c, dc_prev, dgates] + ([dh_prev] if with_hidden else [])


@settings(max_examples=40, deadline=None)
@given(
    n=st.integers(1, 9),
    d=st.integers(1, 40),
    t=st.integers(0, 4),
    dtype=st.sampled_from([np.float32, np.float64]),
    scale=st.sampled_from([0.1, 1.0, 5.0, 60.0, 400.0]),
    forget_bias=st.sampled_from([0.0, 1.0, -0.3]),
    drop_states=st.booleans(),
    with_hidden=st.booleans(),
    seed=st.integers(0, 999),
)
def test_both_paths_are_bit_identical(
    n, d, t, dtype, scale, forget_bias, drop_states, with_hidden, seed
):
    x = step_arrays(seed, n, d, dtype, scale)
    # NumPy's default would warn on these: neither path may leak a warning.
    with np.errstate(over="raise", invalid="raise", divide="raise"):
        expected = run_path(PY, x, t, forget_bias, drop_states, with_hidden)
        got = run_path(CY, x, t, forget_bias, drop_states, with_hidden)
    for e, g in zip(expected, got):
        assert e.dtype == g.dtype
        assert np.array_equal(e.view(np.uint8), g.view(np.uint8))  # bits, NaN or not


def test_forward_matches_the_lstm_formula():
    x = step_arrays(1, 4, 6, np.float64, 2.0)
    x["seq_lengths"][:] = 9
    h, c = run_path(CY, x, 0, 0.5, False, True)[:2]
    i, f, o, g = np.split(x["gates"], 4, axis=1)

    def sigmoid(v):
        return 1 / (1 + np.exp(-v))

    c_ref = sigmoid(f + 0.5) * x["c_prev"] + sigmoid(i) * np.tanh(g)
    np.testing.assert_allclose(c, c_ref, rtol=1e-13)
    np.testing.assert_allclose(h, sigmoid(o) * np.tanh(c_ref), rtol=1e-12)


def test_checked_entry_points_name_the_problem(kernel_path):
    x = step_arrays(0, 3, 2, np.float32, 1.0)
    h, c = np.empty((3, 2), np.float32), np.empty((3, 2), np.float32)
    args = (x["seq_lengths"], 0, 0.0, False)
    with pytest.raises(errors.ShapeError, match="lstm_unit_forward: expected gates of 3 x 8"):
        checked.lstm_unit_forward(None, x["c_prev"], x["gates"][:, :4].copy(), *args, h, c)
    with pytest.raises(errors.DTypeError, match="float32 or float64 tensors of one type"):
        checked.lstm_unit_forward(None, x["c_prev"], x["gates"].astype(np.float64), *args, h, c)
    with pytest.raises(errors.EnforceNotMet, match="C-contiguous"):
        checked.lstm_unit_forward(
            None, x["c_prev"], x["gates"], *args, np.empty((2, 3), np.float32).T, c
        )
    with pytest.raises(errors.DTypeError, match="seq_lengths must be a contiguous int32"):
        checked.lstm_unit_forward(
            None, x["c_prev"], x["gates"], x["seq_lengths"].astype(np.int64), 0, 0.0, False, h, c
        )
    with pytest.raises(errors.ShapeError, match="like the gates"):
        checked.lstm_unit_backward(
            x["c_prev"],
            x["gates"],
            x["seq_lengths"],
            0,
            c,
            x["dh"],
            x["dc"],
            0.0,
            False,
            None,
            h,
            np.empty((3, 4), np.float32),
        )


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_both_paths_agree_on_nan_inf_and_any_bit_pattern(dtype):
    """Random bit patterns (NaNs with payloads, infinities, denormals) in
    every input: the same bits out of both paths."""
    rng = np.random.RandomState(7)
    n, d = 6, 33
    bits = np.uint32 if dtype == np.float32 else np.uint64

    def a(*shape):
        size = int(np.prod(shape)) * np.dtype(dtype).itemsize
        return np.frombuffer(rng.bytes(size), dtype=bits).view(dtype).reshape(shape).copy()

    x = dict(h_prev=a(n, d), c_prev=a(n, d), gates=a(n, 4 * d), dh=a(n, d), dc=a(n, d))
    x["seq_lengths"] = rng.randint(0, 3, n).astype(np.int32)
    for forget_bias in (0.0, 1.0):
        for t in (0, 2):
            with np.errstate(all="ignore"):
                expected = run_path(PY, x, t, forget_bias, False, True)
            got = run_path(CY, x, t, forget_bias, False, True)
            for e, g in zip(expected, got):
                assert np.array_equal(e.view(bits), g.view(bits))
