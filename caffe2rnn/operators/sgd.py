"""Parameter-update operators: momentum SGD, Adagrad and Adam (dense and sparse).

Each op applies one optimizer step to one parameter, usually in place; the
learning rate comes from a ``LearningRate`` op as a 1-element tensor, and its
*sign* is the optimizer's business (:mod:`caffe2rnn.optimizer`): Adagrad and
Adam **add** ``lr · step``, so they receive a negative rate; MomentumSGDUpdate
**subtracts** its adjusted gradient and receives a positive one.

* ``MomentumSGDUpdate([g, m, lr, w] → [g, m, w])``, argument ``momentum``
  (default 0) and ``nesterov`` (default 0)::

      plain:     m' = lr·g + μ·m              g' = m'            w' = w − g'
      Nesterov:  m' = μ·m + lr·g              g' = (1+μ)·m' − μ·m  w' = w − g'

  ``MomentumSGD([g, m, lr] → [g, m])`` is the same without the last step.
* ``Adagrad([w, h, g, lr] → [w, h])``, ``epsilon`` (default 1e-5) and, from
  Caffe2 2017-08 (042e8ede4), ``decay`` (default 1: no decay)::

      h' = decay · h + g²      w' = w + lr · g / (√h' + ε)

* ``Adam([w, m1, m2, g, lr, iter] → [w, m1, m2])``, ``beta1`` (0.9), ``beta2``
  (0.999), ``epsilon`` (1e-5); with ``t = iter + 1``::

      m1' = β₁·m1 + (1−β₁)·g      m2' = β₂·m2 + (1−β₂)·g²
      w'  = w + lr · √(1−β₂ᵗ)/(1−β₁ᵗ) · m1' / (√m2' + ε)

The sparse forms (``SparseAdagrad``, ``SparseAdam``, and at 042e8ede4
``SparseMomentumSGDUpdate`` and ``RowWiseSparseAdagrad``) take the rows of a
``GradientSlice``: ``indices`` into the first dimension of ``w`` and one
gradient row per index, and update only those rows, one index after the
other (a repeated index is updated twice, the second time from the first
update's result). ``RowWiseSparseAdagrad`` keeps one history value per *row*
(``h`` has ``w.shape[0]`` elements) and adds the row's mean squared gradient;
``RowWiseSparseAdam`` (929c33cee, E7) does the same with Adam's second moment.

An index outside ``[0, rows)`` is refused: Caffe2 checked it only in debug
builds (``#ifndef NDEBUG``) and otherwise read and wrote outside the tensor.

Caffe2: caffe2/sgd/momentum_sgd_op.{h,cc}, adagrad_op.{h,cc}, adam_op.{h,cc}
(0cdd09da6; the sparse momentum and row-wise Adagrad ops and Adagrad's
``decay`` at 042e8ede4, ``RowWiseSparseAdam`` at 929c33cee). RmsProp, Ftrl
and YellowFin have modules of their own (:mod:`caffe2rnn.operators.rmsprop`,
:mod:`caffe2rnn.operators.ftrl`, :mod:`caffe2rnn.operators.yellowfin`).
"""

import numpy as np

from .. import eras
from ..runtime.registry import register, register_gradient
from .base import Operator
from .gradient_maker import ShouldNotDoGradient
from .training import index_input


