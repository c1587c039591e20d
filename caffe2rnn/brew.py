"""``caffe2.python.brew``: model-building helpers that take the model first.

``brew.fc(model, 'x', 'y', dim_in, dim_out)`` creates the parameters ``y_w``
(shape ``[dim_out, dim_in]``) and ``y_b`` (``[dim_out]``) in
``model.param_init_net`` and adds ``FC([x, y_w, y_b] → y)`` to ``model.net``.
The helpers themselves live in :mod:`caffe2rnn.helpers`; brew keeps the
registry of them and calls each through one wrapper that decides its keyword
arguments (Caffe2 E5, 0cdd09da6), in this order:

1. a deep copy of ``model.arg_scope`` (by default ``order='NCHW'``,
   ``use_cudnn=True``, ``cudnn_exhaustive_search=False``), keeping only the
   keys the helper names as parameters **unless it takes ``**kwargs``**;
2. the keywords of the active :func:`arg_scope` blocks for this helper;
3. the call's own keywords.

Step 1 is why an E5 ``brew.fc(..., axis=2)`` makes an FC op with arguments
``order: "NCHW"``, ``use_cudnn: 1``, ``cudnn_exhaustive_search: 0``, ``axis: 2``
(the history notebook, ``notebooks/12_history.ipynb``, shows it in the step
nets of each era): ``fc`` takes ``**kwargs`` and passes them all to the op.
The FC operator ignores them, but they are part of the step net Caffe2 built.

Registered helpers: every helper of Caffe2's E5 and E6 ``brew``:
``arg_scope``, ``fc``, ``dropout``, ``lrn``, ``softmax``, ``relu``, ``prelu``,
``tanh``, ``max_pool``, ``average_pool``, ``concat``, ``depth_concat``, ``sum``,
``transpose``, ``batch_mat_mul``, ``iter``, ``accuracy``, ``conv``,
``conv_nd``, ``group_conv``, ``add_weight_decay``, ``elementwise_linear``,
``layer_norm``, ``instance_norm``, ``image_input`` (its op is built, not run:
:mod:`caffe2rnn.operators.image_input`); and those whose operators caffe2rnn
does not implement, which name the missing operator when called
(:mod:`caffe2rnn.helpers.unimplemented`: ``spatial_bn``, ``conv_transpose``,
``group_conv_deprecated``, ``packed_fc``, ``fc_prune``, ``fc_decomp``,
``fc_sparse``, ``max_pool_with_index``, ``video_input``); and E7's ``cond`` and ``loop``
(If/While over model helpers, :mod:`caffe2rnn.helpers.control_ops`).

Your own helper: ``brew.Register(my_helper)``, then ``brew.my_helper(model,
...)`` gets the same keyword rules. ``brew.has_helper(name_or_function)`` and
``brew.get_helper(name)`` (not in Caffe2 at E5) look helpers up.
"""

import copy as _copy
import difflib as _difflib
import functools as _functools
import inspect as _inspect

from .helpers import unimplemented as _unimplemented
from .helpers.algebra import batch_mat_mul, sum, transpose  # noqa: A004 - Caffe2's names
from .helpers.arg_scope import arg_scope, get_current_scope
from .helpers.array_helpers import concat, depth_concat
from .helpers.control_ops import cond, loop
from .helpers.conv import conv, conv_nd, group_conv
from .helpers.dropout import dropout
from .helpers.elementwise_linear import elementwise_linear
from .helpers.fc import fc
from .helpers.layer_norm import layer_norm
from .helpers.nonlinearity import prelu, relu, tanh
from .helpers.normalization import instance_norm, lrn, softmax
from .helpers.pooling import average_pool, max_pool
from .helpers.tools import image_input
from .helpers.train import accuracy, add_weight_decay, iter  # noqa: A004 - Caffe2's name
from .model_helper import ModelHelper as _ModelHelper

