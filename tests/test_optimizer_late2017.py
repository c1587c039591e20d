"""The optimizers and options of Caffe2's optimizer.py at 042e8ede4 (E6):
RmsProp, YellowFin, Ftrl, per-instance learning rates, learning-rate
injection, the ops of gradient clipping; and the E5 names they replaced."""

import os

import numpy as np
import pytest
from test_optimizer import PERFECT, dense_model, train

from caffe2rnn import core, eras, workspace
from caffe2rnn.errors import BuildError, ModelError
from caffe2rnn.optimizer import (
    SgdOptimizer,
    build_adagrad,
    build_ftrl,
    build_rms_prop,
    build_sgd,
    build_yellowfin,
    get_lr_injection,
    set_lr_injection,
)


@pytest.fixture(autouse=True)
def fresh_workspace():
    workspace.ResetWorkspace()
    yield
    workspace.ResetWorkspace()


@pytest.mark.parametrize(
    "build",
    [
        lambda m: build_rms_prop(m, base_learning_rate=0.1, epsilon=0.1),
        lambda m: build_yellowfin(m, base_learning_rate=0.1),
        lambda m: build_ftrl(m, engine=None, alpha=1.0, beta=0.1, lambda1=0.0, lambda2=0.0),
    ],
    ids=["rmsprop", "yellowfin", "ftrl"],
)
def test_dense_model_learns_the_perfect_weights(build):
    with eras.use("E6"):
        model, data, label = dense_model()
        optimizer = build(model)
    train(model, data, label)
    np.testing.assert_allclose(PERFECT[np.newaxis, :], workspace.FetchBlob("fc_w"), atol=1e-2)
    assert optimizer.get_auxiliary_parameters().local


def test_rms_prop_emits_rmsprop_then_momentum_sgd_update():
    with eras.use("E6"):
        model, _, _ = dense_model()
        build_rms_prop(model, base_learning_rate=0.1)
    ops = [(op.type, list(op.input), list(op.output)) for op in model.net.Proto().op]
    rms = [op for op in ops if op[0] in ("RmsProp", "MomentumSGDUpdate")]
    assert rms[:2] == [
        ("RmsProp", ["fc_w_grad", "fc_w_mean_squares", "fc_w_momentum", "ONE_0_0"],
         ["fc_w_grad_o", "fc_w_mean_squares", "fc_w_momentum"]),
        ("MomentumSGDUpdate", ["fc_w_grad_o", "fc_w_momentum", rms[1][1][2], "fc_w"],
         ["fc_w_grad_o", "fc_w_momentum", "fc_w"]),
    ]  # fmt: skip


def learning_rates(net):
    return {
        op.output[0]: [a.f for a in op.arg if a.name == "base_lr"][0]
        for op in net.Proto().op
        if op.type == "LearningRate"
    }


def test_learning_rate_blobs_per_parameter_in_e5_per_instance_in_e6():
    model, _, _ = dense_model()
    build_sgd(model, 0.1)
    assert learning_rates(model.net) == pytest.approx({"fc_w_lr": -0.1, "fc_b_lr": -0.1})
    with eras.use("E6"):
        model, _, _ = dense_model()
        optimizer = build_sgd(model, 0.1)
    name = "SgdOptimizer_%d_lr_cpu" % optimizer._instance_num
    assert learning_rates(model.net) == pytest.approx({name: -0.1})
    assert [op.input[3] for op in model.net.Proto().op if op.type == "WeightedSum"] == [name] * 2


def test_sparse_momentum_refused_in_e5_runs_in_e6():
    def add(net, init):
        w = init.ConstantFill([], "w", shape=[4, 2], value=1.0)
        SgdOptimizer(0.1, momentum=0.5)(net, init, w, core.GradientSlice("idx", "vals"))

    with pytest.raises(ModelError, match="momentum is not supported for the sparse"):
        add(core.Net("n"), core.Net("i"))
    with eras.use("E6"):
        net, init = core.Net("n"), core.Net("i")
        add(net, init)
    assert "SparseMomentumSGDUpdate" in [op.type for op in net.Proto().op]
    workspace.RunNetOnce(init)
    workspace.FeedBlob("idx", np.array([1], np.int32))
    workspace.FeedBlob("vals", np.full((1, 2), 2.0, np.float32))
    workspace.RunNetOnce(net)
    w = workspace.FetchBlob("w")
    np.testing.assert_allclose(w[1], 1 - 1.5 * 0.1 * 2.0)  # Nesterov (default): (1 + μ)·lr·g
    np.testing.assert_array_equal(w[[0, 2, 3]], 1.0)


