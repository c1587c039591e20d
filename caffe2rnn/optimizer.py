"""``caffe2.python.optimizer``: add a training step for every parameter.

After ``model.AddGradientOperators([loss])`` each parameter has a gradient
blob; an optimizer appends, per parameter, the ops that update it with its
gradient. ``build_sgd(model, base_learning_rate=0.1)`` on a model with one FC
(parameters ``fc_w``, ``fc_b``) adds, as Caffe2 E5 (0cdd09da6) did::

    param_init_net: ConstantFill([] → optimizer_iteration, shape=[1], value=0,
                                 dtype=INT64)          (device: CPU)
                    CreateMutex([] → iteration_mutex)  (device: CPU)
    net:            AtomicIter([iteration_mutex, optimizer_iteration]
                               → optimizer_iteration)  (device: CPU)
    then for each parameter p, in the order of model.params:
    net:            LearningRate(optimizer_iteration → p_lr, base_lr=-0.1,
                                 policy="fixed")
    param_init_net: ConstantFill([] → ONE_0_0, shape=[1], value=1.0)
    net:            WeightedSum([p, ONE_0_0, p_grad, p_lr] → p)

The rate is *negative* because WeightedSum adds: ``p = 1·p + (−0.1)·grad``.
The iteration counter and mutex are made once per ``param_init_net`` and
shared by every learning rate. Each parameter's ops are created under the
device of the op that makes the parameter (:func:`core.InferBlobDevices`),
which is why they carry a ``device_option``.

* :class:`SgdOptimizer` (``build_sgd``): ``policy`` and its arguments
  (``stepsize``, ``gamma``, ``power``, ``max_iter``) go to LearningRate;
  ``momentum > 0`` switches to ``MomentumSGDUpdate`` with a positive rate and
  a ``<p>_momentum`` blob (``nesterov`` defaults to 1).
* :class:`AdagradOptimizer` (``build_adagrad``): ``Adagrad`` with a
  ``<p>_squared_sum`` history; ``epsilon`` defaults to 1e-4.
* :class:`AdamOptimizer` (``build_adam``): ``Adam`` with ``<p>_first_moment``
  and ``<p>_second_moment``, reading the shared iteration counter.
* :func:`add_weight_decay`: ``grad += weight_decay · w`` for the weights.

A ``GradientSlice`` gradient (rows of a parameter) gets the sparse ops
(``ScatterWeightedSum``, ``SparseAdagrad``, ``SparseAdam``). Caffe2's
``build_ftrl`` and ``build_multi_precision_sgd`` are not here: caffe2rnn has
no Ftrl or float16 ops. The optimizer ops run as part of ``model.net``: one
``RunNet`` is one forward pass, one backward pass and one update.
"""

import collections
import logging

from . import core, scope
from .errors import ModelError
from .model_helper import ParameterInfo
from .proto import caffe2_pb2

logger = logging.getLogger(__name__)

_OPTIMIZER_ITERATION_NAME = "optimizer_iteration"

#: ``local``: blobs kept per parameter (momentum, squared sums, moments);
#: ``shared``: blobs shared by all parameters (``ONE``, the iteration counter).
AuxOptimizerParams = collections.namedtuple("AuxOptimizerParams", ["local", "shared"])


def _device_suffix():
    """``<device_type>_<gpu id>`` of the current device scope (CPU: ``0_0``)."""
    device = scope.CurrentDeviceScope() or core.DeviceOption(caffe2_pb2.CPU)
    return "%d_%d" % (device.device_type, device.cuda_gpu_id)


