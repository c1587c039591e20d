"""SparseLengthsWeightedSum, LengthsMax and the IndicesInGradient gradients
(caffe2rnn/operators/lengths_reducers.py): forward against loops written here,
gradients against finite differences, the makers per era, refusals naming the
blob and leaving the output as it was."""

import numpy as np
import pytest
from ops_testing import gradient_of, random, run1, run_fails, run_op

from caffe2rnn import core, eras
from caffe2rnn.errors import DTypeError, ShapeError
from caffe2rnn.gradient_checker import assert_gradient_close

LENGTHS = np.array([2, 0, 3, 1], np.int32)


def _weighted_sum_loop(data, weights, indices, lengths):
    out = np.zeros((len(lengths),) + data.shape[1:])
    j = 0
    for k, n in enumerate(lengths):
        for _ in range(n):
            out[k] += weights[j] * data[indices[j]]
            j += 1
    return out


def _max_loop(data, lengths):
    out = np.zeros((len(lengths),) + data.shape[1:])
    start = 0
    for k, n in enumerate(lengths):
        for r in range(start, start + n):
            out[k] = data[r] if r == start else np.maximum(out[k], data[r])
        start += n
    return out


def _weighted_case(seed=0):
    data = random((5, 2, 3), seed)
    indices = np.array([4, 0, 0, 3, 1, 2], np.int64)
    weights = random((6,), seed + 1)
    return data, weights, indices


# --- SparseLengthsWeightedSum ---------------------------------------------------------------
def test_sparse_lengths_weighted_sum_forward():
    data, weights, indices = _weighted_case()
    out = run1("SparseLengthsWeightedSum", {"d": data, "w": weights, "i": indices, "l": LENGTHS})
    np.testing.assert_allclose(out, _weighted_sum_loop(data, weights, indices, LENGTHS), rtol=1e-5)
    assert out.shape == (4, 2, 3) and out.dtype == np.float32


@pytest.mark.parametrize("era", ["E5", "E6", "E7"])
@pytest.mark.parametrize("on_weights", [0, 1])
def test_sparse_lengths_weighted_sum_gradient_maker_per_era(era, on_weights):
    """LengthsOpGetGradient (segment_reduction_op.h): IndicesInGradient from 042e8ede4."""
    with eras.use(era):
        ops, g_input = gradient_of(
            "SparseLengthsWeightedSum", ["d", "w", "i", "l"], ["o"], grad_on_weights=on_weights
        )
    infix = "IndicesInGradient" if era != "E5" else ""
    if on_weights:
        expected = (
            "SparseLengths%sWeightedSumWithMainInputGradient" % infix,
            ["w", "o_grad", "l", "d", "i"],
            ["d_grad_values", "w_grad"],
        )
    else:
        inputs = ["w", "o_grad", "l"] + (["i"] if infix else [])
        expected = ("SparseLengths%sWeightedSumGradient" % infix, inputs, ["d_grad_values"])
    assert [(t, i, o) for t, _, i, o, _, _ in ops] == [expected]
    assert g_input[0] == core.GradientSlice("i", "d_grad_values")
    assert g_input[1] == ("w_grad" if on_weights else None)


