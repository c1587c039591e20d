"""caffe2rnn.optimizer, mirroring Caffe2's optimizer_test (0cdd09da6): a small
model learns with every optimizer, the auxiliary blobs are what E5 reported,
and the emitted ops are, op for op, the ones E5's optimizer.py emitted."""

import numpy as np
import pytest

from caffe2rnn import brew, core, workspace
from caffe2rnn.errors import ModelError, WorkspaceError
from caffe2rnn.model_helper import Initializer, ModelHelper
from caffe2rnn.optimizer import (
    AdagradOptimizer,
    AdamOptimizer,
    SgdOptimizer,
    add_weight_decay,
    build_adagrad,
    build_adam,
    build_sgd,
    get_param_device,
)
from caffe2rnn.proto import caffe2_pb2

PERFECT = np.array([2, 6, 5, 0, 1], np.float32)
CPU = "device_type: 0\ncuda_gpu_id: 0"  # the explicit CPU DeviceOption of build_lr


def dense_model():
    """optimizer_test_util._createDense: y = data · PERFECT, one FC, axis=0."""
    np.random.seed(123)
    data = np.random.randint(2, size=(20, PERFECT.size)).astype(np.float32)
    label = np.dot(data, PERFECT)[:, np.newaxis]
    model = ModelHelper(name="test", arg_scope={"order": "NCHW"})
    out = brew.fc(
        model,
        "data",
        "fc",
        PERFECT.size,
        1,
        ("ConstantFill", {}),
        ("ConstantFill", {}),
        axis=0,
        WeightInitializer=Initializer,
        BiasInitializer=Initializer,
    )
    sq = model.SquaredL2Distance([out, "label"])
    loss = model.AveragedLoss(sq, "avg_loss")
    grad_map = model.AddGradientOperators([loss])
    assert isinstance(grad_map["fc_w"], core.BlobReference)
    return model, data, label


def train(model, data, label, iterations=2000):
    workspace.FeedBlob("data", data[0])
    workspace.FeedBlob("label", label[0])
    workspace.RunNetOnce(model.param_init_net)
    workspace.CreateNet(model.net, True)
    for _ in range(iterations):
        idx = np.random.randint(data.shape[0])
        workspace.FeedBlob("data", data[idx])
        workspace.FeedBlob("label", label[idx])
        workspace.RunNet(model.net.Proto().name)


@pytest.mark.parametrize(
    "build",
    [
        lambda m: build_sgd(m, base_learning_rate=0.1),
        lambda m: build_sgd(m, base_learning_rate=0.1, momentum=0.9, nesterov=0),
        lambda m: build_sgd(m, base_learning_rate=0.1, momentum=0.9),
        lambda m: build_sgd(m, 0.2, policy="step", stepsize=100, gamma=0.9),
        lambda m: build_adagrad(m, base_learning_rate=1.0),
        lambda m: build_adam(m, base_learning_rate=0.1),
    ],
    ids=["sgd", "momentum", "nesterov", "sgd-step", "adagrad", "adam"],
)
def test_dense_model_learns_the_perfect_weights(build):
    model, data, label = dense_model()
    optimizer = build(model)
    train(model, data, label)
    np.testing.assert_allclose(PERFECT[np.newaxis, :], workspace.FetchBlob("fc_w"), atol=1e-2)
    assert workspace.FetchBlob("optimizer_iteration").tolist() == [2000]
    aux = optimizer.get_auxiliary_parameters()
    if isinstance(optimizer, SgdOptimizer):  # TestSgd.check_optimizer (+ momentum blobs)
        assert aux.shared and all(workspace.FetchBlob(p).tolist() == [1.0] for p in aux.shared)
        assert [str(p) for p in aux.local] == (
            ["fc_w_momentum", "fc_b_momentum"] if optimizer.momentum else []
        )
    elif isinstance(optimizer, AdagradOptimizer):  # TestAdagrad.check_optimizer
        assert not aux.shared and [str(p) for p in aux.local] == [
            "fc_w_squared_sum",
            "fc_b_squared_sum",
        ]
        np.testing.assert_array_less(0, workspace.FetchBlob("fc_w_squared_sum"))
    else:  # TestAdam.check_optimizer
        assert [str(p) for p in aux.shared] == ["optimizer_iteration"] * 2
        assert len(aux.local) == 4 and all(workspace.HasBlob(str(p)) for p in aux.local)


# --- the ops each optimizer emits -------------------------------------------------------
def arg_value(arg):
    for field in ("f", "i", "s"):
        if arg.HasField(field):
            value = getattr(arg, field)
            return value.decode() if field == "s" else value
    return list(arg.floats or arg.ints or [s.decode() for s in arg.strings])


def describe(op):
    device = str(op.device_option).strip() if op.HasField("device_option") else None
    args = [(a.name, arg_value(a)) for a in op.arg]
    engine = op.engine if op.HasField("engine") else None
    return (op.type, list(op.input), list(op.output), args, device, engine)


