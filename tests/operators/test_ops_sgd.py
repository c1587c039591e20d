"""MomentumSGD(Update), Adagrad, Adam and their sparse forms against the
update formulas written here, in place, and with clear errors."""

import numpy as np
import pytest
from ops_testing import random, run_op

from caffe2rnn import core
from caffe2rnn.errors import ArgumentError, DTypeError, EnforceNotMet, GradientError, ShapeError
from caffe2rnn.operators.gradient_maker import get_gradient_for_op
from caffe2rnn.runtime import Workspace, registry


def lr(value):
    return np.array([value], np.float32)


def run_in_place(op_type, feeds, inputs, outputs, **args):
    """Run one op; return the workspace and whether each in-place output kept its memory."""
    ws = Workspace()
    for name, value in feeds.items():
        ws.feed(name, value)
    memory = {name: ws.blob(name).value for name in outputs if name in feeds}
    ws.run_operator_once(core.CreateOperator(op_type, inputs, outputs, **args))
    kept = all(ws.blob(name).value is array for name, array in memory.items())
    return ws, kept


@pytest.mark.parametrize("nesterov", [0, 1])
def test_momentum_sgd_update(nesterov):
    g, m, w = random((3, 2), 1), random((3, 2), 2), random((3, 2), 3)
    mu, rate = 0.9, 0.1
    ws, kept = run_in_place(
        "MomentumSGDUpdate",
        {"g": g, "m": m, "lr": lr(rate), "w": w},
        ["g", "m", "lr", "w"],
        ["g", "m", "w"],
        momentum=mu,
        nesterov=nesterov,
    )
    if nesterov:
        m_new = mu * m + rate * g
        step = (1 + mu) * m_new - mu * m
    else:
        step = m_new = rate * g + mu * m
    assert kept
    np.testing.assert_allclose(ws.fetch("m"), m_new, rtol=1e-6)
    np.testing.assert_allclose(ws.fetch("g"), step, rtol=1e-6)
    np.testing.assert_allclose(ws.fetch("w"), w - step, rtol=1e-6)
    plain = run_op(
        "MomentumSGD",
        {"g": g, "m": m, "lr": lr(rate)},
        ["g2", "m2"],
        momentum=mu,
        nesterov=nesterov,
    )
    np.testing.assert_allclose(plain.fetch("g2"), step, rtol=1e-6)
    np.testing.assert_allclose(plain.fetch("m2"), m_new, rtol=1e-6)


def test_momentum_sgd_update_out_of_place_leaves_inputs_alone():
    g, m, w = random((4,), 1), random((4,), 2), random((4,), 3)
    ws = run_op("MomentumSGDUpdate", {"g": g, "m": m, "lr": lr(0.5), "w": w}, ["g2", "m2", "w2"])
    np.testing.assert_array_equal(ws.fetch("w"), w)
    np.testing.assert_allclose(ws.fetch("w2"), w - 0.5 * g, rtol=1e-6)


def test_adagrad():
    w, h, g = random((2, 3), 1), random((2, 3), 2, low=0, high=1), random((2, 3), 3)
    ws, kept = run_in_place(
        "Adagrad",
        {"w": w, "h": h, "g": g, "lr": lr(-0.1)},
        ["w", "h", "g", "lr"],
        ["w", "h"],
        epsilon=1e-4,
    )
    h_new = h + g * g
    assert kept
    np.testing.assert_allclose(ws.fetch("h"), h_new, rtol=1e-6)
    np.testing.assert_allclose(
        ws.fetch("w"), w - 0.1 * g / (np.sqrt(h_new) + np.float32(1e-4)), rtol=1e-6
    )


def adam_reference(w, m1, m2, g, rate, iteration, b1=0.9, b2=0.999, eps=1e-5):
    t = iteration + 1
    m1 = b1 * m1 + (1 - b1) * g
    m2 = b2 * m2 + (1 - b2) * g * g
    return w + rate * np.sqrt(1 - b2**t) / (1 - b1**t) * m1 / (np.sqrt(m2) + eps), m1, m2


