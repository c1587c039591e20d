"""SpaceToBatch / BatchToSpace (against a pad-and-slice NumPy reference, each
other's inverse, gradients by finite differences) and AccumulateHistogram
(against NumPy counts, accumulating over runs of one op)."""

import numpy as np
import pytest
from ops_testing import check_gradients, gradient_of, run1

from caffe2rnn import core
from caffe2rnn.errors import ArgumentError, ShapeError
from caffe2rnn.runtime import Workspace

CASES = [(2, 3, 4, 6, 1, 2), (1, 2, 1, 4, 1, 3), (3, 1, 4, 4, 0, 2)]


def space_to_batch_reference(x, pad, b):
    n = x.shape[0]
    padded = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    blocks = [padded[i % n][:, (i // n) // b :: b, (i // n) % b :: b] for i in range(n * b * b)]
    return np.stack(blocks)


@pytest.mark.parametrize("n, c, h, w, pad, b", CASES)
def test_space_to_batch_and_back(n, c, h, w, pad, b):
    x = np.random.RandomState(0).randn(n, c, h, w)
    y = run1("SpaceToBatch", {"X": x}, pad=pad, block_size=b)
    np.testing.assert_array_equal(y, space_to_batch_reference(x, pad, b))
    np.testing.assert_array_equal(run1("BatchToSpace", {"Y": y}, pad=pad, block_size=b), x)
    check_gradients("SpaceToBatch", {"X": x}, ["Y"], pad=pad, block_size=b)
    check_gradients("BatchToSpace", {"Y": y}, ["Z"], pad=pad, block_size=b)


def test_pad_t_moves_only_the_top_edge():
    x = np.arange(16.0).reshape(1, 1, 4, 4)
    y = run1("SpaceToBatch", {"X": x}, pad=0, pad_t=2, block_size=2)
    padded = np.pad(x, ((0, 0), (0, 0), (2, 0), (0, 0)))  # Caffe2: bottom/left/right use "pad"
    np.testing.assert_array_equal(y[0, 0], padded[0, 0, ::2, ::2])


def test_gradient_makers_are_each_others_op():
    ops, _ = gradient_of("SpaceToBatch", ["X"], ["Y"], pad=1, block_size=3)
    assert ops == [
        ("BatchToSpace", "", ["Y_grad"], ["X_grad"], [("pad", 1), ("block_size", 3)], True)
    ]


def test_space_batch_refusals():
    x = np.zeros((1, 1, 3, 4), np.float32)
    with pytest.raises(ShapeError, match="divisible by block_size 2"):
        run1("SpaceToBatch", {"X": x})
    with pytest.raises(ShapeError, match="a batch of at least block_size"):
        run1("BatchToSpace", {"X": x})
    with pytest.raises(ArgumentError, match="block_size must be >= 1"):
        run1("SpaceToBatch", {"X": x}, block_size=0)
    with pytest.raises(ArgumentError, match="order NCHW only"):
        run1("SpaceToBatch", {"X": x}, order="NHWC")


def test_accumulate_histogram():
    lower, upper, buckets = 0.1, 0.9, 4
    op = core.CreateOperator(
        "AccumulateHistogram",
        ["X"],
        ["cur", "acc"],
        lower_bound=lower,
        upper_bound=upper,
        num_buckets=buckets,
    )
    ws = Workspace()
    total = np.zeros(buckets + 2, np.int64)
    net = core.Net("hist")
    net.Proto().op.extend([op])
    ws.feed("X", np.zeros((1,), np.float32))
    ws.create_net(net.Proto())
    rng = np.random.RandomState(1)
    for _ in range(3):
        x = rng.rand(5, 7).astype(np.float32)
        segment = np.float32((np.float32(upper) - np.float32(lower)) / np.float32(buckets))
        index = ((x - np.float32(lower)) / segment).astype(np.int64) + 1
        index[x < np.float32(lower)] = 0
        index[x >= np.float32(upper)] = buckets + 1
        expected = np.bincount(index.ravel(), minlength=buckets + 2)
        total += expected
        ws.feed("X", x)
        ws.run_net("hist")
        np.testing.assert_array_equal(ws.fetch("cur"), expected)
        np.testing.assert_array_equal(ws.fetch("acc"), total)  # the op instance keeps counts
    assert ws.fetch("cur").dtype == np.int64
    ws.feed("X", np.array([np.nan], np.float32))
    with pytest.raises(ArgumentError, match=r"input 0 \('X'\) holds NaN"):
        ws.run_operator_once(op)
