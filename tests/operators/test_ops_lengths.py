"""LengthsRangeFill, LengthsToSegmentIds, LengthsToRanges, LengthsToWeights,
LengthsToShape, SegmentIdsToLengths, SegmentIdsToRanges: against loops
written here; refusals naming the blob."""

import numpy as np
import pytest
from ops_testing import gradient_of, run1, run_fails

from caffe2rnn.errors import ArgumentError, DTypeError, GradientError, ShapeError

LENGTHS = np.array([2, 0, 3, 1], np.int32)


def test_lengths_range_fill():
    out = run1("LengthsRangeFill", {"l": LENGTHS})
    assert out.dtype == np.int32
    assert out.tolist() == [i for n in LENGTHS for i in range(n)]


@pytest.mark.parametrize(
    "lengths, error, match",
    [
        (np.array([1, -1], np.int32), ArgumentError, "'l'.*negative"),
        (np.array([1], np.int64), DTypeError, "'l'.*int32"),
        (np.array([[1]], np.int32), ShapeError, "'l'"),
    ],
)
def test_lengths_range_fill_refusals(lengths, error, match):
    run_fails("LengthsRangeFill", {"l": lengths}, error, match)


def test_lengths_to_shape():
    assert run1("LengthsToShape", {"l": np.array([4, 4, 4], np.int32)}).tolist() == [3, 4]
    run_fails("LengthsToShape", {"l": np.array([4, 3], np.int32)}, ShapeError, "must be same")
    run_fails("LengthsToShape", {"l": np.zeros(0, np.int32)}, ShapeError, "'l'")


def test_lengths_to_segment_ids_and_ranges():
    ids = run1("LengthsToSegmentIds", {"l": LENGTHS})
    assert ids.tolist() == [k for k, n in enumerate(LENGTHS) for _ in range(n)]
    ranges = run1("LengthsToRanges", {"l": LENGTHS})
    offsets = [int(sum(LENGTHS[:k])) for k in range(len(LENGTHS))]
    assert ranges.tolist() == [[o, n] for o, n in zip(offsets, LENGTHS.tolist())]
    run_fails("LengthsToSegmentIds", {"l": np.array([-1], np.int32)}, ArgumentError, "'l'")


@pytest.mark.parametrize("power", [0.5, 1.0, 2.0])
def test_lengths_to_weights(power):
    out = run1("LengthsToWeights", {"l": LENGTHS.astype(np.int64)}, power=power)
    expected = [1.0 / n**power for n in LENGTHS for _ in range(n)]
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, expected, rtol=1e-6)


def test_segment_ids_to_lengths_and_ranges():
    ids = np.array([1, 1, 3, 3, 3], np.int64)
    assert run1("SegmentIdsToLengths", {"s": ids}).tolist() == [0, 2, 0, 3]
    # a second input asks for more (empty) segments; a column of ids is accepted
    like = np.zeros(6, np.float32)
    assert run1("SegmentIdsToLengths", {"s": ids[:, None], "like": like}).tolist() == [
        0,
        2,
        0,
        3,
        0,
        0,
    ]
    ranges = run1("SegmentIdsToRanges", {"s": ids, "like": like})
    assert ranges.tolist() == [[0, 0], [0, 2], [2, 0], [2, 3], [0, 0], [0, 0]]
    run_fails("SegmentIdsToLengths", {"s": np.array([2, 1], np.int32)}, ShapeError, "sorted")
    run_fails("SegmentIdsToRanges", {"s": np.array([-1, 0], np.int32)}, ShapeError, "sorted")
    run_fails("SegmentIdsToLengths", {"s": ids, "like": np.zeros(2)}, ShapeError, "'like'")


@pytest.mark.parametrize(
    "op_type", ["LengthsToSegmentIds", "SegmentIdsToLengths", "LengthsToShape"]
)
def test_lengths_conversions_should_not_be_differentiated(op_type):
    with pytest.raises(GradientError):
        gradient_of(op_type, ["l"], ["o"])
