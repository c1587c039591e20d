"""Segment reductions (SortedSegmentRange*, Sorted/Unsorted/Lengths Sum and
Mean and their Sparse forms), Unique and Net.DeduplicateGradientSlices:
forward against loops written here, gradients against finite differences,
refusals naming the blob."""

import numpy as np
import pytest
from ops_testing import gradient_of, random, run1, run_fails, run_op

from caffe2rnn import core
from caffe2rnn.errors import ArgumentError, DTypeError, ShapeError
from caffe2rnn.gradient_checker import assert_gradient_close
from caffe2rnn.proto import caffe2_pb2
from caffe2rnn.runtime import Workspace

IDS = np.array([0, 0, 1, 2, 2, 2], np.int32)


def _per_segment(x, ids, count, reduce):
    return np.array(
        [reduce(x[ids == k]) if np.any(ids == k) else np.zeros(x.shape[1:]) for k in range(count)]
    )


def _logsumexp(rows):
    return np.log(np.sum(np.exp(rows), axis=0))


RANGE_REFERENCES = {
    "Sum": lambda r: r.sum(axis=0),
    "Mean": lambda r: r.mean(axis=0),
    "Max": lambda r: r.max(axis=0),
    "LogSumExp": _logsumexp,
    "LogMeanExp": lambda r: np.log(np.mean(np.exp(r), axis=0)),
}


# --- SortedSegmentRange* -----------------------------------------------------------
@pytest.mark.parametrize("reducer", sorted(RANGE_REFERENCES))
def test_sorted_segment_range_forward(reducer):
    x = random((6, 2, 2), 1)
    out = run1("SortedSegmentRange" + reducer, {"x": x, "ids": IDS})
    expected = _per_segment(x, IDS, 3, RANGE_REFERENCES[reducer])
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("reducer", sorted(RANGE_REFERENCES))
def test_sorted_segment_range_gradient(reducer):
    ops, g_input = gradient_of("SortedSegmentRange" + reducer, ["x", "ids"], ["o"])
    assert ops == [
        (
            "SortedSegmentRange%sGradient" % reducer,
            "",
            ["x", "o", "o_grad", "ids"],
            ["x_grad"],
            [],
            True,
        )
    ]
    assert g_input == ["x_grad", None]
    op = core.CreateOperator("SortedSegmentRange" + reducer, ["x", "ids"], ["o"])
    x = (
        np.random.RandomState(2).permutation(12).reshape(6, 2).astype(np.float64) / 7.0
    )  # no ties for Max
    assert_gradient_close(op, [x, IDS], 0)


def test_sorted_segment_range_max_gradient_goes_to_the_first_tied_row():
    x = np.array([[1.0], [1.0], [0.0]], np.float32)
    ids = np.array([0, 0, 0], np.int32)
    ws = run_op("SortedSegmentRangeMax", {"x": x, "ids": ids}, ["o"])
    ws.feed("o_grad", np.array([[5.0]], np.float32))
    ws.run_operator_once(
        core.CreateOperator("SortedSegmentRangeMaxGradient", ["x", "o", "o_grad", "ids"], ["dx"])
    )
    np.testing.assert_array_equal(ws.fetch("dx"), [[5.0], [0.0], [0.0]])


@pytest.mark.parametrize(
    "ids, error, match",
    [
        (np.array([0, 2, 2], np.int32), ShapeError, "'ids'.*sorted and not have gaps"),
        (np.array([1, 1, 1], np.int32), ShapeError, "'ids'.*sorted"),
        (np.array([0, 1, 0], np.int32), ShapeError, "'ids'.*sorted"),
        (np.array([0, 0], np.int32), ShapeError, "'ids'.*same length"),
        (np.array([0, 0, 0], np.int64), DTypeError, "'ids'.*int32"),
    ],
)
def test_sorted_segment_range_refusals(ids, error, match):
    run_fails("SortedSegmentRangeLogSumExp", {"x": random((3, 2)), "ids": ids}, error, match)


