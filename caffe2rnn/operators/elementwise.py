"""Element-wise binary ops with Caffe2's *limited* broadcasting, and friends.

Caffe2 (``caffe2/operators/elementwise_op.h``, ``elementwise_op_schema.cc``)
had one template for ``Add``, ``Sub`` and ``Mul``: ``C = A op B`` with C shaped
and typed like A. Broadcasting is **off** unless ``broadcast=1``, and even
then it is not NumPy's rule: B must be a scalar (``B.size == 1``) or a
*contiguous block* of A's dimensions, starting at ``axis`` (``-1``: suffix
matching, i.e. ``A.ndim - B.ndim``)::

    A: (2, 3, 4, 5)   B: (4, 5)            suffix, axis = 2
    A: (2, 3, 4, 5)   B: (3, 4), axis=1    C[p, j, k, q] = A[p, j, k, q] op B[j, k]

Caffe2 looped over ``(pre, n, post)`` = (product of A's dims before the block,
B.size, product after it). Here B is reshaped to ``B.dims + (1,) * len(post
dims)`` and NumPy broadcasts it: the same arithmetic, one ufunc call.
``axis_str`` (one letter of ``order``, e.g. ``"C"`` in ``"NCHW"``) names the
axis instead. Size-1 dims inside B are *not* expanded ("1-dim expansion");
from E6 (0c50143fe, 2017-11-01) B may have A's rank, and its size-1 dims at
either end are left out of the block: A (2, 3, 4, 5), B (1, 4, 1), axis=1 adds
B's 4 values along A's dim 2.

Also here: ``SumReduceLike`` (the reduction the broadcast gradients need),
``Negative``, ``Exp`` and ``ElementwiseLinear`` (MILSTM's ``Y = X * w + b``).
The gradient makers of Add/Sub/Mul changed three times in 2017; they live in
:mod:`.elementwise_gradient`.
"""

import math
from typing import Optional

import numpy as np

from .. import eras
from ..errors import ArgumentError, DTypeError, EnforceNotMet
from ..runtime.registry import register, register_gradient
from .base import Operator
from .gradient_maker import GradientMaker

#: Types the Add/Sub/Mul/Negative kernels were instantiated for.
NUMERIC_TYPES = frozenset(np.dtype(t) for t in (np.int32, np.int64, np.float32, np.float64))


def parse_broadcast_axis(op, enabled):
    """The start axis of B inside A from ``axis``/``axis_str``/``order``.

    Returns ``-1`` for suffix matching. As in Caffe2's constructor, giving an
    axis without ``broadcast`` is an error, and ``axis`` and ``axis_str``
    exclude each other.
    """
    axis = op.args.single("axis", -1, int)
    axis_str = op.args.single("axis_str", "", str)
    order = op.args.single("order", "NCHW", str)
    if not enabled:
        if axis != -1 or axis_str:
            raise ArgumentError("Do not specify axis or axis_str if broadcast is not enabled.")
        return -1
    if axis != -1:
        if axis_str:
            raise ArgumentError("Args axis and axis_str cannot be used simultaneously.")
        return axis
    if axis_str:
        if len(axis_str) != 1:
            raise ArgumentError(
                "Unsupported axis string '%s'; expected one "
                "letter of order '%s'" % (axis_str, order)
            )
        axis = order.find(axis_str)
        if axis < 0:
            raise ArgumentError(
                "Unrecognizable axis string '%s' from order string '%s'" % (axis_str, order)
            )
    return axis


def broadcast_block(op, a, b, axis):
    """Validate that B is a block of A's dims; return ``(start, block)``: where
    in A the block starts and B's dims that form it.

    Only for a non-scalar B. From E6 (:attr:`~caffe2rnn.eras.Era.broadcast_strips_unit_dims`)
    B may have A's rank and its leading/trailing size-1 dims are not part of
    the block. Errors name input 1 and the dims it must have.
    """
    strips = eras.current().broadcast_strips_unit_dims
    if b.ndim > a.ndim or (b.ndim == a.ndim and not strips):
        raise op.shape_error(
            1,
            "%s dimensions than input 0 ('%s', shape %s) when broadcasting"
            % ("no more" if strips else "fewer", op.input_name(0), a.shape),
        )
    start = a.ndim - b.ndim if axis == -1 else axis
    if not 0 <= start <= a.ndim - b.ndim:
        raise ArgumentError(
            "Broadcast axis should be in the range of [0, %d] "
            "(A.ndim - B.ndim), but axis = %d" % (a.ndim - b.ndim, axis)
        )
    first, last = 0, b.ndim
    if strips:
        while first < last and b.shape[first] == 1:
            first += 1
        while last > first and b.shape[last - 1] == 1:
            last -= 1
    block = b.shape[first:last]
    start += first
    if a.shape[start : start + len(block)] != block:
        raise op.shape_error(
            1,
            "%s (dims %d..%d of input 0 ('%s'), shape %s): "
            "Broadcast dimension mismatch"
            % (
                a.shape[start : start + len(block)],
                start,
                start + len(block) - 1,
                op.input_name(0),
                a.shape,
            ),
        )
    return start, block