class Optimizer:
    """Adds the update ops of one parameter at a time: ``optimizer(net,
    param_init_net, param_info)`` or ``optimizer(net, param_init_net, param,
    grad)``. Subclasses implement :meth:`_run`."""

    def __init__(self):
        self._aux_params = AuxOptimizerParams(local=[], shared=[])

    def __call__(self, net, param_init_net, param, grad=None):
        if grad is None:
            if not isinstance(param, ParameterInfo) or param.grad is None:
                raise ModelError(
                    "%s needs a ParameterInfo with a gradient, or a parameter and its "
                    "gradient; got %r" % (type(self).__name__, param)
                )
        else:
            if isinstance(param, str):
                param = core.BlobReference(param)
            param = ParameterInfo(param_id=None, param=param, grad=grad)
        self._run(net, param_init_net, param)

    def _run(self, net, param_init_net, param_info):
        raise NotImplementedError("%s does not implement _run" % type(self).__name__)

    @staticmethod
    def build_lr(
        net,
        param_init_net,
        base_learning_rate,
        learning_rate_blob="lr",
        policy="fixed",
        iter_val=0,
        **kwargs,
    ):
        """A LearningRate op with rate ``−base_learning_rate``; ``(lr, iteration)``.

        The first call on a ``param_init_net`` also makes the shared int64
        counter ``optimizer_iteration`` (starting at ``iter_val``), its mutex,
        and the ``AtomicIter`` that advances it once per run of ``net``.
        """
        if not param_init_net.BlobIsDefined(_OPTIMIZER_ITERATION_NAME):
            with core.DeviceScope(core.DeviceOption(caffe2_pb2.CPU)):
                iteration = param_init_net.ConstantFill(
                    [],
                    _OPTIMIZER_ITERATION_NAME,
                    shape=[1],
                    value=iter_val,
                    dtype=core.DataType.INT64,
                )
                iter_mutex = param_init_net.CreateMutex([], ["iteration_mutex"])
                net.AtomicIter([iter_mutex, iteration], [iteration])
        else:
            iteration = param_init_net.GetBlobRef(_OPTIMIZER_ITERATION_NAME)
        # We minimise, so the step goes against the gradient: a negative rate.
        lr = net.LearningRate(
            [iteration], learning_rate_blob, base_lr=-base_learning_rate, policy=policy, **kwargs
        )
        return lr, iteration

    @staticmethod
    def dedup(net, sparse_dedup_aggregator, grad):
        """Merge repeated indices of a GradientSlice first, if an aggregator is named."""
        if not isinstance(grad, core.GradientSlice):
            raise ModelError("dedup takes a GradientSlice, got %r" % (grad,))
        if sparse_dedup_aggregator:
            return net.DeduplicateGradientSlices(grad, aggregator=sparse_dedup_aggregator)
        return grad

    def get_auxiliary_parameters(self):
        """The blobs this optimizer added besides the parameters: an
        :data:`AuxOptimizerParams` of ``local`` (one per parameter, e.g.
        Adagrad's squared sums) and ``shared`` blobs (e.g. Adam's iteration
        counter). Checkpoints need them to resume training."""
        return self._aux_params

    def scale_learning_rate(self, *args, **kwargs):
        raise NotImplementedError("Optimizer Need to Implement `scale_learning_rate` method.")


def _positive(optimizer, name, value):
    """Caffe2 asserted this; a clear error names the optimizer and value."""
    if value < 0:
        raise ModelError("%s: %s must be >= 0; got %g" % (type(optimizer).__name__, name, value))


class SgdOptimizer(Optimizer):
    """Plain SGD (``WeightedSum``) or momentum SGD (``MomentumSGDUpdate``)."""

    def __init__(self, base_learning_rate=0.01, policy="fixed", momentum=0.0, nesterov=1, **kwargs):
        super().__init__()
        self.base_learning_rate = base_learning_rate
        self.policy = policy
        self.momentum = momentum
        self.nesterov = nesterov
        self.init_kwargs = kwargs

    def _run(self, net, param_init_net, param_info):
        param, grad = param_info.blob, param_info.grad
        _positive(self, "base_learning_rate", self.base_learning_rate)
        _positive(self, "momentum", self.momentum)
        if self.base_learning_rate == 0:
            return
        # MomentumSGDUpdate subtracts its step, WeightedSum adds: opposite signs.
        lr_sign = -1 if self.momentum else 1
        lr, _ = self.build_lr(
            net,
            param_init_net,
            base_learning_rate=self.base_learning_rate * lr_sign,
            learning_rate_blob=str(param) + "_lr",
            policy=self.policy,
            **self.init_kwargs,
        )
        # One ONE blob per device, named after it.
        one = param_init_net.ConstantFill([], "ONE_" + _device_suffix(), shape=[1], value=1.0)
        self._aux_params.shared.append(one)
        if self.momentum > 0:
            momentum_data = param_init_net.ConstantFill(param, str(param) + "_momentum", value=0.0)
            self._aux_params.local.append(momentum_data)
        if isinstance(grad, core.GradientSlice):
            if self.momentum > 0:
                raise ModelError(
                    "SgdOptimizer: momentum is not supported for the sparse gradient of %s" % param
                )
            net.ScatterWeightedSum([param, one, grad.indices, grad.values, lr], param)
        elif self.momentum > 0:
            net.MomentumSGDUpdate(
                [grad, momentum_data, lr, param],
                [grad, momentum_data, param],
                momentum=self.momentum,
                nesterov=self.nesterov,
            )
        else:
            net.WeightedSum([param, one, grad, lr], param)

    def scale_learning_rate(self, scale):
        self.base_learning_rate *= scale


class WeightDecayBuilder(Optimizer):
    """``grad = 1·grad + weight_decay·param``: L2 regularisation, before the step."""

    def __init__(self, weight_decay):
        super().__init__()
        self.weight_decay = weight_decay

    def _run(self, net, param_init_net, param_info):
        suffix = _device_suffix()
        one = param_init_net.ConstantFill([], "ONE_" + suffix, shape=[1], value=1.0)
        wd = param_init_net.ConstantFill([], "wd_" + suffix, shape=[1], value=self.weight_decay)
        if isinstance(param_info.grad, core.GradientSlice):
            # Caffe2's check here was an assert on a string: always true, no decay.
            logger.warning("Weight decay does not yet support sparse gradients: %s", param_info)
            return
        net.WeightedSum([param_info.grad, one, param_info.blob, wd], param_info.grad)


