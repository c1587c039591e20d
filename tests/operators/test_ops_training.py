"""WeightedSum, Scale, Iter, LearningRate, Dropout: forward against formulas,
gradient makers, gradients against finite differences, and an SGD step."""

import warnings

import numpy as np
import pytest
from ops_testing import check_gradients, gradient_of, random, run1, run_op

from caffe2rnn import core
from caffe2rnn.errors import ArgumentError, DTypeError, EnforceNotMet, GradientError, ShapeError
from caffe2rnn.gradient_checker import assert_gradient_close
from caffe2rnn.operators.training import RetypedCounterWarning
from caffe2rnn.runtime import Workspace

ONE = np.array([1.0], np.float32)


def scalar(value):
    return np.array([value], np.float32)


# --- WeightedSum --------------------------------------------------------------------
def test_weighted_sum_formula():
    a, b, c = random((2, 3), 1), random((2, 3), 2), random((2, 3), 3)
    y = run1(
        "WeightedSum",
        {"a": a, "wa": scalar(0.5), "b": b, "wb": scalar(-2.0), "c": c, "wc": scalar(3.0)},
    )
    np.testing.assert_allclose(y, 0.5 * a - 2.0 * b + 3.0 * c, rtol=1e-6)


def test_sgd_step_in_place():
    """w = w·1 + g·lr, with Iter and LearningRate driving lr (Caffe2's SGD)."""
    ws = Workspace()
    w, g = random((2, 3), 1), random((2, 3), 2)
    for name, value in {"w": w, "g": g, "ONE": ONE, "iter": np.zeros(1, np.int64)}.items():
        ws.feed(name, value)
    memory = ws.blob("w").value
    for op in [
        core.CreateOperator("Iter", ["iter"], ["iter"]),
        core.CreateOperator(
            "LearningRate", ["iter"], ["lr"], base_lr=-0.1, policy="step", stepsize=1, gamma=0.5
        ),
        core.CreateOperator("WeightedSum", ["w", "ONE", "g", "lr"], ["w"]),
    ]:
        ws.run_operator_once(op)
    assert ws.blob("w").value is memory
    np.testing.assert_allclose(ws.fetch("w"), w - 0.05 * g, rtol=1e-6)


def test_weighted_sum_only_input_0_may_be_the_output():
    ws = Workspace()
    for name, value in {"w": random((4,)), "a": ONE, "b": ONE}.items():
        ws.feed(name, value)
    with pytest.raises(EnforceNotMet, match="input 2 \\('w'\\).*in place"):
        ws.run_operator_once(core.CreateOperator("WeightedSum", ["w", "a", "w", "b"], ["w"]))


@pytest.mark.parametrize(
    "inputs, error, match",
    [
        ({"a": random((2,)), "wa": ONE, "b": random((3,))}, EnforceNotMet, "even number"),
        ({"a": random((2,)), "wa": ONE, "b": random((3,)), "wb": ONE}, ShapeError, "'b'"),
        ({"a": random((2,)), "wa": np.ones(2, np.float32)}, ShapeError, "'wa'.*1-element"),
    ],
)
def test_weighted_sum_errors(inputs, error, match):
    with pytest.raises(error, match=match):
        run1("WeightedSum", inputs)


def test_weighted_sum_should_not_be_differentiated():
    with pytest.raises(GradientError, match="should not call gradient"):
        gradient_of("WeightedSum", ["a", "wa"], ["y"])


# --- Scale -------------------------------------------------------------------------
def test_scale_forward_gradient_maker_and_gradient():
    x = random((2, 3), dtype=np.float64)
    y = run1("Scale", {"x": x}, scale=-2.5)
    assert y.dtype == np.float64
    np.testing.assert_allclose(y, -2.5 * x)
    ops, g_input = gradient_of("Scale", ["x"], ["y"], scale=-2.5)
    assert ops == [("Scale", "", ["y_grad"], ["x_grad"], [("scale", -2.5)], True)]
    assert g_input == ["x_grad"]
    check_gradients("Scale", {"x": x}, ["y"], scale=-2.5)