@pytest.mark.parametrize("args", [{}, {"beta1": 0.5, "beta2": 0.75, "epsilon": 0.125}])
def test_adam(args):
    w, m1, g = (
        random((3, 2), 1, np.float64),
        random((3, 2), 2, np.float64),
        random((3, 2), 3, np.float64),
    )
    m2 = random((3, 2), 4, np.float64, 0, 1)
    feeds = {
        "w": w,
        "m1": m1,
        "m2": m2,
        "g": g,
        "lr": np.array([-0.01]),
        "it": np.array([4], np.int64),
    }
    ws, kept = run_in_place(
        "Adam", feeds, ["w", "m1", "m2", "g", "lr", "it"], ["w", "m1", "m2"], **args
    )
    named = {
        "b1": args.get("beta1", 0.9),
        "b2": args.get("beta2", 0.999),
        "eps": args.get("epsilon", 1e-5),
    }
    w_new, m1_new, m2_new = adam_reference(w, m1, m2, g, -0.01, 4, **named)
    assert kept
    np.testing.assert_allclose(ws.fetch("w"), w_new, rtol=1e-12)
    np.testing.assert_allclose(ws.fetch("m1"), m1_new, rtol=1e-12)
    np.testing.assert_allclose(ws.fetch("m2"), m2_new, rtol=1e-12)


@pytest.mark.parametrize("indices", [[2, 0], [1, 1, 3]])
def test_sparse_adagrad_updates_rows_one_index_at_a_time(indices):
    w, h = random((4, 2), 1, np.float64), random((4, 2), 2, np.float64, 0, 1)
    g = random((len(indices), 2), 3, np.float64)
    feeds = {"w": w, "h": h, "i": np.array(indices, np.int64), "g": g, "lr": np.array([-0.1])}
    ws, kept = run_in_place("SparseAdagrad", feeds, ["w", "h", "i", "g", "lr"], ["w", "h"])
    w_ref, h_ref = w.copy(), h.copy()
    for k, idx in enumerate(indices):
        h_ref[idx] += g[k] ** 2
        w_ref[idx] += -0.1 * g[k] / (np.sqrt(h_ref[idx]) + 1e-5)
    assert kept
    np.testing.assert_allclose(ws.fetch("w"), w_ref, rtol=1e-12)
    np.testing.assert_allclose(ws.fetch("h"), h_ref, rtol=1e-12)


@pytest.mark.parametrize("indices", [[0, 2], [3, 3]])
def test_sparse_adam(indices):
    w, m1 = random((4, 3), 1, np.float64), random((4, 3), 2, np.float64)
    m2 = random((4, 3), 3, np.float64, 0, 1)
    g = random((len(indices), 3), 4, np.float64)
    feeds = {"w": w, "m1": m1, "m2": m2, "i": np.array(indices, np.int32), "g": g}
    feeds.update({"lr": np.array([-0.1]), "it": np.array([0], np.int64)})
    ws, kept = run_in_place(
        "SparseAdam", feeds, ["w", "m1", "m2", "i", "g", "lr", "it"], ["w", "m1", "m2"]
    )
    w_ref, m1_ref, m2_ref = w.copy(), m1.copy(), m2.copy()
    for k, idx in enumerate(indices):
        w_ref[idx], m1_ref[idx], m2_ref[idx] = adam_reference(
            w_ref[idx], m1_ref[idx], m2_ref[idx], g[k], -0.1, 0
        )
    assert kept
    for name, expected in (("w", w_ref), ("m1", m1_ref), ("m2", m2_ref)):
        np.testing.assert_allclose(ws.fetch(name), expected, rtol=1e-12)


@pytest.mark.parametrize(
    "op_type",
    ["MomentumSGD", "MomentumSGDUpdate", "Adagrad", "SparseAdagrad", "Adam", "SparseAdam"],
)
def test_updates_have_no_gradient(op_type):
    n_in, n_out = registry.schema(op_type).inputs[0], registry.schema(op_type).outputs[0]
    op = core.CreateOperator(
        op_type, ["in%d" % i for i in range(n_in)], ["out%d" % i for i in range(n_out)]
    )
    if registry.schema(op_type).enforce_inplace:
        op = core.CreateOperator(op_type, list(op.input), list(op.input[:n_out]))
    with pytest.raises(GradientError, match="should not call gradient"):
        get_gradient_for_op(op, [o + "_grad" for o in op.output])


