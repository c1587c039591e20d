"""Adding an optimizer to a whole model: ``build_sgd``, ``build_adam``...

``_build(model, optimizer)`` calls the optimizer once per parameter with a
gradient (``model.GetOptimizationParamInfo()``), in the order of
``model.params``, each under the device of the op that makes the parameter
(:func:`core.InferBlobDevices`). A parameter that carries an optimizer of its
own (``param_info.optimizer``, set under E6's ``UseOptimizer``) gets that one.

Two E6 (042e8ede4) options multiply every learning rate the optimizer builds:

* ``max_gradient_norm``: clipping by the global norm. Under the name scope
  ``norm_clipped_grad_update``: ``SumSqrElements`` of each gradient (of its
  values for a GradientSlice), ``EnsureCPUOutput``, their ``Sum``,
  ``global_norm = Pow(·, exponent=0.5)``, ``clip_norm`` (a constant),
  ``max_norm = Max(global_norm, clip_norm)`` and
  ``norm_ratio = Div(clip_norm, max_norm)``, at most 1;
* ``allow_lr_injection``: a blob ``lr_injection`` (1.0 at start) that
  :func:`set_lr_injection` changes between runs, without rebuilding the net.
  With both, the multiplier is ``lr_multiplier = Mul(norm_ratio, lr_injection)``.

Caffe2: caffe2/python/optimizer.py at 0cdd09da6 and 042e8ede4.
"""

import numpy as np

from .. import core, workspace
from ..errors import BuildError, ModelError
from ..proto import caffe2_pb2
from .adaptive import AdagradOptimizer, AdamOptimizer, FtrlOptimizer, RmsPropOptimizer
from .sgd import MultiPrecisionSgdOptimizer, SgdOptimizer, WeightDecayBuilder
from .yellowfin import YellowFinOptimizer

LEARNING_RATE_INJECTION = "lr_injection"


def _get_param_to_device(model):
    """Blob → device of the op making it, ``param_init_net`` winning over ``net``."""
    param_to_device = core.InferBlobDevices(model.net)
    param_to_device.update(core.InferBlobDevices(model.param_init_net))
    return param_to_device


def get_param_device(param_name, grad, param_to_device=None, default_device=None):
    """The device of ``param_name``, else of its gradient (values, then indices)."""
    param_to_device = param_to_device or {}
    device = param_to_device.get(param_name, default_device)
    if param_name not in param_to_device:
        halves = [grad.values, grad.indices] if isinstance(grad, core.GradientSlice) else [grad]
        for half in halves:
            if str(half) in param_to_device:
                device = param_to_device[str(half)]
                break
    if device is None:
        raise ModelError("Cannot infer device for %s: no op creates it" % param_name)
    return device


def get_lr_injection():
    """The current learning-rate injection (a multiplier of every base rate).
    The optimizer must have been built with ``allow_lr_injection=True``."""
    return workspace.FetchBlob(LEARNING_RATE_INJECTION)


def set_lr_injection(lr_injection_value):
    """Set the learning-rate injection (see :func:`get_lr_injection`)."""
    workspace.FeedBlob(
        LEARNING_RATE_INJECTION, np.array([float(lr_injection_value)], dtype=np.float32)
    )


def _calc_norm_ratio(model, params, name_scope, param_to_device, max_gradient_norm):
    """``clip_norm / max(global_norm, clip_norm)`` over ``params``' gradients."""
    with core.NameScope(name_scope):
        squared_sums = []
        for i, param in enumerate(params):
            device = get_param_device(str(param.blob), param.grad, param_to_device)
            with core.DeviceScope(device):
                grad = (
                    param.grad.values if isinstance(param.grad, core.GradientSlice) else param.grad
                )
                squared_sum = model.net.SumSqrElements(grad, "grad_%d_squared_sum" % i)
                squared_sums.append(model.net.EnsureCPUOutput(squared_sum))
        with core.DeviceScope(core.DeviceOption(caffe2_pb2.CPU)):
            full_sum = model.net.Sum(squared_sums, "grad_squared_full_sum")
            global_norm = model.net.Pow(full_sum, "global_norm", exponent=0.5)
            clip_norm = model.param_init_net.ConstantFill(
                [], "clip_norm", shape=[], value=float(max_gradient_norm)
            )
            max_norm = model.net.Max([global_norm, clip_norm], "max_norm")
            return model.net.Div([clip_norm, max_norm], "norm_ratio")


