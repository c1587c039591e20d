"""``brew.relu``, ``brew.prelu`` and (from E6) ``brew.tanh``."""

from .. import core


def relu(model, blob_in, blob_out, use_cudnn=False, order="NCHW", **kwargs):
    """``Relu(blob_in → blob_out, order=...)``; engine CUDNN when ``use_cudnn``."""
    if use_cudnn:
        kwargs["engine"] = "CUDNN"
    return model.net.Relu(blob_in, blob_out, order=order, **kwargs)


def tanh(model, blob_in, blob_out, use_cudnn=False, order="NCHW", **kwargs):
    """``Tanh(blob_in → blob_out, order=...)``; engine CUDNN when ``use_cudnn``
    (a helper of 042e8ede4)."""
    if use_cudnn:
        kwargs["engine"] = "CUDNN"
    return model.net.Tanh(blob_in, blob_out, order=order, **kwargs)


def prelu(model, blob_in, blob_out, num_channels=1, slope_init=None, **kwargs):
    """``PRelu([blob_in, <out>_slope] → blob_out)`` with the slope a parameter of
    ``[num_channels]`` (ConstantFill 0.25 unless ``slope_init``). As in Caffe2, the
    op gets no other argument (so its order is NCHW) and ``kwargs`` are dropped."""
    slope_init = slope_init or ("ConstantFill", {"value": 0.25})
    if model.init_params:
        slope = model.param_init_net.__getattr__(slope_init[0])(
            [], blob_out + "_slope", shape=[num_channels], **slope_init[1]
        )
    else:
        slope = core.ScopedBlobReference(blob_out + "_slope", model.param_init_net)
    model.AddParameter(slope)
    return model.net.PRelu([blob_in, slope], [blob_out])