class ParameterUpdate(Operator):
    """Input checks shared by the update ops: one float type, equal sizes."""

    def floats_of_one_size(self, indices):
        """The float inputs ``indices``, validated against the first of them."""
        arrays = [self.float_input(i) for i in indices]
        first = arrays[0]
        for i, a in zip(indices[1:], arrays[1:]):
            if a.dtype != first.dtype or a.size != first.size:
                raise self.shape_error(
                    i,
                    "%s of %d elements like input %d ('%s')"
                    % (first.dtype, first.size, indices[0], self.input_name(indices[0])),
                )
        return arrays

    def learning_rate(self, i, exactly_one=True):
        """Input ``i``'s first element: the ops CAFFE_ENFORCE a 1-element LR, except dense
        Adagrad (``exactly_one=False``), which read ``lr[0]`` of any LR (an empty one is
        refused: the C++ read past its end)."""
        lr = self.float_input(i)
        if lr.size != 1 if exactly_one else lr.size < 1:
            raise self.shape_error(
                i, "a 1-element learning rate" if exactly_one else "a learning rate (lr[0] is read)"
            )
        return lr.reshape(-1)[0]

    def iteration(self, i):
        """``Input<TensorCPU>(ITER).data<int64_t>()[0]``: int64, its first element (an
        empty counter is refused: the C++ read past its end)."""
        it = self.input(i)
        if it.dtype != np.int64 or it.size < 1:
            raise self.shape_error(i, "the int64 iteration counter (element 0 is read)", it.shape)
        return int(it.reshape(-1)[0])

    def write(self, i, value, like):
        """Write ``value`` into output ``i`` (shape of ``like``), reusing memory."""
        np.copyto(self.output(i, like.shape, like.dtype), value.reshape(like.shape))

    def sparse_rows(self, param_index, grad_index, indices_index, *state_indices):
        """Validate a sparse update; return ``(indices, grad rows, param/state row views)``."""
        w = self.float_input(param_index)
        states = self.floats_of_one_size((param_index,) + state_indices)[1:]
        g = self.float_input(grad_index)
        if w.ndim == 0 or w.shape[0] == 0:
            raise self.shape_error(param_index, "a parameter with at least one row")
        indices = index_input(self, indices_index, w.shape[0])
        row = w.size // w.shape[0]
        if g.dtype != w.dtype or g.size != indices.size * row:
            raise self.shape_error(
                grad_index,
                "%s of %d x %d values (one row of '%s' per index)"
                % (w.dtype, indices.size, row, self.input_name(param_index)),
            )
        views = [a.reshape(-1, row) for a in [w] + states]
        return indices, g.reshape(-1, row), views


def _momentum_step(g, m, lr, momentum, nesterov):
    """``(adjusted gradient, new momentum)`` of one momentum-SGD step."""
    if nesterov:
        m_new = momentum * m + lr * g
        return (1 + momentum) * m_new - momentum * m, m_new
    adjusted = lr * g + momentum * m
    return adjusted, adjusted


class _MomentumBase(ParameterUpdate):
    def setup(self):
        self.momentum = self.args.single("momentum", 0.0, float)
        self.nesterov = self.args.single("nesterov", 0, int) != 0

    def step(self):
        g, m = self.floats_of_one_size((0, 1))
        adjusted, m_new = _momentum_step(
            g, m.reshape(g.shape), self.learning_rate(2), g.dtype.type(self.momentum), self.nesterov
        )
        return g, m, adjusted, m_new


@register("MomentumSGD", inputs=3, outputs=2, inplace=[(0, 0), (1, 1)])
class MomentumSGD(_MomentumBase):
    """``[grad, moment, lr] → [adjusted grad, moment]``: the step, not applied."""

    def run(self):
        g, m, adjusted, m_new = self.step()
        self.write(0, adjusted, g)
        self.write(1, m_new, m)


@register("MomentumSGDUpdate", inputs=4, outputs=3, inplace=[(0, 0), (1, 1), (3, 2)])
class MomentumSGDUpdate(_MomentumBase):
    """``[grad, moment, lr, param] → [adjusted grad, moment, param − adjusted]``."""

    def run(self):
        g, m, adjusted, m_new = self.step()
        w = self.floats_of_one_size((0, 3))[1]
        w_new = w - adjusted.reshape(w.shape)
        self.write(0, adjusted, g)
        self.write(1, m_new, m)
        self.write(2, w_new, w)


