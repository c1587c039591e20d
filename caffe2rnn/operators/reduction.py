"""Reductions: front/back sums, means, maxima; ReduceSum/Mean; SumElements and kin.

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
* E7 (reduction_front_back_ops.{h,cc} at 929c33cee, the era policy
  :attr:`~caffe2rnn.eras.Era.reduce_front_back_lengths`): all six take an
  optional int32 ``lengths`` input (``num_reduce_dim`` 1): output element j
  reduces only the first ``lengths[j]`` elements of its run, and the gradient
  is 0 beyond them. The Sum/Mean gradient makers write
  ``…Gradient([dY, X(, lengths)])`` and the gradient ops take X or, as before,
  its int64 shape; Sum and Mean take int32/int64 data too (an integer mean
  truncates, C++'s ``T / int``). Refusals: :meth:`ReduceSumBase.lengths_input`.
* E7's ``ReduceSum`` / ``ReduceMean`` over a list of ``axes``
  (:class:`ReduceOverAxes`; reduce_ops.{h,cc} at 929c33cee), no gradient.
* ``SumElements`` sums every element into a 0-d tensor (``average=1``: the
  mean); ``AveragedLoss`` is the mean, the usual last op of a training net.
* ``SumSqrElements`` sums the squares (``average=1``: their mean): the
  squared norm E6's optimizers clip gradients with. No gradient (Caffe2
  registered none, reduction_ops.cc at 0cdd09da6 and 042e8ede4).
* ``RowwiseMax`` / ``ColwiseMax``: the maxima of the rows (columns) of each
  ``M × N`` slice of a 3-D tensor; the gradient goes to every maximal element.
"""

import math

import numpy as np

from .. import eras
from ..errors import ArgumentError, DTypeError, EnforceNotMet, InvalidValueError, ShapeError
from ..runtime.registry import register, register_gradient
from .base import Operator
from .gradient_maker import GradientMaker, GradientNotImplementedYet

#: The element types of E7's Sum/Mean kernels (``TensorTypes<int, long, float, double>``).
SUM_TYPES = (np.int32, np.int64, np.float32, np.float64)


class ReduceSumBase(Operator):
    """``num_reduce_dim`` parsing shared by the front/back sums, means and gradients,
    and E7's ``lengths`` input (:meth:`lengths_input`)."""

    front = True
    mean = False

    def setup(self):
        self.num_reduce_dim = self.args.single("num_reduce_dim", 1, int)
        if self.num_reduce_dim < 0:
            raise ArgumentError("num_reduce_dim must be >= 0, got %d" % self.num_reduce_dim)
        base = self.schema.inputs[0]
        # E7 (reduction_front_back_ops.cc): the optional lengths input, ints for Sum/Mean.
        late = self.era is None or eras.get(self.era).reduce_front_back_lengths
        if not late and len(self.inputs) > base:
            # segment_reduction_op.cc / reduction_front_back_ops.cc at 042e8ede4
            raise EnforceNotMet(
                "Operator def did not pass schema checking: %s takes %d inputs, got %d "
                "(the lengths input, '%s', came with Caffe2 929c33cee)"
                % (self.op_type, base, len(self.inputs), self.input_name(base))
            )

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

    def lengths_input(self, i, shape):
        """E7's lengths (input ``i``) for an X of ``shape``, or None if not given.

        The refusals of reduction_front_back_ops.h at 929c33cee: int32 only
        (``data<int32_t>``), ``num_reduce_dim`` 1 ("Given lengths input, the
        number of reduce dimensions should be one."), one length per kept
        element ("The size of lengths vector doesn't match the batch
        size."). Caffe2 did not check the values. A length above the reduced
        dim read past the row: caffe2rnn refuses it. A length of 0 or less
        is run as Caffe2 ran it: the loops start from the row's first
        element, so it is the sum and the max, and the mean's numerator
        (divided by the length: ±inf or NaN in floats at 0; an integer mean
        over 0 divided by zero, a crash, and is refused), while every
        gradient element is 0.
        """
        late = self.era is None or eras.get(self.era).reduce_front_back_lengths
        if len(self.inputs) > i and late:  # (before E7 setup refused the input)
            lengths = self.typed_input(i, (np.int32,), "int32 lengths")
            if self.num_reduce_dim != 1:
                raise ArgumentError(
                    "Given lengths input, the number of reduce dimensions should be one "
                    "(num_reduce_dim=%d, input %d '%s')"
                    % (self.num_reduce_dim, i, self.input_name(i))
                )
            batch = math.prod(self.kept_dims(shape, 0))
            if lengths.size != batch:
                raise self.shape_error(
                    i,
                    "%d lengths, one per element of the output (The size of lengths vector "
                    "doesn't match the batch size.)" % batch,
                )
            reduced = self.reduced_count(shape)
            if lengths.size and lengths.max() > reduced:
                raise ShapeError(
                    "input %d ('%s') holds a length of %d; expected at most %d, the reduced "
                    "dimension of the data (Caffe2 read past the row)"
                    % (i, self.input_name(i), lengths.max(), reduced)
                )
            return lengths.reshape(-1)
        return None

    def length_mask(self, lengths, shape):
        """For X of ``shape`` seen as (reduced, kept) (front) or (kept, reduced) (back):
        True where an element lies within its length."""
        reduced = self.reduced_count(shape)
        if self.front:
            return np.arange(reduced)[:, None] < lengths[None, :]
        return np.arange(reduced)[None, :] < lengths[:, None]

    def as_matrix(self, a, shape):
        """``a`` (X's elements) as (reduced, kept) for the front, (kept, reduced) for the back."""
        reduced = self.reduced_count(shape)
        return a.reshape((reduced, -1) if self.front else (-1, reduced))