# --- Sorted / Unsorted / Lengths Sum and Mean -------------------------------------------------
def _segment_case(layout):
    x = random((6, 3), 4)
    if layout == "Lengths":
        lengths = np.array([2, 0, 1, 3], np.int32)
        return x, lengths, np.repeat(np.arange(4), lengths), 4
    ids = IDS if layout == "SortedSegment" else np.array([2, 0, 2, 4, 0, 2], np.int32)
    return x, ids, ids, int(ids.max()) + 1


@pytest.mark.parametrize("layout", ["SortedSegment", "UnsortedSegment", "Lengths"])
@pytest.mark.parametrize("reducer", ["Sum", "Mean"])
def test_segment_reductions(layout, reducer):
    x, second, ids, count = _segment_case(layout)
    reduce = RANGE_REFERENCES[reducer]
    np.testing.assert_allclose(
        run1(layout + reducer, {"x": x, "s": second}),
        _per_segment(x, ids, count, reduce),
        rtol=1e-6,
    )
    # the sparse form reduces x[indices]
    indices = np.array([5, 0, 0, 3, 1, 2], np.int64)
    np.testing.assert_allclose(
        run1("Sparse" + layout + reducer, {"x": x, "i": indices, "s": second}),
        _per_segment(x[indices], ids, count, reduce),
        rtol=1e-6,
    )


@pytest.mark.parametrize("layout", ["SortedSegment", "UnsortedSegment", "Lengths"])
@pytest.mark.parametrize("reducer", ["Sum", "Mean"])
def test_segment_reduction_gradients(layout, reducer):
    x, second, _, _ = _segment_case(layout)
    op = core.CreateOperator(layout + reducer, ["x", "s"], ["o"])
    assert_gradient_close(op, [x.astype(np.float64), second], 0)
    ops, g_input = gradient_of("Sparse" + layout + reducer, ["x", "i", "s"], ["o"])
    expected_type = ("SparseLengths" if layout == "Lengths" else layout) + reducer + "Gradient"
    assert ops == [(expected_type, "", ["o_grad", "s"], ["x_grad_values"], [], True)]
    assert g_input == [core.GradientSlice("i", "x_grad_values"), None, None]


def test_unsorted_segment_num_segments_and_range_check():
    x = random((3, 2), 1)
    out = run1("UnsortedSegmentSum", {"x": x, "s": np.array([0, 0, 1], np.int32)}, num_segments=4)
    assert out.shape == (4, 2) and not out[2:].any()
    # CAFFE_ENFORCE(0 <= s_id && s_id < K, "Segment id out of range")
    run_fails(
        "UnsortedSegmentSum",
        {"x": x, "s": np.array([0, 0, 3], np.int32)},
        ShapeError,
        "'s'.*out of range: 3",
        num_segments=2,
    )
    run_fails(
        "UnsortedSegmentSum", {"x": x, "s": np.array([0, -1, 0], np.int32)}, ShapeError, "'s'"
    )


def test_lengths_must_cover_the_rows():
    run_fails(
        "LengthsSum",
        {"x": random((3, 2)), "l": np.array([1, 1], np.int32)},
        ShapeError,
        "'l'.*add up to 2",
    )
    run_fails(
        "SparseLengthsSum",
        {"x": random((3, 2)), "i": np.array([0, 3], np.int64), "l": np.array([2], np.int32)},
        ShapeError,
        "'i'.*out of bounds",
    )


# --- Unique and deduplication ---------------------------------------------------------------
def test_unique_and_remapping():
    x = np.array([7, 3, 7, 1, 3], np.int64)
    ws = run_op("Unique", {"x": x}, ["u", "r"])
    u, r = ws.fetch("u"), ws.fetch("r")
    assert sorted(set(x.tolist())) == u.tolist() and r.dtype == np.int32
    np.testing.assert_array_equal(u[r], x)
    run_fails("Unique", {"x": np.array([1.0])}, DTypeError, "'x'")
    run_fails("Unique", {"x": np.array([[1]], np.int32)}, ShapeError, "'x'")