@register("Adagrad", inputs=4, outputs=2, inplace=[(0, 0), (1, 1)])
class Adagrad(ParameterUpdate):
    """``[param, history, grad, lr] → [param, history]`` (module docstring)."""

    def setup(self):
        self.epsilon = self.args.single("epsilon", 1e-5, float)
        # decay came with 3c83d3278 (2017-09-15; adagrad_op.h at 042e8ede4, E6): the
        # era policy late_2017_optimizers. Before, AdagradOp did not read it.
        self.decay = 1.0
        if self.era is None or eras.get(self.era).late_2017_optimizers:
            self.decay = self.args.single("decay", 1.0, float)

    def run(self):
        w, h, g = self.floats_of_one_size((0, 1, 2))
        lr = self.learning_rate(3, exactly_one=False)  # AdagradOp: no LR size check
        g = g.reshape(w.shape)
        h = h.reshape(w.shape)
        h_new = (h if self.decay == 1.0 else h * w.dtype.type(self.decay)) + g * g
        w_new = w + lr * g / (np.sqrt(h_new) + w.dtype.type(self.epsilon))
        self.write(0, w_new, w)
        self.write(1, h_new, h)


@register("SparseAdagrad", inputs=5, outputs=2, enforce_inplace=[(0, 0), (1, 1)])
class SparseAdagrad(Adagrad):
    """``[param, history, indices, grad, lr] → [param, history]``, rows only.

    Reads ``epsilon`` only: Caffe2's SparseAdagradOp had no ``decay``
    (adagrad_op.h at 0cdd09da6 and 042e8ede4)."""

    def setup(self):
        self.epsilon = self.args.single("epsilon", 1e-5, float)

    def run(self):
        indices, grads, (w, h) = self.sparse_rows(0, 3, 2, 1)
        lr = self.learning_rate(4)
        eps = w.dtype.type(self.epsilon)
        for idx, g in rows_in_order(indices, grads):
            h[idx] += g * g
            w[idx] += lr * g / (np.sqrt(h[idx]) + eps)


@register("RowWiseSparseAdagrad", inputs=5, outputs=2, enforce_inplace=[(0, 0), (1, 1)])
class RowWiseSparseAdagrad(SparseAdagrad):
    """``[param, history, indices, grad, lr] → [param, history]``: one history
    value per row; ``h[r] += mean(g_row²)``, ``w[r] += lr · g_row / (√h[r] + ε)``
    (no ``decay`` either)."""

    def run(self):
        w = self.float_input(0)
        if w.ndim == 0 or w.shape[0] == 0:
            raise self.shape_error(0, "a parameter with at least one row")
        h = self.float_input(1)
        if h.dtype != w.dtype or h.size != w.shape[0]:  # CAFFE_ENFORCE_EQ(dims()[0], size())
            raise self.shape_error(
                1, "%s of %d elements, one per row of input 0" % (w.dtype, w.shape[0])
            )
        indices = index_input(self, 2, w.shape[0])
        g = self.float_input(3)
        row = w.size // w.shape[0]
        if g.dtype != w.dtype or g.size != indices.size * row:
            raise self.shape_error(
                3, "%s of %d x %d values (one row per index)" % (w.dtype, indices.size, row)
            )
        lr = self.learning_rate(4)
        rows, h_flat, grads = w.reshape(-1, row), h.reshape(-1), g.reshape(-1, row)
        eps = w.dtype.type(self.epsilon)
        for idx, gr in rows_in_order(indices, grads):
            h_flat[idx] += np.mean(gr * gr, axis=-1, dtype=w.dtype)
            step = lr / (np.sqrt(h_flat[idx]) + eps)
            rows[idx] += gr * (step[..., None] if np.ndim(step) else step)


