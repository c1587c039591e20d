"""The update ops of Caffe2 042e8ede4 (2017-12): SparseMomentumSGDUpdate,
RowWiseSparseAdagrad, Adagrad's ``decay`` and YellowFin, against formulas
written here."""

import math

import numpy as np
import pytest
from ops_testing import random, run_op
from test_ops_sgd import run_in_place

from caffe2rnn import core
from caffe2rnn.errors import OutOfRangeError, ShapeError
from caffe2rnn.runtime import Workspace


def run_keeping(op_type, feeds, inputs, outputs, **args):
    ws, kept = run_in_place(op_type, feeds, inputs, outputs, **args)
    assert kept, "in-place memory replaced"
    return ws


def test_adagrad_decay():
    w, g = random((2, 3), 1, np.float64), random((2, 3), 2, np.float64)
    h = random((2, 3), 3, np.float64, 0, 1)
    ws = run_op(
        "Adagrad", {"w": w, "h": h, "g": g, "lr": np.array([-0.1])}, ["w2", "h2"], decay=0.5
    )
    h_ref = 0.5 * h + g * g
    np.testing.assert_allclose(ws.fetch("h2"), h_ref, rtol=1e-12)
    np.testing.assert_allclose(
        ws.fetch("w2"), w - 0.1 * g / (np.sqrt(h_ref) + np.float32(1e-5)), rtol=1e-12
    )


def test_adagrad_decay_is_not_read_before_e6():
    """adagrad_op.h at 0cdd09da6 (E5): AdagradOp reads epsilon only; h += g * g."""
    w, g = random((2, 3), 1, np.float64), random((2, 3), 2, np.float64)
    h = random((2, 3), 3, np.float64, 0, 1)
    ws = Workspace()
    for name, value in {"w": w, "h": h, "g": g, "lr": np.array([-0.1])}.items():
        ws.feed(name, value)
    op = core.CreateOperator("Adagrad", ["w", "h", "g", "lr"], ["w2", "h2"], decay=0.5)
    ws.run_operator_once(op, era="E5")
    np.testing.assert_allclose(ws.fetch("h2"), h + g * g, rtol=1e-12)
    ws.run_operator_once(op, era="E6")
    np.testing.assert_allclose(ws.fetch("h2"), 0.5 * h + g * g, rtol=1e-12)


@pytest.mark.parametrize("nesterov", [0, 1])
@pytest.mark.parametrize("indices", [[3, 0], [1, 1, 2]])
def test_sparse_momentum_sgd_update(nesterov, indices):
    w, m = random((4, 2), 1, np.float64), random((4, 2), 2, np.float64)
    g = random((len(indices), 2), 3, np.float64)
    feeds = {"g": g, "m": m, "lr": np.array([0.25]), "w": w, "i": np.array(indices, np.int64)}
    ws = run_keeping(
        "SparseMomentumSGDUpdate",
        feeds,
        ["g", "m", "lr", "w", "i"],
        ["g_out", "m", "w"],
        momentum=0.5,
        nesterov=nesterov,
    )
    w_ref, m_ref, g_ref = w.copy(), m.copy(), np.zeros_like(g)
    for k, idx in enumerate(indices):
        if nesterov:
            m_new = 0.5 * m_ref[idx] + 0.25 * g[k]
            step = 1.5 * m_new - 0.5 * m_ref[idx]
        else:
            step = m_new = 0.25 * g[k] + 0.5 * m_ref[idx]
        m_ref[idx], g_ref[k] = m_new, step
        w_ref[idx] -= step
    np.testing.assert_allclose(ws.fetch("w"), w_ref, rtol=1e-12)
    np.testing.assert_allclose(ws.fetch("m"), m_ref, rtol=1e-12)
    np.testing.assert_allclose(ws.fetch("g_out"), g_ref, rtol=1e-12)


