"""``brew.fc``: a fully connected layer and its two parameters."""

from ..model_helper import ExternalInitializer, ParameterTags, make_initializer


def fc(
    model,
    blob_in,
    blob_out,
    dim_in,
    dim_out,
    weight_init=None,
    bias_init=None,
    WeightInitializer=None,
    BiasInitializer=None,
    **kwargs,
):
    """``blob_out = blob_in · Wᵀ + b``: ``FC([blob_in, <out>_w, <out>_b] → blob_out)``.

    Parameters ``<blob_out>_w`` (``[dim_out, dim_in]``, XavierFill unless
    ``weight_init``/``WeightInitializer`` say otherwise) and ``<blob_out>_b``
    (``[dim_out]``, ConstantFill) in the current name scope; ``freeze_bias``
    makes the bias a computed parameter (no gradient step). Every other
    keyword, including the model's ``arg_scope`` (``order``, ``use_cudnn``,
    ``cudnn_exhaustive_search`` by default), becomes an FC argument: that is
    how E5 step nets came to carry those arguments on their FCs.
    """
    weight_initializer = make_initializer(WeightInitializer, weight_init, ("XavierFill", {}))
    bias_initializer = make_initializer(BiasInitializer, bias_init, ("ConstantFill", {}))
    if not model.init_params:
        weight_initializer = ExternalInitializer()
        bias_initializer = ExternalInitializer()
    blob_out = blob_out or model.net.NextName()
    bias_tags = [ParameterTags.BIAS]
    if "freeze_bias" in kwargs:
        bias_tags.append(ParameterTags.COMPUTED_PARAM)
    weight = model.create_param(
        param_name=blob_out + "_w",
        shape=[dim_out, dim_in],
        initializer=weight_initializer,
        tags=ParameterTags.WEIGHT,
    )
    bias = model.create_param(
        param_name=blob_out + "_b", shape=[dim_out], initializer=bias_initializer, tags=bias_tags
    )
    return model.net.FC([blob_in, weight, bias], blob_out, **kwargs)