def _divide(total, count, out):
    """``total / count`` into ``out``: C++'s ``T / int`` (integers truncate toward 0;
    floats divided by 0 give ±inf or NaN, as in C++)."""
    if out.dtype.kind == "f":
        with np.errstate(divide="ignore", invalid="ignore"):
            np.divide(total, count, out=out, casting="unsafe")
    else:
        quotient = np.abs(total) // np.abs(count)
        np.copyto(out, np.sign(total) * np.sign(count) * quotient, casting="unsafe")


def _from_first(lengths, reduced, first):
    """``reduced`` where the length is at least 1, else the row's ``first`` element:
    Caffe2's loops start from it and add (or compare) nothing more."""
    return np.where(lengths < 1, first, reduced)


class SumInput:
    """E7's Sum/Mean kernels' input types (``TensorTypes<int, long, float, double>``)."""

    def sum_input(self, i):
        """Input i: int32, int64, float32 or float64 from E7, float before."""
        if self.era is None or eras.get(self.era).reduce_front_back_lengths:
            return self.typed_input(i, SUM_TYPES, "int32, int64, float32 or float64")
        return self.float_input(i)


class ReduceSum(SumInput, ReduceSumBase):
    def run(self):
        x = self.sum_input(0)
        kept = self.kept_dims(x.shape, 0)
        lengths = self.lengths_input(1, x.shape) if x.size else None
        y = self.output(0, kept, x.dtype)
        if lengths is None:
            axes = (
                tuple(range(self.num_reduce_dim)) if self.front else tuple(range(len(kept), x.ndim))
            )
            np.sum(x, axis=axes, out=y)
            count = self.reduced_count(x.shape)
            if self.mean and count:
                _divide(y.copy(), count, y)
            return
        m = self.as_matrix(x, x.shape)
        total = np.where(self.length_mask(lengths, x.shape), m, 0).sum(axis=0 if self.front else 1)
        total = _from_first(lengths, total, m[0] if self.front else m[:, 0])
        if self.mean:
            if y.dtype.kind != "f" and (lengths == 0).any():
                raise InvalidValueError(
                    "input 1 ('%s') holds a length of 0 for integer data: the mean divides "
                    "by it (Caffe2's integer division by zero crashed)" % self.input_name(1)
                )
            _divide(total, lengths, y.reshape(-1))
        else:
            np.copyto(y.reshape(-1), total, casting="unsafe")


class ReduceSumGradient(SumInput, ReduceSumBase):
    """Inputs dY, X's shape (int64) or, from E7, X itself, and (E7) the lengths →
    dX = dY repeated over the reduced dims (within the lengths; 0 beyond them)."""

    def run(self):
        dy = self.sum_input(0)
        source = self.input(1)
        late = self.era is None or eras.get(self.era).reduce_front_back_lengths
        if late and not (source.ndim == 1 and source.dtype == np.int64):
            # reduction_front_back_ops.h at 929c33cee: a 1-D int64 input 1 is X's
            # shape (the form older gradients pass), anything else X itself.
            shape = source.shape
        else:
            if source.ndim != 1 or source.dtype.kind not in "iu":
                raise DTypeError(
                    "input 1 ('%s') is %s%s; expected a 1-D integer tensor "
                    "holding the forward input's shape"
                    % (self.input_name(1), source.dtype, source.shape)
                )
            shape = tuple(source.tolist())
        kept = self.kept_dims(shape, 1)
        if dy.shape != kept:
            raise self.shape_error(
                0,
                "%s (input 1 ('%s') = %s without the %d reduced "
                "dims)" % (kept, self.input_name(1), shape, self.num_reduce_dim),
            )
        lengths = self.lengths_input(2, shape) if math.prod(shape) else None
        dx = self.output(0, shape, dy.dtype)
        if lengths is not None:
            m = self.as_matrix(dx, shape)
            row = dy.reshape((1, -1) if self.front else (-1, 1))
            per = lengths.reshape(row.shape)
            value = np.empty(m.shape, dy.dtype)
            if self.mean:
                _divide(np.broadcast_to(row, m.shape), np.broadcast_to(per, m.shape), value)
            else:
                np.copyto(value, np.broadcast_to(row, m.shape))
            np.copyto(m, np.where(self.length_mask(lengths, shape), value, 0), casting="unsafe")
            return
        if not self.front:
            dy = dy.reshape(kept + (1,) * self.num_reduce_dim)
        np.copyto(dx, dy)
        count = self.reduced_count(shape)
        if self.mean and count:
            _divide(dx.copy(), count, dx)


