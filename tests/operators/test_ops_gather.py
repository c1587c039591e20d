"""Gather and SparseToDense: forward against NumPy, the sparse (GradientSlice)
and dense gradients against finite differences, sparse gradients flowing
through the backward builder and the optimizers, refusals naming the blob."""

import numpy as np
import pytest
from ops_testing import gradient_of, random, run1, run_fails, run_op

from caffe2rnn import core, optimizer, workspace
from caffe2rnn.errors import ArgumentError, DTypeError, GradientError, ShapeError
from caffe2rnn.gradient_checker import assert_gradient_close, numeric_gradient
from caffe2rnn.runtime import Workspace


# --- Gather forward ---------------------------------------------------------------
@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
@pytest.mark.parametrize("index_shape", [(), (3,), (2, 2), (0,)])
def test_gather_picks_rows_by_index(index_dtype, index_shape):
    data = random((5, 2, 3))
    indices = np.random.RandomState(1).randint(0, 5, size=index_shape).astype(index_dtype)
    out = run1("Gather", {"data": data, "ind": indices})
    expected = np.array([data[i] for i in indices.reshape(-1)]).reshape(index_shape + (2, 3))
    assert out.shape == index_shape + (2, 3) and out.dtype == np.float32
    np.testing.assert_array_equal(out, expected)


def test_gather_copies_any_element_type():
    data = np.array(["a", "bb", "ccc"], dtype=object)
    out = run1("Gather", {"data": data, "ind": np.array([2, 0], np.int32)})
    assert out.tolist() == ["ccc", "a"]


@pytest.mark.parametrize(
    "inputs, error, match",
    [
        # Caffe2: CAFFE_ENFORCE(0 <= idx && idx < data.dim(0)), GatherOp at 0cdd09da6
        (
            {"data": random((3, 2)), "ind": np.array([0, 3], np.int32)},
            ShapeError,
            "'ind'.*\\[0, 3\\)",
        ),
        ({"data": random((3, 2)), "ind": np.array([-1], np.int64)}, ShapeError, "'ind'"),
        # DispatchHelper<int32, int64> refused other index types
        ({"data": random((3, 2)), "ind": np.array([0.0])}, DTypeError, "'ind'"),
        # CAFFE_ENFORCE_GE(data.ndim(), 1)
        ({"data": np.array(1.0, np.float32), "ind": np.array([0], np.int32)}, ShapeError, "'data'"),
    ],
)
def test_gather_refusals_name_the_blob_and_write_nothing(inputs, error, match):
    ws = Workspace()
    for name, value in inputs.items():
        ws.feed(name, value)
    ws.feed("out", np.zeros(1, np.float32))
    with pytest.raises(error, match=match):
        ws.run_operator_once(core.CreateOperator("Gather", list(inputs), ["out"]))
    np.testing.assert_array_equal(ws.fetch("out"), np.zeros(1, np.float32))


# --- SparseToDense -----------------------------------------------------------------
def test_sparse_to_dense_adds_repeated_rows():
    indices = np.array([3, 1, 3], np.int64)
    values = random((3, 2), 2)
    expected = np.zeros((4, 2), np.float32)
    for k, i in enumerate(indices):
        expected[i] += values[k]
    np.testing.assert_allclose(run1("SparseToDense", {"i": indices, "v": values}), expected)
    like = np.zeros((6, 7), np.float32)
    out = run1("SparseToDense", {"i": indices, "v": values, "like": like})
    assert out.shape == (6, 2)
    out = run1("SparseToDense", {"i": indices, "v": values}, output_first_dim=5)
    assert out.shape == (5, 2)


@pytest.mark.parametrize(
    "inputs, args, error, match",
    [
        ({"i": np.array([[0]], np.int32), "v": random((1, 2))}, {}, ShapeError, "'i'.*1-D"),
        ({"i": np.array([0, 1], np.int32), "v": random((3, 2))}, {}, ShapeError, "'v'"),
        (
            {"i": np.array([4], np.int32), "v": random((1, 2))},
            {"output_first_dim": 2},
            ShapeError,
            "'i'",
        ),
        ({"i": np.array([0], np.int32), "v": np.array(["x"], object)}, {}, DTypeError, "'v'"),
    ],
)
def test_sparse_to_dense_refusals(inputs, args, error, match):
    ws = Workspace()
    for name, value in inputs.items():
        ws.feed(name, value)
    with pytest.raises(error, match=match):
        ws.run_operator_once(core.CreateOperator("SparseToDense", list(inputs), ["o"], **args))