def emitted(build):
    """(param_init_net ops, net ops after the backward pass, net external inputs) of a build."""
    model, _, _ = dense_model()
    n_init, n_net = len(model.param_init_net.Proto().op), len(model.net.Proto().op)
    n_ext = len(model.net.Proto().external_input)
    build(model)
    return (
        [describe(op) for op in model.param_init_net.Proto().op[n_init:]],
        [describe(op) for op in model.net.Proto().op[n_net:]],
        list(model.net.Proto().external_input[n_ext:]),
    )


ITERATION_INIT = [
    (
        "ConstantFill",
        [],
        ["optimizer_iteration"],
        [("shape", [1]), ("value", 0), ("dtype", core.DataType.INT64)],
        CPU,
        None,
    ),
    ("CreateMutex", [], ["iteration_mutex"], [], CPU, None),
]
ATOMIC_ITER = (
    "AtomicIter",
    ["iteration_mutex", "optimizer_iteration"],
    ["optimizer_iteration"],
    [],
    CPU,
    None,
)


def lr_op(param, base_lr, policy="fixed", extra=()):
    args = [("base_lr", pytest.approx(base_lr)), ("policy", policy)] + list(extra)
    return ("LearningRate", ["optimizer_iteration"], [param + "_lr"], args, "", None)


def one_op():
    return ("ConstantFill", [], ["ONE_0_0"], [("shape", [1]), ("value", 1.0)], "", None)


def test_sgd_emits_what_e5_emitted():
    init, net, external = emitted(lambda m: build_sgd(m, base_learning_rate=0.1))
    assert init == ITERATION_INIT + [one_op(), one_op()]  # one ONE per parameter, as in E5
    assert net == [
        ATOMIC_ITER,
        lr_op("fc_w", -0.1),
        ("WeightedSum", ["fc_w", "ONE_0_0", "fc_w_grad", "fc_w_lr"], ["fc_w"], [], "", None),
        lr_op("fc_b", -0.1),
        ("WeightedSum", ["fc_b", "ONE_0_0", "fc_b_grad", "fc_b_lr"], ["fc_b"], [], "", None),
    ]
    assert external == ["iteration_mutex", "optimizer_iteration", "ONE_0_0"]


def test_sgd_with_policy_arguments_like_char_rnn():
    _, net, _ = emitted(
        lambda m: build_sgd(m, base_learning_rate=2.5, policy="step", stepsize=1, gamma=0.9999)
    )
    assert net[1] == lr_op(
        "fc_w", -2.5, "step", [("stepsize", 1), ("gamma", pytest.approx(0.9999))]
    )


def test_momentum_sgd_emits_what_e5_emitted():
    init, net, _ = emitted(lambda m: build_sgd(m, base_learning_rate=0.1, momentum=0.9))
    momentum = [
        ("ConstantFill", [p], [p + "_momentum"], [("value", 0.0)], "", None)
        for p in ("fc_w", "fc_b")
    ]
    assert init == ITERATION_INIT + [one_op(), momentum[0], one_op(), momentum[1]]
    update = [
        (
            "MomentumSGDUpdate",
            [p + "_grad", p + "_momentum", p + "_lr", p],
            [p + "_grad", p + "_momentum", p],
            [("momentum", pytest.approx(0.9)), ("nesterov", 1)],
            "",
            None,
        )
        for p in ("fc_w", "fc_b")
    ]
    assert net == [ATOMIC_ITER, lr_op("fc_w", 0.1), update[0], lr_op("fc_b", 0.1), update[1]]


def test_adagrad_emits_what_e5_emitted():
    init, net, _ = emitted(lambda m: build_adagrad(m, base_learning_rate=1.0))
    history = [
        ("ConstantFill", [p], [p + "_squared_sum"], [("value", 0.0)], "", None)
        for p in ("fc_w", "fc_b")
    ]
    assert init == ITERATION_INIT + history
    update = [
        (
            "Adagrad",
            [p, p + "_squared_sum", p + "_grad", p + "_lr"],
            [p, p + "_squared_sum"],
            [("epsilon", pytest.approx(1e-4))],
            "",
            "",  # engine='' is set, as E5's AdagradOptimizer passed it
        )
        for p in ("fc_w", "fc_b")
    ]
    assert net == [ATOMIC_ITER, lr_op("fc_w", -1.0), update[0], lr_op("fc_b", -1.0), update[1]]


def test_adam_emits_what_e5_emitted():
    init, net, _ = emitted(lambda m: build_adam(m, base_learning_rate=0.1))
    moments = []
    for p in ("fc_w", "fc_b"):
        for which in ("first", "second"):
            moments.append(
                ("ConstantFill", [p], ["%s_%s_moment" % (p, which)], [("value", 0.0)], "", None)
            )
    assert init == ITERATION_INIT + moments
    betas = [
        ("beta1", pytest.approx(0.9)),
        ("beta2", pytest.approx(0.999)),
        ("epsilon", pytest.approx(1e-8)),
    ]
    update = [
        (
            "Adam",
            [p, p + "_first_moment", p + "_second_moment", p + "_grad", p + "_lr"]
            + ["optimizer_iteration"],
            [p, p + "_first_moment", p + "_second_moment"],
            betas,
            "",
            None,
        )
        for p in ("fc_w", "fc_b")
    ]
    assert net == [ATOMIC_ITER, lr_op("fc_w", -0.1), update[0], lr_op("fc_b", -0.1), update[1]]


