"""numeric_gradient: the one central-difference loop (gradient checker, cells, history, demo)."""

import numpy as np

from caffe2rnn.gradient_checker import numeric_gradient


def f(x):
    return float(np.sum(np.sin(x) * x))


def test_matches_the_analytic_gradient_and_restores_x():
    x = np.random.RandomState(0).standard_normal((3, 4))
    before = x.copy()
    np.testing.assert_allclose(numeric_gradient(f, x), np.cos(x) * x + np.sin(x), atol=1e-8)
    np.testing.assert_array_equal(x, before)


def test_strided_input_is_perturbed_in_place():
    base = np.random.RandomState(1).standard_normal((4, 6))
    x = base[:, ::2]  # not contiguous: a reshape would perturb a copy
    np.testing.assert_allclose(numeric_gradient(f, x), np.cos(x) * x + np.sin(x), atol=1e-8)


def test_only_the_given_flat_indices():
    x = np.linspace(-1, 1, 6)
    g = numeric_gradient(f, x, indices=[1, 4])
    expected = np.cos(x) * x + np.sin(x)
    np.testing.assert_allclose(g[[1, 4]], expected[[1, 4]], atol=1e-8)
    assert not g[[0, 2, 3, 5]].any()
