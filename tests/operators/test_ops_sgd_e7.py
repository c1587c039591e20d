"""The ops of caffe2/sgd/ Caffe2 added after 042e8ede4, at 929c33cee (E7):
``Lars``, ``RowWiseSparseAdam`` and ``ClipTensorByScaling``, against the C++
rules (sgd/lars_op.cc, sgd/adam_op.h, sgd/clip_tensor_op.h) written out here in
NumPy, one row at a time, and each refusal."""

import numpy as np
import pytest
from ops_testing import random, run_fails, run_op
from test_ops_sgd import run_in_place

from caffe2rnn import core
from caffe2rnn.errors import ArgumentError, DTypeError, EnforceNotMet, GradientError, ShapeError
from caffe2rnn.operators.gradient_maker import get_gradient_for_op


# --- Lars -----------------------------------------------------------------------------
def lars_reference(x, dx, offset):
    """LarsOp<float, CPUContext>::Compute: 1, divided by (‖dX‖/‖X‖ + offset) when ‖X‖ > 0."""
    x_norm = np.sqrt(sum(float(v) * float(v) for v in x.ravel()))
    if x_norm == 0:
        return 1.0
    dx_norm = np.sqrt(sum(float(v) * float(v) for v in dx.ravel()))
    return 1.0 / (dx_norm / x_norm + offset)


@pytest.mark.parametrize("offset", [None, 0.0, 0.25, 3.0])
@pytest.mark.parametrize("shape", [(5,), (3, 4, 2)])
def test_lars_is_one_over_the_norm_ratio_plus_offset(offset, shape):
    x, dx = random(shape, 1), random(shape, 2, low=-0.1, high=0.1)
    args = {} if offset is None else {"offset": offset}
    out = run_op("Lars", {"x": x, "dx": dx}, ["f"], **args).fetch("f")
    assert out.shape == (1,) and out.dtype == np.float32
    want = lars_reference(x, dx, 0.5 if offset is None else offset)  # default offset 0.5
    np.testing.assert_allclose(out[0], want, rtol=1e-5)


def test_lars_of_a_zero_parameter_is_one_and_a_zero_gradient_without_offset_is_inf():
    zeros, ones = np.zeros((2, 3), np.float32), np.ones((2, 3), np.float32)
    assert run_op("Lars", {"x": zeros, "dx": ones}, ["f"]).fetch("f")[0] == 1.0
    assert run_op("Lars", {"x": ones, "dx": zeros}, ["f"], offset=0.0).fetch("f")[0] == np.inf


def test_lars_float64_extension():
    x, dx = random((4,), 3, np.float64), random((4,), 4, np.float64)
    out = run_op("Lars", {"x": x, "dx": dx}, ["f"], offset=0.25).fetch("f")  # exact as float32
    assert out.dtype == np.float64
    np.testing.assert_allclose(out[0], lars_reference(x, dx, 0.25), rtol=1e-12)


@pytest.mark.parametrize(
    "feeds, args, error, match",
    [
        # CAFFE_ENFORCE(dX.size() == X.size(), "Gradient size doesn't match parameter size.")
        (
            {"x": random((2, 3)), "dx": random((5,))},
            {},
            ShapeError,
            r"Lars: input 1 \('dx'\) has 5 elements, input 0 \('x'\) 6: Gradient size",
        ),
        # CAFFE_ENFORCE_GE(offset_, 0)
        (
            {"x": random((3,)), "dx": random((3,))},
            {"offset": -0.5},
            ArgumentError,
            r"Lars: argument offset is -0.5; expected offset >= 0",
        ),
        (
            {"x": random((3,)), "dx": random((3,), dtype=np.float64)},
            {},
            DTypeError,
            r"inputs 0 \('x'\), 1 \('dx'\) have different types",
        ),
    ],
)
def test_lars_refusals(feeds, args, error, match):
    run_fails("Lars", feeds, error, match, outputs=("f",), **args)