def test_lr_injection_scales_every_step():
    with eras.use("E6"):
        model, data, label = dense_model()
        build_sgd(model, 0.1, allow_lr_injection=True)
    workspace.FeedBlob("data", data[0])
    workspace.FeedBlob("label", label[0])
    workspace.RunNetOnce(model.param_init_net)
    workspace.CreateNet(model.net, True)
    assert get_lr_injection() == 1
    set_lr_injection(0)
    before = workspace.FetchBlob("fc_w").copy()
    workspace.RunNet(model.net.Proto().name)
    np.testing.assert_array_equal(workspace.FetchBlob("fc_w"), before)  # a zero rate
    set_lr_injection(1)
    workspace.RunNet(model.net.Proto().name)
    assert not np.array_equal(workspace.FetchBlob("fc_w"), before)


CLIPPING_OPS = ("SumSqrElements", "Pow", "Max", "Div")


@pytest.mark.skipif(
    not all(core.IsOperator(t) for t in CLIPPING_OPS),
    reason="gradient clipping needs the operators %s" % ", ".join(CLIPPING_OPS),
)
def test_gradient_clipping_scales_the_rate_by_the_norm_ratio():
    with eras.use("E6"):
        model, data, label = dense_model()
        optimizer = build_sgd(model, 0.1, max_gradient_norm=1.0)
    ratio = [op for op in model.net.Proto().op if op.type == "Div"][0]
    assert list(ratio.output) == ["norm_clipped_grad_update/norm_ratio"]
    assert str(optimizer._lr_multiplier) == "norm_clipped_grad_update/norm_ratio"
    workspace.FeedBlob("data", data[3])
    workspace.FeedBlob("label", label[3])
    workspace.RunNetOnce(model.param_init_net)
    workspace.RunNetOnce(model.net)
    norm = np.sqrt(sum(np.sum(workspace.FetchBlob(g) ** 2) for g in ("fc_w_grad", "fc_b_grad")))
    expected = 1.0 / max(1.0, norm)
    np.testing.assert_allclose(
        workspace.FetchBlob("norm_clipped_grad_update/norm_ratio"), expected, rtol=1e-6
    )
    assert expected < 1


def test_build_ftrl_with_the_simd_engine_is_refused_as_caffe2_asserted():
    model, _, _ = dense_model()
    with pytest.raises(BuildError, match="Ftrl_ENGINE_SIMD"):
        build_ftrl(model)


def test_yellowfin_refuses_sparse_gradients():
    with eras.use("E6"):
        from caffe2rnn.optimizer import YellowFinOptimizer

        with pytest.raises(ModelError, match="sparse"):
            YellowFinOptimizer()(core.Net("n"), core.Net("i"), "w", core.GradientSlice("i", "v"))


def test_adagrad_row_wise_needs_a_sparse_gradient():
    with eras.use("E6"):
        model, _, _ = dense_model()
        with pytest.raises(ModelError, match="rowWise=True, gradient must be a gradientslice"):
            build_adagrad(model, 0.1, rowWise=True)


CAFFE2_SOURCE_E6 = os.environ.get("CAFFE2_SOURCE_E6", "")  # E6 (042e8ede4) has optimizer_context


@pytest.mark.skipif(
    not os.path.isfile(os.path.join(CAFFE2_SOURCE_E6, "caffe2/python/optimizer_context.py")),
    reason="set $CAFFE2_SOURCE_E6 to a Caffe2 checkout of E6 (042e8ede4) for optimizer_context",
)
def test_use_optimizer_gives_parameters_their_own_optimizer():
    """Caffe2 042e8ede4's optimizer_context (its own module, from the checkout)."""
    from caffe2rnn import brew, compat
    from caffe2rnn.compat.checkout import Checkout
    from caffe2rnn.model_helper import ModelHelper

    compat.install(Checkout(CAFFE2_SOURCE_E6))
    try:
        from caffe2.python.optimizer_context import UseOptimizer

        with eras.use("E6"):
            model = ModelHelper(name="ctx")
            conv_optim, weight_optim = SgdOptimizer(0.15), SgdOptimizer(0.2)
            with UseOptimizer(conv_optim):
                brew.fc(model, "data", "a", 4, 3)
            with UseOptimizer({"WEIGHT": weight_optim}):
                brew.fc(model, "a", "b", 3, 2)
            model.AddGradientOperators([model.AveragedLoss("b", "loss")])
            default = build_sgd(model, 0.11)
    finally:
        compat.uninstall()
    rates = learning_rates(model.net)
    expected = {
        "SgdOptimizer_%d_lr_cpu" % conv_optim._instance_num: -0.15,  # a_w, a_b
        "SgdOptimizer_%d_lr_cpu" % weight_optim._instance_num: -0.2,  # b_w
        "SgdOptimizer_%d_lr_cpu" % default._instance_num: -0.11,  # b_b: no optimizer of its own
    }
    assert rates == pytest.approx(expected)
