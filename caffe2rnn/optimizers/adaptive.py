"""Optimizers with per-element rates: Adagrad, Adam, RmsProp and Ftrl.

* :class:`AdagradOptimizer` (``build_adagrad``): ``Adagrad`` with a
  ``<p>_squared_sum`` history, ``epsilon`` 1e-4; E6 adds ``decay`` and
  ``rowWise`` (``RowWiseSparseAdagrad``, one history value per row in
  ``<p>_avg_squared_sum``, for sparse gradients only).
* :class:`AdamOptimizer` (``build_adam``): ``Adam`` with ``<p>_first_moment``
  and ``<p>_second_moment``, reading the shared iteration counter; E7 adds
  ``rowWise`` (``RowWiseSparseAdam``, one second moment per row in
  ``<p>_avg_second_moment``, for sparse gradients only).
* :class:`RmsPropOptimizer` (``build_rms_prop``, E6): ``RmsProp`` on the
  gradient with ``<p>_mean_squares`` and ``<p>_momentum``, then
  ``MomentumSGDUpdate`` applies the rate (dense gradients only).
* :class:`FtrlOptimizer` (``build_ftrl``): ``Ftrl``/``SparseFtrl`` with the
  ``<p>_ftrl_nz`` accumulators; no learning-rate op (``alpha`` is an argument).

E7's ``lars`` (Adagrad, as SGD: :meth:`.base.Optimizer.lars_multiplier`)
scales each dense parameter's rate by a ``Lars`` factor.

A ``GradientSlice`` gradient gets the sparse op, after
``DeduplicateGradientSlices`` when a ``sparse_dedup_aggregator`` is named.

Caffe2: caffe2/python/optimizer.py at 0cdd09da6, 042e8ede4 and 929c33cee.
"""

from .. import core, eras, workspace
from ..errors import ModelError
from .base import Optimizer, one_blob


class AdagradOptimizer(Optimizer):
    """Adagrad: per-element rates shrinking with the squared-gradient history."""

    rate_name = "alpha"

    def __init__(
        self,
        alpha=0.01,
        epsilon=1e-4,
        decay=1,
        policy="fixed",
        sparse_dedup_aggregator=None,
        rowWise=False,  # noqa: N803 - Caffe2's name
        engine="",
        lars=None,
        **kwargs,
    ):
        super().__init__()
        self.keep_settings(self.later_keywords(locals(), lars=None))

    def _run(self, net, param_init_net, param_info):
        param, grad = param_info.blob, param_info.grad
        if self.alpha <= 0:
            return
        self.lars_multiplier(net, param, grad)  # E7's lars= (else nothing)
        lr, _ = self.param_lr(net, param_init_net, param, self.alpha)
        if self.rowWise:
            squared_sum = self._row_history(param_init_net, param)
        else:
            squared_sum = param_init_net.ConstantFill(
                [param], str(param) + "_squared_sum", value=0.0
            )
        self._aux_params.local.append(squared_sum)
        if isinstance(grad, core.GradientSlice):
            if self.decay != 1:  # Caffe2 asserted it
                raise ModelError("Decay is not implemented for SparseAdagrad and must be set to 1")
            grad = self.dedup(net, self.sparse_dedup_aggregator, grad)
            op = "RowWiseSparseAdagrad" if self.rowWise else "SparseAdagrad"
            getattr(net, op)(
                [param, squared_sum, grad.indices, grad.values, lr],
                [param, squared_sum],
                epsilon=self.epsilon,
                engine=self.engine,
            )
        else:
            if self.rowWise:  # Caffe2 asserted it
                raise ModelError(
                    "If SparseAdagrad with rowWise=True, gradient must be a gradientslice "
                    "(parameter %s has a dense gradient)" % param
                )
            args = {"epsilon": self.epsilon, "engine": self.engine}
            if eras.current().late_2017_optimizers:
                args["decay"] = float(self.decay)
            net.Adagrad([param, squared_sum, grad, lr], [param, squared_sum], **args)

    @staticmethod
    def _row_history(param_init_net, param):
        """``<p>_avg_squared_sum``, one zero per row of ``param``: sized from
        shape inference of the init net, or at run time (Shape + Slice)."""
        shapes, _ = workspace.InferShapesAndTypes([param_init_net])
        if str(param) in shapes:
            return param_init_net.ConstantFill(
                [], str(param) + "_avg_squared_sum", shape=[shapes[str(param)][0]], value=0.0
            )
        shape = param_init_net.Shape(param, str(param) + "_shape")
        num_rows = param_init_net.Slice([shape], str(shape) + "_numrows", starts=[0], ends=[1])
        return param_init_net.ConstantFill(
            num_rows, str(param) + "_avg_squared_sum", input_as_shape=1, value=0.0
        )