@pytest.mark.parametrize(
    "op_type, feeds, outputs, error, match",
    [
        (
            "Adagrad",
            {"w": random((3,)), "h": random((4,)), "g": random((3,)), "lr": lr(-1)},
            ["w", "h"],
            ShapeError,
            r"input 1 \('h'\) has shape \(4,\); expected float32 of 3 elements",
        ),
        (
            "Adagrad",
            {"w": random((3,)), "h": random((3,)), "g": random((3,)), "lr": random((0,))},
            ["w", "h"],
            ShapeError,
            r"input 3 \('lr'\).*lr\[0\] is read",
        ),
        (
            "Adam",
            {"w": random((3,)), "m1": random((3,)), "m2": random((3,)), "g": random((3,))}
            | {"lr": lr(-1), "it": np.zeros(1, np.int32)},
            ["w", "m1", "m2"],
            ShapeError,
            r"input 5 \('it'\).*int64 iteration",
        ),
        (
            "MomentumSGDUpdate",
            {
                "g": random((3,)),
                "m": random((3,)),
                "lr": lr(1),
                "w": random((3,), dtype=np.float64),
            },
            ["g", "m", "w"],
            ShapeError,
            r"input 3 \('w'\)",
        ),
        (
            "SparseAdagrad",
            {"w": random((4, 2)), "h": random((4, 2)), "i": np.array([4], np.int32)}
            | {"g": random((1, 2)), "lr": lr(-1)},
            ["w", "h"],
            ShapeError,
            r"input 2 \('i'\) holds indices from 4 to 4; expected them in \[0, 4\)",
        ),
        (
            "SparseAdagrad",
            {"w": random((4, 2)), "h": random((4, 2)), "i": np.array([1], np.int32)}
            | {"g": random((1, 3)), "lr": lr(-1)},
            ["w", "h"],
            ShapeError,
            r"input 3 \('g'\).*one row of 'w' per index",
        ),
        (
            "SparseAdagrad",
            {"w": random((4, 2)), "h": random((4, 2)), "i": np.array([1.0])}
            | {"g": random((1, 2)), "lr": lr(-1)},
            ["w", "h"],
            DTypeError,
            r"input 2 \('i'\) has type float64",
        ),
    ],
)
def test_errors_name_the_blob_and_write_nothing(op_type, feeds, outputs, error, match):
    ws = Workspace()
    for name, value in feeds.items():
        ws.feed(name, value)
    before = {name: ws.fetch(name) for name in feeds}
    with pytest.raises(error, match=match):
        ws.run_operator_once(core.CreateOperator(op_type, list(feeds), outputs))
    for name, value in before.items():
        np.testing.assert_array_equal(ws.fetch(name), value)


def test_sparse_updates_must_be_in_place():
    feeds = {"w": random((4, 2)), "h": random((4, 2)), "i": np.array([1], np.int32)}
    feeds.update({"g": random((1, 2)), "lr": lr(-1)})
    with pytest.raises(EnforceNotMet, match="same blob"):
        run_op("SparseAdagrad", feeds, ["w2", "h"])


@pytest.mark.parametrize(
    "policy, args, want",
    [
        # LinearWarmupLearningRate / ConstantWarmupLearningRate (learning_rate_functors.h,
        # 042e8ede4): iter >= num_iter -> 1, else start + (1 - start) * iter / num_iter, or
        # the constant multiplier
        ("linearWarmup", {"start_multiplier": 0.2, "num_iter": 4}, [0.2, 0.4, 0.6, 0.8, 1.0, 1.0]),
        ("constantWarmup", {"multiplier": 0.25, "num_iter": 2}, [0.25, 0.25, 1.0, 1.0, 1.0, 1.0]),
    ],
)
def test_warmup_learning_rate_policies(policy, args, want):
    from caffe2rnn.runtime import Workspace

    got = []
    for it in range(6):
        ws = Workspace()
        ws.feed("it", np.array([it], np.int64))
        ws.run_operator_once(
            core.CreateOperator("LearningRate", ["it"], ["lr"], base_lr=-2.0, policy=policy, **args)
        )
        got.append(float(ws.fetch("lr")))
    np.testing.assert_allclose(got, [-2.0 * w for w in want], rtol=1e-6)