# --- Iter ----------------------------------------------------------------------------
def test_iter_counts_in_place():
    ws = Workspace()
    ws.feed("iter", np.array([41], np.int64))
    memory = ws.blob("iter").value
    op = core.CreateOperator("Iter", ["iter"], ["iter"])
    net = ws.create_net(_single_op_net(op))
    net.run()
    net.run()
    assert ws.blob("iter").value is memory and memory.tolist() == [43]


def test_iter_without_input_starts_at_zero():
    ws = Workspace()
    ws.run_operator_once(core.CreateOperator("Iter", [], ["it"]))
    it = ws.fetch("it")
    assert it.dtype == np.int64 and it.tolist() == [1]


@pytest.mark.parametrize(
    "value, error, match",
    [
        (np.array([1.5, 2.5], np.float32), ShapeError, "'iter'"),
        (np.array([1, 2], np.int64), ShapeError, "'iter'"),
        (np.array([-1], np.int64), EnforceNotMet, "negative"),
        (np.array([np.iinfo(np.int64).max], np.int64), EnforceNotMet, "Overflow"),
    ],
)
def test_iter_errors(value, error, match):
    ws = Workspace()
    ws.feed("iter", value)
    with pytest.raises(error, match=match):
        ws.run_operator_once(core.CreateOperator("Iter", ["iter"], ["iter"]))


@pytest.mark.parametrize("op_type", ["Iter", "AtomicIter"])
@pytest.mark.parametrize("dtype", [np.int32, np.float32, np.uint8])
def test_iter_retypes_a_counter_of_another_type_as_caffe2_did(op_type, dtype):
    """Caffe2's IncrementIter took mutable_data<int64_t>() of a 1-element counter
    of any type: a new int64 tensor. Here it starts from 0 (Caffe2's held
    whatever that memory held), one warning names the blob, and it then counts on."""
    ws = Workspace()
    ws.feed("ITER", np.array([7], dtype))
    inputs = ["ITER"]
    if op_type == "AtomicIter":
        ws.run_operator_once(core.CreateOperator("CreateMutex", [], ["mutex"]))
        inputs = ["mutex", "ITER"]
    net = ws.create_net(_single_op_net(core.CreateOperator(op_type, inputs, ["ITER"])))
    with pytest.warns(RetypedCounterWarning, match="'ITER' is %s" % np.dtype(dtype)) as record:
        net.run()
    assert len(record) == 1
    counter = ws.fetch("ITER")
    assert counter.dtype == np.int64 and counter.shape == (1,) and counter.tolist() == [1]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # int64 now: no second warning
        net.run()
    assert ws.fetch("ITER").tolist() == [2]


def test_iter_refuses_a_blob_that_is_not_a_tensor():
    ws = Workspace()
    ws.run_operator_once(core.CreateOperator("CreateMutex", [], ["iter"]))
    with pytest.raises(DTypeError, match="'iter'.*int64"):
        ws.run_operator_once(core.CreateOperator("Iter", ["iter"], ["iter"]))


def test_iter_must_be_in_place():
    with pytest.raises(EnforceNotMet, match="same blob"):
        run_op("Iter", {"iter": np.zeros(1, np.int64)}, ["other"])


def _single_op_net(op):
    from caffe2rnn.proto import caffe2_pb2

    netdef = caffe2_pb2.NetDef()
    netdef.name = "iter_net"
    netdef.op.add().CopyFrom(op)
    return netdef