# --- RowWiseSparseAdam ------------------------------------------------------------------
def row_wise_adam_reference(w, m1, m2, indices, g, rate, it, b1, b2, eps):
    """RowWiseSparseAdamOp::DoRunWithType, index by index, in float64."""
    w, m1, m2 = w.astype(np.float64), m1.astype(np.float64), m2.astype(np.float64).copy()
    rows, m1_rows = w.reshape(w.shape[0], -1).copy(), m1.reshape(w.shape[0], -1).copy()
    g_rows = g.reshape(len(indices), -1).astype(np.float64)
    t = it + 1
    correction = np.sqrt(1 - b2**t) / (1 - b1**t)
    for i, idx in enumerate(indices):
        gi = g_rows[i]
        m2[idx] = m2[idx] * b2 + np.mean(gi * gi) * (1 - b2)  # m2_sum / block_size
        for j in range(rows.shape[1]):
            m1_rows[idx, j] = m1_rows[idx, j] * b1 + gi[j] * (1 - b1)
            rows[idx, j] += rate * correction * m1_rows[idx, j] / (np.sqrt(m2[idx]) + eps)
    return rows.reshape(w.shape), m1_rows.reshape(w.shape), m2


def row_wise_feeds(shape, indices, seed=0, dtype=np.float32):
    n = len(indices)
    return {
        "w": random(shape, seed, dtype),
        "m1": random(shape, seed + 1, dtype),
        "m2": random((shape[0],), seed + 2, dtype, 0.0, 1.0),
        "i": np.array(indices, np.int64),
        "g": random((n,) + shape[1:], seed + 3, dtype),
        "lr": np.array([-0.3], dtype),
        "it": np.array([6], np.int64),
    }


@pytest.mark.parametrize(
    "shape, indices",
    [((5, 3), [4, 0, 2]), ((4, 2, 3), [1, 3]), ((4, 2), [1, 1, 3]), ((6,), [5, 0])],
    ids=["rows", "rows-of-matrices", "repeated-index", "one-value-rows"],
)
@pytest.mark.parametrize("index_type", [np.int32, np.int64])
def test_row_wise_sparse_adam_against_the_cpp_rule(shape, indices, index_type):
    feeds = row_wise_feeds(shape, indices)
    feeds["i"] = feeds["i"].astype(index_type)
    args = {"beta1": 0.8, "beta2": 0.95, "epsilon": 0.01}
    ws, kept = run_in_place("RowWiseSparseAdam", feeds, list(feeds), ["w", "m1", "m2"], **args)
    assert kept, "the in-place outputs got new memory"
    want = row_wise_adam_reference(
        feeds["w"], feeds["m1"], feeds["m2"], indices, feeds["g"], -0.3, 6, 0.8, 0.95, 0.01
    )
    for name, value in zip(["w", "m1", "m2"], want):
        np.testing.assert_allclose(ws.fetch(name), value, rtol=2e-5, atol=1e-6, err_msg=name)
    untouched = [r for r in range(shape[0]) if r not in indices]
    np.testing.assert_array_equal(ws.fetch("w")[untouched], feeds["w"][untouched])
    np.testing.assert_array_equal(ws.fetch("m2")[untouched], feeds["m2"][untouched])


def test_row_wise_sparse_adam_with_fewer_gradient_rows_than_indices_uses_the_first():
    """adam_op.h at 929c33cee loops over the gradient's rows (n = grad.size() / block_size):
    with fewer rows than indices the later indices are not used (no refusal)."""
    feeds = row_wise_feeds((5, 3), [4, 0, 2])
    feeds["g"] = feeds["g"][:2]  # two rows for three indices
    ws, _ = run_in_place("RowWiseSparseAdam", feeds, list(feeds), ["w", "m1", "m2"])
    want = row_wise_adam_reference(
        feeds["w"], feeds["m1"], feeds["m2"], [4, 0], feeds["g"], -0.3, 6, 0.9, 0.999, 1e-5
    )
    for name, value in zip(["w", "m1", "m2"], want):
        np.testing.assert_allclose(ws.fetch(name), value, rtol=2e-5, atol=1e-6, err_msg=name)
    np.testing.assert_array_equal(ws.fetch("w")[2], feeds["w"][2])  # index 2 unused