def test_sparse_momentum_sgd_update_refuses_index_past_the_rows():
    """Caffe2 enforced offsetIdx + block_size <= param.size() (momentum_sgd_op.h)."""
    feeds = {"g": random((1, 2)), "m": random((3, 2)), "lr": np.array([0.1], np.float32)}
    feeds.update({"w": random((3, 2)), "i": np.array([3])})
    ws = Workspace()
    for name, value in feeds.items():
        ws.feed(name, value)
    op = core.CreateOperator("SparseMomentumSGDUpdate", list(feeds), ["g", "m", "w"])
    with pytest.raises((ShapeError, OutOfRangeError), match=r"input 4 \('i'\)"):
        ws.run_operator_once(op)
    np.testing.assert_array_equal(ws.fetch("w"), feeds["w"])


@pytest.mark.parametrize("indices", [[2, 0], [1, 1]])
def test_row_wise_sparse_adagrad(indices):
    w, g = random((3, 4), 1, np.float64), random((len(indices), 4), 2, np.float64)
    h = random((3,), 3, np.float64, 0, 1)
    feeds = {"w": w, "h": h, "i": np.array(indices, np.int32), "g": g, "lr": np.array([-0.5])}
    ws = run_keeping(
        "RowWiseSparseAdagrad", feeds, ["w", "h", "i", "g", "lr"], ["w", "h"], epsilon=0.25
    )
    w_ref, h_ref = w.copy(), h.copy()
    for k, idx in enumerate(indices):
        h_ref[idx] += np.mean(g[k] ** 2)
        w_ref[idx] += g[k] * -0.5 / (np.sqrt(h_ref[idx]) + 0.25)
    np.testing.assert_allclose(ws.fetch("w"), w_ref, rtol=1e-12)
    np.testing.assert_allclose(ws.fetch("h"), h_ref, rtol=1e-12)


def test_row_wise_sparse_adagrad_needs_one_history_value_per_row():
    """CAFFE_ENFORCE_EQ(param.dims()[0], moment.size()) (adagrad_op.h, 042e8ede4)."""
    feeds = {"w": random((3, 4)), "h": random((12,)), "i": np.array([0]), "g": random((1, 4))}
    feeds["lr"] = np.array([-0.5], np.float32)
    with pytest.raises(ShapeError, match=r"input 1 \('h'\).*one per row"):
        run_op("RowWiseSparseAdagrad", feeds, ["w", "h"])


class YellowFinReference:
    """YellowFin's statistics, written from the paper's Algorithm 1 and the op's
    documented conventions (curvature window of log ‖g‖², debiased averages)."""

    def __init__(self, w, beta=0.999, width=20, eps=1e-6, mu=0.0, lr=0.1):
        self.w, self.m = w.copy(), np.zeros_like(w)
        self.beta, self.width, self.eps = beta, width, eps
        self.mu, self.lr = mu, lr
        self.g_avg = np.zeros_like(w)
        self.norm_avg = self.norm2_avg = self.min_avg = self.max_avg = self.dist_avg = 0.0
        self.window = np.zeros(width)

    def step(self, g, t):
        b = self.beta
        deb = 1.0 / (1.0 - b**t)
        self.m = self.mu * self.m + self.lr * g
        self.w = self.w - self.m
        self.g_avg = b * self.g_avg + (1 - b) * g
        norm2 = max(self.eps, float(np.sum(g * g)))
        self.norm2_avg = b * self.norm2_avg + (1 - b) * norm2
        self.norm_avg = b * self.norm_avg + (1 - b) * math.sqrt(norm2)
        self.window[(t - 1) % self.width] = math.log(norm2)
        valid = self.window[: min(self.width, t)]
        self.min_avg = b * self.min_avg + (1 - b) * valid.min()
        self.max_avg = b * self.max_avg + (1 - b) * valid.max()
        h_min = max(self.eps, math.exp(self.min_avg * deb))
        h_max = max(self.eps, math.exp(self.max_avg * deb))
        variance = max(self.eps, self.norm2_avg * deb - float(np.sum((self.g_avg * deb) ** 2)))
        self.dist_avg = b * self.dist_avg + (1 - b) * self.norm_avg / self.norm2_avg
        if t > 1:
            p = (self.dist_avg * deb * h_min) ** 2 / (2 * variance)
            w3 = (-math.sqrt(p * p + 4.0 / 27.0 * p**3) - p) / 2
            root_w = math.copysign(abs(w3) ** (1 / 3), w3 if w3 != 0 else -1)
            y = root_w - p / 3 / root_w
            ratio = math.sqrt(h_max / h_min)
            mu_star = max((y + 1) ** 2, ((ratio - 1) / (ratio + 1)) ** 2)
            lr_star = (1 - math.sqrt(mu_star)) ** 2 / h_min
            self.mu = b * self.mu + (1 - b) * mu_star
            self.lr = b * self.lr + (1 - b) * lr_star