# --- LearningRate ---------------------------------------------------------------------
@pytest.mark.parametrize(
    "args, it, expected",
    [
        ({"policy": "fixed"}, 7, 0.1),
        ({"policy": "step", "stepsize": 3, "gamma": 0.5}, 7, 0.1 * 0.25),
        ({"policy": "exp", "gamma": 0.9}, 3, 0.1 * 0.9**3),
        ({"policy": "inv", "gamma": 0.5, "power": 2.0}, 2, 0.1 * 2.0**-2),
        ({"policy": "poly", "power": 2.0, "max_iter": 8}, 2, 0.1 * 0.75**2),
        ({"policy": "poly", "power": 0.5, "max_iter": 8}, 8, 0.0),
    ],
)
def test_learning_rate_policies(args, it, expected):
    lr = run1("LearningRate", {"iter": np.array([it], np.int64)}, base_lr=0.1, **args)
    assert lr.shape == () and lr.dtype == np.float32
    np.testing.assert_allclose(lr, expected, rtol=1e-6)


@pytest.mark.parametrize(
    "args, match",
    [
        ({"policy": "fixed"}, "base_lr"),
        ({"base_lr": 0.1}, "policy"),
        ({"base_lr": 0.1, "policy": "cosine"}, "Unknown learning rate policy: cosine"),
        ({"base_lr": 0.1, "policy": "step", "gamma": 0.5}, "stepsize"),
        ({"base_lr": 0.1, "policy": "poly", "power": 1.0}, "max_iter > 0"),
    ],
)
def test_learning_rate_argument_errors(args, match):
    with pytest.raises(ArgumentError, match=match):
        run1("LearningRate", {"iter": np.zeros(1, np.int64)}, **args)


def test_learning_rate_poly_past_max_iter_is_an_error():
    with pytest.raises(EnforceNotMet, match="iteration 9 is past max_iter=8"):
        run1(
            "LearningRate",
            {"iter": np.array([9], np.int64)},
            base_lr=0.1,
            policy="poly",
            power=0.5,
            max_iter=8,
        )


def test_learning_rate_needs_int64_iter():
    with pytest.raises(DTypeError, match="'iter'"):
        run1("LearningRate", {"iter": np.zeros(1, np.int32)}, base_lr=0.1, policy="fixed")


@pytest.mark.parametrize("op_type, output", [("Iter", "iter"), ("LearningRate", "lr")])
def test_counters_have_no_gradient(op_type, output):
    assert gradient_of(op_type, ["iter"], [output]) == ([], [None])
    assert gradient_of("AtomicIter", ["mutex", "iter"], ["iter"]) == ([], [None, None])


# --- Dropout -------------------------------------------------------------------------
SEEDED = core.DeviceOption(0, random_seed=3)


def test_dropout_training_mask_and_scale():
    x = random((40, 50), 1)
    ws = run_op("Dropout", {"x": x}, ["y", "mask"], ratio=0.25, device_option=SEEDED)
    mask = ws.fetch("mask")
    assert mask.dtype == np.bool_ and abs(mask.mean() - 0.75) < 0.05
    np.testing.assert_allclose(ws.fetch("y"), x * mask / 0.75, rtol=1e-6)


def test_dropout_is_reproducible_with_a_seed():
    def mask():
        return run_op("Dropout", {"x": random((5, 5))}, ["y", "mask"], device_option=SEEDED).fetch(
            "mask"
        )

    np.testing.assert_array_equal(mask(), mask())


def test_dropout_test_mode_is_identity_and_leaves_mask_alone():
    x = random((3, 4))
    ws = run_op("Dropout", {"x": x}, ["y", "mask"], is_test=1)
    np.testing.assert_array_equal(ws.fetch("y"), x)
    assert ws.blob("mask").value is None
    np.testing.assert_array_equal(run1("Dropout", {"x": x}, is_test=1), x)


@pytest.mark.parametrize("ratio", [-0.1, 1.0])
def test_dropout_ratio_must_be_in_range(ratio):
    with pytest.raises(ArgumentError, match="ratio"):
        run_op("Dropout", {"x": random((2,))}, ["y", "mask"], ratio=ratio)


def test_dropout_training_needs_mask_output():
    with pytest.raises(EnforceNotMet, match="mask"):
        run1("Dropout", {"x": random((2,))})