def test_warmup_policies_unknown_before_e6():
    """LearningRateOp at 0cdd09da6 (E5) knew fixed/step/exp/inv/poly only: any other policy
    was LOG(FATAL) "Unknown learning rate policy"."""
    from caffe2rnn.runtime import Workspace

    ws = Workspace()
    ws.feed("it", np.array([0], np.int64))
    op = core.CreateOperator("LearningRate", ["it"], ["lr"], base_lr=-1.0, policy="linearWarmup")
    with pytest.raises(ArgumentError, match="Unknown learning rate policy: linearWarmup"):
        ws.run_operator_once(op, era="E5")
    ws.run_operator_once(op, era="E6")


def test_dense_adagrad_reads_the_first_learning_rate():
    """AdagradOp (adagrad_op.h at 0cdd09da6 and 042e8ede4) passes Input(LR).data<T>() and
    reads lr[0], with no size check; SparseAdagradOp enforces a 1-element LR."""
    from caffe2rnn.runtime import Workspace

    w, h, g = random((2, 3), 1), random((2, 3), 2, low=0, high=1), random((2, 3), 3)
    ws = Workspace()
    for name, value in {"w": w, "h": h, "g": g, "lr": np.array([-0.1, 5.0], np.float32)}.items():
        ws.feed(name, value)
    ws.run_operator_once(core.CreateOperator("Adagrad", ["w", "h", "g", "lr"], ["w2", "h2"]))
    h2 = h + g * g
    np.testing.assert_allclose(ws.fetch("w2"), w - 0.1 * g / (np.sqrt(h2) + 1e-5), rtol=1e-6)
    ws.feed("lr", np.zeros(0, np.float32))
    with pytest.raises(ShapeError, match="lr\\[0\\] is read"):
        ws.run_operator_once(core.CreateOperator("Adagrad", ["w", "h", "g", "lr"], ["w2", "h2"]))


def test_adam_as_adam_compute():
    """AdamOp::RunOnDevice + adam_compute (adam_op.h at 042e8ede4), in float32 as there:
    t = iter[0] + 1 (element 0 of the int64 counter, no size check),
    correction = sqrt(1 - pow(beta2, t)) / (1 - pow(beta1, t)) in double, then float;
    m = m*b1 + g*(1-b1); v = v*b2 + g*g*(1-b2); w += lr[0]*correction*m / (sqrt(v) + eps)."""
    from caffe2rnn.runtime import Workspace

    f = np.float32
    w, m, v, g = (random((5,), k) for k in range(4))
    v = np.abs(v)
    lr, it = np.array([-0.01], f), np.array([6, 99], np.int64)
    b1, b2, eps = f(0.8), f(0.99), f(1e-4)
    t = 7
    correction = f(np.sqrt(1.0 - np.float64(b2) ** t) / (1.0 - np.float64(b1) ** t))
    m_new = m * b1 + g * (f(1) - b1)
    v_new = v * b2 + g * g * (f(1) - b2)
    w_new = w + lr[0] * correction * m_new / (np.sqrt(v_new) + eps)
    ws = Workspace()
    for name, value in {"w": w, "m": m, "v": v, "g": g, "lr": lr, "it": it}.items():
        ws.feed(name, value)
    ws.run_operator_once(
        core.CreateOperator(
            "Adam",
            ["w", "m", "v", "g", "lr", "it"],
            ["w", "m", "v"],
            beta1=0.8,
            beta2=0.99,
            epsilon=1e-4,
        )
    )
    np.testing.assert_array_equal(ws.fetch("m"), m_new)
    np.testing.assert_array_equal(ws.fetch("v"), v_new)
    np.testing.assert_allclose(ws.fetch("w"), w_new, rtol=1e-6)
