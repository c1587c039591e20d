"""ReversePackedSegs, RemoveDataBlocks, FindDuplicateElements, AddPadding,
RemovePadding, GatherPadding: forward against loops written here, gradient
makers and finite differences, refusals naming the blob."""

import numpy as np
import pytest
from ops_testing import gradient_of, random, run1, run_fails, run_op

from caffe2rnn import core
from caffe2rnn.errors import ArgumentError, DTypeError, ShapeError
from caffe2rnn.gradient_checker import assert_gradient_close


# --- ReversePackedSegs --------------------------------------------------------------------
def _reverse_reference(data, lengths):
    out = data.copy()
    for b, n in enumerate(lengths):
        out[:n, b] = data[:n, b][::-1]
    return out


@pytest.mark.parametrize("lengths_dtype", [np.int32, np.int64])
def test_reverse_packed_segs(lengths_dtype):
    data = random((4, 3, 2))
    lengths = np.array([4, 2, 0], lengths_dtype)
    out = run1("ReversePackedSegs", {"d": data, "l": lengths})
    np.testing.assert_array_equal(out, _reverse_reference(data, lengths))


@pytest.mark.parametrize(
    "inputs, error, match",
    [
        ({"d": random((4, 2)), "l": np.array([1, 1], np.int32)}, ShapeError, "'d'.*3-D"),
        ({"d": random((4, 2, 1)), "l": np.array([1], np.int32)}, ShapeError, "'l'.*batch size"),
        # CAFFE_ENFORCE_LE(seg_length, max_length)
        ({"d": random((4, 2, 1)), "l": np.array([5, 1], np.int32)}, ShapeError, "'l'.*5"),
        ({"d": random((4, 2, 1)), "l": np.array([1.0, 1.0])}, DTypeError, "'l'"),
    ],
)
def test_reverse_packed_segs_refusals(inputs, error, match):
    run_fails("ReversePackedSegs", inputs, error, match, outputs=["o"])


def test_reverse_packed_segs_gradient():
    ops, g_input = gradient_of("ReversePackedSegs", ["d", "l"], ["o"])
    assert ops == [("ReversePackedSegs", "", ["o_grad", "l"], ["d_grad"], [], True)]
    assert g_input == ["d_grad", None]
    op = core.CreateOperator("ReversePackedSegs", ["d", "l"], ["o"])
    assert_gradient_close(op, [random((3, 2, 2), 1, np.float64), np.array([3, 1], np.int32)], 0)


# --- padding --------------------------------------------------------------------------------
def _ranges(lengths):
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(int)
    return [(s, s + n) for s, n in zip(starts, lengths)]


def test_add_padding_with_and_without_padding_tensors():
    data = random((5, 2), 1)
    lengths = np.array([2, 3], np.int32)
    start, end = random((2,), 2), random((2,), 3)
    ws = run_op(
        "AddPadding",
        {"d": data, "l": lengths, "s": start, "e": end},
        ["o", "ol"],
        padding_width=2,
        end_padding_width=1,
    )
    expected = []
    for a, b in _ranges(lengths):
        expected += [start, start] + list(data[a:b]) + [end]
    np.testing.assert_array_equal(ws.fetch("o"), np.array(expected))
    assert ws.fetch("ol").tolist() == [5, 6]
    zeros = run1("AddPadding", {"d": data, "l": lengths})
    assert zeros.shape == (9, 2) and not zeros[0].any() and not zeros[3].any()


def test_add_padding_without_lengths_pads_the_whole_tensor_once():
    data = random((3, 2), 1)
    out = run1("AddPadding", {"d": data})
    np.testing.assert_array_equal(out, np.concatenate([np.zeros((1, 2)), data, np.zeros((1, 2))]))