#: Helper name → the raw helper function (what Register adds to).
_REGISTRY = {
    "arg_scope": arg_scope,
    "fc": fc,
    "dropout": dropout,
    "lrn": lrn,
    "softmax": softmax,
    "relu": relu,
    "prelu": prelu,
    "max_pool": max_pool,
    "average_pool": average_pool,
    "concat": concat,
    "depth_concat": depth_concat,
    "sum": sum,
    "transpose": transpose,
    "iter": iter,
    "conv": conv,
    "conv_nd": conv_nd,
    "group_conv": group_conv,
    "add_weight_decay": add_weight_decay,
    "elementwise_linear": elementwise_linear,
    "layer_norm": layer_norm,
    "instance_norm": instance_norm,
    "cond": cond,
    "loop": loop,
    "image_input": image_input,
    "tanh": tanh,
    "batch_mat_mul": batch_mat_mul,
    "accuracy": accuracy,
}
_REGISTRY.update(
    (name, getattr(_unimplemented, name))
    for name in (
        "spatial_bn",
        "conv_transpose",
        "group_conv_deprecated",
        "packed_fc",
        "fc_prune",
        "fc_decomp",
        "fc_sparse",
        "max_pool_with_index",
        "video_input",
    )
)


def _helper(func, name=None):
    """``func`` called with the keyword rules of the module docstring."""
    name = name or func.__name__
    parameters = _inspect.signature(func).parameters
    takes_var_kwargs = any(p.kind is _inspect.Parameter.VAR_KEYWORD for p in parameters.values())

    @_functools.wraps(func)
    def call(*args, **kwargs):
        if args and isinstance(args[0], _ModelHelper):
            model = args[0]
        elif "model" in kwargs:  # as Caffe2: whatever is passed as model=
            model = kwargs["model"]
        else:
            raise TypeError(
                "The first input of helper function %s should be model. Or "
                "you can provide it in kwargs as model=<your_model>." % name
            )
        new_kwargs = _copy.deepcopy(model.arg_scope)
        if not takes_var_kwargs:
            new_kwargs = {k: v for k, v in new_kwargs.items() if k in parameters}
        new_kwargs.update(get_current_scope().get(name, {}))
        new_kwargs.update(kwargs)
        return func(*args, **new_kwargs)

    call.__name__ = name  # arg_scope keys helpers by this name
    return call


def _wrapped(name):
    func = _REGISTRY[name]
    return func if name == "arg_scope" else _helper(func, name)


def Register(helper):
    """Add ``helper`` (a function taking the model first) as ``brew.<its name>``."""
    name = helper.__name__
    if name in _REGISTRY:
        raise AttributeError("Helper %s already exists. Please change your helper name." % name)
    _REGISTRY[name] = helper
    # As in Caffe2 (whose brew module was an object with these methods), a
    # helper named like one of brew's own functions is registered but
    # ``brew.<name>`` stays brew's function.
    if name not in _API:
        globals()[name] = _wrapped(name)


#: brew's own functions, which a helper cannot replace.
_API = ("Register", "has_helper", "get_helper")


def has_helper(helper_or_helper_name):
    """True if a helper of that name (or of that function's name) is registered."""
    name = (
        helper_or_helper_name
        if isinstance(helper_or_helper_name, str)
        else helper_or_helper_name.__name__
    )
    return name in _REGISTRY


def _not_registered(name):
    hint = _difflib.get_close_matches(name, list(_REGISTRY), n=3)
    return AttributeError(
        "Helper function %s not registered.%s"
        % (name, " Did you mean: %s?" % ", ".join(hint) if hint else "")
    )


def get_helper(helper_name):
    """The helper ``helper_name`` as ``brew.<helper_name>`` calls it."""
    if helper_name not in _REGISTRY:
        raise _not_registered(helper_name)
    return globals()[helper_name]


def __getattr__(name):
    # Only reached for names that are not brew attributes: unknown helpers.
    if name.startswith("__"):
        raise AttributeError(name)
    raise _not_registered(name)


# brew.<name> is the wrapped helper: replace the raw imports above.
for _name in _REGISTRY:
    globals()[_name] = _wrapped(_name)
del _name