def _sparse_gradient_check(op_type, feed, sparse_input, dense_inputs=(), **args):
    """The maker's ops, run on a random dOUTPUT, against central differences of
    ``Σ dOUTPUT · OUTPUT`` (float64); the sparse gradient's values scattered
    onto their indices."""
    names = list(feed)
    op = core.CreateOperator(op_type, names, ["o"], **args)
    ws = run_op(op_type, feed, ["o"], **args)
    dy = np.random.RandomState(5).standard_normal(ws.fetch("o").shape)
    ws.feed("o_grad", dy)
    from caffe2rnn.operators.gradient_maker import get_gradient_for_op

    ops, g_input = get_gradient_for_op(op, ["o_grad"])
    for g in ops:
        ws.run_operator_once(g)

    def loss(name, value):
        return float(np.sum(run1(op_type, dict(feed, **{name: value}), **args) * dy))

    for i in (sparse_input,) + tuple(dense_inputs):
        name, x = names[i], feed[names[i]]
        if i == sparse_input:
            analytic = np.zeros_like(x)
            slice_ = g_input[i]
            np.add.at(analytic, ws.fetch(slice_.indices), ws.fetch(slice_.values))
        else:
            analytic = ws.fetch(g_input[i])
        numeric = np.zeros_like(x)
        for k in range(x.size):
            step = np.zeros(x.size)
            step[k] = 1e-6
            step = step.reshape(x.shape)
            numeric.flat[k] = (loss(name, x + step) - loss(name, x - step)) / 2e-6
        np.testing.assert_allclose(analytic, numeric, rtol=1e-5, atol=1e-7, err_msg=name)


@pytest.mark.parametrize("era", ["E5", "E7"])
@pytest.mark.parametrize("on_weights", [0, 1])
def test_sparse_lengths_weighted_sum_gradients_against_finite_differences(era, on_weights):
    data, weights, indices = _weighted_case(3)
    feed = {
        "d": data.astype(np.float64),
        "w": weights.astype(np.float64),
        "i": indices,
        "l": LENGTHS,
    }
    with eras.use(era):
        _sparse_gradient_check(
            "SparseLengthsWeightedSum",
            feed,
            0,
            (1,) if on_weights else (),
            grad_on_weights=on_weights,
        )


@pytest.mark.parametrize(
    "inputs, error, match",
    [
        ({"i": np.array([0, 5, 1, 2, 3, 4], np.int64)}, ShapeError, "'i'.*Index 1 is out of"),
        ({"l": np.array([2, 0, 3, 2], np.int32)}, ShapeError, "'l'.*sum of lengths values"),
        ({"w": np.ones(5, np.float32)}, ShapeError, "'w'.*same length as indices"),
        ({"w": np.ones((6, 1), np.float32)}, ShapeError, "'w'.*WEIGHT must be a vector"),
        ({"i": np.zeros((6, 1), np.int64)}, ShapeError, "'i'.*INDICES must be a vector"),
        ({"l": np.array([[6]], np.int32)}, ShapeError, "'l'.*LENGTHS must be a vector"),
        ({"l": np.array([2, 0, 3, 1], np.int64)}, DTypeError, "'l'.*int32"),
        ({"w": np.ones(6, np.float64)}, DTypeError, "'w'"),
    ],
)
def test_sparse_lengths_weighted_sum_refusals(inputs, error, match):
    data, weights, indices = _weighted_case()
    feed = {"d": data, "w": weights, "i": indices, "l": LENGTHS}
    feed.update(inputs)
    run_fails("SparseLengthsWeightedSum", feed, error, match)


def test_sparse_lengths_weighted_sum_index_types_per_era():
    data, weights, indices = _weighted_case()
    feed = {"d": data, "w": weights, "i": indices.astype(np.int32), "l": LENGTHS}
    run_fails("SparseLengthsWeightedSum", feed, DTypeError, "'i'.*int64 indices", era="E5")
    ws = run_op("SparseLengthsWeightedSum", feed, ["out"])
    np.testing.assert_allclose(
        ws.fetch("out"), _weighted_sum_loop(data, weights, indices, LENGTHS), rtol=1e-5
    )


