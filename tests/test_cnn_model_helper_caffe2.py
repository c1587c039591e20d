"""CNNModelHelper and brew's helpers against Caffe2's own Python code, at E5 and E6.

The oracle is Caffe2's ``caffe2/python/cnn.py`` and ``caffe2/python/helpers/*.py`` themselves,
loaded from the era's checkout (read where it lies) on top of caffe2rnn (``import caffe2`` →
caffe2rnn, :mod:`caffe2rnn.compat`). Each method and helper is called the same way on a model
built by caffe2rnn's code and on one built by Caffe2's: the nets (ops, arguments, engines) and the
parameters must be the same. A method whose operator caffe2rnn lacks must say so instead.

Last, the data-parallel RNN of Caffe2's ``data_parallel_model_test.py`` (E5), trained with
``CNNModelHelper`` as that test did, on two CPU devices: it gets past ``model.Iter`` and trains.
"""

import importlib.util
import os

import numpy as np
import pytest

from caffe2rnn import brew, compat, eras, errors, workspace
from caffe2rnn.cnn import CNNModelHelper

ERA_SOURCES = {"E5": "CAFFE2_SOURCE", "E6": "CAFFE2_SOURCE_E6"}


def checkout(era):
    root = os.environ.get(ERA_SOURCES[era])
    if not root or not os.path.isdir(os.path.join(root, "caffe2", "python")):
        pytest.skip("set %s to a Caffe2 checkout of era %s" % (ERA_SOURCES[era], era))
    return root