@pytest.mark.parametrize("aggregator", ["sum", "mean"])
def test_deduplicate_gradient_slices(aggregator):
    net = core.Net("dedup")
    g = net.DeduplicateGradientSlices(core.GradientSlice("i", "v"), aggregator=aggregator)
    assert isinstance(g, core.GradientSlice)
    assert [op.type for op in net.Proto().op] == ["Unique", "UnsortedSegment" + aggregator.title()]
    ws = Workspace()
    indices = np.array([4, 1, 4, 4], np.int64)
    values = random((4, 2), 1)
    ws.feed("i", indices)
    ws.feed("v", values)
    ws.run_net_once(net.Proto())
    rows = {int(k): ws.fetch(str(g.values))[n] for n, k in enumerate(ws.fetch(str(g.indices)))}
    reduce = np.sum if aggregator == "sum" else np.mean
    for k in (1, 4):
        np.testing.assert_allclose(rows[k], reduce(values[indices == k], axis=0), rtol=1e-6)
    with pytest.raises(ValueError, match="max is not supported"):
        net.DeduplicateGradientSlices(core.GradientSlice("i", "v"), aggregator="max")
    with pytest.raises(ArgumentError, match="GradientSlice"):
        net.DeduplicateGradientSlices("dense_grad")


@pytest.mark.parametrize("aggregator", [None, "sum"])
def test_adagrad_with_a_sparse_dedup_aggregator_merges_repeated_rows(aggregator):
    from caffe2rnn import optimizer, workspace
    from caffe2rnn.model_helper import ModelHelper

    workspace.ResetWorkspace()
    model = ModelHelper(name="dedup_adagrad")
    table = model.param_init_net.ConstantFill([], "table", shape=[5, 2], value=1.0)
    model.params.append(table)
    loss = model.net.SumElements(model.net.Gather([table, "ind"], "emb"), "loss")
    model.AddGradientOperators([loss])
    optimizer.build_adagrad(model, base_learning_rate=0.1, sparse_dedup_aggregator=aggregator)
    types = [op.type for op in model.net.Proto().op]
    assert ("UnsortedSegmentSum" in types) == (aggregator == "sum")
    workspace.FeedBlob("ind", np.array([3, 3], np.int32))
    workspace.RunNetOnce(model.param_init_net)
    workspace.RunNetOnce(model.net)
    row = workspace.FetchBlob("table")[3]
    (update,) = [op for op in model.net.Proto().op if op.type == "SparseAdagrad"]
    eps = [a.f for a in update.arg if a.name == "epsilon"][0]
    if aggregator:  # one update with gradient 2
        expected = 1 - 0.1 * 2 / (np.sqrt(4.0) + eps)
    else:  # two updates with gradient 1, one after the other (Caffe2's order)
        first = 1 - 0.1 * 1 / (np.sqrt(1.0) + eps)
        expected = first - 0.1 * 1 / (np.sqrt(2.0) + eps)
    np.testing.assert_allclose(row, [expected] * 2, rtol=1e-5)


@pytest.mark.parametrize(
    "era, int32_ok", [("E4", False), ("E5", False), ("E6", True), (None, True)]
)
@pytest.mark.parametrize(
    "op_type", ["SparseSortedSegmentSum", "SparseLengthsSum", "SparseUnsortedSegmentMean"]
)
def test_sparse_index_types_per_era(op_type, era, int32_ok):
    """segment_reduction_op.h: ``indices.template data<TIndex>()`` (int64) at 23bd132c1 and
    0cdd09da6; ``DispatchHelper<TensorTypes<int32_t, int64_t>>`` on INDICES at 042e8ede4."""
    from caffe2rnn import eras

    data = np.arange(12.0, dtype=np.float32).reshape(4, 3)
    third = np.array([1, 2], np.int32) if "Lengths" in op_type else np.array([0, 1, 1], np.int32)
    for index_type, ok in ((np.int64, True), (np.int32, int32_ok)):
        ws = Workspace()
        ws.feed("d", data)
        ws.feed("i", np.array([3, 0, 2], index_type))
        ws.feed("s", third)
        op = core.CreateOperator(op_type, ["d", "i", "s"], ["y"])
        netdef = caffe2_pb2.NetDef(name="n")
        netdef.op.extend([op])
        if ok:
            ws.run_net_once(netdef, era=era)
            assert ws.fetch("y").shape[1:] == (3,)
        else:
            with pytest.raises(DTypeError, match="int64 indices"):
                ws.run_net_once(netdef, era=era)
    assert eras.get("E6").sparse_int32_indices and not eras.get("E5").sparse_int32_indices