def test_weighted_sum_gradient_ops_agree_and_ignore_the_indices():
    """The 3-input (E5's name) and 4-input (IndicesInGradient) ops compute the same
    rows, ``w[j] · dOUT[k]``; the CPU op never reads its INDICES."""
    dy = random((4, 2, 3), 7)
    weights = random((6,), 8)
    expected = dy[np.repeat(np.arange(4), LENGTHS)] * weights[:, None, None]
    three = run1("SparseLengthsWeightedSumGradient", {"w": weights, "g": dy, "l": LENGTHS})
    four = run1(
        "SparseLengthsIndicesInGradientWeightedSumGradient",
        {"w": weights, "g": dy, "l": LENGTHS, "i": np.array(["anything"], object)},
    )
    np.testing.assert_allclose(three, expected, rtol=1e-6)
    np.testing.assert_array_equal(three, four)
    run_fails(
        "SparseLengthsWeightedSumGradient",
        {"w": weights[:5], "g": dy, "l": LENGTHS},
        ShapeError,
        "'w'.*same first dim",
    )
    run_fails(
        "SparseLengthsWeightedSumGradient",
        {"w": weights, "g": dy[:3], "l": LENGTHS},
        ShapeError,
        "'l'.*one length per row",
    )


def test_weighted_sum_with_main_input_gradient_refusals():
    data, weights, indices = _weighted_case()
    dy = random((4, 2, 3), 2)
    feed = {"w": weights, "g": dy, "l": LENGTHS, "d": data, "i": indices}
    outs = ("dd", "dw")
    bad = dict(feed, i=np.array([0, 1, 9, 2, 3, 4], np.int64))
    run_fails(
        "SparseLengthsIndicesInGradientWeightedSumWithMainInputGradient",
        bad,
        ShapeError,
        "'i'.*Index 2 is out of",
        outputs=outs,
    )
    run_fails(
        "SparseLengthsWeightedSumWithMainInputGradient",
        feed,
        ShapeError,
        "needs 2 outputs",
        outputs=("dd",),
    )
    run_fails(
        "SparseLengthsWeightedSumWithMainInputGradient",
        dict(feed, d=random((5, 4), 1)),
        ShapeError,
        "'d'.*rows of 6 elements",
        outputs=outs,
    )


# --- the IndicesInGradient Sum gradients --------------------------------------------------
@pytest.mark.parametrize(
    "op_type", ["SparseLengthsIndicesInGradientSumGradient", "LengthsIndicesInGradientSumGradient"]
)
def test_indices_in_gradient_sum_gradients(op_type):
    dy = random((4, 3), 5)
    out = run1(op_type, {"g": dy, "l": LENGTHS, "i": np.zeros(3, np.int64)})
    np.testing.assert_array_equal(out, dy[np.repeat(np.arange(4), LENGTHS)])
    run_fails(op_type, {"g": dy[:2], "l": LENGTHS, "i": dy}, ShapeError, "'l'")


@pytest.mark.parametrize(
    "era, lengths_type, sparse_type",
    [
        ("E5", "LengthsSumGradient", "SparseLengthsSumGradient"),
        ("E6", "LengthsIndicesInGradientSumGradient", "SparseLengthsIndicesInGradientSumGradient"),
    ],
)
def test_sum_gradient_makers_per_era(era, lengths_type, sparse_type):
    indices_in = era != "E5"
    assert eras.get(era).lengths_gradient_indices == indices_in
    with eras.use(era):
        dense, _ = gradient_of("LengthsSum", ["x", "l"], ["o"])
        sparse, _ = gradient_of("SparseLengthsSum", ["x", "i", "l"], ["o"])
        mean, _ = gradient_of("SparseLengthsMean", ["x", "i", "l"], ["o"])
        x = random((6, 2), 9).astype(np.float64)
        assert_gradient_close(core.CreateOperator("LengthsSum", ["x", "l"], ["o"]), [x, LENGTHS], 0)
        feed = {"x": x, "i": np.array([5, 0, 0, 3, 1, 2], np.int64), "l": LENGTHS}
        _sparse_gradient_check("SparseLengthsSum", feed, 0)
    assert dense[0][:4] == (
        lengths_type,
        "",
        ["o_grad", "l"] + (["x"] if indices_in else []),
        ["x_grad"],
    )
    assert sparse[0][:4] == (
        sparse_type,
        "",
        ["o_grad", "l"] + (["i"] if indices_in else []),
        ["x_grad_values"],
    )
    assert mean[0][0] == "SparseLengthsMeanGradient"  # no GradientNeedIndices for Mean