@register(
    "SparseMomentumSGDUpdate",
    inputs=5,
    outputs=3,
    inplace=[(0, 0)],
    enforce_inplace=[(1, 1), (3, 2)],
)
class SparseMomentumSGDUpdate(_MomentumBase):
    """``[grad, moment, lr, param, indices] → [adjusted grad, moment, param]``:
    the momentum step of MomentumSGDUpdate on the rows ``indices`` of the
    parameter and its momentum (both in place); output 0 holds the adjusted
    gradient rows."""

    def run(self):
        w = self.float_input(3)
        m = self.float_input(1)
        if m.dtype != w.dtype or m.size != w.size:
            raise self.shape_error(
                1, "%s of %d elements like input 3 ('%s')" % (w.dtype, w.size, self.input_name(3))
            )
        if w.ndim == 0 or w.shape[0] == 0:
            raise self.shape_error(3, "a parameter with at least one row")
        lr = self.learning_rate(2)
        g = self.float_input(0)
        raw = self.input(4)
        row = w.size // w.shape[0]
        # CAFFE_ENFORCE_EQ(param.size_from_dim(1), grad.size_from_dim(indices.ndim()))
        if g.dtype != w.dtype or g.ndim < raw.ndim or int(np.prod(g.shape[raw.ndim :])) != row:
            raise self.shape_error(
                0,
                "%s rows of %d values (the shape of '%s' after its first dimension) "
                "after the %d index dimensions" % (w.dtype, row, self.input_name(3), raw.ndim),
            )
        n = g.size // row if row else 0
        indices = index_input(self, 4, w.shape[0])
        if n > indices.size:  # Caffe2 read past the end of the indices
            raise self.shape_error(0, "at most %d rows (one per index)" % indices.size)
        indices = indices[:n]
        grads = g.reshape(-1, row)
        out = np.empty_like(grads)
        rows, moments = w.reshape(-1, row), m.reshape(-1, row)
        mu = w.dtype.type(self.momentum)
        for k, (idx, gr) in enumerate(rows_in_order(indices, grads)):
            adjusted, moments[idx] = _momentum_step(gr, moments[idx], lr, mu, self.nesterov)
            rows[idx] -= adjusted
            if np.ndim(idx):
                out[...] = adjusted
            else:
                out[k] = adjusted
        self.write(0, out, g)


def rows_in_order(indices, grads):
    """``(rows, grads)`` pairs to apply: all at once when the indices are
    distinct, else one index at a time (Caffe2's sequential semantics)."""
    if np.unique(indices).size == indices.size:
        return [(indices, grads)]
    return [(indices[k], grads[k]) for k in range(indices.size)]


class _AdamBase(ParameterUpdate):
    def setup(self):
        self.beta1 = self.args.single("beta1", 0.9, float)
        self.beta2 = self.args.single("beta2", 0.999, float)
        self.epsilon = self.args.single("epsilon", 1e-5, float)

    def correction(self, iteration):
        t = iteration + 1
        return np.sqrt(1.0 - self.beta2**t) / (1.0 - self.beta1**t)

    def moments(self, m1, m2, g, dtype):
        b1, b2 = dtype.type(self.beta1), dtype.type(self.beta2)
        return m1 * b1 + g * (1 - b1), m2 * b2 + g * g * (1 - b2)


@register("Adam", inputs=6, outputs=3, inplace=[(0, 0), (1, 1), (2, 2)])
class Adam(_AdamBase):
    """``[param, m1, m2, grad, lr, iter] → [param, m1, m2]`` (module docstring)."""

    def run(self):
        w, m1, m2, g = self.floats_of_one_size((0, 1, 2, 3))
        rate = self.learning_rate(4) * w.dtype.type(self.correction(self.iteration(5)))
        m1_new, m2_new = self.moments(
            m1.reshape(w.shape), m2.reshape(w.shape), g.reshape(w.shape), w.dtype
        )
        w_new = w + rate * m1_new / (np.sqrt(m2_new) + w.dtype.type(self.epsilon))
        self.write(0, w_new, w)
        self.write(1, m1_new, m1)
        self.write(2, m2_new, m2)


@register("SparseAdam", inputs=7, outputs=3, enforce_inplace=[(0, 0), (1, 1), (2, 2)])
class SparseAdam(_AdamBase):
    """``[param, m1, m2, indices, grad, lr, iter] → [param, m1, m2]``, rows only."""

    def run(self):
        indices, grads, (w, m1, m2) = self.sparse_rows(0, 4, 3, 1, 2)
        rate = self.learning_rate(5) * w.dtype.type(self.correction(self.iteration(6)))
        eps = w.dtype.type(self.epsilon)
        for idx, g in rows_in_order(indices, grads):
            m1[idx], m2[idx] = self.moments(m1[idx], m2[idx], g, w.dtype)
            w[idx] += rate * m1[idx] / (np.sqrt(m2[idx]) + eps)