class BinaryElementwise(Operator):
    """``C = ufunc(A, B)`` with Caffe2's broadcast rules (see module doc).

    Subclasses name the element types of Caffe2's kernel (``input_types``,
    its ``TensorTypes<...>``), the output type (``output_type``; None: A's)
    and the computation (``ufunc``, or :meth:`compute`).
    """

    ufunc: Optional[np.ufunc] = None
    input_types = NUMERIC_TYPES
    output_type: Optional[type] = None

    def setup(self):
        self.broadcast = self.args.single("broadcast", 0, int) != 0
        self.axis = parse_broadcast_axis(self, self.broadcast)
        self.b_in_place = self.def_.input[1] == self.def_.output[0]

    def run(self):
        a = self.inputs[0].value
        b = self.inputs[1].value
        if (
            type(a) is not np.ndarray
            or type(b) is not np.ndarray
            or a.dtype != b.dtype
            or a.dtype not in self.input_types
        ):
            raise self.type_error()
        if self.broadcast:
            if self.b_in_place:
                raise EnforceNotMet(
                    "In-place is allowed only with the first tensor when "
                    "broadcasting (input 1 '%s' is also the output)" % self.input_name(1)
                )
            if b.size != 1:
                start, block = broadcast_block(self, a, b, self.axis)
                b = b.reshape(block + (1,) * (a.ndim - start - len(block)))
            else:
                b = b.reshape(())
        elif a.shape != b.shape:
            raise self.shape_error(
                1,
                "%s like input 0 ('%s'): Dimension mismatch "
                "- did you forget to set broadcast=1?" % (a.shape, self.input_name(0)),
            )
        self.check_values(a, b)
        out = self.outputs[0].value
        if out is not a:  # written in place over A: no resize to do
            out = self.outputs[0].resize(a.shape, self.output_type or a.dtype)
        self.compute(a, b, out)

    def check_values(self, a, b):
        """Refuse values the kernel could not compute (B already broadcast-shaped)."""

    def compute(self, a, b, out):
        self.ufunc(a, b, out=out)

    def type_error(self):
        a, b = self.input(0), self.input(1)  # raise for a non-tensor
        if a.dtype != b.dtype:
            return DTypeError(
                "input 0 ('%s') is %s but input 1 ('%s') is %s; "
                "expected the same type"
                % (self.input_name(0), a.dtype, self.input_name(1), b.dtype)
            )
        return DTypeError(
            "input 0 ('%s') has type %s; expected %s"
            % (self.input_name(0), a.dtype, describe_types(self.input_types))
        )


def describe_types(types):
    """``int32, int64, float32 or float64``: a type set for messages."""
    names = sorted(str(np.dtype(t)) for t in types)
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]


_BINARY_SCHEMA = dict(inputs=2, outputs=1, inplace=[(0, 0), (1, 0)])


@register("Add", **_BINARY_SCHEMA)
class Add(BinaryElementwise):
    """C = A + B (``broadcast=1``: B a scalar or a block of A's dims)."""

    ufunc = np.add


@register("Sub", **_BINARY_SCHEMA)
class Sub(BinaryElementwise):
    """C = A - B (``broadcast=1``: B a scalar or a block of A's dims)."""

    ufunc = np.subtract


@register("Mul", **_BINARY_SCHEMA)
class Mul(BinaryElementwise):
    """C = A * B (``broadcast=1``: B a scalar or a block of A's dims)."""

    ufunc = np.multiply


@register("SumReduceLike", inputs=2, outputs=1)
class SumReduceLike(Operator):
    """C (shaped like B) = A summed over every dim that broadcasting B repeats.

    The adjoint of a broadcast: ``C[j] = Σ_p Σ_q A[p, j, q]`` with Caffe2's
    ``(pre, n, post)`` split, or the sum of all of A when B has one element.
    Only B's shape is read. Arguments ``axis``/``axis_str``/``order`` as for
    the broadcasting op (a ``broadcast`` argument, which the 2017-04 Sub/Mul
    gradients passed along, is ignored).
    """

    def setup(self):
        self.axis = parse_broadcast_axis(self, True)

    def run(self):
        a = self.float_input(0)
        b = self.input(1)
        if b.size == 1:
            c = self.output(0, b.shape, a.dtype)
            c.reshape(-1)[0] = a.sum()
            return
        start, block = broadcast_block(self, a, b, self.axis)
        pre = math.prod(a.shape[:start])
        post = math.prod(a.shape[start + len(block) :])
        c = self.output(0, b.shape, a.dtype)
        np.sum(a.reshape(pre, b.size, post), axis=(0, 2), out=c.reshape(b.size))