_SUM_SCHEMA = dict(inputs=(1, 2), outputs=1)
_SUM_GRADIENT_SCHEMA = dict(inputs=(2, 3), outputs=1)


@register("ReduceFrontSum", **_SUM_SCHEMA)
class ReduceFrontSum(ReduceSum):
    """Y = X summed over its first ``num_reduce_dim`` dims (E7: or the first
    ``lengths[j]`` rows of column j)."""


@register("ReduceBackSum", **_SUM_SCHEMA)
class ReduceBackSum(ReduceSum):
    """Y = X summed over its last ``num_reduce_dim`` dims (E7: or the first
    ``lengths[i]`` elements of row i)."""

    front = False


@register("ReduceFrontSumGradient", **_SUM_GRADIENT_SCHEMA)
class ReduceFrontSumGradient(ReduceSumGradient):
    pass


@register("ReduceBackSumGradient", **_SUM_GRADIENT_SCHEMA)
class ReduceBackSumGradient(ReduceSumGradient):
    front = False


class GetReduceSumGradient(GradientMaker):
    """Until E6: ``Shape(I0 → _<O0>_dims)`` then ``<Op>Gradient([GO0, _<O0>_dims] → GI0)``.
    From E7 (reduction_front_back_ops.cc at 929c33cee): ``<Op>Gradient([GO0, I0(, I1)]
    → GI0)``, the lengths passed on when the forward op has them.

    Forward arguments are copied onto every op (so ``num_reduce_dim`` reaches
    the gradient op; ``Shape`` ignores it).
    """

    def get_gradient_defs(self):
        gradient = self.def_.type + "Gradient"
        if eras.current().reduce_front_back_lengths:
            inputs = [self.GO(0), self.I(0)] + ([self.I(1)] if len(self.def_.input) == 2 else [])
            return [self.op_def(gradient, inputs, [self.GI(0)])]
        dims = "_" + self.O(0) + "_dims"
        return [
            self.op_def("Shape", [self.I(0)], [dims]),
            self.op_def(gradient, [self.GO(0), dims], [self.GI(0)]),
        ]


# The means: the sums' classes with ``mean`` set (and their gradients likewise).
for _name, _front in (("ReduceFrontMean", True), ("ReduceBackMean", False)):
    _fields = {"front": _front, "mean": True, "__module__": __name__}
    register(_name, **_SUM_SCHEMA)(type(_name, (ReduceSum,), dict(_fields)))
    register(_name + "Gradient", **_SUM_GRADIENT_SCHEMA)(
        type(_name + "Gradient", (ReduceSumGradient,), dict(_fields))
    )

for _name in ("ReduceFrontSum", "ReduceBackSum", "ReduceFrontMean", "ReduceBackMean"):
    register_gradient(_name)(GetReduceSumGradient)


class ReduceMax(ReduceSumBase):
    """The maximum over the reduced dims (−inf where they hold no element);
    E7: over the first ``lengths`` elements."""

    def axes(self, ndim, kept):
        return tuple(range(self.num_reduce_dim)) if self.front else tuple(range(len(kept), ndim))

    def run(self):
        x = self.float_input(0)
        kept = self.kept_dims(x.shape, 0)
        lengths = self.lengths_input(1, x.shape) if x.size else None
        y = self.output(0, kept, x.dtype)
        if lengths is None:
            np.max(x, axis=self.axes(x.ndim, kept), out=y, initial=-np.inf)
            return
        matrix = self.as_matrix(x, x.shape)
        m = np.where(self.length_mask(lengths, x.shape), matrix, -np.inf)
        first = matrix[0] if self.front else matrix[:, 0]
        np.copyto(y.reshape(-1), _from_first(lengths, m.max(axis=0 if self.front else 1), first))


