"""FC's two GEMM layouts (few rows: Yᵀ = W·Xᵀ; many rows: X·Wᵀ) and the cached
validation of FC / FCGradient / LSTMUnit when the shapes change between runs."""

import numpy as np
import pytest
from ops_testing import random

from caffe2rnn import core
from caffe2rnn.errors import DTypeError, ShapeError
from caffe2rnn.operators.fc import FEW_ROWS
from caffe2rnn.runtime import Workspace


@pytest.mark.parametrize("rows", [1, FEW_ROWS, FEW_ROWS + 1, 3 * FEW_ROWS])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_fc_and_its_gradient_on_both_sides_of_few_rows(rows, dtype):
    x, w, b = random((rows, 7), 1, dtype), random((9, 7), 2, dtype), random((9,), 3, dtype)
    dy = random((rows, 9), 4, dtype)
    ws = Workspace()
    for name, value in dict(X=x, W=w, b=b, dY=dy).items():
        ws.feed(name, value)
    ws.run_operator_once(core.CreateOperator("FC", ["X", "W", "b"], ["Y"]))
    ws.run_operator_once(core.CreateOperator("FCGradient", ["X", "W", "dY"], ["dW", "db", "dX"]))
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(ws.fetch("Y"), x @ w.T + b, rtol=tol, atol=tol)
    np.testing.assert_allclose(ws.fetch("dW"), dy.T @ x, rtol=tol, atol=tol)
    np.testing.assert_allclose(ws.fetch("db"), dy.sum(axis=0), rtol=tol, atol=tol)
    np.testing.assert_allclose(ws.fetch("dX"), dy @ w, rtol=tol, atol=tol)
    assert ws.fetch("Y").dtype == ws.fetch("db").dtype == dtype


def test_fc_gradient_revalidates_when_shapes_change():
    ws = Workspace()
    for name, value in dict(X=random((4, 3), 1), W=random((5, 3), 2), dY=random((4, 5), 3)).items():
        ws.feed(name, value)
    op = core.CreateOperator("FCGradient", ["X", "W", "dY"], ["dW", "db"])
    proto = core.Net("g").Proto()
    proto.op.extend([op])
    net = ws.create_net(proto)
    net.run()
    ws.feed("X", random((2, 3), 4))
    ws.feed("dY", random((2, 5), 5))
    net.run()  # a new batch size: re-planned, right sums
    np.testing.assert_allclose(ws.fetch("db"), ws.fetch("dY").sum(axis=0), rtol=1e-6)
    ws.feed("dY", random((2, 4), 6))
    with pytest.raises(ShapeError, match="input 2 \\('dY'\\).*2 x 5 = 10 elements"):
        net.run()


@pytest.mark.kernels  # runs once per kernel path (tests/conftest.py)
def test_lstm_unit_revalidates_when_shapes_change():
    n, d = 3, 2
    ws = Workspace()
    inputs = dict(
        h=random((1, n, d), 1),
        c=random((1, n, d), 2),
        gates=random((1, n, 4 * d), 3),
        seq=np.full(n, 5, np.int32),
        t=np.zeros(1, np.int32),
    )
    for name, value in inputs.items():
        ws.feed(name, value)
    proto = core.Net("lstm_step").Proto()
    proto.op.extend([core.CreateOperator("LSTMUnit", list(inputs), ["h_t", "c_t"])])
    net = ws.create_net(proto)
    net.run()
    ws.feed("gates", random((1, n, 4 * d + 1), 4))
    with pytest.raises(ShapeError, match="input 2 \\('gates'\\) has shape \\(1, 3, 9\\)"):
        net.run()
    ws.feed("gates", random((1, n, 4 * d), 5))
    ws.feed("seq", np.full(n, 5, np.int64))
    with pytest.raises(DTypeError, match="input 3 \\('seq'\\).*seq_lengths must be int32"):
        net.run()


def test_the_layout_is_a_rule_of_the_shape_not_a_timing():
    """Which way FC multiplies is decided by the shape alone, so the same net
    gives the same bits in every process (BLAS sums differently per layout at
    some shapes: 8 x 32 . 32 x 128 is one)."""
    from caffe2rnn.operators import fc_layout

    assert fc_layout.layout(8, 32, 128) == fc_layout.layout(8, 32, 128) == "(w.xT)T"
    with fc_layout.step_loop():
        picks = {shape: fc_layout.layout(*shape) for shape in [(8, 64, 256), (16, 128, 512)]}
        assert fc_layout.layout(200, 64, 256) == "x.WT"
    assert picks == {(8, 64, 256): "x.WT", (16, 128, 512): "(w.xT)T"}
    assert fc_layout.layout(200, 64, 256) == "x.wT"


_TRAIN_AND_HASH = """
import hashlib, numpy as np
from caffe2rnn import workspace
from caffe2rnn.cnn import CNNModelHelper
from caffe2rnn.recurrent import LSTM
T, N, D, H = 6, 8, 32, 32
model = CNNModelHelper(name="same_bits")
out = LSTM(model, "x", "seq_lengths", ("h0", "c0"), D, H, scope="lstm")
model.net.AddExternalInput("dy")
model.AddGradientOperators({out[0]: "dy"})
rng = np.random.default_rng(0)
workspace.RunNetOnce(model.param_init_net)
for name in model.GetAllParams():
    value = workspace.FetchBlob(str(name))
    workspace.FeedBlob(str(name), rng.uniform(-0.5, 0.5, value.shape).astype(np.float32))
feeds = dict(x=(T, N, D), h0=(1, N, H), c0=(1, N, H), dy=(T, N, H))
for name, shape in feeds.items():
    workspace.FeedBlob(name, rng.standard_normal(shape).astype(np.float32))
workspace.FeedBlob("seq_lengths", np.full(N, T, np.int32))
workspace.CreateNet(model.net)
for _ in range(3):
    workspace.RunNet(model.net.Proto().name)
digest = hashlib.sha256()
for name in sorted(workspace.Blobs()):
    value = workspace.FetchBlob(name)
    if isinstance(value, np.ndarray) and value.dtype.kind == "f":
        digest.update(name.encode() + value.tobytes())
print(digest.hexdigest())
"""


def test_two_processes_compute_the_same_bits():
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    runs = [
        subprocess.run(
            [sys.executable, "-c", _TRAIN_AND_HASH],
            cwd=root,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        for _ in range(2)
    ]
    assert len(runs[0]) == 64 and runs[0] == runs[1]
