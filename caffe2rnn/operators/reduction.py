"""Reductions: front/back sums and means, SumElements, AveragedLoss, SumSqrElements, Row/ColwiseMax.

* ``ReduceFrontSum`` sums over the first ``num_reduce_dim`` dims (default 1):
  ``(T, N, D) → (N, D)``; ``ReduceBackSum`` over the last ones:
  ``(T, N, D) → (T, N)``. Their gradient broadcasts dY back over the reduced
  dims, so it needs X's *shape* but not X: the 2017 makers (E3–E5,
  ``segment_reduction_op.cc``) emit a ``Shape`` op writing ``_<Y>_dims`` and
  pass that small int64 tensor to the gradient op.
* ``ReduceFrontMean`` / ``ReduceBackMean``: the same with the mean (Caffe2's
  ``MeanReducer``, reducer_functors.h at 0cdd09da6); their gradient divides
  dY by the number of reduced elements. When the reduced dims hold no element
  the front mean is 0 (Caffe2 zeroed the output first); Caffe2 left the back
  mean's output unwritten there, and caffe2rnn writes 0 as for the front.
* E6's ``ReduceFrontMax`` / ``ReduceBackMax`` (reduction_front_back_ops.{h,cc}
  at 042e8ede4): the maximum over the reduced dims; the gradient
  ``…MaxGradient([dY, X, Y])`` goes to every element equal to its maximum.
  Caffe2 wrote nothing when the reduced dims hold no element; the
  maximum's identity, −inf, is written here.
* ``SumElements`` sums every element into a 0-d tensor (``average=1``: the
  mean); ``AveragedLoss`` is the mean, the usual last op of a training net.
* ``SumSqrElements`` sums the squares (``average=1``: their mean): the
  squared norm E6's optimizers clip gradients with. No gradient (Caffe2
  registered none, reduction_ops.cc at 0cdd09da6 and 042e8ede4).
* ``RowwiseMax`` / ``ColwiseMax``: the maxima of the rows (columns) of each
  ``M × N`` slice of a 3-D tensor; the gradient goes to every maximal element.
"""

import numpy as np

from ..errors import ArgumentError, DTypeError
from ..runtime.registry import register, register_gradient
from .base import Operator
from .gradient_maker import GradientMaker, single_op_gradient


class ReduceSumBase(Operator):
    """``num_reduce_dim`` parsing shared by the front/back sums, means and gradients."""

    front = True
    mean = False

    def setup(self):
        self.num_reduce_dim = self.args.single("num_reduce_dim", 1, int)
        if self.num_reduce_dim < 0:
            raise ArgumentError("num_reduce_dim must be >= 0, got %d" % self.num_reduce_dim)

    def kept_dims(self, shape, i):
        """The dims of ``shape`` (input i's) that survive the reduction."""
        if self.num_reduce_dim > len(shape):
            raise ArgumentError(
                "num_reduce_dim %d exceeds the %d dimensions of "
                "input %d ('%s', shape %s)"
                % (self.num_reduce_dim, len(shape), i, self.input_name(i), tuple(shape))
            )
        if self.front:
            return tuple(shape[self.num_reduce_dim :])
        return tuple(shape[: len(shape) - self.num_reduce_dim])

    def reduced_count(self, shape):
        """How many elements of X each output element reduces (the reduced dims' product)."""
        n = self.num_reduce_dim
        reduced = shape[:n] if self.front else shape[len(shape) - n :]
        return int(np.prod(reduced, dtype=np.int64))


class ReduceSum(ReduceSumBase):
    def run(self):
        x = self.float_input(0)
        kept = self.kept_dims(x.shape, 0)
        axes = tuple(range(self.num_reduce_dim)) if self.front else tuple(range(len(kept), x.ndim))
        y = self.output(0, kept, x.dtype)
        np.sum(x, axis=axes, out=y)
        count = self.reduced_count(x.shape)
        if self.mean and count:
            y /= count


class ReduceSumGradient(ReduceSumBase):
    """Inputs dY and the int64 shape of X → dX = dY repeated over the reduced dims."""

    def run(self):
        dy = self.float_input(0)
        dims = self.input(1)
        if dims.ndim != 1 or dims.dtype.kind not in "iu":
            raise DTypeError(
                "input 1 ('%s') is %s%s; expected a 1-D integer tensor "
                "holding the forward input's shape" % (self.input_name(1), dims.dtype, dims.shape)
            )
        shape = tuple(dims.tolist())
        kept = self.kept_dims(shape, 1)
        if dy.shape != kept:
            raise self.shape_error(
                0,
                "%s (input 1 ('%s') = %s without the %d reduced "
                "dims)" % (kept, self.input_name(1), shape, self.num_reduce_dim),
            )
        if not self.front:
            dy = dy.reshape(kept + (1,) * self.num_reduce_dim)
        dx = self.output(0, shape, dy.dtype)
        np.copyto(dx, dy)
        count = self.reduced_count(shape)
        if self.mean and count:
            dx /= count