def test_row_wise_sparse_adam_defaults_are_the_schemas():
    """beta1 0.9, beta2 0.999, epsilon 1e-5 (RowWiseSparseAdamOp's constructor)."""
    feeds = row_wise_feeds((3, 2), [2], seed=5, dtype=np.float64)
    ws, _ = run_in_place("RowWiseSparseAdam", feeds, list(feeds), ["w", "m1", "m2"])
    want = row_wise_adam_reference(
        feeds["w"], feeds["m1"], feeds["m2"], [2], feeds["g"], -0.3, 6, 0.9, 0.999, 1e-5
    )
    for name, value in zip(["w", "m1", "m2"], want):
        np.testing.assert_allclose(ws.fetch(name), value, rtol=1e-12, err_msg=name)


def test_row_wise_sparse_adam_with_one_value_per_row_is_sparse_adam():
    """block_size == 1: Caffe2's element-wise branch, which is SparseAdam's."""
    feeds = row_wise_feeds((6,), [3, 1], seed=7)
    ws_row, _ = run_in_place("RowWiseSparseAdam", feeds, list(feeds), ["w", "m1", "m2"])
    ws_sparse, _ = run_in_place("SparseAdam", feeds, list(feeds), ["w", "m1", "m2"])
    for name in ("w", "m1", "m2"):
        np.testing.assert_allclose(ws_row.fetch(name), ws_sparse.fetch(name), rtol=1e-6)


def feeds_with(**changes):
    feeds = row_wise_feeds((4, 2), [1, 3])
    feeds.update(changes)
    return feeds


@pytest.mark.parametrize(
    "feeds, error, match",
    [
        # CAFFE_ENFORCE_EQ(Input(PARAM).size(), Input(MOMENT_1).size())
        (
            feeds_with(m1=random((4, 3))),
            ShapeError,
            r"input 1 \('m1'\) has shape \(4, 3\); expected float32 of 8 elements",
        ),
        # CAFFE_ENFORCE_EQ(Input(PARAM).dims()[0], Input(MOMENT_2).size())
        (
            feeds_with(m2=random((8,))),
            ShapeError,
            r"input 2 \('m2'\) has shape \(8,\); expected float32 of 4 elements, one per row",
        ),
        # CAFFE_ENFORCE_EQ(param.size_from_dim(1), grad.size_from_dim(indices.ndim()))
        (
            feeds_with(g=random((2, 3))),
            ShapeError,
            r"input 4 \('g'\) has shape \(2, 3\); expected float32 rows of 2 values",
        ),
        # CAFFE_ENFORCE_EQ(Input(LR).size(), 1)
        (
            feeds_with(lr=np.array([-0.1, -0.2], np.float32)),
            ShapeError,
            r"input 5 \('lr'\).*a 1-element learning rate",
        ),
        # DispatchHelper<TensorTypes<int32_t, int64_t>>
        (
            feeds_with(i=np.array([1.0, 3.0])),
            DTypeError,
            r"input 3 \('i'\) has type float64; expected int32 or int64",
        ),
        # Caffe2 checked the bound only #ifndef NDEBUG
        (
            feeds_with(i=np.array([1, 4], np.int64)),
            ShapeError,
            r"input 3 \('i'\) holds indices from 1 to 4; expected them in \[0, 4\)",
        ),
        (
            feeds_with(g=random((3, 2))),
            ShapeError,
            r"input 4 \('g'\) has shape \(3, 2\); expected at most 2 rows \(one per index\)",
        ),
        (
            feeds_with(it=np.array([6], np.int32)),
            ShapeError,
            r"input 6 \('it'\).*int64 iteration counter",
        ),
    ],
)
def test_row_wise_sparse_adam_refusals_name_the_blob_and_write_nothing(feeds, error, match):
    from caffe2rnn.runtime import Workspace

    ws = Workspace()
    for name, value in feeds.items():
        ws.feed(name, value)
    op = core.CreateOperator("RowWiseSparseAdam", list(feeds), ["w", "m1", "m2"])
    with pytest.raises(error, match=match):
        ws.run_operator_once(op)
    for name, value in feeds.items():
        np.testing.assert_array_equal(ws.fetch(name), value)


