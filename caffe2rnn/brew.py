"""``caffe2.python.brew``: model-building helpers that take the model first.

``brew.fc(model, 'x', 'y', dim_in, dim_out)`` creates the parameters
``y_w`` (shape ``[dim_out, dim_in]``) and ``y_b`` (``[dim_out]``) in
``model.param_init_net`` and adds ``FC([x, y_w, y_b] → y)`` to ``model.net``.

Every helper is called through one wrapper that decides its keyword
arguments (Caffe2 E5, f9a9c52d9, 2017-05-12), in this order:

1. a deep copy of ``model.arg_scope`` (by default ``order='NCHW'``,
   ``use_cudnn=True``, ``cudnn_exhaustive_search=False``), keeping only the
   keys the helper names as parameters **unless it takes ``**kwargs``**;
2. the keywords of the active :func:`arg_scope` blocks for this helper;
3. the call's own keywords.

Step 1 is why an E5 ``brew.fc(..., axis=2)`` makes an FC op with arguments
``order: "NCHW"``, ``use_cudnn: 1``, ``cudnn_exhaustive_search: 0``, ``axis: 2``
(spec §6.2, §10.8): ``fc`` takes ``**kwargs`` and passes them all to the op.
The FC operator ignores them, but they are part of the step net Caffe2 built.
"""

import contextlib
import copy
import functools
import inspect
import threading

from . import core
from .model_helper import ExternalInitializer, ModelHelper, ParameterTags, make_initializer

_threadlocal = threading.local()


def _current_scope():
    """``{helper name: {keyword: value}}`` set by the active ``arg_scope`` blocks."""
    if not hasattr(_threadlocal, "scope"):
        _threadlocal.scope = {}
    return _threadlocal.scope


@contextlib.contextmanager
def arg_scope(single_helper_or_list, **kwargs):
    """Give ``helper(s)`` default keywords inside the ``with`` block.

    ``with brew.arg_scope([brew.fc], axis=2): brew.fc(...)`` passes ``axis=2``
    to every ``fc`` call in the block (the call's own keywords still win).
    """
    helpers = single_helper_or_list
    if not isinstance(helpers, list):
        helpers = [helpers]
    for helper in helpers:
        if not callable(helper):
            raise TypeError(
                "arg_scope takes a helper function or a list of them, got %r" % (helper,)
            )
    old_scope = copy.deepcopy(_current_scope())
    new_scope = copy.deepcopy(old_scope)
    for helper in helpers:
        new_scope.setdefault(helper.__name__, {}).update(kwargs)
    _threadlocal.scope = new_scope
    try:
        yield
    finally:
        _threadlocal.scope = old_scope


def _helper(func):
    """Wrap a helper so its keywords follow the three-step rule of the module."""
    signature = inspect.signature(func)
    takes_var_kwargs = any(
        p.kind is inspect.Parameter.VAR_KEYWORD for p in signature.parameters.values()
    )

    @functools.wraps(func)
    def call(*args, **kwargs):
        if args and isinstance(args[0], ModelHelper):
            model = args[0]
        elif isinstance(kwargs.get("model"), ModelHelper):
            model = kwargs["model"]
        else:
            raise TypeError(
                "The first input of helper function %s should be model. Or "
                "you can provide it in kwargs as model=<your_model>." % func.__name__
            )
        new_kwargs = copy.deepcopy(model.arg_scope)
        if not takes_var_kwargs:
            new_kwargs = {k: v for k, v in new_kwargs.items() if k in signature.parameters}
        new_kwargs.update(_current_scope().get(func.__name__, {}))
        new_kwargs.update(kwargs)
        return func(*args, **new_kwargs)

    return call


@_helper
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
    """Fully connected layer: ``blob_out = blob_in · Wᵀ + b`` (spec §6.2).

    Parameters ``<blob_out>_w`` (``[dim_out, dim_in]``, default XavierFill)
    and ``<blob_out>_b`` (``[dim_out]``, default ConstantFill); a str
    ``blob_out`` gets the current name scope. Every other keyword becomes an
    FC argument; ``freeze_bias`` makes the bias a computed parameter.
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


@_helper
def elementwise_linear(model, blob_in, blob_out, dim, weight_init=None, bias_init=None, **kwargs):
    """``blob_out = blob_in * w + b`` per column: parameters ``[dim]`` each."""
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


@_helper
def transpose(model, blob_in, blob_out, use_cudnn=False, **kwargs):
    """Transpose (``axes=...``); engine CUDNN when ``use_cudnn``."""
    if use_cudnn:
        kwargs["engine"] = "CUDNN"
    return model.net.Transpose(blob_in, blob_out, **kwargs)


@_helper
def softmax(model, blob_in, blob_out=None, use_cudnn=False, **kwargs):
    """Softmax (output auto-named when ``blob_out`` is None); CUDNN engine flag."""
    if use_cudnn:
        kwargs["engine"] = "CUDNN"
    if blob_out is None:
        return model.net.Softmax(blob_in, **kwargs)
    return model.net.Softmax(blob_in, blob_out, **kwargs)


@_helper
def concat(model, blobs_in, blob_out, order="NCHW", **kwargs):
    """Concat; returns only the result (the split-info output is ``_<out>_concat_dims``)."""
    return model.net.Concat(
        blobs_in, [blob_out, "_" + blob_out + "_concat_dims"], order=order, **kwargs
    )[0]


@_helper
def sum(model, blob_in, blob_out, **kwargs):  # noqa: A001  (Caffe2's name)
    """Sum of the input blobs."""
    return model.net.Sum(blob_in, blob_out, **kwargs)
