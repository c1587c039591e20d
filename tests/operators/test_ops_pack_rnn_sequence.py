"""PackRNNSequence / UnpackRNNSequence: Caffe2's documented example, random
cases against per-element NumPy loops written here, each op's gradient by
central differences (float64), and the refusals (rows past the tensor,
negative lengths, types, ranks) leaving the output untouched."""

import numpy as np
import pytest
from ops_testing import gradient_of, run1, run_fails

from caffe2rnn import core
from caffe2rnn.errors import DTypeError, EnforceNotMet, OutOfRangeError, ShapeError
from caffe2rnn.gradient_checker import assert_gradient_close


def pack_reference(values, lengths):
    rows = max(lengths) if len(lengths) else 0
    out = np.zeros((rows, len(lengths)) + values.shape[1:], values.dtype)
    offset = 0
    for c, length in enumerate(lengths):
        for r in range(length):
            out[r, c] = values[offset + r]
        offset += length
    return out


def unpack_reference(packed, lengths):
    out = np.zeros((sum(lengths),) + packed.shape[2:], packed.dtype)
    offset = 0
    for c, length in enumerate(lengths):
        for r in range(length):
            out[offset + r] = packed[r, c]
        offset += length
    return out


def test_the_documented_example():
    values = np.arange(1, 9, dtype=np.float32)[:, None]  # v1 .. v8, one feature
    lengths = np.array([2, 3, 1, 2], np.int32)
    packed = run1("PackRNNSequence", {"values": values, "lengths": lengths})
    np.testing.assert_array_equal(packed[..., 0], [[1, 3, 6, 7], [2, 4, 0, 8], [0, 5, 0, 0]])
    unpacked = run1("UnpackRNNSequence", {"values": packed, "lengths": lengths})
    np.testing.assert_array_equal(unpacked, values)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
@pytest.mark.parametrize("seed", range(4))
def test_random_cases_match_the_loops(dtype, seed):
    rng = np.random.default_rng(seed)
    lengths = rng.integers(0, 4, size=rng.integers(0, 5)).astype(np.int32)
    features = tuple(rng.integers(1, 3, size=1 + seed % 2))
    values = (rng.normal(size=(int(lengths.sum()) + seed % 2,) + features) * 10).astype(dtype)
    packed = run1("PackRNNSequence", {"values": values, "lengths": lengths})
    expected = pack_reference(values, lengths.tolist())
    assert packed.dtype == dtype and packed.shape == expected.shape
    np.testing.assert_array_equal(packed, expected)
    unpacked = run1("UnpackRNNSequence", {"values": packed, "lengths": lengths})
    np.testing.assert_array_equal(unpacked, unpack_reference(packed, lengths.tolist()))


def test_unpack_reads_rows_at_r_times_len_lengths_as_caffe2():
    # Caffe2 indexed the packed rows with N = len(lengths), not the tensor's
    # second dimension: a 4 × 3 pack unpacked with two lengths reads rows 0, 2, 1.
    packed = np.arange(12, dtype=np.float32).reshape(4, 3, 1)
    lengths = np.array([2, 1], np.int32)
    out = run1("UnpackRNNSequence", {"values": packed, "lengths": lengths})
    np.testing.assert_array_equal(out[:, 0], [0, 2, 1])


@pytest.mark.parametrize("op_type", ["PackRNNSequence", "UnpackRNNSequence"])
def test_gradients_against_finite_differences(op_type):
    rng = np.random.default_rng(7)
    lengths = np.array([2, 3, 1], np.int32)
    shape = (6, 2) if op_type == "PackRNNSequence" else (3, 3, 2)
    op = core.CreateOperator(op_type, ["values", "lengths"], ["out"])
    assert_gradient_close(op, [rng.normal(size=shape), lengths], 0)


def test_each_gradient_is_the_other_op():
    for op_type, other in (
        ("PackRNNSequence", "UnpackRNNSequence"),
        ("UnpackRNNSequence", "PackRNNSequence"),
    ):
        ops, g_input = gradient_of(op_type, ["v", "l"], ["out"])
        assert ops == [(other, "", ["out_grad", "l"], ["v_grad"], [], True)]
        assert g_input == ["v_grad", None]


@pytest.mark.parametrize(
    "op_type,values,lengths,error,match",
    [
        # Caffe2 copied these rows without looking: past the end of values
        ("PackRNNSequence", np.zeros((3, 2)), [2, 2], OutOfRangeError, "read row 3 .* 3 rows"),
        ("UnpackRNNSequence", np.zeros((2, 2, 1)), [3, 1], OutOfRangeError, "read row 4"),
        # a negative length moves the next sequence's rows back before row 0
        ("PackRNNSequence", np.zeros((3, 1)), [-2, 1], OutOfRangeError, "read row -2"),
        ("PackRNNSequence", np.zeros((3, 1)), [-1], EnforceNotMet, "must not be negative"),
        ("UnpackRNNSequence", np.zeros((1, 2, 1)), [0, -1], EnforceNotMet, "negative size"),
        ("PackRNNSequence", np.zeros(3), [1], ShapeError, "rank above 1"),
        ("UnpackRNNSequence", np.zeros((3, 1)), [1], ShapeError, "rank above 2"),
        ("PackRNNSequence", np.zeros((3, 1), np.float16), [1], DTypeError, "float16"),
        ("PackRNNSequence", np.zeros((3, 1)), np.array([1], np.int64), DTypeError, "int32"),
        ("PackRNNSequence", np.zeros((3, 1)), np.array([[1]], np.int32), ShapeError, "1-D"),
    ],
)
def test_refusals(op_type, values, lengths, error, match):
    lengths = np.asarray(lengths, dtype=getattr(lengths, "dtype", np.int32))
    run_fails(op_type, {"values": values, "lengths": lengths}, error, match)
