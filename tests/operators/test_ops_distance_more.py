"""L1Distance (per row from E6, one sum in E5), CosineSimilarity and
DotProductWithPadding, against NumPy formulas; gradients by finite differences."""

import numpy as np
import pytest
from ops_testing import check_gradients, gradient_of, random, run1, run_op

from caffe2rnn import eras
from caffe2rnn.errors import ArgumentError, ShapeError


def _apart(shape):
    """X, Y whose elements differ by at least 0.1 (away from |x - y|'s kink)."""
    x = random(shape, 1, np.float64)
    y = x + np.where(random(shape, 2, np.float64) > 0, 1, -1) * (0.1 + np.abs(random(shape, 3)))
    return x, y


@pytest.mark.parametrize("shape", [(4, 3), (2, 3, 2), (5,)])
def test_l1_distance_per_row_in_e6_one_sum_in_e5(shape):
    x, y = _apart(shape)
    rows = np.abs(x - y).reshape(shape[0], -1).sum(axis=1)
    with eras.use("E6"):
        np.testing.assert_allclose(run1("L1Distance", {"X": x, "Y": y}), rows)
    with eras.use("E5"):
        np.testing.assert_allclose(run1("L1Distance", {"X": x, "Y": y}), [rows.sum()])


@pytest.mark.parametrize("era", ["E5", "E6"])
@pytest.mark.parametrize("shape", [(4, 3), (2, 3, 2)])
def test_l1_distance_gradients(era, shape):
    x, y = _apart(shape)
    with eras.use(era):
        check_gradients("L1Distance", {"X": x, "Y": y}, ["Z"])


def test_l1_distance_gradient_is_zero_at_a_tie():
    x = np.array([[1.0, 2.0]])
    dz = np.array([3.0])
    ws = run_op("L1DistanceGradient", {"X": x, "Y": x, "dZ": dz}, ["dX", "dY"])
    np.testing.assert_array_equal(ws.fetch("dX"), [[0.0, 0.0]])
    with eras.use("E5"), pytest.raises(ShapeError, match=r"input 2 \('dZ'\).*expected \(1,\)"):
        run_op("L1DistanceGradient", {"X": x, "Y": x, "dZ": np.ones(2)}, ["dX", "dY"])


@pytest.mark.parametrize("shape", [(4, 3), (2, 3, 2), (5,)])
def test_cosine_similarity(shape):
    x, y = random(shape, 1, np.float64), random(shape, 2, np.float64)
    x2, y2 = x.reshape(shape[0], -1), y.reshape(shape[0], -1)
    expected = (x2 * y2).sum(1) / np.sqrt(
        np.maximum((x2**2).sum(1), 1e-12) * np.maximum((y2**2).sum(1), 1e-12)
    )
    np.testing.assert_allclose(run1("CosineSimilarity", {"X": x, "Y": y}), expected)
    check_gradients("CosineSimilarity", {"X": x, "Y": y}, ["Z"])


def test_cosine_similarity_of_a_zero_row_is_zero():
    x = np.zeros((2, 3), np.float32)
    y = random((2, 3), 2)
    np.testing.assert_array_equal(run1("CosineSimilarity", {"X": x, "Y": y}), [0, 0])


def _padded_reference(x, y, pad_value, replicate):
    n = x.shape[0]
    x2, y2 = x.reshape(n, -1), y.reshape(n, -1)
    short, long = (x2, y2) if x2.shape[1] <= y2.shape[1] else (y2, x2)
    if replicate:
        repeats = long.shape[1] // short.shape[1]
        return (np.tile(short, (1, repeats)) * long[:, : repeats * short.shape[1]]).sum(1)
    padded = np.full(long.shape, pad_value)
    padded[:, : short.shape[1]] = short
    return (padded * long).sum(1)


@pytest.mark.parametrize("dx, dy", [(3, 5), (5, 3), (4, 4), (2, 6), (6, 3)])
@pytest.mark.parametrize("replicate", [False, True])
def test_dot_product_with_padding(dx, dy, replicate):
    x, y = random((3, dx), 1, np.float64), random((3, dy), 2, np.float64)
    args = dict(pad_value=0.7, replicate=replicate)
    z = run1("DotProductWithPadding", {"X": x, "Y": y}, **args)
    np.testing.assert_allclose(z, _padded_reference(x, y, 0.7, replicate))
    if not replicate or max(dx, dy) % min(dx, dy) == 0:
        check_gradients("DotProductWithPadding", {"X": x, "Y": y}, ["Z"], **args)


def test_dot_product_with_padding_gradient_maker_passes_the_arguments():
    """distance_op.cc (042e8ede4): pad_value and replicate, then the forward arguments copied
    (the maker leaves CopyArguments on), so pad_value appears twice, with one value."""
    ops, _ = gradient_of("DotProductWithPadding", ["X", "Y"], ["Z"], pad_value=0.5)
    assert ops == [
        (
            "DotProductWithPaddingGradient",
            "",
            ["X", "Y", "Z_grad"],
            ["X_grad", "Y_grad"],
            [("pad_value", 0.5), ("replicate", 0), ("pad_value", 0.5)],
            True,
        )
    ]


def test_dot_product_with_padding_refusals():
    x, y, dz = random((2, 2)), random((2, 3)), random((2,))
    with pytest.raises(ArgumentError, match="must divide one another"):
        run_op("DotProductWithPaddingGradient", {"X": x, "Y": y, "dZ": dz}, ["a", "b"], replicate=1)
    with pytest.raises(ArgumentError, match="row of length 0"):
        run1("DotProductWithPadding", {"X": y, "Y": random((2, 0))}, replicate=1)
    # An empty X has no rows at all (Caffe2's N = 0), whatever Y holds.
    assert run1("DotProductWithPadding", {"X": random((2, 0)), "Y": y}).shape == (0,)
    with pytest.raises(ShapeError, match=r"input 1 \('Y'\)"):
        run1("DotProductWithPadding", {"X": x, "Y": random((3, 2))})


def test_dot_product_of_an_empty_x_has_no_rows():
    """DotProductOp / DotProductGradientOp (distance_op.cc at 0cdd09da6 and 042e8ede4):
    ``if (X.size() > 0) { N = X.ndim() > 0 ? X.dim32(0) : 1; ... } else { N = 0; D = 0; }``
    then ``result->Resize(N)``; the gradient enforces ``dDot.dim32(0) == N``."""
    from caffe2rnn import core
    from caffe2rnn.runtime import Workspace

    ws = Workspace()
    ws.feed("x", np.zeros((3, 0), np.float32))
    ws.feed("y", np.zeros((3, 0), np.float32))
    ws.run_operator_once(core.CreateOperator("DotProduct", ["x", "y"], ["z"]))
    assert ws.fetch("z").shape == (0,)
    ws.feed("dz", np.zeros(0, np.float32))
    ws.run_operator_once(core.CreateOperator("DotProductGradient", ["x", "y", "dz"], ["dx", "dy"]))
    assert ws.fetch("dx").shape == (3, 0) and ws.fetch("dy").shape == (3, 0)