def load(root, relative, name):
    """Caffe2's module file ``caffe2/python/<relative>``, executed on caffe2rnn."""
    compat.install()
    spec = importlib.util.spec_from_file_location(
        name, os.path.join(root, "caffe2", "python", relative)
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


#: (method, args, kwargs): one call of each CNNModelHelper method whose operator exists.
CALLS = [
    ("Conv", ("data", "c1", 3, 4, 3), {}),
    ("Conv", ("data", "c2", 3, 4, 3), {"no_bias": True, "stride": 2}),
    ("ConvNd", ("data", "c3", 3, 4, [3, 3]), {}),
    ("GroupConv", ("data", "g1", 4, 4, 3), {"group": 2}),
    ("FC", ("x", "fc1", 6, 2), {}),
    ("FC", ("x", "fc2", 6, 2), {"axis": 2}),
    ("Dropout", ("x", "d"), {"ratio": 0.3}),
    ("LRN", ("x", "l"), {"size": 3}),
    ("Softmax", ("x", "s"), {}),
    ("InstanceNorm", ("x", "in1", 3), {}),
    ("Relu", ("x", "r"), {}),
    ("PRelu", ("x", "pr"), {}),
    ("Concat", (["a", "b"], "cat"), {}),
    ("Sum", (["a", "b"], "sum"), {}),
    ("Transpose", ("x", "t"), {"axes": [1, 0]}),
    ("Iter", ("ITER",), {}),
    ("Accuracy", (["p", "label"], "acc"), {}),
    ("MaxPool", ("x", "mp"), {"kernel": 2}),
    ("AveragePool", ("x", "ap"), {"kernel": 2}),
    ("ImageInput", ("reader", ["data", "label"]), {"batch_size": 2}),
    ("PadImage", ("x", "pad"), {"pad": 1}),
]
#: Methods whose operator caffe2rnn does not implement.
MISSING = {
    "ConvTranspose": ("ConvTranspose", ("x", "ct", 3, 4, 3)),
    "GroupConv_Deprecated": ("DepthSplit", ("x", "gd", 4, 4, 3)),
    "PackedFC": ("PackedFC", ("x", "pfc", 6, 2)),
    "FC_Prune": ("FC_Prune", ("x", "fp", 6, 2)),
    "FC_Decomp": ("FC_Decomp", ("x", "fd", 6, 2)),
    "FC_Sparse": ("FC_Sparse", ("x", "fs", "w", "iw", "jw", "b")),
    "SpatialBN": ("SpatialBN", ("x", "bn", 3)),
    "MaxPoolWithIndex": ("MaxPoolWithIndex", ("x", "mpi")),
    "VideoInput": ("VideoInput", ("reader", ["v", "l"])),
}


def snapshot(model):
    return (
        [str(op) for op in model.net.Proto().op],
        [str(op) for op in model.param_init_net.Proto().op],
        [str(p) for p in model.params],
    )


@pytest.mark.parametrize("era", ["E5", "E6"])
def test_every_method_of_caffe2s_cnn_model_helper(era):
    root = checkout(era)
    theirs = load(root, "cnn.py", "caffe2_%s_cnn" % era.lower())
    methods = [name for name, value in vars(theirs.CNNModelHelper).items() if name[:1].isupper()]
    assert len(methods) == 36
    assert [m for m in methods if not hasattr(CNNModelHelper, m)] == []
    with eras.use(era):
        for name, args, kwargs in CALLS:
            mine, caffe2s = CNNModelHelper(name="m"), theirs.CNNModelHelper(name="m")
            getattr(mine, name)(*args, **kwargs)
            getattr(caffe2s, name)(*args, **kwargs)
            assert snapshot(mine) == snapshot(caffe2s), name
        for name, (op_type, args) in MISSING.items():
            mine = CNNModelHelper(name="m")
            with pytest.raises(errors.UnknownOperatorError, match=op_type):
                getattr(mine, name)(*args)
            assert snapshot(mine) == ([], [], [])
        for name in ("XavierInit", "MSRAInit", "ZeroInit", "CPU"):
            assert getattr(CNNModelHelper(), name) == getattr(theirs.CNNModelHelper(), name)
        assert CNNModelHelper().ConstantInit(2.0) == theirs.CNNModelHelper().ConstantInit(2.0)


#: (helper module, helper, args, kwargs) called through Caffe2's helper and caffe2rnn's.
HELPER_CALLS = [
    ("conv", "conv", ("data", "c", 3, 4, 5), {"order": "NHWC"}),
    ("conv", "conv", ("data", "c", 3, 4, [5, 3]), {}),  # E6: [kernel_h, kernel_w]
    ("train", "iter", ("ITER",), {}),
    ("train", "accuracy", (["p", "l"], "acc"), {"top_k": 3}),
    ("nonlinearity", "tanh", ("x", "y"), {}),
    ("algebra", "batch_mat_mul", (["a", "b"], "y"), {"trans_a": 1}),
    ("array_helpers", "concat", (["a", "b"], "y"), {"axis": 2, "order": "NCHW"}),
]


@pytest.mark.parametrize("module, helper, args, kwargs", HELPER_CALLS)
def test_helpers_build_what_caffe2s_built(module, helper, args, kwargs):
    from caffe2rnn.model_helper import ModelHelper

    root = checkout("E6")
    theirs = load(root, "helpers/%s.py" % module, "caffe2_e6_helpers_%s" % module)
    with eras.use("E6"):
        mine, caffe2s = ModelHelper(name="m"), ModelHelper(name="m")
        getattr(brew, helper)(mine, *args, **kwargs)
        function = getattr(theirs, helper)
        # brew's wrapper adds the model's arg_scope; Caffe2's brew did the same
        brew._helper(function, helper)(caffe2s, *args, **kwargs)
        assert snapshot(mine) == snapshot(caffe2s)


def test_a_data_parallel_rnn_trained_with_cnn_model_helper():
    """Caffe2's ``RecurrentNetworkParallelTest.run_model`` (data_parallel_model_test.py at
    0cdd09da6), on two CPU devices: ``model.Iter("ITER")`` in the parameter update, an LSTM
    per device, ``data_parallel_model.Parallelize``; the loss falls."""
    root = checkout("E5")
    compat.install(root)
    from caffe2.python import data_parallel_model

    from caffe2rnn import core, rnn_cell

    T, batch, dim_in, hidden = 4, 8, 3, 5
    devices = [0, 1]
    per_device = batch // len(devices)

    def input_builder_fun(model):
        return None

    def model_build_fun(model, loss_scale):
        workspace.FeedBlob(
            core.ScopedBlobReference("seq_lengths"), np.array([T] * per_device, dtype=np.int32)
        )
        model.param_init_net.ConstantFill(
            [], "hidden_init", value=0.0, shape=[1, per_device, hidden]
        )
        model.param_init_net.ConstantFill([], "cell_init", value=0.0, shape=[1, per_device, hidden])
        output, _, _, _ = rnn_cell.LSTM(
            model=model,
            input_blob="data",
            seq_lengths="seq_lengths",
            initial_states=("hidden_init", "cell_init"),
            dim_in=dim_in,
            dim_out=hidden,
            scope="partest",
        )
        loss = model.AveragedLoss(model.Sub([output, "target"], "dist"), "loss")
        return [model.Scale(loss, "loss_scaled", scale=loss_scale)]

    def param_update_fun(model):
        ITER = model.Iter("ITER")
        LR = model.net.LearningRate([ITER], "LR", base_lr=(-0.1), policy="fixed")
        ONE = model.param_init_net.ConstantFill([], "ONE", shape=[1], value=1.0)
        for param in model.GetParams():
            model.WeightedSum([param, ONE, model.param_to_grad[param], LR], param)

    workspace.ResetWorkspace()
    model = CNNModelHelper(name="recurrent_test")
    data_parallel_model.Parallelize(
        model,
        input_builder_fun=input_builder_fun,
        forward_pass_builder_fun=model_build_fun,
        param_update_builder_fun=param_update_fun,
        devices=devices,
        optimize_gradient_memory=True,
        cpu_device=True,
    )
    rng = np.random.RandomState(0)
    data = rng.rand(T, batch, dim_in).astype(np.float32)
    target = rng.rand(T, batch, hidden).astype(np.float32)
    for j, g in enumerate(devices):
        with core.DeviceScope(core.DeviceOption(0, g)):
            prefix = "cpu_%d/" % g
            workspace.FeedBlob(prefix + "data", data[:, j * per_device : (j + 1) * per_device])
            workspace.FeedBlob(prefix + "target", target[:, j * per_device : (j + 1) * per_device])
    workspace.RunNetOnce(model.param_init_net)
    workspace.CreateNet(model.net)
    losses = []
    for _ in range(5):
        workspace.RunNet(model.net.Proto().name)
        losses.append(float(workspace.FetchBlob("cpu_0/loss")))
    assert int(workspace.FetchBlob("cpu_0/ITER")[0]) == 5
    assert losses[-1] < losses[0]
