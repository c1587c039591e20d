"""``YellowFinOptimizer`` (E6): one ``YellowFin`` op per parameter.

YellowFin tunes its own learning rate and momentum (the op is documented in
:mod:`caffe2rnn.operators.yellowfin`); the optimizer only makes its state,
per parameter ``p``: ``p_moment``, ``p_g_avg``, ``p_g2_avg`` (shaped like
``p``), ``p_lr_avg`` and ``p_mu_avg`` (starting at ``alpha`` and ``mu``),
``p_curv_win`` (``curv_win_width`` cells) and ``p_scalars_memory`` (5
cells), and reads the shared iteration counter. Dense gradients only.

Caffe2: caffe2/python/optimizer.py at 042e8ede4 (``YellowFinOptimizer``,
4358a66ce).
"""

from .. import core
from ..errors import ModelError
from ..operators.yellowfin import SCALARS_MEMORY_SIZE
from .base import Optimizer, iteration_counter


class YellowFinOptimizer(Optimizer):
    """YellowFin: an automatic tuner for momentum SGD
    (https://arxiv.org/abs/1706.03471), with its own rate and momentum per
    parameter."""

    rate_name = "alpha"

    def __init__(
        self,
        alpha=0.1,
        mu=0.0,
        beta=0.999,
        curv_win_width=20,
        zero_debias=True,
        epsilon=0.1**6,
        policy="fixed",
        sparse_dedup_aggregator=None,
        **kwargs,
    ):
        super().__init__()
        self.keep_settings(locals())

    def _run(self, net, param_init_net, param_info):
        param, grad = param_info.blob, param_info.grad

        def like_param(suffix):
            return param_init_net.ConstantFill([param], param + suffix, value=0.0)

        def scalars(suffix, size, value):
            return param_init_net.ConstantFill([], param + suffix, shape=[size], value=value)

        moment = like_param("_moment")
        curv_win = scalars("_curv_win", self.curv_win_width, 0.0)
        g_avg = like_param("_g_avg")
        g2_avg = like_param("_g2_avg")
        lr_avg = scalars("_lr_avg", 1, self.alpha)
        mu_avg = scalars("_mu_avg", 1, self.mu)
        scalars_memory = scalars("_scalars_memory", SCALARS_MEMORY_SIZE, 0.0)
        if self.alpha <= 0:  # Caffe2 asserted both (after making the blobs)
            raise ModelError("YellowFinOptimizer: alpha must be > 0; got %g" % self.alpha)
        if isinstance(grad, core.GradientSlice):
            raise ModelError("YellowFinOptimizer doesn't support sparse gradients (%s)" % param)
        iteration = iteration_counter(net, param_init_net)
        self._aux_params.shared.append(iteration)
        state = [param, moment, lr_avg, mu_avg, curv_win, g_avg, g2_avg, scalars_memory]
        self._aux_params.local.extend(state[1:])
        net.YellowFin(
            state + [grad, iteration],
            state,
            beta=self.beta,
            epsilon=self.epsilon,
            curv_win_width=self.curv_win_width,
            zero_debias=self.zero_debias,
        )
