"""``brew.lrn`` and ``brew.softmax``."""

from .. import scope
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