def test_zero_rate_adds_nothing_and_iter_val_starts_the_counter():
    init, net, _ = emitted(lambda m: build_sgd(m, base_learning_rate=0.0))
    assert init == [] and net == []
    model, _, _ = dense_model()
    build_sgd(model, 0.1, iter_val=7)
    workspace.RunNetOnce(model.param_init_net)
    assert workspace.FetchBlob("optimizer_iteration").tolist() == [7]


def test_weight_decay_like_e5_test():
    """optimizer_test.TestWeightDecay: conv and FC weights decayed, biases not."""
    model = ModelHelper(name="test", arg_scope={"order": "NCHW"})
    cnv = brew.conv(model, "data", "cnv", 32, 32, 4)
    a = brew.fc(model, cnv, "a", 100, 200)
    pred = brew.fc(model, a, "b", 200, 5)
    _, loss = model.SoftmaxWithLoss([pred, "label"], ["softmax", "loss"])
    model.AddGradientOperators([loss])
    add_weight_decay(model, weight_decay=1e-4)
    build_sgd(model, 0.11)
    decayed = [
        op.output[0]
        for op in model.net.Proto().op
        if op.type == "WeightedSum" and "wd_0_0" in op.input
    ]
    assert decayed == ["cnv_w_grad", "a_w_grad", "b_w_grad"]


# --- sparse gradients ---------------------------------------------------------------------
@pytest.mark.parametrize(
    "optimizer, op_type",
    [
        (SgdOptimizer(base_learning_rate=0.5), "ScatterWeightedSum"),
        (AdagradOptimizer(alpha=0.5), "SparseAdagrad"),
        (AdamOptimizer(alpha=0.5), "SparseAdam"),
    ],
)
def test_sparse_gradients_update_only_their_rows(optimizer, op_type):
    init, net = core.Net("init"), core.Net("train")
    w = init.ConstantFill([], "w", shape=[4, 2], value=1.0)
    optimizer(net, init, w, core.GradientSlice("idx", "vals"))
    assert [op.type for op in net.Proto().op] == ["AtomicIter", "LearningRate", op_type]
    workspace.RunNetOnce(init)
    workspace.FeedBlob("idx", np.array([2, 0], np.int32))
    workspace.FeedBlob("vals", np.full((2, 2), 0.25, np.float32))
    workspace.RunNetOnce(net)
    w_new = workspace.FetchBlob("w")
    np.testing.assert_array_equal(w_new[[1, 3]], np.ones((2, 2)))  # rows without a gradient
    assert (w_new[[0, 2]] < 1).all()  # a step against the (positive) gradient


def test_sparse_momentum_is_refused():
    with pytest.raises(ModelError, match="momentum is not supported for the sparse gradient of w"):
        SgdOptimizer(0.1, momentum=0.9)(
            core.Net("n"), core.Net("i"), "w", core.GradientSlice("i", "v")
        )


# --- errors --------------------------------------------------------------------------------
def test_bad_arguments_are_clear_errors():
    model, _, _ = dense_model()
    with pytest.raises(ModelError, match="SgdOptimizer: base_learning_rate must be >= 0; got -0.1"):
        build_sgd(model, -0.1)
    with pytest.raises(ModelError, match="momentum must be >= 0"):
        build_sgd(model, 0.1, momentum=-0.5)
    with pytest.raises(ModelError, match="needs a ParameterInfo with a gradient"):
        SgdOptimizer()(model.net, model.param_init_net, "fc_w")
    with pytest.raises(ModelError, match="Cannot infer device for ghost: no op creates it"):
        get_param_device("ghost", "ghost_grad", {})
    with pytest.raises(WorkspaceError, match="AddGradientOperators"):
        build_sgd(ModelHelper(name="fresh"), 0.1)


def test_param_device_comes_from_the_op_that_makes_it():
    model = ModelHelper(name="m")
    with core.DeviceScope(core.DeviceOption(caffe2_pb2.CPU, 0, random_seed=5)):
        brew.fc(model, "x", "y", 2, 1)
    model.AddGradientOperators([model.net.AveragedLoss("y", "loss")])
    build_sgd(model, 0.1)
    update = [op for op in model.net.Proto().op if op.type == "WeightedSum"][0]
    assert update.device_option.random_seed == 5
    assert (
        get_param_device("y_w", "g", core.InferBlobDevices(model.param_init_net)).random_seed == 5
    )
    sliced = {"v": core.DeviceOption(caffe2_pb2.CPU, 3)}
    assert get_param_device("p", core.GradientSlice("i", "v"), sliced).cuda_gpu_id == 3
