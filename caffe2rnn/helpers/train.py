"""``brew.iter``, ``brew.accuracy`` and ``brew.add_weight_decay``: training-loop plumbing."""

from .. import core, scope
from ..errors import ModelError
from ..proto import caffe2_pb2


def iter(model, blob_out, **kwargs):  # noqa: A001 - Caffe2's name
    """An int64 counter ``blob_out``: made 0 in ``param_init_net`` (on the CPU),
    incremented in place by ``Iter`` on every run of ``model.net``."""
    kwargs.pop("device_option", None)
    model.param_init_net.ConstantFill(
        [],
        blob_out,
        shape=[1],
        value=0,
        dtype=core.DataType.INT64,
        device_option=core.DeviceOption(caffe2_pb2.CPU, 0),
        **kwargs,
    )
    return model.net.Iter(blob_out, blob_out, **kwargs)


def accuracy(model, blob_in, blob_out, **kwargs):
    """``Accuracy([prediction, label] → blob_out)``: the fraction of rows whose
    label is among the top-k predictions.

    As Caffe2's helper (helpers/train.py at 0cdd09da6): on the CPU the op gets
    no argument at all — not even ``top_k`` — and on a GPU with ``top_k > 1``
    the inputs are first copied to the host (``CopyGPUToCPU``) and the op runs
    there with the keywords."""
    dev = kwargs["device_option"] if "device_option" in kwargs else scope.CurrentDeviceScope()
    is_cpu = dev is None or dev.device_type == caffe2_pb2.CPU
    if not is_cpu and kwargs.get("top_k", 1) > 1:
        pred_host = model.net.CopyGPUToCPU(blob_in[0], blob_in[0] + "_host")
        label_host = model.net.CopyGPUToCPU(blob_in[1], blob_in[1] + "_host")
        kwargs["device_option"] = core.DeviceOption(caffe2_pb2.CPU, 0)
        model.net.Accuracy([pred_host, label_host], blob_out, **kwargs)
    else:
        model.net.Accuracy(blob_in, blob_out)


def _get_weights(model, namescope=None):
    if namescope is None:
        namescope = scope.CurrentNameScope()
    if namescope == "":
        return model.weights[:]
    return [w for w in model.weights if w.GetNameScope() == namescope]


def add_weight_decay(model, weight_decay):
    """``grad = grad + weight_decay · w`` for every weight of the current name scope.

    L2 regularisation, written as ``WeightedSum([grad, ONE, w, wd] → grad)``
    after ``AddGradientOperators``; nothing for ``weight_decay <= 0``. (The
    optimizer module's ``add_weight_decay`` does the same per device.)
    """
    if weight_decay <= 0.0:
        return
    wd = model.param_init_net.ConstantFill([], "wd", shape=[1], value=weight_decay)
    one = model.param_init_net.ConstantFill([], "ONE", shape=[1], value=1.0)
    for param in _get_weights(model):
        if param not in model.param_to_grad:
            raise ModelError(
                "add_weight_decay: weight %s has no gradient (call AddGradientOperators "
                "first)" % param
            )
        grad = model.param_to_grad[param]
        model.net.WeightedSum([grad, one, param, wd], grad)
