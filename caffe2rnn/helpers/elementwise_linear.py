"""``brew.elementwise_linear``: ``blob_out = blob_in * w + b`` per feature."""

from .. import core
from ..model_helper import ParameterTags


def elementwise_linear(model, blob_in, blob_out, dim, weight_init=None, bias_init=None, **kwargs):
    """``ElementwiseLinear([blob_in, <out>_w, <out>_b])``; parameters ``[dim]`` each
    (weights ConstantFill 1.0, biases 0.0 unless ``weight_init``/``bias_init``)."""
    weight_init = weight_init or ("ConstantFill", {"value": 1.0})
    bias_init = bias_init or ("ConstantFill", {"value": 0.0})
    blob_out = blob_out or model.net.NextName()
    if model.init_params:
        weight = model.param_init_net.__getattr__(weight_init[0])(
            [], blob_out + "_w", shape=[dim], **weight_init[1]
        )
        bias = model.param_init_net.__getattr__(bias_init[0])(
            [], blob_out + "_b", shape=[dim], **bias_init[1]
        )
    else:
        weight = core.ScopedBlobReference(blob_out + "_w", model.param_init_net)
        bias = core.ScopedBlobReference(blob_out + "_b", model.param_init_net)
    model.AddParameter(weight, ParameterTags.WEIGHT)
    model.AddParameter(bias, ParameterTags.BIAS)
    return model.net.ElementwiseLinear([blob_in, weight, bias], blob_out, **kwargs)
