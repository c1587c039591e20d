"""Tanh/Sigmoid and their gradients on 0-d tensors (a loss: SumElements → Tanh)."""

import numpy as np
import pytest

from caffe2rnn import core, workspace


@pytest.mark.parametrize(
    "op,f",
    [("Tanh", np.tanh), ("Sigmoid", lambda z: 1 / (1 + np.exp(-z)))],
)
def test_activation_gradient_through_a_0d_mean(op, f):
    net = core.Net("scalar_" + op)
    mean = net.SumElements("x", "mean", average=1)
    y = getattr(net, op)(mean, "y")
    net.AddGradientOperators([y])
    x = np.random.default_rng(0).uniform(-1, 1, size=(2, 3))
    workspace.FeedBlob("x", x)
    workspace.RunNetOnce(net)
    assert workspace.FetchBlob("y").shape == ()
    np.testing.assert_allclose(workspace.FetchBlob("y"), f(x.mean()), rtol=1e-12)

    def loss(values):
        return f(values.mean())

    numeric = np.zeros_like(x)
    for i in np.ndindex(*x.shape):
        step = np.zeros_like(x)
        step[i] = 1e-6
        numeric[i] = (loss(x + step) - loss(x - step)) / 2e-6
    np.testing.assert_allclose(workspace.FetchBlob("x_grad"), numeric, rtol=1e-6, atol=1e-10)