def test_remove_padding():
    data = np.arange(12, dtype=np.float32).reshape(6, 2)
    ws = run_op(
        "RemovePadding",
        {"d": data, "l": np.array([4, 2], np.int32)},
        ["o", "ol"],
        padding_width=1,
        end_padding_width=0,
    )
    np.testing.assert_array_equal(ws.fetch("o"), data[[1, 2, 3, 5]])
    assert ws.fetch("ol").tolist() == [3, 1]


def test_zero_padding_copies_data_and_lengths():
    data = np.array(["a", "b"], object)
    ws = run_op(
        "RemovePadding", {"d": data, "l": np.array([2], np.int64)}, ["o", "ol"], padding_width=0
    )
    assert ws.fetch("o").tolist() == ["a", "b"] and ws.fetch("ol").tolist() == [2]


def test_gather_padding_sums_the_padding_rows():
    data = np.arange(14, dtype=np.float32).reshape(7, 2)
    lengths = np.array([4, 3], np.int32)
    ws = run_op("GatherPadding", {"d": data, "l": lengths}, ["s", "e"], padding_width=1)
    np.testing.assert_array_equal(ws.fetch("s"), data[0] + data[4])
    np.testing.assert_array_equal(ws.fetch("e"), data[3] + data[6])
    one = run1("GatherPadding", {"d": data, "l": lengths}, padding_width=1)
    np.testing.assert_array_equal(one, data[0] + data[4] + data[3] + data[6])


@pytest.mark.parametrize(
    "op_type, inputs, args, error, match",
    [
        # CAFFE_ENFORCE_LE(total_length, outer_size)
        (
            "RemovePadding",
            {"d": random((3, 1)), "l": np.array([2, 2], np.int32)},
            {},
            ShapeError,
            "'l'.*add up to 4",
        ),
        (
            "RemovePadding",
            {"d": random((3, 1)), "l": np.array([1, 2], np.int32)},
            {},
            ShapeError,
            "'l'.*shorter",
        ),
        (
            "AddPadding",
            {"d": random((3, 1)), "l": np.array([3], np.int64)},
            {},
            DTypeError,
            "'l'.*int32",
        ),
        (
            "AddPadding",
            {"d": random((3, 2)), "l": np.array([3], np.int32), "p": random((3,))},
            {},
            ShapeError,
            "'p'",
        ),
        (
            "AddPadding",
            {"d": random((3, 1))},
            {"padding_width": -1},
            ArgumentError,
            "padding_width=-1",
        ),
        ("RemovePadding", {"d": random((3, 1))}, {"padding_width": 0}, ArgumentError, "no input 1"),
    ],
)
def test_padding_refusals(op_type, inputs, args, error, match):
    outputs = ["o", "ol"] if args.get("padding_width") == 0 else ["o"]
    run_fails(op_type, inputs, error, match, outputs=outputs, **args)


def test_padding_gradient_makers():
    ops, g_input = gradient_of("AddPadding", ["d", "l", "s", "e"], ["o", "ol"])
    assert [(op[0], op[2], op[3]) for op in ops] == [
        ("RemovePadding", ["o_grad", "ol"], ["d_grad"]),
        ("GatherPadding", ["o_grad", "ol"], ["s_grad", "e_grad"]),
    ]
    assert g_input == ["d_grad", None, "s_grad", "e_grad"]
    ops, g_input = gradient_of("RemovePadding", ["d", "l"], ["o", "ol"], padding_width=2)
    assert ops == [("AddPadding", "", ["o_grad", "ol"], ["d_grad"], [("padding_width", 2)], True)]


@pytest.mark.parametrize("index", [0, 2, 3])
def test_add_padding_gradients_match_finite_differences(index):
    op = core.CreateOperator(
        "AddPadding", ["d", "l", "s", "e"], ["o", "ol"], padding_width=1, end_padding_width=2
    )
    arrays = [
        random((5, 2), 1, np.float64),
        np.array([2, 3], np.int32),
        random((2,), 2, np.float64),
        random((2,), 3, np.float64),
    ]
    assert_gradient_close(op, arrays, index)