# --- LengthsMax ---------------------------------------------------------------------------
def test_lengths_max_forward_with_an_empty_range():
    x = random((6, 2, 2), 11)
    out = run1("LengthsMax", {"x": x, "l": LENGTHS})
    np.testing.assert_array_equal(out, _max_loop(x, LENGTHS).astype(np.float32))
    assert not out[1].any()  # the empty range: 0 (Caffe2 left it unwritten)


def test_lengths_max_gradient():
    ops, g_input = gradient_of("LengthsMax", ["x", "l"], ["o"])
    assert [op[:4] for op in ops] == [
        (
            "LengthsMaxWithMainInputAndForwardOutputGradient",
            "",
            ["o", "o_grad", "l", "x"],
            ["x_grad"],
        )
    ]
    assert g_input == ["x_grad", None]
    x = random((6, 3), 12).astype(np.float64)
    assert_gradient_close(core.CreateOperator("LengthsMax", ["x", "l"], ["o"]), [x, LENGTHS], 0)


def test_lengths_max_gradient_goes_to_every_tied_row():
    x = np.array([[1.0], [3.0], [3.0], [2.0]], np.float32)
    lengths = np.array([4], np.int32)
    y = run1("LengthsMax", {"x": x, "l": lengths})
    dx = run1(
        "LengthsMaxWithMainInputAndForwardOutputGradient",
        {"y": y, "g": np.array([[5.0]], np.float32), "l": lengths, "x": x},
    )
    np.testing.assert_array_equal(dx.ravel(), [0, 5, 5, 0])


@pytest.mark.parametrize(
    "lengths, error, match",
    [
        (np.array([2, 0, 3, 2], np.int32), ShapeError, "'l'.*add up to 7.*6 rows"),
        (np.array([[6]], np.int32), ShapeError, "'l'.*LENGTHS must be a vector"),
        (np.array([6], np.int64), DTypeError, "'l'.*int32"),
    ],
)
def test_lengths_max_refusals(lengths, error, match):
    run_fails("LengthsMax", {"x": random((6, 2), 1), "l": lengths}, error, match)


def test_lengths_max_gradient_refusals():
    x = random((6, 2), 1)
    y = run1("LengthsMax", {"x": x, "l": LENGTHS})
    g = np.ones_like(y)
    op = "LengthsMaxWithMainInputAndForwardOutputGradient"
    run_fails(op, {"y": y[:3], "g": g, "l": LENGTHS, "x": x}, ShapeError, "'y'")
    run_fails(op, {"y": y, "g": g[:3], "l": LENGTHS, "x": x}, ShapeError, "'l'.*one length")
    run_fails(op, {"y": y, "g": g, "l": LENGTHS, "x": x[:5]}, ShapeError, "'x'.*at least 6")


def test_no_rows_and_no_ranges():
    """Caffe2's own test feeds DATA with 0 rows and no lengths: empty outputs, no error."""
    x = np.zeros((0, 2, 3), np.float32)
    none = np.zeros(0, np.int32)
    y = run1("LengthsMax", {"x": x, "l": none})
    assert y.shape == (0, 2, 3)
    dx = run1(
        "LengthsMaxWithMainInputAndForwardOutputGradient", {"y": y, "g": y, "l": none, "x": x}
    )
    assert dx.shape == (0, 2, 3)
    ws = run_op(
        "SparseLengthsWeightedSumWithMainInputGradient",
        {
            "w": none.astype(np.float32),
            "g": y,
            "l": none,
            "d": random((4, 2, 3)),
            "i": none.astype(np.int64),
        },
        ["dd", "dw"],
    )
    assert ws.fetch("dd").shape == (0, 2, 3) and ws.fetch("dw").shape == (0,)