class ReduceMaxGradient(ReduceMax):
    """Inputs dY, X, Y (and, E7, the lengths) → dX: dY at every element equal
    to its maximum (within its length), else 0."""

    def run(self):
        x = self.float_input(1)
        kept = self.kept_dims(x.shape, 1)
        for i in (0, 2):
            if self.float_input(i).shape != kept:
                raise self.shape_error(i, "%s, the shape of the forward output" % (kept,))
            self.same_dtype(1, i)
        lengths = self.lengths_input(3, x.shape) if x.size else None
        shape = (
            kept + (1,) * self.num_reduce_dim
            if not self.front
            else (1,) * self.num_reduce_dim + kept
        )
        y, dy = self.input(2).reshape(shape), self.input(0).reshape(shape)
        dx = self.output(0, x.shape, x.dtype)
        np.multiply(x == y, dy, out=dx)
        if lengths is not None:
            self.as_matrix(dx, x.shape)[~self.length_mask(lengths, x.shape)] = 0


for _name, _front in (("ReduceFrontMax", True), ("ReduceBackMax", False)):
    _fields = {"front": _front, "__module__": __name__}
    register(_name, inputs=(1, 2), outputs=1)(type(_name, (ReduceMax,), dict(_fields)))
    register(_name + "Gradient", inputs=(3, 4), outputs=1)(
        type(_name + "Gradient", (ReduceMaxGradient,), dict(_fields))
    )


@register_gradient("ReduceFrontMax")
@register_gradient("ReduceBackMax")
class GetReduceMaxGradient(GradientMaker):
    """``<Op>Gradient([GO0, I0, O0] → GI0)``; from E7 with the lengths ``I1``
    appended when the forward op has them (reduction_front_back_ops.cc)."""

    def get_gradient_defs(self):
        inputs = [self.GO(0), self.I(0), self.O(0)]
        if eras.current().reduce_front_back_lengths and len(self.def_.input) == 2:
            inputs.append(self.I(1))
        return [self.op_def(self.def_.type + "Gradient", inputs, [self.GI(0)])]


class ReduceOverAxes(Operator):
    """E7's ``ReduceSum`` / ``ReduceMean`` (reduce_ops.{h,cc} at 929c33cee; not at
    042e8ede4): Y = the sum (mean) of X over ``axes`` (a list of ints, default:
    every axis); ``keepdims`` (default 1) keeps the reduced axes with size 1,
    0 drops them. Float32 only in Caffe2 (``ReduceSumOp<float>``); float64 is
    kept as float64 here.

    The axes are sorted first; Caffe2's CAFFE_ENFORCEs: "Axes ids must be
    non-negative." and "Axes ids must be smaller than the dimensions of
    input." An axis given twice, which Caffe2 did not check (it removed
    that dim twice from the output's shape), is refused here. Caffe2
    remembered the axes it filled in for an empty ``axes`` on the first run;
    here each run reduces every axis of the X it is given. No gradient
    (``GRADIENT_NOT_IMPLEMENTED_YET``).
    """

    mean = False

    def setup(self):
        self.axes = sorted(self.args.repeated("axes", (), int))
        self.keepdims = self.args.single("keepdims", 1, int)
        if self.axes and self.axes[0] < 0:
            raise ArgumentError("Axes ids must be non-negative (axes=%s)" % (self.axes,))
        if len(set(self.axes)) != len(self.axes):
            raise ArgumentError(
                "axes=%s names an axis twice; expected distinct axes" % (self.axes,)
            )

    def run(self):
        x = self.float_input(0)
        axes = tuple(self.axes) if self.axes else tuple(range(x.ndim))
        if axes and axes[-1] >= x.ndim:
            raise ArgumentError(
                "Axes ids must be smaller than the dimensions of input (axes=%s, "
                "input 0 '%s' has %d)" % (list(axes), self.input_name(0), x.ndim)
            )
        keep = bool(self.keepdims)
        shape = tuple(
            (1 if i in axes else d) for i, d in enumerate(x.shape) if keep or i not in axes
        )
        y = self.output(0, shape, x.dtype)
        reduce = np.mean if self.mean else np.sum
        with np.errstate(all="ignore"):  # the mean of no element is NaN, as Eigen's 0/0
            np.copyto(y, reduce(x, axis=axes, keepdims=keep))


@register("ReduceSum", inputs=1, outputs=1)
class ReduceSumOverAxes(ReduceOverAxes):
    """X summed over ``axes`` (:class:`ReduceOverAxes`)."""


@register("ReduceMean", inputs=1, outputs=1)
class ReduceMeanOverAxes(ReduceOverAxes):
    """The mean of X over ``axes`` (:class:`ReduceOverAxes`)."""

    mean = True


register_gradient("ReduceSum")(GradientNotImplementedYet)
register_gradient("ReduceMean")(GradientNotImplementedYet)


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