def test_yellowfin_follows_the_reference_for_several_steps():
    rs = np.random.RandomState(0)
    w0 = rs.uniform(-1, 1, (3, 2))
    blobs = {
        "w": w0.copy(),
        "m": np.zeros((3, 2)),
        "lr": np.array([0.1]),
        "mu": np.array([0.0]),
        "win": np.zeros(4),
        "g_avg": np.zeros((3, 2)),
        "g2_avg": np.zeros((3, 2)),
        "mem": np.zeros(5),
    }
    names = list(blobs)
    ws = Workspace()
    for name, value in blobs.items():
        ws.feed(name, value)
    op = core.CreateOperator(
        "YellowFin", names + ["g", "iter"], names, beta=0.5, curv_win_width=4, epsilon=1e-6
    )
    ref = YellowFinReference(w0, beta=0.5, width=4)
    for t in range(1, 9):
        g = rs.uniform(-1, 1, (3, 2)) + ws.fetch("w")  # the gradient of ½‖w‖², with noise
        ws.feed("g", g)
        ws.feed("iter", np.array([t], np.int64))
        ws.run_operator_once(op)
        ref.step(g, t)
        np.testing.assert_allclose(ws.fetch("w"), ref.w, rtol=1e-6, atol=1e-12)
        np.testing.assert_allclose(ws.fetch("mu")[0], ref.mu, rtol=1e-6, atol=1e-12)
        np.testing.assert_allclose(ws.fetch("lr")[0], ref.lr, rtol=1e-6)
    assert ws.fetch("mu")[0] > 0  # the tuner moved the momentum off its start


@pytest.mark.parametrize(
    "change, match",
    [
        ({"iter": np.array([0], np.int64)}, r"input 9 \('iter'\).*at least 1"),
        ({"win": np.zeros(3)}, r"input 4 \('win'\).*at least 20"),
        ({"mem": np.zeros(4)}, r"input 7 \('mem'\).*at least 5"),
        ({"m": np.zeros((2, 3))}, r"input 1 \('m'\).*shape \(3, 2\)"),
    ],
)
def test_yellowfin_refusals(change, match):
    """Caffe2 enforced the shapes; iter < 1 or short window/memory wrote out of bounds."""
    feeds = {
        "w": random((3, 2)),
        "m": np.zeros((3, 2), np.float32),
        "lr": np.array([0.1], np.float32),
        "mu": np.array([0.0], np.float32),
        "win": np.zeros(20, np.float32),
        "g_avg": np.zeros((3, 2), np.float32),
        "g2_avg": np.zeros((3, 2), np.float32),
        "mem": np.zeros(5, np.float32),
        "g": random((3, 2), 2),
        "iter": np.array([1], np.int64),
    }
    feeds.update(
        {k: v.astype(np.float32) if v.dtype == np.float64 else v for k, v in change.items()}
    )
    ws = Workspace()
    for name, value in feeds.items():
        ws.feed(name, value)
    with pytest.raises(ShapeError, match=match):
        ws.run_operator_once(core.CreateOperator("YellowFin", list(feeds), list(feeds)[:8]))
    np.testing.assert_array_equal(ws.fetch("w"), feeds["w"])
