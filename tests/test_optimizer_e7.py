"""The optimizer.py of Caffe2 929c33cee (E7): ``lars``, Adam's ``rowWise``,
``add_weight_decay``'s refusal of sparse gradients, the rate multiplier's copy
rule, ``PseudoFP16Initializer`` — each gated to E7 — against the nets E7's own
optimizer.py builds (read from ``$CAFFE2_SOURCE_E7`` and run on caffe2rnn's
core, op by op, arguments included) and against E6's where the era differs."""

import importlib.util
import logging
import os

import numpy as np
import pytest
from test_optimizer import PERFECT, dense_model, train

from caffe2rnn import compat, core, eras, optimizer, workspace
from caffe2rnn.errors import ModelError
from caffe2rnn.model_helper import Initializer, ModelHelper
from caffe2rnn.modeling import initializers
from caffe2rnn.modeling.parameter_info import ParameterTags
from caffe2rnn.optimizers import base

SOURCES = {era: os.environ.get("CAFFE2_SOURCE_" + era, "") for era in ("E6", "E7")}


@pytest.fixture(autouse=True)
def fresh_workspace():
    workspace.ResetWorkspace()
    yield
    workspace.ResetWorkspace()


def caffe2_optimizer(era):
    """Caffe2's caffe2/python/optimizer.py of ``era``, loaded from its checkout as a
    module of its own (its imports answered by caffe2rnn through caffe2rnn.compat)."""
    path = os.path.join(SOURCES[era], "caffe2", "python", "optimizer.py")
    if not os.path.isfile(path):
        pytest.skip("set CAFFE2_SOURCE_%s to a Caffe2 checkout of %s" % (era, era))
    from caffe2rnn.compat.checkout import Checkout

    compat.install(Checkout(SOURCES[era]))
    try:
        spec = importlib.util.spec_from_file_location("caffe2_optimizer_" + era, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        compat.uninstall()
    return module


def sparse_model():
    """One embedding ``emb`` read through Gather: its gradient is a GradientSlice."""
    model = ModelHelper(name="sparse")
    emb = model.create_param(
        "emb", shape=[6, 3], initializer=Initializer("GaussianFill"), tags=ParameterTags.WEIGHT
    )
    rows = model.net.Gather([emb, "idx"], "rows")
    model.AddGradientOperators([model.net.AveragedLoss(rows, "loss")])
    return model


def ops_of(net):
    """Every op as (type, inputs, outputs, arguments): what a NetDef says."""
    described = []
    for op in net.Proto().op:
        args = {}
        for arg in op.arg:
            for field in ("f", "i", "s", "floats", "ints", "strings"):
                if field in ("f", "i", "s") and arg.HasField(field):
                    args[arg.name] = getattr(arg, field)
                elif field not in ("f", "i", "s") and len(getattr(arg, field)):
                    args[arg.name] = list(getattr(arg, field))
        described.append((op.type, list(op.input), list(op.output), args))
    return described


def unnamed(ops, net_name):
    """``ops`` with the net's name in generated blob names (``<net>/Op``) made ``<net>``."""

    def rename(names):
        return [n.replace("/%s/" % net_name, "/<net>/") for n in names]

    return [(t, rename(i), rename(o), a) for t, i, o, a in ops]


def built_by(era, make_model, build):
    """``(caffe2rnn's nets, Caffe2's nets)``: ``build(optimizer_module, model)`` run with
    caffe2rnn.optimizer and with the era's own optimizer.py, each on a fresh model,
    with the same optimizer instance numbers."""
    theirs = caffe2_optimizer(era)
    nets = []
    for module in (optimizer, theirs):
        # only the ops the optimizer adds (the model's own ops name their net, and a
        # second net of one name is renamed test_1)
        counts = base.optimizer_instance_count
        saved = dict(counts)
        counts.clear()
        theirs._optimizer_instance_count.clear()
        try:
            with eras.use(era):
                model = make_model()
                start = [len(n.Proto().op) for n in (model.param_init_net, model.net)]
                build(module, model)
        finally:
            counts.clear()
            counts.update(saved)
        nets.append(
            tuple(
                unnamed(ops_of(net)[first:], net.Name())
                for net, first in zip((model.param_init_net, model.net), start)
            )
        )
        workspace.ResetWorkspace()
    return nets


def dense():
    return dense_model()[0]


CASES = {
    "sgd-lars": (dense, lambda o, m: o.build_sgd(m, 0.1, lars=0.5)),
    "momentum-lars-0": (dense, lambda o, m: o.build_sgd(m, 0.1, momentum=0.9, lars=0.0)),
    "adagrad-lars": (dense, lambda o, m: o.build_adagrad(m, 1.0, lars=0.5)),
    "clipping-then-lars": (
        dense,
        lambda o, m: o.build_sgd(m, 0.1, max_gradient_norm=1.0, lars=0.5),
    ),
    "lr-injection": (dense, lambda o, m: o.build_sgd(m, 0.1, allow_lr_injection=True)),
    "weight-decay-multi-precision": (
        dense,
        lambda o, m: (
            o.add_weight_decay(m, 1e-4),
            o.build_multi_precision_sgd(m, 0.2, momentum=0.9),
        ),
    ),
    "adam-row-wise": (sparse_model, lambda o, m: o.build_adam(m, 0.1, rowWise=True)),
    "adam-sparse": (sparse_model, lambda o, m: o.build_adam(m, 0.1)),
    "adagrad-sparse-lars-unused": (sparse_model, lambda o, m: o.build_adagrad(m, 0.1, lars=1.0)),
}


@pytest.mark.parametrize("era", ["E7", "E6"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_the_nets_are_those_caffe2s_optimizer_py_builds(case, era):
    make_model, build = CASES[case]
    ours, theirs = built_by(era, make_model, build)
    assert ours[0] == theirs[0], "param_init_net"
    assert ours[1] == theirs[1], "net"


def op_types(net):
    return [op.type for op in net.Proto().op]


def test_lars_in_e7_and_a_learning_rate_argument_in_e6():
    with eras.use("E7"):
        model = dense()
        sgd = optimizer.build_sgd(model, 0.1, lars=0.5)
    ops = ops_of(model.net)
    lars = [op for op in ops if op[0] == "Lars"]
    prefix = "SgdOptimizer_%d_" % sgd._instance_num
    assert lars == [
        ("Lars", ["fc_w", "fc_w_grad"], [prefix + "fc_w_lars_cpu"], {"offset": 0.5}),
        ("Lars", ["fc_b", "fc_b_grad"], [prefix + "fc_b_lars_cpu"], {"offset": 0.5}),
    ]
    muls = [op for op in ops if op[0] == "Mul"]
    assert [op[1] for op in muls] == [
        [prefix + "lr_cpu", prefix + "fc_w_lars_cpu"],
        [prefix + "lr_cpu", prefix + "fc_b_lars_cpu"],
    ]
    assert "CopyFromCPUInput" not in op_types(model.net)  # E7: on the CPU, no copy
    workspace.ResetWorkspace()
    with eras.use("E6"):
        model = dense()
        optimizer.build_sgd(model, 0.1, lars=0.5)
    assert "Lars" not in op_types(model.net)
    (rate,) = [op for op in ops_of(model.net) if op[0] == "LearningRate"]
    assert rate[3]["lars"] == 0.5  # E6's SgdOptimizer took it into **kwargs


def test_sgd_with_lars_learns_the_perfect_weights():
    with eras.use("E7"):
        model, data, label = dense_model()
        optimizer.build_sgd(model, 0.1, lars=0.5)
    train(model, data, label)
    np.testing.assert_allclose(PERFECT[np.newaxis, :], workspace.FetchBlob("fc_w"), atol=1e-2)


def test_lars_offset_must_be_nonnegative():
    with eras.use("E7"):
        model = dense()
        with pytest.raises(ModelError, match="Lars offset must be nonnegative, got -1"):
            optimizer.build_sgd(model, 0.1, lars=-1.0)


def test_row_wise_adam_state_and_refusal():
    with eras.use("E7"):
        model = sparse_model()
        adam = optimizer.build_adam(model, 0.1, rowWise=True)
        assert "RowWiseSparseAdam" in op_types(model.net)
        local = [str(b) for b in adam.get_auxiliary_parameters().local]
        assert local == ["emb_first_moment", "emb_avg_second_moment"]
        workspace.RunNetOnce(model.param_init_net)
        assert workspace.FetchBlob("emb_avg_second_moment").shape == (6,)
        with pytest.raises(ModelError, match="rowWise=True, gradient must be a gradientslice"):
            optimizer.build_adam(dense(), 0.1, rowWise=True)


def test_row_wise_adam_trains_the_rows_it_reads():
    with eras.use("E7"):
        model = sparse_model()
        optimizer.build_adam(model, 0.1, rowWise=True)
    workspace.RunNetOnce(model.param_init_net)
    before = workspace.FetchBlob("emb").copy()
    workspace.FeedBlob("idx", np.array([4, 1], np.int32))
    workspace.RunNetOnce(model.net)
    after = workspace.FetchBlob("emb")
    np.testing.assert_array_equal(after[[0, 2, 3, 5]], before[[0, 2, 3, 5]])
    # d(mean)/d(row) is g = 1/6 for every element, and AtomicIter has made the counter 1
    # (t = 2): m1 = 0.1 g, the row's m2 = 0.001 g², so each element moves by
    # -0.1 · sqrt(1 - 0.999²)/(1 - 0.9²) · 0.1 g / (sqrt(0.001) g + 1e-8).
    g = 1.0 / 6
    step = 0.1 * np.sqrt(1 - 0.999**2) / (1 - 0.9**2) * 0.1 * g / (np.sqrt(0.001) * g + 1e-8)
    np.testing.assert_allclose(after[[4, 1]], before[[4, 1]] - step, rtol=1e-5, atol=1e-6)


def test_weight_decay_refuses_a_sparse_gradient_in_e7_only(caplog):
    with eras.use("E7"):
        with pytest.raises(ValueError, match="Weight decay does not yet support sparse"):
            optimizer.add_weight_decay(sparse_model(), 1e-4)
    workspace.ResetWorkspace()
    with eras.use("E6"), caplog.at_level(logging.WARNING):
        model = sparse_model()
        optimizer.add_weight_decay(model, 1e-4)
    assert "WeightedSum" not in op_types(model.net)


def test_pseudo_fp16_initializer_is_e7s_name():
    with eras.use("E7"):
        assert initializers.PseudoFP16Initializer is initializers.pFP16Initializer
    with eras.use("E6"), pytest.raises(AttributeError, match="after 042e8ede4 \\(era E7\\)"):
        initializers.PseudoFP16Initializer  # noqa: B018


def test_multi_precision_sgd_defaults():
    """base_learning_rate=0.1, and momentum second (Caffe2 0cdd09da6 to 929c33cee)."""
    opt = optimizer.MultiPrecisionSgdOptimizer()
    assert (opt.base_learning_rate, opt.momentum, opt.policy) == (0.1, 0.0, "fixed")
    assert optimizer.MultiPrecisionSgdOptimizer(0.2, 0.9).momentum == 0.9
    assert isinstance(core.DataType.FLOAT, int)
