"""``brew.lrn``, ``brew.softmax`` and ``brew.instance_norm``."""

from .. import scope
from ..modeling.parameter_info import ParameterTags
from ..proto import caffe2_pb2


def lrn(model, blob_in, blob_out, order="NCHW", use_cudnn=False, **kwargs):
    """``LRN`` (``size``, ``alpha``, ``beta``, ``bias``); returns ``blob_out``.

    On the CPU the op also writes its scale to ``_<blob_out>_scale`` for the
    gradient; only a cuDNN LRN on a GPU device gets the single output.
    """
    device = kwargs.get("device_option", scope.CurrentDeviceScope())
    on_cpu = device is None or device.device_type == caffe2_pb2.CPU
    if use_cudnn and not on_cpu:
        kwargs["engine"] = "CUDNN"
        return model.net.LRN(blob_in, blob_out, order=order, **kwargs)
    return model.net.LRN(blob_in, [blob_out, "_" + blob_out + "_scale"], order=order, **kwargs)[0]


def softmax(model, blob_in, blob_out=None, use_cudnn=False, **kwargs):
    """``Softmax`` (output auto-named when ``blob_out`` is None); engine CUDNN when
    ``use_cudnn``."""
    if use_cudnn:
        kwargs["engine"] = "CUDNN"
    if blob_out is None:
        return model.net.Softmax(blob_in, **kwargs)
    return model.net.Softmax(blob_in, blob_out, **kwargs)


def instance_norm(model, blob_in, blob_out, dim_in, order="NCHW", **kwargs):
    """``InstanceNorm`` with a learned per-channel scale ``<blob_out>_s`` (ones)
    and bias ``<blob_out>_b`` (zeros), both ``[dim_in]`` parameters.

    Training (no true ``is_test`` keyword) also writes the saved mean and
    inverse std ``<blob_out>_sm`` / ``<blob_out>_siv`` and returns
    ``blob_out``; with ``is_test`` the op has the one output, and the helper
    returns the op's outputs. Every keyword reaches the op, as in Caffe2
    (caffe2/python/helpers/normalization.py at 0cdd09da6).
    """
    blob_out = blob_out or model.net.NextName()
    scale = model.param_init_net.ConstantFill([], blob_out + "_s", shape=[dim_in], value=1.0)
    bias = model.param_init_net.ConstantFill([], blob_out + "_b", shape=[dim_in], value=0.0)
    model.AddParameter(scale, ParameterTags.WEIGHT)
    model.AddParameter(bias, ParameterTags.BIAS)
    if kwargs.get("is_test"):
        return model.net.InstanceNorm([blob_in, scale, bias], [blob_out], order=order, **kwargs)
    outputs = [blob_out, blob_out + "_sm", blob_out + "_siv"]
    return model.net.InstanceNorm([blob_in, scale, bias], outputs, order=order, **kwargs)[0]