def test_sparse_to_dense_output_first_dim_excludes_a_third_input():
    # CAFFE_ENFORCE_EQ(InputSize(), 2) when output_first_dim > 0
    ws = Workspace()
    ws.feed("i", np.array([0], np.int32))
    ws.feed("v", random((1, 2)))
    ws.feed("like", random((3, 2)))
    with pytest.raises(ArgumentError, match="output_first_dim"):
        ws.run_operator_once(
            core.CreateOperator("SparseToDense", ["i", "v", "like"], ["o"], output_first_dim=3)
        )


# --- gradients ------------------------------------------------------------------------
def test_gather_gradient_is_a_gradient_slice_without_ops():
    ops, g_input = gradient_of("Gather", ["data", "ind"], ["out"])
    assert ops == []
    assert g_input == [core.GradientSlice("ind", "out_grad"), None]
    assert isinstance(g_input[0], core.GradientSlice)


def test_gather_dense_gradient_writes_sparse_to_dense():
    ops, g_input = gradient_of("Gather", ["data", "ind"], ["out"], dense_gradient=True)
    assert ops == [
        (
            "SparseToDense",
            "",
            ["ind", "out_grad", "data"],
            ["data_grad"],
            [("dense_gradient", 1)],
            True,
        )
    ]
    assert g_input == ["data_grad", None]


def test_gather_dense_gradient_matches_finite_differences():
    op = core.CreateOperator("Gather", ["data", "ind"], ["out"], dense_gradient=True)
    data = random((4, 3), 3, np.float64)
    assert_gradient_close(op, [data, np.array([2, 0, 2, 3], np.int32)], 0)


def test_gather_dense_gradient_of_2d_indices_fails_like_caffe2():
    # SparseToDense enforced 1-D indices (CAFFE_ENFORCE_EQ(ndim, 1)); Caffe2's
    # Gather with dense_gradient therefore only differentiated 1-D indices.
    op = core.CreateOperator("Gather", ["data", "ind"], ["out"], dense_gradient=True)
    with pytest.raises(ShapeError, match="'ind'.*1-D"):
        assert_gradient_close(op, [random((4, 3), 3, np.float64), np.array([[2, 0]], np.int32)], 0)


def test_gather_sparse_gradient_densified_matches_finite_differences():
    data = random((5, 2), 4, np.float64)
    ind = np.array([1, 4, 1], np.int64)
    weights = random((3, 2), 5, np.float64)
    ops, g_input = gradient_of("Gather", ["data", "ind"], ["out"])
    slice_ = g_input[0]
    ws = run_op("Gather", {"data": data, "ind": ind}, ["out"])
    ws.feed("out_grad", weights)
    dense = run1(
        "SparseToDense", {"i": ws.fetch(slice_.indices), "v": ws.fetch(slice_.values), "d": data}
    )

    def loss(x):
        return float(np.sum(run1("Gather", {"data": x, "ind": ind}) * weights))

    np.testing.assert_allclose(dense, numeric_gradient(loss, data.copy()), rtol=1e-6, atol=1e-9)


def test_sparse_to_dense_gradient_is_a_gather_and_matches_finite_differences():
    ops, g_input = gradient_of("SparseToDense", ["i", "v"], ["o"])
    assert ops == [("Gather", "", ["o_grad", "i"], ["v_grad"], [], True)]
    assert g_input == [None, "v_grad"]
    op = core.CreateOperator("SparseToDense", ["i", "v"], ["o"])
    assert_gradient_close(op, [np.array([2, 0, 2], np.int32), random((3, 2), 1, np.float64)], 1)


# --- sparse gradients in the backward builder ---------------------------------------
def _embedding_net(uses):
    net = core.Net("emb")
    outs = [net.Gather(["table", "ind%d" % k], "e%d" % k) for k in range(uses)]
    total = net.Sum(outs, "total") if uses > 1 else outs[0]
    loss = net.SumElements(total, "loss")
    return net, loss


def test_backward_pass_passes_the_slice_through():
    net, loss = _embedding_net(1)
    grads = net.AddGradientOperators([loss])
    assert grads["table"] == core.GradientSlice("ind0", "e0_grad")


