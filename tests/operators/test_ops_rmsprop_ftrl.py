"""RmsProp, Ftrl and SparseFtrl against the update formulas written here
(Caffe2 caffe2/sgd/rmsprop_op.cc, ftrl_op.cc at 0cdd09da6), in place and out
of place, and their refusals.

Tolerance 1e-6 on float64 data: the hyperparameters travel as 32-bit floats
(``Argument.f``), as they did in Caffe2.
"""

import numpy as np
import pytest
from ops_testing import random, run_op

from caffe2rnn import core
from caffe2rnn.errors import ArgumentError, GradientError, OutOfRangeError, ShapeError
from caffe2rnn.operators.gradient_maker import get_gradient_for_op
from caffe2rnn.runtime import Workspace

RTOL = 1e-6


def rmsprop_reference(g, ms, mom, lr, decay, momentum, eps):
    ms_new = ms + (1 - decay) * (g * g - ms)
    mom_new = momentum * mom + lr * g / np.sqrt(eps + ms_new)
    return mom_new, ms_new, mom_new


@pytest.mark.parametrize("in_place", [False, True])
@pytest.mark.parametrize("args", [{}, {"decay": 0.5, "momentum": 0.25, "epsilon": 0.125}])
def test_rmsprop(in_place, args):
    g, mom = random((3, 4), 1, np.float64), random((3, 4), 2, np.float64)
    ms = random((3, 4), 3, np.float64, 0.1, 1.0)
    outputs = ["g", "ms", "mom"] if in_place else ["g_o", "ms_o", "mom_o"]
    ws = run_op("RmsProp", {"g": g, "ms": ms, "mom": mom, "lr": np.array([0.3])}, outputs, **args)
    hyper = [args.get("decay", 0.9), args.get("momentum", 0.0), args.get("epsilon", 1e-5)]
    expected = rmsprop_reference(g, ms, mom, 0.3, *hyper)
    for name, value in zip(outputs, expected):
        np.testing.assert_allclose(ws.fetch(name), value, rtol=RTOL)


def ftrl_reference(w, nz, g, alpha, beta, l1, l2):
    n, z = nz[..., 0], nz[..., 1]
    sigma = (np.sqrt(n + g * g) - np.sqrt(n)) / alpha
    z = z + g - sigma * w
    n = n + g * g
    w = np.where(np.abs(z) > l1, (np.sign(z) * l1 - z) / ((beta + np.sqrt(n)) / alpha + l2), 0.0)
    return w, np.stack([n, z], axis=-1)


HYPER = {"alpha": 0.05, "beta": 0.5, "lambda1": 0.01, "lambda2": 0.02}


@pytest.mark.parametrize("in_place", [False, True])
@pytest.mark.parametrize("alpha_as_input", [False, True])
def test_ftrl(in_place, alpha_as_input):
    w, g = random((3, 2), 1, np.float64), random((3, 2), 2, np.float64)
    nz = np.stack([random((3, 2), 3, np.float64, 0, 1), random((3, 2), 4, np.float64)], -1)
    feeds = {"w": w, "nz": nz, "g": g}
    args = dict(HYPER)
    if alpha_as_input:
        feeds["alpha"] = np.array([args.pop("alpha")])
    outputs = ["w", "nz"] if in_place else ["w_o", "nz_o"]
    ws = run_op("Ftrl", feeds, outputs, **args)
    w_ref, nz_ref = ftrl_reference(w, nz, g, 0.05, 0.5, 0.01, 0.02)
    np.testing.assert_allclose(ws.fetch(outputs[0]), w_ref, rtol=RTOL)
    np.testing.assert_allclose(ws.fetch(outputs[1]), nz_ref, rtol=RTOL)


def test_ftrl_defaults_and_zeroed_weights():
    """Default alpha 0.005, beta 1, lambda1 = lambda2 = 0.001; |z| <= lambda1 gives w = 0."""
    w = np.array([0.5, 0.0, 0.0])
    nz = np.zeros((3, 2))
    g = np.array([1.0, -0.0005, 0.0])
    ws = run_op("Ftrl", {"w": w, "nz": nz, "g": g}, ["w", "nz"])
    w_ref, nz_ref = ftrl_reference(w, nz, g, 0.005, 1.0, 0.001, 0.001)
    np.testing.assert_allclose(ws.fetch("w"), w_ref, rtol=RTOL)
    assert ws.fetch("w")[1] == 0 and ws.fetch("w")[2] == 0
    np.testing.assert_allclose(ws.fetch("nz"), nz_ref, rtol=RTOL)


