"""e^x, σ and tanh (caffe2rnn/kernels/activations.py, _ext/_activations.pxi):
both paths give the same bits on every input — NaNs with their payloads,
infinities, zeros of either sign, denormals, the clamp's edges, random bit
patterns — and e^x is within an ulp of the exact value; bad arguments are
refused alike."""

import numpy as np
import pytest

from caffe2rnn import errors
from caffe2rnn.kernels import activations as PY

CY = pytest.importorskip("caffe2rnn._ext.activations")
FUNCTIONS = ("exp", "sigmoid", "tanh")
BITS = {np.float32: np.uint32, np.float64: np.uint64}


def inputs(dtype, count=200_000, seed=0):
    rng = np.random.RandomState(seed)
    bits = BITS[dtype]
    special = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 5e-324, -5e-324]
    special += [88.0, 88.0001, -87.0, -87.0001, 709.0, 709.1, -708.0, -708.1, 1e30, -1e30]
    special += [np.finfo(dtype).max, np.finfo(dtype).tiny, -np.finfo(dtype).tiny]
    nbytes = count * np.dtype(dtype).itemsize
    random_bits = np.frombuffer(rng.bytes(nbytes), dtype=bits).view(dtype)  # NaNs included
    scaled = [(rng.standard_normal(count) * s).astype(dtype) for s in (0.01, 1, 10, 100, 1000)]
    with np.errstate(over="ignore"):
        special = np.array(special).astype(dtype)
    return np.concatenate([special, random_bits] + scaled)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", FUNCTIONS)
def test_both_paths_give_the_same_bits(name, dtype):
    x = inputs(dtype)
    want, got = np.empty_like(x), np.empty_like(x)
    with np.errstate(all="raise"):  # neither path reports anything
        getattr(PY, name)(x, want)
        getattr(CY, name)(x, got)
    bits = BITS[dtype]
    assert np.array_equal(want.view(bits), got.view(bits))


@pytest.mark.parametrize("name", FUNCTIONS)
def test_in_place_is_the_same_as_apart(name):
    x = inputs(np.float32, count=1000)
    apart = np.empty_like(x)
    getattr(CY, name)(x, apart)
    for path in (PY, CY):
        y = x.copy()
        getattr(path, name)(y, y)
        assert np.array_equal(y.view(np.uint32), apart.view(np.uint32))


@pytest.mark.parametrize("dtype, ulps", [(np.float32, 1.0), (np.float64, 2.0)])
def test_exp_is_within_an_ulp_or_two(dtype, ulps):
    lo, hi = (-87.0, 88.0) if dtype == np.float32 else (-700.0, 700.0)
    x = np.linspace(lo, hi, 400_001).astype(dtype)
    got = CY.exp(x, np.empty_like(x))
    exact = np.exp(x.astype(np.longdouble))
    err = np.abs(got.astype(np.longdouble) - exact) / np.spacing(exact.astype(dtype))
    assert float(err.max()) < ulps


def test_sigmoid_and_tanh_match_their_formulas():
    x = np.linspace(-30, 30, 100_001)
    np.testing.assert_allclose(CY.sigmoid(x, np.empty_like(x)), 1 / (1 + np.exp(-x)), rtol=1e-14)
    np.testing.assert_allclose(CY.tanh(x, np.empty_like(x)), np.tanh(x), atol=1e-15)
    x32 = x.astype(np.float32)
    np.testing.assert_allclose(CY.tanh(x32, np.empty_like(x32)), np.tanh(x), atol=3e-7)
    # saturation: e^x stays finite, σ and tanh reach their limits without a warning
    with np.errstate(all="raise"):
        big = np.array([100.0, 1e4, np.inf, -100.0, -1e4, -np.inf], np.float32)
        assert np.isfinite(CY.exp(big, np.empty_like(big))).all()
        np.testing.assert_array_equal(CY.tanh(big, np.empty_like(big)), [1, 1, 1, -1, -1, -1])
        np.testing.assert_array_equal(CY.sigmoid(-big[:3], np.empty(3, np.float32)) < 1e-37, True)


@pytest.mark.parametrize("name", FUNCTIONS)
def test_bad_arguments_are_refused_alike(name):
    x = np.ones(6, np.float32)
    cases = [
        (x.astype(np.int32), np.empty(6, np.float32)),
        (x, np.empty(6, np.float64)),
        (x, np.empty(5, np.float32)),
        (x[::2], np.empty(3, np.float32)),
        (x, np.empty(6, np.float32)[::-1]),
        (None, np.empty(6, np.float32)),
    ]
    overlapping = np.ones(8, np.float32)
    cases.append((overlapping[:6], overlapping[2:]))
    readonly = np.empty(6, np.float32)
    readonly.flags.writeable = False
    cases.append((x, readonly))
    for args in cases:
        with pytest.raises(errors.EnforceNotMet) as py:
            getattr(PY, name)(*args)
        with pytest.raises(errors.EnforceNotMet) as cy:
            getattr(CY, name)(*args)
        assert type(py.value) is type(cy.value) and str(py.value) == str(cy.value)