@register("ReduceFrontSum", inputs=1, outputs=1)
class ReduceFrontSum(ReduceSum):
    """Y = X summed over its first ``num_reduce_dim`` dims."""


@register("ReduceBackSum", inputs=1, outputs=1)
class ReduceBackSum(ReduceSum):
    """Y = X summed over its last ``num_reduce_dim`` dims."""

    front = False


@register("ReduceFrontSumGradient", inputs=2, outputs=1)
class ReduceFrontSumGradient(ReduceSumGradient):
    pass


@register("ReduceBackSumGradient", inputs=2, outputs=1)
class ReduceBackSumGradient(ReduceSumGradient):
    front = False


class GetReduceSumGradient(GradientMaker):
    """``Shape(I0 → _<O0>_dims)`` then ``<Op>Gradient([GO0, _<O0>_dims] → GI0)``.

    Forward arguments are copied onto both ops (so ``num_reduce_dim`` reaches
    the gradient op; ``Shape`` ignores it).
    """

    def get_gradient_defs(self):
        dims = "_" + self.O(0) + "_dims"
        return [
            self.op_def("Shape", [self.I(0)], [dims]),
            self.op_def(self.def_.type + "Gradient", [self.GO(0), dims], [self.GI(0)]),
        ]


# The means: the sums' classes with ``mean`` set (and their gradients likewise).
for _name, _front in (("ReduceFrontMean", True), ("ReduceBackMean", False)):
    _fields = {"front": _front, "mean": True, "__module__": __name__}
    register(_name, inputs=1, outputs=1)(type(_name, (ReduceSum,), dict(_fields)))
    register(_name + "Gradient", inputs=2, outputs=1)(
        type(_name + "Gradient", (ReduceSumGradient,), dict(_fields))
    )

for _name in ("ReduceFrontSum", "ReduceBackSum", "ReduceFrontMean", "ReduceBackMean"):
    register_gradient(_name)(GetReduceSumGradient)


class ReduceMax(ReduceSumBase):
    """The maximum over the reduced dims (−inf where they hold no element)."""

    def axes(self, ndim, kept):
        return tuple(range(self.num_reduce_dim)) if self.front else tuple(range(len(kept), ndim))

    def run(self):
        x = self.float_input(0)
        kept = self.kept_dims(x.shape, 0)
        np.max(x, axis=self.axes(x.ndim, kept), out=self.output(0, kept, x.dtype), initial=-np.inf)


class ReduceMaxGradient(ReduceMax):
    """Inputs dY, X, Y → dX: dY at every element equal to its maximum, else 0."""

    def run(self):
        x = self.float_input(1)
        kept = self.kept_dims(x.shape, 1)
        for i in (0, 2):
            if self.float_input(i).shape != kept:
                raise self.shape_error(i, "%s, the shape of the forward output" % (kept,))
            self.same_dtype(1, i)
        shape = (
            kept + (1,) * self.num_reduce_dim
            if not self.front
            else (1,) * self.num_reduce_dim + kept
        )
        y, dy = self.input(2).reshape(shape), self.input(0).reshape(shape)
        np.multiply(x == y, dy, out=self.output(0, x.shape, x.dtype))


for _name, _front in (("ReduceFrontMax", True), ("ReduceBackMax", False)):
    _fields = {"front": _front, "__module__": __name__}
    register(_name, inputs=1, outputs=1)(type(_name, (ReduceMax,), dict(_fields)))
    register(_name + "Gradient", inputs=3, outputs=1)(
        type(_name + "Gradient", (ReduceMaxGradient,), dict(_fields))
    )
    single_op_gradient(_name, _name + "Gradient", ["GO0", "I0", "O0"])


class SumAll(Operator):
    """0-d ``Σ X`` (divided by X.size when averaging)."""

    def setup(self):
        self.average = self.args.single("average", False, bool)

    def run(self):
        x = self.float_input(0)
        y = self.output(0, (), x.dtype)
        np.add.reduce(self.terms(x).reshape(-1), out=y)
        if self.average:
            y /= x.size

    def terms(self, x):
        return x


class SumAllGradient(Operator):
    """Inputs X, dY (one element) → dX = dY (or dY / X.size) everywhere."""

    def setup(self):
        self.average = self.args.single("average", False, bool)

    def run(self):
        x = self.float_input(0)
        dy = self.input(1)
        if dy.size != 1:
            raise self.shape_error(1, "a single element (the gradient of a 0-d sum)")
        if dy.dtype != x.dtype:
            raise DTypeError(
                "input 1 ('%s') has type %s; expected %s like input 0"
                % (self.input_name(1), dy.dtype, x.dtype)
            )
        scale = 1.0 / x.size if self.average and x.size else 1.0
        np.multiply(dy.reshape(()), scale, out=self.output(0, x.shape, x.dtype))