@pytest.mark.parametrize("is_test, inputs", [(0, ["y_grad", "mask"]), (1, ["y_grad"])])
def test_dropout_gradient_maker(is_test, inputs):
    ops, g_input = gradient_of(
        "Dropout", ["x"], ["y", "mask"], ["y_grad", None], ratio=0.25, is_test=is_test
    )
    assert ops == [
        ("DropoutGrad", "", inputs, ["x_grad"], [("ratio", 0.25), ("is_test", is_test)], True)
    ]
    assert g_input == ["x_grad"]


@pytest.mark.parametrize("is_test", [0, 1])
def test_dropout_gradient(is_test):
    op = core.CreateOperator(
        "Dropout", ["x"], ["y", "mask"], ratio=0.4, is_test=is_test, device_option=SEEDED
    )
    assert_gradient_close(op, [random((4, 5), dtype=np.float64)], 0)


def test_dropout_grad_checks_mask():
    with pytest.raises(DTypeError, match="'mask'.*bool"):
        run1("DropoutGrad", {"dy": random((2, 3)), "mask": np.ones((2, 3))})


# --- ScatterWeightedSum --------------------------------------------------------------
def scatter_weighted_sum_reference(x0, w0, indices, terms):
    """Row by row, in index order: a repeated index is scaled and added again."""
    out = x0.copy().reshape(x0.shape[0], -1)
    for idx in indices:
        out[idx] *= w0
    for x, w in terms:
        rows = x.reshape(len(indices), -1)
        for k, idx in enumerate(indices):
            out[idx] += w * rows[k]
    return out.reshape(x0.shape)


@pytest.mark.parametrize("index_type", [np.int32, np.int64])
@pytest.mark.parametrize("w0", [1.0, 0.5])
def test_scatter_weighted_sum(index_type, w0):
    x0 = random((5, 2, 2), 1, np.float64)
    indices = np.array([3, 0, 3], index_type)
    a, b = random((3, 4), 2, np.float64), random((3, 2, 2), 3, np.float64)
    ws = Workspace()
    feeds = {"X": x0, "w0": scalar(w0), "I": indices, "A": a, "wa": scalar(-2.0)}
    feeds.update({"B": b, "wb": scalar(0.25)})
    for name, value in feeds.items():
        ws.feed(name, value)
    memory = ws.blob("X").value
    ws.run_operator_once(
        core.CreateOperator("ScatterWeightedSum", ["X", "w0", "I", "A", "wa", "B", "wb"], ["X"])
    )
    assert ws.blob("X").value is memory  # in place
    expected = scatter_weighted_sum_reference(x0, w0, indices, [(a, -2.0), (b, 0.25)])
    np.testing.assert_allclose(ws.fetch("X"), expected, rtol=1e-12)


@pytest.mark.parametrize(
    "feeds, inputs, error, match",
    [
        ({"I": np.array([5], np.int32)}, None, ShapeError, r"input 2 \('I'\).*\[0, 5\)"),
        ({"I": np.array([0.0])}, None, DTypeError, r"input 2 \('I'\) has type float64"),
        ({"A": random((2, 3))}, None, ShapeError, r"input 3 \('A'\)"),
        ({"wa": random((2,))}, None, ShapeError, r"input 4 \('wa'\).*1-element"),
        ({}, ["X", "w0", "I", "A", "wa", "A"], EnforceNotMet, "pairs"),
    ],
)
def test_scatter_weighted_sum_errors(feeds, inputs, error, match):
    ws = Workspace()
    values = {"X": random((5, 3)), "w0": ONE, "I": np.array([1], np.int32)}
    values.update({"A": random((1, 3)), "wa": ONE})
    values.update(feeds)
    for name, value in values.items():
        ws.feed(name, value)
    before = ws.fetch("X")
    op = core.CreateOperator("ScatterWeightedSum", inputs or ["X", "w0", "I", "A", "wa"], ["X"])
    with pytest.raises(error, match=match):
        ws.run_operator_once(op)
    np.testing.assert_array_equal(ws.fetch("X"), before)  # nothing half-written
    with pytest.raises(EnforceNotMet, match="same blob"):
        run_op("ScatterWeightedSum", values, ["Y"])
