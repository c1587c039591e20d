"""Plain and momentum SGD, its multi-precision form, and weight decay.

``build_sgd(model, base_learning_rate=0.1)`` on a model with one FC
(parameters ``fc_w``, ``fc_b``) adds, per parameter ``p`` (E5 names)::

    net:            LearningRate(optimizer_iteration → p_lr, base_lr=-0.1,
                                 policy="fixed")
    param_init_net: ConstantFill([] → ONE_0_0, shape=[1], value=1.0)
    net:            WeightedSum([p, ONE_0_0, p_grad, p_lr] → p)

The rate is *negative* because WeightedSum adds: ``p = 1·p + (−0.1)·grad``.
``momentum > 0`` switches to ``MomentumSGDUpdate`` with a *positive* rate
(it subtracts its step) and a ``<p>_momentum`` blob (``nesterov`` defaults
to 1). A ``GradientSlice`` gradient gets ``ScatterWeightedSum``; with
momentum, E5 refused it and E6 (df6682512, 2017-11) uses
``SparseMomentumSGDUpdate`` (era policy ``late_2017_optimizers``).

``MultiPrecisionSgdOptimizer`` updates a float32 master copy of a float16
parameter (``param_info.blob_copy``) and writes it back with ``FloatToHalf``;
a plain float32 parameter gets ordinary SGD. (Caffe2 had the float16 ops
only on the GPU; caffe2rnn has none, so only the float32 path runs here.)

E7 (929c33cee): ``lars=offset`` scales each dense parameter's rate by a
``Lars([p, p_grad])`` factor (:meth:`.base.Optimizer.lars_multiplier`), and
``add_weight_decay`` refuses a sparse gradient (``ValueError``; E5 and E6
skipped it, with a warning here).

Caffe2: caffe2/python/optimizer.py at 0cdd09da6, 042e8ede4 and 929c33cee.
"""

import logging

from .. import core, eras
from ..errors import ModelError
from .base import Optimizer, device_suffix, one_blob, positive

logger = logging.getLogger(__name__)


class SgdOptimizer(Optimizer):
    """Plain SGD (``WeightedSum``) or momentum SGD (``MomentumSGDUpdate``)."""

    rate_name = "base_learning_rate"

    def __init__(
        self,
        base_learning_rate=0.01,
        policy="fixed",
        momentum=0.0,
        nesterov=1,
        sparse_dedup_aggregator=None,
        lars=None,
        **kwargs,
    ):
        super().__init__()
        self.keep_settings(self.later_keywords(locals(), lars=None))

    def _run(self, net, param_init_net, param_info):
        param, grad = param_info.blob, param_info.grad
        positive(self, "base_learning_rate", self.base_learning_rate)
        positive(self, "momentum", self.momentum)
        if self.base_learning_rate == 0:
            return
        self.lars_multiplier(net, param, grad)  # E7's lars= (else nothing)
        # MomentumSGDUpdate subtracts its step, WeightedSum adds: opposite signs.
        lr_sign = -1 if self.momentum else 1
        lr, _ = self.param_lr(net, param_init_net, param, self.base_learning_rate * lr_sign)
        one = one_blob(param_init_net)  # one per device, named after it
        self._aux_params.shared.append(one)
        momentum_data = None
        if self.momentum > 0:
            momentum_data = param_init_net.ConstantFill(param, str(param) + "_momentum", value=0.0)
            self._aux_params.local.append(momentum_data)
        if isinstance(grad, core.GradientSlice):
            if momentum_data is not None and not eras.current().late_2017_optimizers:
                raise ModelError(  # E5 asserted it; E6 has SparseMomentumSGDUpdate
                    "SgdOptimizer: momentum is not supported for the sparse gradient of %s "
                    "(before Caffe2 df6682512, 2017-11)" % param
                )
            grad = self.dedup(net, self.sparse_dedup_aggregator, grad)
            if momentum_data is not None:
                net.SparseMomentumSGDUpdate(
                    [grad.values, momentum_data, lr, param, grad.indices],
                    [grad.values, momentum_data, param],
                    momentum=self.momentum,
                    nesterov=self.nesterov,
                )
            else:
                net.ScatterWeightedSum([param, one, grad.indices, grad.values, lr], param)
        elif momentum_data is not None:
            net.MomentumSGDUpdate(
                [grad, momentum_data, lr, param],
                [grad, momentum_data, param],
                momentum=self.momentum,
                nesterov=self.nesterov,
            )
        else:
            net.WeightedSum([param, one, grad, lr], param)


class MultiPrecisionSgdOptimizer(SgdOptimizer):
    """SGD on a float32 master copy of a float16 parameter (module docstring).

    Its own defaults and order: ``base_learning_rate=0.1``, then ``momentum``
    before ``policy`` (Caffe2 0cdd09da6 to 929c33cee)."""

    def __init__(
        self,
        base_learning_rate=0.1,
        momentum=0.0,
        policy="fixed",
        nesterov=1,
        sparse_dedup_aggregator=None,
        **kwargs,
    ):
        super().__init__(
            base_learning_rate=base_learning_rate,
            policy=policy,
            momentum=momentum,
            nesterov=nesterov,
            sparse_dedup_aggregator=sparse_dedup_aggregator,
            **kwargs,
        )

    def _run(self, net, param_init_net, param_info):
        param = param_info.blob
        copies = param_info.blob_copy or {}
        param_fp32 = copies.get(core.DataType.FLOAT)
        if param_fp32 is None:  # a straight float32 parameter
            return SgdOptimizer._run(self, net, param_init_net, param_info)
        grad = param_info.grad
        if self.base_learning_rate == 0:
            return None
        positive(self, "base_learning_rate", self.base_learning_rate)
        if isinstance(grad, core.GradientSlice):
            raise ModelError(
                "MultiPrecisionSgdOptimizer doesn't support sparse gradients (%s)" % param
            )
        lr, _ = self.param_lr(net, param_init_net, param, -self.base_learning_rate)
        momentum_data = param_init_net.ConstantFill(param_fp32, str(param) + "_momentum", value=0.0)
        self._aux_params.local.append(momentum_data)
        grad_fp32 = net.HalfToFloat(grad, str(grad) + "_fp32")
        net.MomentumSGDUpdate(
            [grad_fp32, momentum_data, lr, param_fp32],
            [grad_fp32, momentum_data, param_fp32],
            momentum=self.momentum,
            nesterov=self.nesterov,
        )
        net.FloatToHalf(param_fp32, param)
        return None


class WeightDecayBuilder(Optimizer):
    """``grad = 1·grad + weight_decay·param``: L2 regularisation, before the step."""

    def __init__(self, weight_decay):
        super().__init__()
        self.keep_settings(locals())

    def _run(self, net, param_init_net, param_info):
        suffix = device_suffix(with_node_name=False)
        one = param_init_net.ConstantFill([], "ONE_" + suffix, shape=[1], value=1.0)
        wd = param_init_net.ConstantFill([], "wd_" + suffix, shape=[1], value=self.weight_decay)
        if isinstance(param_info.grad, core.GradientSlice):
            if eras.current().early_2018_optimizers:  # E7: raise ValueError(...)
                raise ModelError(
                    "Weight decay does not yet support sparse gradients (parameter %s)"
                    % param_info.blob
                )
            # E5, E6: Caffe2's check here was an assert on a string: always true, no decay.
            logger.warning("Weight decay does not yet support sparse gradients: %s", param_info)
            return
        net.WeightedSum([param_info.grad, one, param_info.blob, wd], param_info.grad)