def test_two_gathers_of_one_table_concatenate_indices_and_values():
    # Caffe2's _MakeSparseSumOps: two Concat ops, axis 0
    net, loss = _embedding_net(2)
    grads = net.AddGradientOperators([loss])
    concat = [op for op in net.Proto().op if op.type == "Concat"]
    # Sum passed its output gradient through to both Gathers.
    assert [list(op.input) for op in concat] == [["ind1", "ind0"], ["total_grad", "total_grad"]]
    assert grads["table"] == core.GradientSlice(
        "table_grad_indices_concat", "table_grad_values_concat"
    )
    ws = Workspace()
    table = random((6, 2), 1)
    for name, value in (
        ("table", table),
        ("ind0", np.array([1, 2], np.int32)),
        ("ind1", np.array([2, 3], np.int32)),
    ):
        ws.feed(name, value)
    ws.run_net_once(net.Proto())
    dense = run1(
        "SparseToDense",
        {
            "i": ws.fetch("table_grad_indices_concat"),
            "v": ws.fetch("table_grad_values_concat"),
            "d": table,
        },
    )
    expected = np.zeros((6, 2), np.float32)
    expected[1] += 1
    expected[2] += 2
    expected[3] += 1
    np.testing.assert_array_equal(dense, expected)


def test_a_table_read_sparsely_and_densely_cannot_be_accumulated():
    # Caffe2 (core.py _VerifyGradientGenerators, 0cdd09da6 and 042e8ede4)
    # refused to add up a mix of sparse and dense gradients.
    net = core.Net("mixed")
    e = net.Gather(["table", "ind"], "e")
    d = net.Scale("table", "scaled")
    loss = net.SumElements(
        net.Sum([net.SumElements(e, "le"), net.SumElements(d, "ld")], "s"), "loss"
    )
    with pytest.raises(GradientError, match="mix of sparse and dense"):
        net.AddGradientOperators([loss])


def test_sgd_updates_only_the_gathered_rows():
    workspace.ResetWorkspace()
    from caffe2rnn.model_helper import ModelHelper

    model = ModelHelper(name="sparse_sgd")
    table = model.param_init_net.GaussianFill([], "table", shape=[6, 3])
    model.params.append(table)
    emb = model.net.Gather([table, "ind"], "emb")
    loss = model.net.SumElements(emb, "loss")
    model.AddGradientOperators([loss])
    assert isinstance(model.param_to_grad[table], core.GradientSlice)
    optimizer.build_sgd(model, base_learning_rate=0.5)
    workspace.FeedBlob("ind", np.array([4, 1, 4], np.int32))
    workspace.RunNetOnce(model.param_init_net)
    before = workspace.FetchBlob("table").copy()
    workspace.RunNetOnce(model.net)
    after = workspace.FetchBlob("table")
    expected = before.copy()
    expected[1] -= 0.5
    expected[4] -= 2 * 0.5
    np.testing.assert_allclose(after, expected, rtol=1e-6)


# --- LengthsGather -------------------------------------------------------------------------
def test_lengths_gather_concatenates_the_picked_ranges():
    items = np.arange(12, dtype=np.float32).reshape(6, 2)
    lengths = np.array([1, 3, 2], np.int32)
    out = run1(
        "LengthsGather", {"items": items, "l": lengths, "ind": np.array([2, 0, 2], np.int64)}
    )
    np.testing.assert_array_equal(out, items[[4, 5, 0, 4, 5]])
    run_fails(
        "LengthsGather",
        {"items": items, "l": lengths, "ind": np.array([3], np.int32)},
        ShapeError,
        "'ind'",
    )
    run_fails(
        "LengthsGather",
        {"items": items, "l": np.array([1, 1], np.int32), "ind": np.array([0], np.int32)},
        ShapeError,
        "LENGTHS must match",
    )


# --- EnsureDense ---------------------------------------------------------------------------
def test_ensure_dense_copies_and_densifies_a_sparse_gradient():
    x = random((4, 2), 1)
    np.testing.assert_array_equal(run1("EnsureDense", {"x": x}), x)
    ops, g_input = gradient_of("EnsureDense", ["x"], ["y"])
    assert ops == [] and g_input == ["y_grad"]
    ops, g_input = gradient_of("EnsureDense", ["x"], ["y"], g_output=[core.GradientSlice("i", "v")])
    assert ops == [("SparseToDense", "", ["i", "v", "x"], ["x_grad"], [], True)]
    # a Gather's slice made dense for a dense consumer (EnsureDense, then Gather)
    net = core.Net("dense_table")
    dense = net.EnsureDense(["table"], "dense")
    loss = net.SumElements(net.Gather([dense, "ind"], "e"), "loss")
    grads = net.AddGradientOperators([loss])
    assert grads["table"] == "table_grad"
    ws = Workspace()
    ws.feed("table", random((4, 2), 2))
    ws.feed("ind", np.array([1, 1, 3], np.int32))
    ws.run_net_once(net.Proto())
    np.testing.assert_array_equal(ws.fetch("table_grad"), [[0, 0], [2, 2], [0, 0], [1, 1]])
    run_fails("EnsureDense", {"x": np.array(1.0, np.float32)}, ShapeError, "'x'")