class AdagradOptimizer(Optimizer):
    """Adagrad: per-element rates shrinking with the squared-gradient history."""

    def __init__(
        self,
        alpha=0.01,
        epsilon=1e-4,
        policy="fixed",
        sparse_dedup_aggregator=None,
        engine="",
        **kwargs,
    ):
        super().__init__()
        self.alpha = alpha
        self.epsilon = epsilon
        self.policy = policy
        self.sparse_dedup_aggregator = sparse_dedup_aggregator
        self.engine = engine
        self.init_kwargs = kwargs

    def _run(self, net, param_init_net, param_info):
        param, grad = param_info.blob, param_info.grad
        if self.alpha <= 0:
            return
        lr, _ = self.build_lr(
            net,
            param_init_net,
            base_learning_rate=self.alpha,
            learning_rate_blob=str(param) + "_lr",
            policy=self.policy,
            **self.init_kwargs,
        )
        squared_sum = param_init_net.ConstantFill([param], str(param) + "_squared_sum", value=0.0)
        self._aux_params.local.append(squared_sum)
        if isinstance(grad, core.GradientSlice):
            grad = self.dedup(net, self.sparse_dedup_aggregator, grad)
            net.SparseAdagrad(
                [param, squared_sum, grad.indices, grad.values, lr],
                [param, squared_sum],
                epsilon=self.epsilon,
                engine=self.engine,
            )
        else:
            net.Adagrad(
                [param, squared_sum, grad, lr],
                [param, squared_sum],
                epsilon=self.epsilon,
                engine=self.engine,
            )

    def scale_learning_rate(self, scale):
        self.alpha *= scale


class AdamOptimizer(Optimizer):
    """Adam: bias-corrected moving averages of the gradient and its square."""

    def __init__(
        self,
        alpha=0.001,
        beta1=0.9,
        beta2=0.999,
        epsilon=1e-8,
        policy="fixed",
        sparse_dedup_aggregator=None,
        engine="",
        **kwargs,
    ):
        super().__init__()
        self.alpha = alpha
        self.beta1 = beta1
        self.beta2 = beta2
        self.epsilon = epsilon
        self.policy = policy
        self.sparse_dedup_aggregator = sparse_dedup_aggregator
        self.engine = engine
        self.init_kwargs = kwargs

    def _run(self, net, param_init_net, param_info):
        param, grad = param_info.blob, param_info.grad
        if self.alpha <= 0:
            return
        lr, iteration = self.build_lr(
            net,
            param_init_net,
            base_learning_rate=self.alpha,
            learning_rate_blob=str(param) + "_lr",
            policy=self.policy,
            **self.init_kwargs,
        )
        m1 = param_init_net.ConstantFill([param], param + "_first_moment", value=0.0)
        m2 = param_init_net.ConstantFill([param], param + "_second_moment", value=0.0)
        self._aux_params.shared.append(iteration)
        self._aux_params.local.append(m1)
        self._aux_params.local.append(m2)
        betas = {"beta1": self.beta1, "beta2": self.beta2, "epsilon": self.epsilon}
        if isinstance(grad, core.GradientSlice):
            grad = self.dedup(net, self.sparse_dedup_aggregator, grad)
            net.SparseAdam(
                [param, m1, m2, grad.indices, grad.values, lr, iteration],
                [param, m1, m2],
                **betas,
            )
        else:
            net.Adam([param, m1, m2, grad, lr, iteration], [param, m1, m2], **betas)

    def scale_learning_rate(self, scale):
        self.alpha *= scale


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


def _build(model, optimizer, weights_only=False):
    param_to_device = _get_param_to_device(model)
    model.Validate()
    for param_info in model.GetOptimizationParamInfo():
        if weights_only and param_info.blob not in model.weights:
            continue
        device = get_param_device(str(param_info.blob), param_info.grad, param_to_device)
        with core.DeviceScope(device):
            optimizer(model.net, model.param_init_net, param_info)
    return optimizer


def add_weight_decay(model, weight_decay):
    """``grad += weight_decay · w`` for every weight (not biases): L2 regularisation.

    Call it before the optimizer, so the step sees the decayed gradient.
    """
    _build(model, WeightDecayBuilder(weight_decay=weight_decay), weights_only=True)


def build_sgd(model, base_learning_rate, **kwargs):
    """SGD on every parameter of ``model``; returns the :class:`SgdOptimizer`."""
    return _build(model, SgdOptimizer(base_learning_rate, **kwargs))


def build_adagrad(model, base_learning_rate, parameters=None, **kwargs):
    """Adagrad with rate ``base_learning_rate`` (``parameters`` is ignored, as in Caffe2)."""
    return _build(model, AdagradOptimizer(alpha=base_learning_rate, **kwargs))


def build_adam(model, base_learning_rate, **kwargs):
    """Adam with rate ``base_learning_rate``; returns the :class:`AdamOptimizer`."""
    return _build(model, AdamOptimizer(alpha=base_learning_rate, **kwargs))