class AdamOptimizer(Optimizer):
    """Adam: bias-corrected moving averages of the gradient and its square."""

    rate_name = "alpha"

    def __init__(
        self,
        alpha=0.001,
        beta1=0.9,
        beta2=0.999,
        epsilon=1e-8,
        policy="fixed",
        sparse_dedup_aggregator=None,
        rowWise=False,  # noqa: N803 - Caffe2's name (E7)
        engine="",
        **kwargs,
    ):
        super().__init__()
        self.keep_settings(self.later_keywords(locals(), rowWise=False))

    def _run(self, net, param_init_net, param_info):
        param, grad = param_info.blob, param_info.grad
        if self.alpha <= 0:
            return
        row_wise = getattr(self, "rowWise", False)  # E7 only
        lr, iteration = self.param_lr(net, param_init_net, param, self.alpha)
        m1 = param_init_net.ConstantFill([param], param + "_first_moment", value=0.0)
        if row_wise:
            m2 = self._row_moment(param_init_net, param)
        else:
            m2 = param_init_net.ConstantFill([param], param + "_second_moment", value=0.0)
        self._aux_params.shared.append(iteration)
        self._aux_params.local.append(m1)
        self._aux_params.local.append(m2)
        betas = {"beta1": self.beta1, "beta2": self.beta2, "epsilon": self.epsilon}
        if row_wise and not isinstance(grad, core.GradientSlice):  # Caffe2 asserted it
            raise ModelError(
                "If SparseAdam with rowWise=True, gradient must be a gradientslice "
                "(parameter %s has a dense gradient): rowWise is not supported for the "
                "dense Adam optimizer" % param
            )
        if isinstance(grad, core.GradientSlice):
            grad = self.dedup(net, self.sparse_dedup_aggregator, grad)
            getattr(net, "RowWiseSparseAdam" if row_wise else "SparseAdam")(
                [param, m1, m2, grad.indices, grad.values, lr, iteration],
                [param, m1, m2],
                **betas,
            )
        else:
            net.Adam([param, m1, m2, grad, lr, iteration], [param, m1, m2], **betas)

    @staticmethod
    def _row_moment(param_init_net, param):
        """``<p>_avg_second_moment``, one zero per row of ``param``, sized by shape
        inference of the init net. Caffe2 had no Shape/Slice fallback here (unlike
        Adagrad's): a parameter inference cannot size failed with a KeyError."""
        shapes, _ = workspace.InferShapesAndTypes([param_init_net])
        if str(param) not in shapes:
            raise ModelError(
                "AdamOptimizer(rowWise=True): shape inference of the param_init_net "
                "does not give the shape of %s, which sizes %s_avg_second_moment" % (param, param)
            )
        return param_init_net.ConstantFill(
            [], str(param) + "_avg_second_moment", shape=[shapes[str(param)][0]], value=0.0
        )


class RmsPropOptimizer(Optimizer):
    """RMSProp (E6): scale the gradient by its running RMS, then step."""

    rate_name = "alpha"

    def __init__(
        self,
        alpha=0.01,
        decay=0.9,
        momentum=0.0,
        epsilon=1e-5,
        policy="fixed",
        engine="",
        **kwargs,
    ):
        super().__init__()
        self.keep_settings(locals())

    def _run(self, net, param_init_net, param_info):
        param, grad = param_info.blob, param_info.grad
        if self.alpha <= 0:  # Caffe2 asserted alpha > 0
            raise ModelError("RmsPropOptimizer: alpha must be > 0; got %g" % self.alpha)
        if isinstance(grad, core.GradientSlice):  # Caffe2 asserted it
            raise ModelError("RmsPropOptimizer doesn't support sparse gradients (%s)" % param)
        one = one_blob(param_init_net)
        lr, _ = self.build_lr(
            net,
            param_init_net,
            base_learning_rate=-self.alpha,
            policy=self.policy,
            **self.init_kwargs,
        )
        # Caffe2 passed ``values=0.0``, which ConstantFill ignores: 0 is its default.
        grad_o = param_init_net.ConstantFill([param], str(param) + "_grad_o", values=0.0)
        ms = param_init_net.ConstantFill([param], str(param) + "_mean_squares", values=0.0)
        mom = param_init_net.ConstantFill([param], str(param) + "_momentum", values=0.0)
        self._aux_params.local.append(ms)
        self._aux_params.local.append(mom)
        net.RmsProp(
            [grad, ms, mom, one],
            [grad_o, ms, mom],
            decay=self.decay,
            momentum=self.momentum,
            epsilon=self.epsilon,
            engine=self.engine,
        )
        net.MomentumSGDUpdate([grad_o, mom, lr, param], [grad_o, mom, param])


class FtrlOptimizer(Optimizer):
    """FTRL-Proximal; ``alpha`` is the op's argument (no LearningRate op)."""

    rate_name = "alpha"

    def __init__(
        self, alpha=0.01, beta=1e-4, lambda1=0, lambda2=0, sparse_dedup_aggregator=None, engine=""
    ):
        super().__init__()
        self.keep_settings(locals())

    def _run(self, net, param_init_net, param_info):
        param, grad = param_info.blob, param_info.grad
        if self.alpha <= 0:
            return
        nz = param_init_net.ConstantFill(
            [param], str(param) + "_ftrl_nz", extra_shape=[2], value=0.0
        )
        self._aux_params.local.append(nz)
        args = {
            "engine": self.engine,
            "alpha": self.alpha,
            "beta": self.beta,
            "lambda1": self.lambda1,
            "lambda2": self.lambda2,
        }
        if isinstance(grad, core.GradientSlice):
            grad = self.dedup(net, self.sparse_dedup_aggregator, grad)
            net.SparseFtrl([param, nz, grad.indices, grad.values], [param, nz], **args)
        else:
            net.Ftrl([param, nz, grad], [param, nz], **args)