@register("RowWiseSparseAdam", inputs=7, outputs=3, enforce_inplace=[(0, 0), (1, 1), (2, 2)])
class RowWiseSparseAdam(_AdamBase):
    """``[param, m1, m2, indices, grad, lr, iter] → [param, m1, m2]`` (E7): SparseAdam
    with one second moment per *row* of ``param`` (``m2`` has ``param.shape[0]``
    elements). For each index ``r`` and its gradient row ``g``, in order::

        m2[r]  = β₂·m2[r] + (1−β₂)·mean(g²)          (one number per row)
        m1[r]  = β₁·m1[r] + (1−β₁)·g
        w[r]  += lr · √(1−β₂ᵗ)/(1−β₁ᵗ) · m1[r] / (√m2[r] + ε)

    (a parameter of one value per row is SparseAdam itself). Caffe2's
    ``RowWiseSparseAdamOp`` (sgd/adam_op.h at 929c33cee, after 042e8ede4)
    enforces (``CAFFE_ENFORCE_EQ``) ``param.size() == moment_1.size()``,
    ``param.dims()[0] == moment_2.size()``,
    ``param.size_from_dim(1) == grad.size_from_dim(indices.ndim())`` and a
    1-element ``lr``; indices are int32 or int64. caffe2rnn refuses the same, an index
    outside the rows (Caffe2 checked it in debug builds only) and more gradient rows than
    indices (its loop over the gradient's rows read past the indices); with fewer, the
    later indices go unused, as in Caffe2."""

    def run(self):
        w = self.float_input(0)
        if w.ndim == 0 or w.shape[0] == 0:
            raise self.shape_error(0, "a parameter with at least one row")
        m1 = self.floats_of_one_size((0, 1))[1]
        m2 = self.float_input(2)
        if m2.dtype != w.dtype or m2.size != w.shape[0]:
            raise self.shape_error(
                2,
                "%s of %d elements, one per row of input 0 ('%s')"
                % (w.dtype, w.shape[0], self.input_name(0)),
            )
        raw = self.input(3)
        indices = index_input(self, 3, w.shape[0])
        g = self.float_input(4)
        row = w.size // w.shape[0]
        if g.dtype != w.dtype or g.ndim < raw.ndim or int(np.prod(g.shape[raw.ndim :])) != row:
            raise self.shape_error(
                4,
                "%s rows of %d values (the shape of '%s' after its first dimension) after "
                "the %d index dimensions" % (w.dtype, row, self.input_name(0), raw.ndim),
            )
        n = g.size // row  # Caffe2 loops over the gradient's rows, n = grad.size() / block_size
        if n > indices.size:  # Caffe2 read past the end of the indices
            raise self.shape_error(4, "at most %d rows (one per index)" % indices.size)
        indices = indices[:n]  # fewer rows: the later indices are not used, as in Caffe2
        rate = self.learning_rate(5) * w.dtype.type(self.correction(self.iteration(6)))
        b1, b2 = w.dtype.type(self.beta1), w.dtype.type(self.beta2)
        eps = w.dtype.type(self.epsilon)
        rows, m1_rows, m2_flat = w.reshape(-1, row), m1.reshape(-1, row), m2.reshape(-1)
        for idx, gr in rows_in_order(indices, g.reshape(-1, row)):
            m2_flat[idx] = m2_flat[idx] * b2 + np.mean(gr * gr, axis=-1, dtype=w.dtype) * (1 - b2)
            m1_rows[idx] = m1_rows[idx] * b1 + gr * (1 - b1)
            root = np.sqrt(m2_flat[idx]) + eps
            rows[idx] += rate * m1_rows[idx] / (root[..., None] if np.ndim(root) else root)


for _op_type in (
    "MomentumSGD",
    "MomentumSGDUpdate",
    "Adagrad",
    "SparseAdagrad",
    "Adam",
    "SparseAdam",
    "RowWiseSparseAdagrad",
    "SparseMomentumSGDUpdate",
    "RowWiseSparseAdam",
):
    register_gradient(_op_type)(ShouldNotDoGradient)