@register("SumElements", inputs=1, outputs=1)
class SumElements(SumAll):
    """0-d sum of all elements; ``average=1`` divides by the element count."""


@register("SumSqrElements", inputs=1, outputs=1)
class SumSqrElements(SumAll):
    """0-d sum of the squared elements; ``average=1`` divides by the count."""

    def terms(self, x):
        return x * x


@register("SumElementsGradient", inputs=2, outputs=1)
class SumElementsGradient(SumAllGradient):
    pass


@register("AveragedLoss", inputs=1, outputs=1)
class AveragedLoss(SumAll):
    """0-d mean of all elements (``SumElements`` with ``average=1``)."""

    def setup(self):
        self.average = True


@register("AveragedLossGradient", inputs=2, outputs=1)
class AveragedLossGradient(SumAllGradient):
    def setup(self):
        self.average = True


def _register_sum_all_gradient(op_type):
    @register_gradient(op_type)
    class GetGradient(GradientMaker):
        def get_gradient_defs(self):
            return [self.op_def(op_type + "Gradient", [self.I(0), self.GO(0)], [self.GI(0)])]

    GetGradient.__name__ = GetGradient.__qualname__ = "Get%sGradient" % op_type
    GetGradient.__doc__ = "``%sGradient([I0, GO0] → GI0)``, args copied." % op_type
    return GetGradient


GetSumElementsGradient = _register_sum_all_gradient("SumElements")
GetAveragedLossGradient = _register_sum_all_gradient("AveragedLoss")


class _MaxReduction(Operator):
    """``RowwiseMax``/``ColwiseMax`` of a ``batch × M × N`` float tensor:
    ``batch × M`` row maxima or ``batch × N`` column maxima (the 2-D
    slices' rows or columns). Caffe2: reduction_ops.{h,cc} at 0cdd09da6
    (``CAFFE_ENFORCE_EQ(X.ndim(), 3)``)."""

    rowwise = True

    def batch_input(self):
        x = self.float_input(0)
        if x.ndim != 3:
            raise self.shape_error(0, "3-D (batch_size x M x N)")
        return x

    def run(self):
        x = self.batch_input()
        axis = 2 if self.rowwise else 1
        shape = (x.shape[0], x.shape[1] if self.rowwise else x.shape[2])
        np.max(x, axis=axis, out=self.output(0, shape, x.dtype), initial=-np.inf)


class _MaxReductionGradient(_MaxReduction):
    """Inputs X, Y, dY → dX: dY at every element equal to its row's (column's)
    maximum, ties included; 0 elsewhere — a plain 0, as Caffe2's loop wrote it
    (``dX = X == Y ? dY : 0``), so an infinite dY gives no NaN where X is not
    the maximum. Y and dY are read as Caffe2 read them, as flat arrays of
    ``batch × M`` (``batch × N``) values: fewer is refused (Caffe2 read past
    their end), a longer tail is ignored."""

    def run(self):
        x = self.batch_input()
        axis = 2 if self.rowwise else 1
        shape = (x.shape[0], x.shape[1] if self.rowwise else x.shape[2])
        n = shape[0] * shape[1]
        for i in (1, 2):
            if self.float_input(i).size < n:
                raise self.shape_error(i, "%d elements (a %s)" % (n, shape))
            self.same_dtype(0, i)
        y = np.expand_dims(self.input(1).reshape(-1)[:n].reshape(shape), axis)
        dy = np.expand_dims(self.input(2).reshape(-1)[:n].reshape(shape), axis)
        dx = np.where(x == y, dy, x.dtype.type(0))  # computed whole: dX may be X's memory
        self.output(0, x.shape, x.dtype)[...] = dx


for _name, _rowwise in (("RowwiseMax", True), ("ColwiseMax", False)):
    register(_name, inputs=1, outputs=1)(
        type(_name, (_MaxReduction,), {"rowwise": _rowwise, "__module__": __name__})
    )
    register(_name + "Gradient", inputs=3, outputs=1)(
        type(
            _name + "Gradient",
            (_MaxReductionGradient,),
            {"rowwise": _rowwise, "__module__": __name__},
        )
    )

    @register_gradient(_name)
    class GetMaxReductionGradient(GradientMaker):
        """``…MaxGradient([I0, O0, GO0] → GI0)``."""

        def get_gradient_defs(self):
            return [
                self.op_def(
                    self.def_.type + "Gradient", [self.I(0), self.O(0), self.GO(0)], [self.GI(0)]
                )
            ]