def test_sorted_segment_range_mean_gradient_as_the_cpp():
    """MeanRangeReducerGradient (reducer_functors.h at 042e8ede4): ``const auto in_grad =
    1.0 / blocks;`` (a double) and ``data_grad[idx] = out_grad * in_grad`` (float * double,
    stored as float); DATA and OUTPUT are taken (data<T>()) but not read."""
    from caffe2rnn import core
    from caffe2rnn.runtime import Workspace

    ids = np.array([0, 0, 0, 1, 2, 2, 2, 2, 2, 2, 2], np.int32)
    dy = (np.random.default_rng(5).standard_normal((3, 4)) * 3).astype(np.float32)
    want = np.empty((ids.size, 4), np.float32)
    for i, k in enumerate(ids):
        blocks = int((ids == k).sum())
        want[i] = (dy[k].astype(np.float64) * (1.0 / blocks)).astype(np.float32)
    ws = Workspace()
    ws.feed("x", np.zeros(1, np.float32))  # any float tensor: Mean does not read it
    ws.feed("y", np.zeros(1, np.float32))
    ws.feed("dy", dy)
    ws.feed("ids", ids)
    ws.run_operator_once(
        core.CreateOperator("SortedSegmentRangeMeanGradient", ["x", "y", "dy", "ids"], ["dx"])
    )
    np.testing.assert_array_equal(ws.fetch("dx"), want)


def test_segment_mean_scales_by_a_float_reciprocal_as_the_cpp():
    """MeanReducer (reducer_functors.h at 042e8ede4): rows added in order (Axpy, alpha 1),
    then ``ScaleFixedSize(block_size, 1.0 / current_size_, out_, out_)`` whose alpha is a
    float; MeanReducerGradient::fillGrad: ``ScaleFixedSize(block_size, 1.0 / length,
    s_grad_, data_grad)``. So out = sum * float(1 / n), not sum / n."""
    from caffe2rnn import core
    from caffe2rnn.runtime import Workspace

    rng = np.random.default_rng(9)
    data = (rng.standard_normal((6, 3)) * 5).astype(np.float32)
    indices = np.array([5, 0, 2, 2, 4, 1, 3], np.int64)
    ids = np.array([2, 0, 2, 1, 2, 0, 2], np.int32)
    k = 3
    want = np.zeros((k, 3), np.float32)
    counts = np.zeros(k, np.int64)
    for i, s in enumerate(ids):
        want[s] = want[s] + data[indices[i]]
        counts[s] += 1
    for s in range(k):
        want[s] = want[s] * np.float32(1.0 / counts[s])
    ws = Workspace()
    for name, value in {"d": data, "i": indices, "s": ids}.items():
        ws.feed(name, value)
    ws.run_operator_once(core.CreateOperator("SparseUnsortedSegmentMean", ["d", "i", "s"], ["y"]))
    np.testing.assert_array_equal(ws.fetch("y"), want)
    dy = (rng.standard_normal((k, 3)) * 7).astype(np.float32)
    ws.feed("dy", dy)
    ws.run_operator_once(core.CreateOperator("UnsortedSegmentMeanGradient", ["dy", "s"], ["dx"]))
    want_dx = np.stack([dy[s] * np.float32(1.0 / counts[s]) for s in ids])
    np.testing.assert_array_equal(ws.fetch("dx"), want_dx)