def test_remove_padding_gradient_matches_finite_differences():
    op = core.CreateOperator("RemovePadding", ["d", "l"], ["o", "ol"], padding_width=1)
    assert_gradient_close(op, [random((7, 2), 1, np.float64), np.array([4, 3], np.int32)], 0)


# --- RemoveDataBlocks, FindDuplicateElements ---------------------------------------------
def test_remove_data_blocks():
    data = np.arange(10, dtype=np.float32).reshape(5, 2)
    out = run1("RemoveDataBlocks", {"d": data, "i": np.array([3, 0, 3], np.int64)})
    np.testing.assert_array_equal(out, data[[1, 2, 4]])
    np.testing.assert_array_equal(
        run1("RemoveDataBlocks", {"d": data, "i": np.zeros(0, np.int32)}), data
    )
    # CAFFE_ENFORCE(ind_vec[indices_size - 1] < outer_size)
    run_fails("RemoveDataBlocks", {"d": data, "i": np.array([5], np.int32)}, ShapeError, "'i'")


def test_find_duplicate_elements():
    data = np.array([3, 1, 3, 2, 1, 3], np.int64)
    out = run1("FindDuplicateElements", {"d": data})
    assert out.dtype == np.int64 and out.tolist() == [2, 4, 5]
    assert run1("FindDuplicateElements", {"d": np.array(["a", "b"], object)}).tolist() == []


# --- PackSegments, UnpackSegments -----------------------------------------------------------
def test_pack_and_unpack_segments():
    data = np.arange(12, dtype=np.float32).reshape(6, 2)
    lengths = np.array([2, 0, 3], np.int64)
    packed = run1("PackSegments", {"l": lengths, "d": data})
    expected = np.zeros((3, 3, 2), np.float32)
    expected[0, :2] = data[0:2]
    expected[2, :3] = data[2:5]
    np.testing.assert_array_equal(packed, expected)
    minf = run1("PackSegments", {"l": lengths, "d": data}, pad_minf=1)
    assert np.isneginf(minf[1]).all() and np.isneginf(minf[0, 2]).all()
    np.testing.assert_array_equal(run1("UnpackSegments", {"l": lengths, "p": packed}), data[:5])
    run_fails("PackSegments", {"l": np.array([4, 3], np.int32), "d": data}, ShapeError, "'d'")
    run_fails("UnpackSegments", {"l": lengths[:2], "p": packed}, ShapeError, "'p'")


def test_pack_segments_gradient():
    ops, g_input = gradient_of("PackSegments", ["l", "d"], ["p"])
    assert ops == [("UnpackSegments", "", ["l", "p_grad"], ["d_grad"], [], True)]
    op = core.CreateOperator("PackSegments", ["l", "d"], ["p"])
    assert_gradient_close(op, [np.array([2, 1], np.int32), random((3, 2), 1, np.float64)], 1)
    op = core.CreateOperator("UnpackSegments", ["l", "p"], ["d"])
    assert_gradient_close(op, [np.array([2, 1], np.int32), random((2, 2, 3), 2, np.float64)], 1)


def test_pack_segments_presence_mask_and_e6_exact_lengths():
    from caffe2rnn import eras
    from caffe2rnn.errors import ShapeError

    lengths = np.array([1, 2, 0], np.int32)
    data = np.arange(8, dtype=np.float32).reshape(4, 2)
    ws = run_op("PackSegments", {"l": lengths, "d": data[:3]}, ["t", "p"], return_presence_mask=1)
    np.testing.assert_array_equal(ws.fetch("p"), [[True, False], [True, True], [False, False]])
    np.testing.assert_array_equal(ws.fetch("t")[1], data[1:3])
    with eras.use("E5"):  # a fourth row after the runs is left out
        run_op("PackSegments", {"l": lengths, "d": data}, ["t"])
    with eras.use("E6"), pytest.raises(ShapeError, match="sum of the lengths is equal"):
        run_op("PackSegments", {"l": lengths, "d": data}, ["t"])