def test_batch_gather_and_its_gradient():
    data = random((3, 5, 2), 1, np.float64)
    indices = np.array([[4, 0], [4, 2]], np.int64)
    out = run1("BatchGather", {"D": data, "I": indices})
    assert out.shape == (3, 2, 2, 2)
    np.testing.assert_array_equal(out, data[:, indices])
    op = core.CreateOperator("BatchGather", ["D", "I"], ["Y"])
    assert_gradient_close(op, [data, indices], 0)  # index 4 is read twice: its rows add up
    with pytest.raises(ShapeError, match=r"input 1 \('I'\) holds indices from 0 to 5"):
        run1("BatchGather", {"D": data, "I": np.array([0, 5], np.int32)})


class OutOfBounds(Exception):
    pass


def cpp_batch_gather(data, indices):
    """BatchGatherOp::DoRunWithType (batch_gather_ops.h, 042e8ede4): the check inside the loop."""
    out = np.zeros((data.shape[0],) + indices.shape + data.shape[2:], data.dtype)
    block = int(np.prod(data.shape[2:]))
    flat_out = out.reshape(data.shape[0], indices.size * block)
    for batch in range(data.shape[0]):
        for i, idx in enumerate(indices.reshape(-1)):
            if not 0 <= idx < data.shape[1]:
                raise OutOfBounds()
            flat_out[batch, i * block : (i + 1) * block] = data[batch, idx].reshape(-1)
    return out


def cpp_batch_gather_gradient(data, indices, grad):
    if data.dtype != np.float32:
        raise OutOfBounds()  # DoRunWithOtherType2: CAFFE_THROW
    if grad.shape[0] != data.shape[0]:
        raise OutOfBounds()
    block, n = int(np.prod(data.shape[2:])), indices.size
    out = np.zeros(data.shape, np.float32).reshape(data.shape[0], data.shape[1] * block)
    g = grad.reshape(-1)
    for batch in range(grad.shape[0]):
        for i, idx in enumerate(indices.reshape(-1)):
            if not 0 <= idx < data.shape[1]:
                raise OutOfBounds()
            lo = i * block + batch * n * block
            if lo + block > g.size:
                raise OutOfBounds()
            out[batch, idx * block : (idx + 1) * block] += g[lo : lo + block]
    return out.reshape(data.shape)


@pytest.mark.parametrize(
    "data_shape, index_values",
    [((2, 4, 3), [[3, 0], [0, 0]]), ((0, 4, 3), [7, -1]), ((2, 4), [4]), ((3, 2, 1, 2), [1])],
)
def test_batch_gather_matches_the_cpp(data_shape, index_values):
    data = np.arange(int(np.prod(data_shape)), dtype=np.float32).reshape(data_shape)
    indices = np.array(index_values, np.int32)
    try:
        want = cpp_batch_gather(data, indices)
    except OutOfBounds:
        with pytest.raises(ShapeError, match="indices"):
            run1("BatchGather", {"D": data, "I": indices})
        return
    got = run1("BatchGather", {"D": data, "I": indices})
    assert got.shape == want.shape
    np.testing.assert_array_equal(got, want)
    grad = np.arange(got.size, dtype=np.float32).reshape(got.shape) + 1
    np.testing.assert_array_equal(
        run1("BatchGatherGradient", {"D": data, "I": indices, "G": grad}),
        cpp_batch_gather_gradient(data, indices, grad),
    )


def test_batch_gather_gradient_refuses_other_element_types_and_short_gradients():
    indices = np.array([1, 0], np.int64)
    grad = np.ones((2, 2, 3), np.float32)
    with pytest.raises(DTypeError, match="not implemented on tensor of type int32"):
        run1("BatchGatherGradient", {"D": np.ones((2, 4, 3), np.int32), "I": indices, "G": grad})
    with pytest.raises(ShapeError, match="at least 12 values"):
        run1(
            "BatchGatherGradient",
            {"D": np.ones((2, 4, 3), np.float32), "I": indices, "G": grad[:, :1]},
        )
    with pytest.raises(ShapeError, match="batch sizes should be the same"):
        run1(
            "BatchGatherGradient",
            {"D": np.ones((2, 4, 3), np.float32), "I": indices, "G": grad[:1]},
        )
    # a dOUTPUT of another shape but enough values: read flat, as the C++ read it
    flat_grad = np.arange(2 * 9, dtype=np.float32).reshape(2, 9) + 1
    data = np.ones((2, 4, 3), np.float32)
    np.testing.assert_array_equal(
        run1("BatchGatherGradient", {"D": data, "I": indices, "G": flat_grad}),
        cpp_batch_gather_gradient(data, indices, flat_grad),
    )
