"""``Ftrl`` and ``SparseFtrl``: FTRL-Proximal (McMahan et al., KDD 2013).

Each weight ``w`` keeps two accumulators, stored interleaved in one tensor
``nz`` of twice the size (``nz[..., 0] = n``, ``nz[..., 1] = z``; Caffe2's
``FtrlOptimizer`` makes it with ``ConstantFill([w], extra_shape=[2])``). One
step with gradient ``g``, ``α`` = argument ``alpha`` (default 0.005) or the
1-element input 3, ``β`` = ``beta`` (1.0), ``λ₁``/``λ₂`` = ``lambda1`` /
``lambda2`` (0.001 each)::

    n' = n + g²
    σ  = (√n' − √n) / α
    z' = z + g − σ · w
    w' = (λ₁ · sign(z') − z') / ((β + √n') / α + λ₂)   if |z'| > λ₁, else 0

* ``Ftrl([w, nz, g(, alpha)] → [w, nz])``: every element (in place or not).
* ``SparseFtrl([w, nz, indices, g(, alpha)] → [w, nz])``, in place: the rows
  ``indices`` of ``w`` (first dimension) and ``nz``, one index after the other.

``alpha`` as an argument *and* as an input is refused, as Caffe2 did; a
learning rate fed as input 3 replaces ``α`` from then on. Caffe2 checked the
sizes of ``nz``, ``g`` and the indices of ``SparseFtrl`` only with
``DCHECK`` (debug builds) and otherwise read and wrote out of bounds: they are
refused here.

Caffe2: caffe2/sgd/ftrl_op.{h,cc} (0cdd09da6; unchanged at 042e8ede4). The
``SIMD`` engine Caffe2's optimizer could ask for runs this implementation.
"""

import numpy as np

from ..errors import ArgumentError
from ..runtime.registry import register, register_gradient
from .gradient_maker import ShouldNotDoGradient
from .sgd import ParameterUpdate, rows_in_order
from .training import index_input


class _FtrlBase(ParameterUpdate):
    #: index of the optional alpha input
    alpha_input = 3

    def setup(self):
        if self.args.has("alpha") and len(self.inputs) > self.alpha_input:
            raise ArgumentError("Cannot specify alpha by both input and argument")
        self.alpha = self.args.single("alpha", 0.005, float)
        self.beta = self.args.single("beta", 1.0, float)
        self.lambda1 = self.args.single("lambda1", 0.001, float)
        self.lambda2 = self.args.single("lambda2", 0.001, float)

    def read_alpha(self):
        if len(self.inputs) > self.alpha_input:
            alpha = self.float_input(self.alpha_input)
            if alpha.size != 1:  # CAFFE_ENFORCE_EQ(size, 1, "alpha should be real-valued")
                raise self.shape_error(
                    self.alpha_input, "a 1-element alpha (alpha should be real-valued)"
                )
            self.alpha = float(alpha.reshape(-1)[0])  # kept for later runs, as in Caffe2

    def step(self, w, n, z, g):
        """``(w', n', z')`` of one FTRL step on arrays of one shape and type."""
        t = w.dtype.type
        with np.errstate(divide="ignore"):  # alpha 0: an infinite 1/alpha, as in C++
            alpha_inv = t(np.divide(1.0, self.alpha))
        beta = t(self.beta)
        lambda1, lambda2 = t(self.lambda1), t(self.lambda2)
        n_new = n + g * g
        sqrt_n_new = np.sqrt(n_new)
        z_new = z + g - (sqrt_n_new - np.sqrt(n)) * alpha_inv * w
        w_new = (lambda1 * np.sign(z_new) - z_new) / ((beta + sqrt_n_new) * alpha_inv + lambda2)
        w_new[np.abs(z_new) <= lambda1] = 0
        return w_new, n_new, z_new

    def check_nz(self, w, i=1):
        nz = self.float_input(i)
        if nz.dtype != w.dtype or nz.size != 2 * w.size:
            raise self.shape_error(
                i,
                "%s of %d elements (n and z for each of the %d of input 0)"
                % (w.dtype, 2 * w.size, w.size),
            )
        return nz


@register("Ftrl", inputs=(3, 4), outputs=2, inplace=[(0, 0), (1, 1)])
class Ftrl(_FtrlBase):
    """``[var, nz, grad(, alpha)] → [var, nz]`` on every element."""

    def run(self):
        self.read_alpha()
        w = self.float_input(0)
        g = self.float_input(2)
        if g.dtype != w.dtype or g.size != w.size:
            raise self.shape_error(2, "%s of %d elements like input 0" % (w.dtype, w.size))
        nz = self.check_nz(w)
        pairs = nz.reshape(-1, 2)
        w_new, n_new, z_new = self.step(w.reshape(-1), pairs[:, 0], pairs[:, 1], g.reshape(-1))
        self.write(0, w_new, w)
        self.write(1, np.stack([n_new, z_new], axis=-1), nz)


@register("SparseFtrl", inputs=(4, 5), outputs=2, enforce_inplace=[(0, 0), (1, 1)])
class SparseFtrl(_FtrlBase):
    """``[var, nz, indices, grad(, alpha)] → [var, nz]``, rows only, in place."""

    alpha_input = 4

    def run(self):
        self.read_alpha()
        w = self.float_input(0)
        if w.ndim == 0 or w.shape[0] == 0:
            raise self.shape_error(0, "a parameter with at least one row")
        nz = self.check_nz(w)
        indices = index_input(self, 2, w.shape[0])
        row = w.size // w.shape[0]
        g = self.float_input(3)
        if g.dtype != w.dtype or g.size != indices.size * row:
            raise self.shape_error(
                3, "%s of %d x %d values (one row per index)" % (w.dtype, indices.size, row)
            )
        rows, pairs = w.reshape(-1, row), nz.reshape(-1, row, 2)
        for idx, gr in rows_in_order(indices, g.reshape(-1, row)):
            rows[idx], pairs[idx, ..., 0], pairs[idx, ..., 1] = self.step(
                rows[idx], pairs[idx, ..., 0], pairs[idx, ..., 1], gr
            )


register_gradient("Ftrl")(ShouldNotDoGradient)
register_gradient("SparseFtrl")(ShouldNotDoGradient)