@register("Negative", inputs=1, outputs=1, inplace=[(0, 0)])
class Negative(Operator):
    """Y = -X element-wise (int32, int64, float32, float64)."""

    def run(self):
        x = self.input(0)
        if x.dtype not in NUMERIC_TYPES:
            raise DTypeError(
                "input 0 ('%s') has type %s; expected int32, int64, "
                "float32 or float64" % (self.input_name(0), x.dtype)
            )
        np.negative(x, out=self.output(0, x.shape, x.dtype))


@register_gradient("Negative")
class GetNegativeGradient(GradientMaker):
    """dX = -dY: ``Negative(GO0 → GI0)``."""

    def get_gradient_defs(self):
        return [self.op_def("Negative", [self.GO(0)], [self.GI(0)])]


@register("Exp", inputs=1, outputs=1, inplace=[(0, 0)])
class Exp(Operator):
    """Y = exp(X) element-wise (float). Caffe2: caffe2/operators/exp_op.cc."""

    def run(self):
        x = self.float_input(0)
        np.exp(x, out=self.output(0, x.shape, x.dtype))


@register_gradient("Exp")
class GetExpGradient(GradientMaker):
    """dX = Y · dY: ``Mul([O0, GO0] → GI0)``, reusing the forward output."""

    def get_gradient_defs(self):
        return [self.op_def("Mul", [self.O(0), self.GO(0)], [self.GI(0)])]


def _flatten_at(op, x, axis):
    """``(N, D)`` = (size_to_dim(axis), size_from_dim(axis)) of X, Caffe2-style."""
    canonical = axis + x.ndim if axis < 0 else axis
    if not 0 <= canonical <= x.ndim:
        raise ArgumentError(
            "axis %d is out of range for input 0 ('%s') with %d "
            "dimensions" % (axis, op.input_name(0), x.ndim)
        )
    return math.prod(x.shape[:canonical]), math.prod(x.shape[canonical:])


def _vector_input(op, i, d, dtype):
    v = op.input(i)
    if v.shape != (d,):
        raise op.shape_error(i, "(%d,) (size_from_dim(axis) of input 0)" % d)
    if v.dtype != dtype:
        raise DTypeError(
            "input %d ('%s') has type %s; expected %s like input 0"
            % (i, op.input_name(i), v.dtype, dtype)
        )
    return v


@register("ElementwiseLinear", inputs=3, outputs=1)
class ElementwiseLinear(Operator):
    """``Y[n, d] = X[n, d] * w[d] + b[d]``: a per-feature scale and shift.

    X is viewed as ``N × D`` at ``axis`` (default 1); w and b are 1-D of size D.
    Used by the MILSTM cell of ``rnn_cell.py`` (E5).
    """

    def setup(self):
        self.axis = self.args.single("axis", 1, int)

    def run(self):
        x = self.float_input(0)
        n, d = _flatten_at(self, x, self.axis)
        w = _vector_input(self, 1, d, x.dtype)
        b = _vector_input(self, 2, d, x.dtype)
        y2 = self.output(0, x.shape, x.dtype).reshape(n, d)
        np.multiply(x.reshape(n, d), w, out=y2)
        y2 += b


@register("ElementwiseLinearGradient", inputs=3, outputs=3)
class ElementwiseLinearGradient(Operator):
    """Inputs dY, X, w → dX = dY * w, dw = Σ_n dY * X, db = Σ_n dY."""

    def setup(self):
        self.axis = self.args.single("axis", 1, int)

    def run(self):
        dy = self.float_input(0)
        x = self.input(1)
        if x.shape != dy.shape:
            raise self.shape_error(1, "%s like input 0 ('%s')" % (dy.shape, self.input_name(0)))
        if x.dtype != dy.dtype:
            raise DTypeError(
                "input 1 ('%s') has type %s; expected %s like input 0"
                % (self.input_name(1), x.dtype, dy.dtype)
            )
        n, d = _flatten_at(self, dy, self.axis)
        w = _vector_input(self, 2, d, dy.dtype)
        dy2, x2 = dy.reshape(n, d), x.reshape(n, d)
        np.multiply(dy2, w, out=self.output(0, x.shape, x.dtype).reshape(n, d))
        np.einsum("nd,nd->d", dy2, x2, out=self.output(1, (d,), x.dtype))
        np.add.reduce(dy2, axis=0, out=self.output(2, (d,), x.dtype))


@register_gradient("ElementwiseLinear")
class GetElementwiseLinearGradient(GradientMaker):
    """``ElementwiseLinearGradient([GO0, I0, I1] → [GI0, GI1, GI2])``, args copied."""

    def get_gradient_defs(self):
        return [
            self.op_def(
                "ElementwiseLinearGradient",
                [self.GO(0), self.I(0), self.I(1)],
                [self.GI(0), self.GI(1), self.GI(2)],
            )
        ]


from . import elementwise_gradient  # noqa: E402,F401  (registers Add/Sub/Mul makers)