def _build(
    model,
    optimizer,
    weights_only=False,
    use_param_info_optim=True,
    max_gradient_norm=None,
    allow_lr_injection=False,
):
    param_to_device = _get_param_to_device(model)
    model.Validate()  # no duplicate parameters
    params = [
        info
        for info in model.GetOptimizationParamInfo()
        if not (weights_only and info.blob not in model.weights)
    ]
    lr_multiplier = None
    if max_gradient_norm is not None:
        lr_multiplier = _calc_norm_ratio(
            model, params, "norm_clipped_grad_update", param_to_device, max_gradient_norm
        )
    if allow_lr_injection:
        if not model.net.BlobIsDefined(LEARNING_RATE_INJECTION):
            lr_injection = model.param_init_net.ConstantFill(
                [], LEARNING_RATE_INJECTION, shape=[1], value=1.0
            )
        else:
            lr_injection = LEARNING_RATE_INJECTION
        if lr_multiplier is None:
            lr_multiplier = lr_injection
        else:
            lr_multiplier = model.net.Mul(
                [lr_multiplier, lr_injection], "lr_multiplier", broadcast=1
            )
    optimizer.add_lr_multiplier(lr_multiplier)
    for info in params:
        device = get_param_device(str(info.blob), info.grad, param_to_device)
        with core.DeviceScope(device):
            own = getattr(info, "optimizer", None)
            if own and use_param_info_optim:
                own(model.net, model.param_init_net, info)
            else:
                optimizer(model.net, model.param_init_net, info)
    return optimizer


def _build_with_options(model, optimizer, max_gradient_norm, allow_lr_injection):
    """``_build`` with E6's two rate multipliers (module docstring)."""
    return _build(
        model, optimizer, max_gradient_norm=max_gradient_norm, allow_lr_injection=allow_lr_injection
    )


def add_weight_decay(model, weight_decay):
    """``grad += weight_decay · w`` for every weight (not biases): L2 regularisation.

    Call it before the optimizer, so the step sees the decayed gradient.
    """
    _build(
        model,
        WeightDecayBuilder(weight_decay=weight_decay),
        weights_only=True,
        use_param_info_optim=False,
    )


def build_sgd(
    model, base_learning_rate, max_gradient_norm=None, allow_lr_injection=False, **kwargs
):
    """SGD on every parameter of ``model``; returns the :class:`SgdOptimizer`."""
    return _build_with_options(
        model, SgdOptimizer(base_learning_rate, **kwargs), max_gradient_norm, allow_lr_injection
    )


def build_multi_precision_sgd(
    model, base_learning_rate, max_gradient_norm=None, allow_lr_injection=False, **kwargs
):
    """SGD that updates float32 master copies of float16 parameters."""
    return _build_with_options(
        model,
        MultiPrecisionSgdOptimizer(base_learning_rate, **kwargs),
        max_gradient_norm,
        allow_lr_injection,
    )


def build_ftrl(model, engine="SIMD", **kwargs):
    """FTRL; Caffe2 asserted that the ``SIMD`` engine it defaults to is
    registered, which it never was in Caffe2's sources: pass ``engine=None``
    (or ``""``), as Caffe2's own test does."""
    if engine == "SIMD":
        for op_type in ("Ftrl_ENGINE_SIMD", "SparseFtrl_ENGINE_SIMD"):
            if not core.IsOperator(op_type):
                raise BuildError(
                    "build_ftrl(engine='SIMD') needs operator %s, which is not registered "
                    "(it was not in Caffe2's sources either); pass engine=None" % op_type
                )
    return _build(model, FtrlOptimizer(engine=engine, **kwargs))


def build_adagrad(
    model,
    base_learning_rate,
    parameters=None,
    max_gradient_norm=None,
    allow_lr_injection=False,
    **kwargs,
):
    """Adagrad with rate ``base_learning_rate`` (``parameters`` is ignored, as in Caffe2)."""
    return _build_with_options(
        model,
        AdagradOptimizer(alpha=base_learning_rate, **kwargs),
        max_gradient_norm,
        allow_lr_injection,
    )


def build_adam(
    model, base_learning_rate, max_gradient_norm=None, allow_lr_injection=False, **kwargs
):
    """Adam with rate ``base_learning_rate``; returns the :class:`AdamOptimizer`."""
    return _build_with_options(
        model,
        AdamOptimizer(alpha=base_learning_rate, **kwargs),
        max_gradient_norm,
        allow_lr_injection,
    )


def build_yellowfin(model, base_learning_rate=0.1, **kwargs):
    """YellowFin (E6), starting from rate ``base_learning_rate``."""
    return _build(model, YellowFinOptimizer(alpha=base_learning_rate, **kwargs))


def build_rms_prop(
    model, base_learning_rate, max_gradient_norm=None, allow_lr_injection=False, **kwargs
):
    """RMSProp (E6) with rate ``base_learning_rate``."""
    return _build_with_options(
        model,
        RmsPropOptimizer(alpha=base_learning_rate, **kwargs),
        max_gradient_norm,
        allow_lr_injection,
    )