@pytest.mark.parametrize("indices", [[0, 2], [2, 2, 1]])
def test_sparse_ftrl_updates_rows_one_index_at_a_time(indices):
    w = random((4, 2), 1, np.float64)
    nz = np.stack([random((4, 2), 2, np.float64, 0, 1), random((4, 2), 3, np.float64)], -1)
    g = random((len(indices), 2), 4, np.float64)
    ws = Workspace()
    for name, value in {"w": w, "nz": nz, "i": np.array(indices, np.int32), "g": g}.items():
        ws.feed(name, value)
    memory = ws.blob("w").value
    ws.run_operator_once(
        core.CreateOperator("SparseFtrl", ["w", "nz", "i", "g"], ["w", "nz"], **HYPER)
    )
    w_ref, nz_ref = w.copy(), nz.copy()
    for k, idx in enumerate(indices):
        w_ref[idx], nz_ref[idx] = ftrl_reference(
            w_ref[idx], nz_ref[idx], g[k], 0.05, 0.5, 0.01, 0.02
        )
    assert ws.blob("w").value is memory
    np.testing.assert_allclose(ws.fetch("w"), w_ref, rtol=RTOL)
    np.testing.assert_allclose(ws.fetch("nz"), nz_ref, rtol=RTOL)


@pytest.mark.parametrize(
    "op_type, feeds, outputs, args, error, match",
    [
        (  # Caffe2's constructor enforce (ftrl_op.h)
            "Ftrl",
            {"w": random((2,)), "nz": random((2, 2)), "g": random((2,)), "a": random((1,))},
            ["w", "nz"],
            {"alpha": 0.1},
            ArgumentError,
            "Cannot specify alpha by both input and argument",
        ),
        (  # CAFFE_ENFORCE_EQ(Input(ALPHA).size(), 1, "alpha should be real-valued")
            "Ftrl",
            {"w": random((2,)), "nz": random((2, 2)), "g": random((2,)), "a": random((2,))},
            ["w", "nz"],
            {},
            ShapeError,
            r"input 3 \('a'\).*alpha should be real-valued",
        ),
        (  # CAFFE_ENFORCE_EQ(grad.size() * 2, n_z.size())
            "Ftrl",
            {"w": random((2,)), "nz": random((2,)), "g": random((2,))},
            ["w", "nz"],
            {},
            ShapeError,
            r"input 1 \('nz'\).*4 elements",
        ),
        (  # DCHECK only in Caffe2: an index past the rows wrote out of bounds
            "SparseFtrl",
            {"w": random((2, 3)), "nz": random((2, 3, 2)), "i": np.array([2]), "g": random((1, 3))},
            ["w", "nz"],
            {},
            (ShapeError, OutOfRangeError),
            r"input 2 \('i'\).*\[0, 2\)",
        ),
        (  # CAFFE_ENFORCE(LR size 1)
            "RmsProp",
            {"g": random((2,)), "ms": random((2,)), "mom": random((2,)), "lr": random((2,))},
            ["g", "ms", "mom"],
            {},
            ShapeError,
            r"input 3 \('lr'\)",
        ),
        (  # CAFFE_ENFORCE(grad size == mean_squares size)
            "RmsProp",
            {"g": random((2,)), "ms": random((3,)), "mom": random((2,)), "lr": random((1,))},
            ["g", "ms", "mom"],
            {},
            ShapeError,
            r"input 1 \('ms'\)",
        ),
    ],
)
def test_refusals_name_the_blob_and_leave_inputs_alone(op_type, feeds, outputs, args, error, match):
    ws = Workspace()
    for name, value in feeds.items():
        ws.feed(name, value)
    with pytest.raises(error, match=match):
        ws.run_operator_once(core.CreateOperator(op_type, list(feeds), outputs, **args))
    for name, value in feeds.items():
        np.testing.assert_array_equal(ws.fetch(name), value)


@pytest.mark.parametrize("op_type, n_in, n_out", [("RmsProp", 4, 3), ("Ftrl", 3, 2)])
def test_no_gradient(op_type, n_in, n_out):
    op = core.CreateOperator(
        op_type, ["i%d" % i for i in range(n_in)], ["o%d" % i for i in range(n_out)]
    )
    with pytest.raises(GradientError, match="should not call gradient"):
        get_gradient_for_op(op, ["g%d" % i for i in range(n_out)])
