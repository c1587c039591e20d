"""``YellowFin``: momentum SGD that tunes its own rate and momentum.

YellowFin (Zhang & Mitliagkas, https://arxiv.org/abs/1706.03471) estimates,
from moving averages of the gradient, the curvature range ``[h_min, h_max]``,
the gradient variance ``C`` and the distance to the optimum ``D``, and picks
the momentum ``μ`` and rate ``α`` that are optimal for a quadratic with those
statistics. Caffe2 (2017-08) made it one op per parameter::

    YellowFin([param, moment, lr_avg, mu_avg, curv_win, g_avg, g2_avg,
               scalars_memory, grad, iter]
              → [param, moment, lr_avg, mu_avg, curv_win, g_avg, g2_avg,
                 scalars_memory])

with arguments ``beta`` (0.999, the moving averages' coefficient),
``curv_win_width`` (20), ``epsilon`` (1e-6), ``nesterov`` (0) and
``zero_debias`` (1). One run, with ``t = iter`` (≥ 1; the optimizer's
``AtomicIter`` runs first) and ``avg(x)`` the moving average
``β·avg + (1−β)·x`` divided by ``1 − βᵗ`` when ``zero_debias`` ("debiased"):

1. the momentum step with the *current* ``μ = mu_avg``, ``α = lr_avg``:
   ``m' = μ·m + α·g``, ``w' = w − m'`` (Nesterov: ``w' = w − (1+μ)·m' + μ·m``);
2. ``g_avg``, ``g2_avg`` ← moving averages of ``g`` and ``g²``;
   ``‖g‖² = max(ε, g·g)``; moving averages of ``‖g‖²`` and ``‖g‖``
   (``scalars_memory[1]`` and ``[0]``);
3. ``curv_win[(t−1) mod width] = log ‖g‖²``; the min and max of its first
   ``min(width, t)`` cells are averaged (``scalars_memory[2]``, ``[3]``), and
   ``h_min``/``h_max`` are the exponentials of their debiased values (≥ ε);
4. ``C = max(ε, avg(‖g‖²) − ‖avg(g)‖²)`` (debiased averages);
   ``D`` = moving average (``scalars_memory[4]``) of
   ``avg(‖g‖) / avg(‖g‖²)`` (not debiased);
5. from ``t = 2`` on: ``p = (D·h_min)² / (2C)``, ``w³ = (−√(p² + 4p³/27) − p)/2``,
   ``y = w − p/(3w)``, ``μ* = max((y+1)², ((√(h_max/h_min) − 1)/(√(h_max/h_min) + 1))²)``,
   ``α* = (1 − √μ*)² / h_min``; ``mu_avg``, ``lr_avg`` ← their moving averages.

Caffe2: caffe2/sgd/yellowfin_op.{h,cc} (042e8ede4). It read ``μ`` and ``α`` of
step 1 from the *output* blobs, which are the inputs when the op runs in place
(as the optimizer always ran it); out of place they held whatever memory the
output blobs had, so here the inputs' values are used. Caffe2 enforced a
1-element ``lr_avg`` and ``mu_avg`` and the shape of ``param`` for ``moment``,
``g_avg``, ``g2_avg`` and ``grad``; a ``curv_win`` shorter than the window,
a ``scalars_memory`` of fewer than 5 values or ``iter`` < 1 made it write out
of bounds, so those are refused too.
"""

import numpy as np

from ..errors import ShapeError
from ..runtime.registry import register, register_gradient
from .gradient_maker import ShouldNotDoGradient
from .sgd import ParameterUpdate

_PARAM, _MOMENT, _LR, _MU, _CURV_WIN, _G_AVG, _G2_AVG, _SCALARS, _GRAD, _ITER = range(10)
#: the persistent scalars: averages of ‖g‖, ‖g‖², min and max log ‖g‖², distance
SCALARS_MEMORY_SIZE = 5


