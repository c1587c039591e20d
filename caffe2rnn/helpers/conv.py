"""``brew.conv``, ``brew.conv_nd`` and ``brew.group_conv``: convolutions and
their parameters.

``brew.conv(model, "data", "c1", dim_in=3, dim_out=16, kernel=5)`` creates
``c1_w`` (``[16, 3, 5, 5]`` in NCHW, ``[16, 5, 5, 3]`` in NHWC; XavierFill) and
``c1_b`` (``[16]``, ConstantFill) and adds ``Conv([data, c1_w, c1_b] → c1,
kernel=5, order=...)``; a ``kernel=[h, w]`` list (E6) gives ``kernel_h`` and
``kernel_w``. With ``use_cudnn`` (true in a default model's
``arg_scope``) the op gets engine CUDNN and ``exhaustive_search``; on the CPU
the engine is ignored. ``no_bias=True`` leaves the bias out; ``group`` splits
the channels into groups (the weight then reads ``dim_in / group`` channels).
"""

from ..errors import ModelError
from ..model_helper import ExternalInitializer, ParameterTags, make_initializer


def _conv_base(
    model,
    is_nd,
    blob_in,
    blob_out,
    dim_in,
    dim_out,
    kernel,
    weight_init=None,
    bias_init=None,
    WeightInitializer=None,
    BiasInitializer=None,
    group=1,
    transform_inputs=None,
    use_cudnn=False,
    order="NCHW",
    cudnn_exhaustive_search=False,
    ws_nbytes_limit=None,
    **kwargs,
):
    if is_nd:
        kernels = list(kernel) if isinstance(kernel, (list, tuple)) else [kernel]
    elif isinstance(kernel, list):  # E6 (042e8ede4): [kernel_h, kernel_w]
        if len(kernel) != 2:
            raise ModelError("Conv support only a 2D kernel (kernel=%r)" % (kernel,))
        kernels = list(kernel)
    else:
        kernels = [kernel] * 2
    requested_engine = kwargs.get("engine")
    if requested_engine is not None:
        if use_cudnn and requested_engine != "CUDNN":
            raise ModelError('When use_cudnn=True, the only engine you can specify is "CUDNN"')
        if not use_cudnn and requested_engine == "CUDNN":
            raise ModelError('When use_cudnn=False, the only engine you can specify is ""')
    if use_cudnn:
        kwargs["engine"] = "CUDNN"
        kwargs["exhaustive_search"] = cudnn_exhaustive_search
        if ws_nbytes_limit:
            kwargs["ws_nbytes_limit"] = ws_nbytes_limit
    use_bias = not kwargs.pop("no_bias", False)  # the op counts its inputs instead
    blob_out = blob_out or model.net.NextName()
    channels = [int(dim_in / group)]
    weight_shape = [dim_out] + (channels + kernels if order == "NCHW" else kernels + channels)
    weight_initializer = make_initializer(WeightInitializer, weight_init, ("XavierFill", {}))
    bias_initializer = make_initializer(BiasInitializer, bias_init, ("ConstantFill", {}))
    if not model.init_params:
        weight_initializer = ExternalInitializer()
        bias_initializer = ExternalInitializer()
    weight = model.create_param(
        param_name=blob_out + "_w",
        shape=weight_shape,
        initializer=weight_initializer,
        tags=ParameterTags.WEIGHT,
    )
    inputs = [blob_in, weight]
    if use_bias:
        inputs.append(
            model.create_param(
                param_name=blob_out + "_b",
                shape=[dim_out],
                initializer=bias_initializer,
                tags=ParameterTags.BIAS,
            )
        )
    if transform_inputs is not None:
        transform_inputs(model, blob_out, inputs)
    if group != 1:
        kwargs["group"] = group
    if is_nd:
        return model.net.Conv(inputs, blob_out, kernels=kernels, order=order, **kwargs)
    if isinstance(kernel, list):
        return model.net.Conv(
            inputs, blob_out, kernel_h=kernel[0], kernel_w=kernel[1], order=order, **kwargs
        )
    return model.net.Conv(inputs, blob_out, kernel=kernel, order=order, **kwargs)


def conv(
    model,
    blob_in,
    blob_out,
    dim_in,
    dim_out,
    kernel,
    weight_init=None,
    bias_init=None,
    WeightInitializer=None,
    BiasInitializer=None,
    group=1,
    transform_inputs=None,
    **kwargs,
):
    """A 2-D convolution with a square ``kernel`` (see the module docstring)."""
    return _conv_base(
        model,
        False,
        blob_in,
        blob_out,
        dim_in,
        dim_out,
        kernel,
        weight_init,
        bias_init,
        WeightInitializer,
        BiasInitializer,
        group,
        transform_inputs,
        **kwargs,
    )


def conv_nd(
    model,
    blob_in,
    blob_out,
    dim_in,
    dim_out,
    kernel,
    weight_init=None,
    bias_init=None,
    WeightInitializer=None,
    BiasInitializer=None,
    group=1,
    transform_inputs=None,
    order="NCHW",
    **kwargs,
):
    """An N-d convolution, ``kernel`` a list (one size per spatial dim); NCHW only."""
    if order != "NCHW":
        raise ModelError("ConvNd only supported for NCHW storage (order=%r)" % order)
    return _conv_base(
        model,
        True,
        blob_in,
        blob_out,
        dim_in,
        dim_out,
        kernel,
        weight_init,
        bias_init,
        WeightInitializer,
        BiasInitializer,
        group,
        transform_inputs,
        order=order,
        **kwargs,
    )


def group_conv(
    model,
    blob_in,
    blob_out,
    dim_in,
    dim_out,
    kernel,
    weight_init=None,
    bias_init=None,
    group=1,
    **kwargs,
):
    """:func:`conv` with a ``group`` argument (kept for old callers)."""
    return conv(
        model,
        blob_in,
        blob_out,
        dim_in,
        dim_out,
        kernel,
        weight_init=weight_init,
        bias_init=bias_init,
        group=group,
        **kwargs,
    )