def test_row_wise_sparse_adam_must_be_in_place():
    """EnforceInplace({{0, 0}, {1, 1}, {2, 2}})."""
    feeds = row_wise_feeds((4, 2), [1])
    with pytest.raises(EnforceNotMet, match="same blob"):
        run_op("RowWiseSparseAdam", feeds, ["w2", "m1", "m2"])


# --- ClipTensorByScaling -----------------------------------------------------------------
@pytest.mark.parametrize("value, threshold", [(4.0, 1.5), (1.0, 1.5), (1.5, 1.5)])
@pytest.mark.parametrize("in_place", [False, True])
def test_clip_tensor_by_scaling(value, threshold, in_place):
    x = random((3, 4), 8)
    out = "x" if in_place else "y"
    feeds = {"x": x, "v": np.array([value], np.float32)}
    ws, kept = run_in_place("ClipTensorByScaling", feeds, ["x", "v"], [out], threshold=threshold)
    assert kept
    # clipped = x * (threshold / val) only when val > threshold (the float ratio)
    want = x * np.float32(np.float32(threshold) / np.float32(value)) if value > threshold else x
    np.testing.assert_array_equal(ws.fetch(out), want)


@pytest.mark.parametrize(
    "feeds, args, error, match",
    [
        # CAFFE_ENFORCE_GT(threshold_, 0, "Threshold must be greater than 0"), default 0.0
        (
            {"x": random((2,)), "v": np.ones(1, np.float32)},
            {},
            ArgumentError,
            "threshold is 0: Threshold must be greater than 0",
        ),
        (
            {"x": random((2,)), "v": np.ones(1, np.float32)},
            {"threshold": -1.0},
            ArgumentError,
            "threshold is -1: Threshold must be greater than 0",
        ),
        # CAFFE_ENFORCE_GT(input_tensor.size(), 0)
        (
            {"x": random((0, 3)), "v": np.ones(1, np.float32)},
            {"threshold": 1.0},
            ShapeError,
            r"input 0 \('x'\) has shape \(0, 3\); expected a tensor with at least one",
        ),
        # CAFFE_ENFORCE_EQ(val.size(), 1)
        (
            {"x": random((2,)), "v": np.ones(2, np.float32)},
            {"threshold": 1.0},
            ShapeError,
            r"input 1 \('v'\) has 2 elements; expected 1",
        ),
    ],
)
def test_clip_tensor_by_scaling_refusals(feeds, args, error, match):
    run_fails("ClipTensorByScaling", feeds, error, match, outputs=("y",), **args)


@pytest.mark.parametrize(
    "op_type, inputs, outputs",
    [
        ("ClipTensorByScaling", ["x", "v"], ["y"]),
        ("Lars", ["x", "dx"], ["f"]),
        ("RowWiseSparseAdam", ["w", "m1", "m2", "i", "g", "lr", "it"], ["w", "m1", "m2"]),
    ],
)
def test_no_gradient(op_type, inputs, outputs):
    """SHOULD_NOT_DO_GRADIENT(Lars), SHOULD_NOT_DO_GRADIENT(RowWiseSparseAdam)."""
    op = core.CreateOperator(op_type, inputs, outputs)
    with pytest.raises(GradientError, match="should not call gradient"):
        get_gradient_for_op(op, [o + "_grad" for o in outputs])