@register("YellowFin", inputs=10, outputs=8, inplace=[(i, i) for i in range(8)])
class YellowFin(ParameterUpdate):
    """One YellowFin step of one parameter (module docstring)."""

    def setup(self):
        self.beta = self.args.single("beta", 0.999, float)
        self.curv_win_width = self.args.single("curv_win_width", 20, int)
        self.epsilon = self.args.single("epsilon", 1e-6, float)
        self.nesterov = self.args.single("nesterov", 0, int) != 0
        self.zero_debias = self.args.single("zero_debias", True, bool)

    def inputs_checked(self):
        w = self.float_input(_PARAM)
        arrays = {}
        for i in (_MOMENT, _G_AVG, _G2_AVG, _GRAD):
            a = self.float_input(i)
            if a.shape != w.shape or a.dtype != w.dtype:
                raise self.shape_error(
                    i, "%s of shape %s like input 0 ('%s')" % (w.dtype, w.shape, self.input_name(0))
                )
            arrays[i] = a
        for i in (_LR, _MU):
            if self.float_input(i).size != 1 or self.input(i).dtype != w.dtype:
                raise self.shape_error(i, "a 1-element %s tensor" % w.dtype)
        if self.curv_win_width < 1:
            raise ShapeError(
                "argument curv_win_width is %d; expected at least 1" % self.curv_win_width
            )
        for i, size in ((_CURV_WIN, self.curv_win_width), (_SCALARS, SCALARS_MEMORY_SIZE)):
            a = self.float_input(i)
            if a.size < size or a.dtype != w.dtype:
                raise self.shape_error(i, "%s of at least %d elements" % (w.dtype, size))
        it = self.input(_ITER)
        if it.dtype != np.int64 or it.size < 1 or it.reshape(-1)[0] < 1:
            raise self.shape_error(_ITER, "the int64 iteration counter, at least 1", it.shape)
        return w, arrays, int(it.reshape(-1)[0])

    def run(self):
        w, a, t = self.inputs_checked()
        dt = w.dtype.type
        beta, eps = dt(self.beta), dt(self.epsilon)
        # pow(float beta, iter) in double, as the C++ did
        debias = dt(1.0 / (1.0 - float(beta) ** t)) if self.zero_debias else dt(1.0)
        g, m = a[_GRAD], a[_MOMENT]

        def average(value, old):
            new = beta * old + (dt(1) - beta) * value
            return new, new * debias

        # 1. the momentum step, with the rate and momentum of the last run
        mu, lr = dt(self.input(_MU).reshape(-1)[0]), dt(self.input(_LR).reshape(-1)[0])
        m_new = mu * m + lr * g
        if self.nesterov:
            w_new = w - (dt(1) + mu) * m_new + mu * m
        else:
            w_new = w - m_new
        # 2. moving averages of the gradient and its norms
        memory = self.input(_SCALARS).reshape(-1).copy()
        g_avg, g_deb = average(g, a[_G_AVG])
        g2_avg, _ = average(g * g, a[_G2_AVG])
        norm2 = max(eps, dt(np.dot(g.reshape(-1), g.reshape(-1))))
        memory[1], norm2_deb = average(norm2, memory[1])
        memory[0], norm_deb = average(dt(np.sqrt(norm2)), memory[0])
        # 3. the curvature range, from the window of log ‖g‖²
        window = self.input(_CURV_WIN).reshape(-1).copy()
        window[(t - 1) % self.curv_win_width] = np.log(norm2)
        valid = window[: min(self.curv_win_width, t)]
        memory[2], log_min_deb = average(valid.min(), memory[2])
        memory[3], log_max_deb = average(valid.max(), memory[3])
        h_min, h_max = max(eps, dt(np.exp(log_min_deb))), max(eps, dt(np.exp(log_max_deb)))
        # 4. variance and distance to the optimum
        variance = max(eps, norm2_deb - dt(np.dot(g_deb.reshape(-1), g_deb.reshape(-1))))
        memory[4], distance_deb = average(memory[0] / memory[1], memory[4])
        lr_new, mu_new = self.input(_LR).copy(), self.input(_MU).copy()
        if t > 1:  # 5. the tuned rate and momentum, averaged
            mu_star, lr_star = _lr_mu(distance_deb, h_min, h_max, variance, dt)
            mu_new[...] = average(mu_star, mu)[0]
            lr_new[...] = average(lr_star, lr)[0]
        for i, value, like in (
            (_PARAM, w_new, w),
            (_MOMENT, m_new, m),
            (_LR, lr_new, self.input(_LR)),
            (_MU, mu_new, self.input(_MU)),
            (_CURV_WIN, window, self.input(_CURV_WIN)),
            (_G_AVG, g_avg, a[_G_AVG]),
            (_G2_AVG, g2_avg, a[_G2_AVG]),
            (_SCALARS, memory, self.input(_SCALARS)),
        ):
            self.write(i, value, like)


def _lr_mu(distance, h_min, h_max, variance, dt):
    """``(μ*, α*)``: YellowFin's SingleStep tuning (the root of a cubic)."""
    with np.errstate(all="ignore"):  # C++ float arithmetic: inf/nan pass through
        curv_ratio = np.sqrt(h_max / h_min)
        mu_limit = (curv_ratio - dt(1)) / (curv_ratio + dt(1))
        pre_p = distance * h_min
        p = (pre_p * pre_p) / (dt(2) * variance)
        w3 = (-np.sqrt(p * p + dt(4.0 / 27.0) * p * p * p) - p) / dt(2)
        w = np.copysign(np.abs(w3) ** dt(1.0 / 3.0), dt(1) if w3 > 0 else dt(-1))
        y = w - p / dt(3) / w
        root = y + dt(1)
        mu = max(root * root, mu_limit * mu_limit)
        lr = (dt(1) - np.sqrt(mu)) ** 2 / h_min
    return dt(mu), dt(lr)


register_gradient("YellowFin")(ShouldNotDoGradient)
