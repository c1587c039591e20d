"""Shape operators: Reshape, Concat, Split, Transpose, Squeeze, ExpandDims.

These move data without computing on it, so they accept tensors of any
element type. Several of them return a second, bookkeeping output that their
gradient needs (Caffe2 had no shape inference at gradient time):

* ``Reshape`` → ``old_shape`` (the input's dims), so the gradient can reshape
  ``dY`` back;
* ``Concat`` → ``split_info`` (each input's size along the axis), so the
  gradient ``Split`` knows where to cut ``dY``.

``Concat`` and ``Split`` read their axis as their era did (the era's
``concat_add_axis``): until 0cdd09da6 (E5) exactly one of ``axis`` and
``order`` and an axis >= 0; from 042e8ede4 (E6, and today) not both, NCHW
when neither is given, a negative axis counted from the end, and
``add_axis``.

Caffe2 sources: reshape_op.{h,cc}, concat_split_op.{h,cc}, transpose_op.{h,cc},
utility_ops.{h,cc} (Squeeze/ExpandDims), at 0cdd09da6 and 042e8ede4.
"""

import math

import numpy as np

from .. import eras
from ..errors import ArgumentError, DTypeError
from ..runtime.registry import register, register_gradient
from .base import Operator
from .gradient_maker import GradientMaker

_ORDER_AXIS = {"NCHW": 1, "NHWC": 3}


def _write_reshaped(op, x, shape):
    """Write ``x`` as output 0 with ``shape``; no copy when the op is in place.

    In place, :meth:`Blob.resize` keeps the input's memory (it only reshapes
    the view), so the data is already there.
    """
    out = op.output(0, shape, x.dtype)
    if not (x.flags.c_contiguous and out.size and out.ctypes.data == x.ctypes.data):
        np.copyto(out, x.reshape(shape))
    return out


@register("Reshape", inputs=(1, 2), outputs=2, inplace=[(0, 0)])
class Reshape(Operator):
    """Reshape ``data`` to the ``shape`` argument or to the ``new_shape`` input.

    A 0 in the requested shape keeps the input's dim at that position; one
    -1 is inferred from the total size. Outputs: ``reshaped`` (same data) and
    ``old_shape`` (1-D, the input's dims; int64, or the type of ``new_shape``).
    Example: data (1, 6, 4) with ``shape=[-1, 4]`` → reshaped (6, 4),
    old_shape [1, 6, 4].
    """

    def setup(self):
        self.has_arg = self.args.has("shape")
        if self.has_arg and len(self.inputs) == 2:
            raise ArgumentError(
                "New shape is specified by the input blob '%s', "
                "do not pass in the argument `shape`." % self.input_name(1)
            )
        if not self.has_arg and len(self.inputs) == 1:
            raise ArgumentError(
                "New shape must be specified by either the input blob or the argument `shape`."
            )
        self.shape_arg = self.args.repeated("shape", kind=int)

    def _requested_shape(self):
        if self.has_arg:
            return list(self.shape_arg), np.int64
        spec = self.input(1)
        if spec.ndim != 1 or spec.dtype not in (np.int32, np.int64):
            raise DTypeError(
                "input 1 ('%s') is %s %s; expected a 1-D int32 or "
                "int64 tensor (the new shape)" % (self.input_name(1), spec.dtype, spec.shape)
            )
        return [int(v) for v in spec], spec.dtype.type

    def run(self):
        x = self.input(0)
        shape, dims_dtype = self._requested_shape()
        for i, d in enumerate(shape):
            if d == 0:
                if i >= x.ndim:
                    raise self.shape_error(
                        0, "at least %d dims (the new shape %s copies dim %d)" % (i + 1, shape, i)
                    )
                shape[i] = x.shape[i]
            elif d < -1:
                raise ArgumentError("new shape %s has a negative entry other than -1" % (shape,))
        unknown = [i for i, d in enumerate(shape) if d == -1]
        if len(unknown) > 1:
            raise ArgumentError("new shape %s may contain at most one -1" % (shape,))
        known = math.prod(d for d in shape if d != -1)
        if unknown:
            if known == 0 or x.size % known:
                raise self.shape_error(
                    0,
                    "a size divisible by %d; Argument "
                    "`shape` %s does not agree with the input "
                    "data." % (known, shape),
                )
            shape[unknown[0]] = x.size // known
        elif known != x.size:
            raise self.shape_error(
                0,
                "size %d; Argument `shape` %s does not agree with the input data." % (known, shape),
            )
        old_shape = x.shape
        _write_reshaped(self, x, shape)
        self.output(1, (len(old_shape),), dims_dtype)[...] = old_shape


@register_gradient("Reshape")
class GetReshapeGradient(GradientMaker):
    copy_arguments = False  # the forward `shape` would fight old_shape

    def get_gradient_defs(self):
        gi = self.GI(0)
        return [self.op_def("Reshape", [self.GO(0), self.O(1)], [gi, "_" + gi + "_dims"])]


def _axis_from_args(op):
    """Concat/Split's ``(axis, add_axis)``, read as the op's era read them
    (module docstring): E4-E5 exactly one of ``axis`` and ``order`` and an
    axis >= 0; from E6 not both, NCHW by default, ``add_axis``."""
    has_axis, has_order = op.args.has("axis"), op.args.has("order")
    late = op.era is None or eras.get(op.era).concat_add_axis
    if late:
        if has_axis and has_order:
            raise ArgumentError(
                "You shouldn't specify both the dim to %s, and the order in the case of 4-D "
                "images." % ("concat" if op.op_type == "Concat" else "split")
            )
    elif has_axis == has_order:
        raise ArgumentError(
            "You should either specify the dim to split, or the order in the case of 4-D images."
        )
    if has_axis:
        axis = op.args.single("axis", -1, int)
        add_axis = op.args.single("add_axis", 0, int) if late else 0
    else:
        order = op.args.single("order", "NCHW" if late else "", str)
        order = {"nchw": "NCHW", "nhwc": "NHWC"}.get(order, order)  # StringToStorageOrder
        if order not in _ORDER_AXIS:
            raise ArgumentError("Unsupported storage order: %s" % order)
        axis, add_axis = _ORDER_AXIS[order], 0
    if not late and axis < 0:
        raise ArgumentError("%s: axis %d must be >= 0 (before 042e8ede4)" % (op.op_type, axis))
    return axis, bool(add_axis)


def _canonical_axis(op, axis, ndim, what="input 0"):
    """``canonical_axis_index_``: an axis in ``[-ndim, ndim)``, made >= 0."""
    if not -ndim <= axis < ndim:
        raise op.shape_error(
            0, "more dims: axis %d is not in [%d, %d) for %s" % (axis, -ndim, ndim, what)
        )
    return axis + ndim if axis < 0 else axis


@register("Concat", inputs=(1, None), outputs=2)
class Concat(Operator):
    """Join the inputs along ``axis``; ``split_info`` (int32) = their sizes there.

    Example (LSTM with attention): [h (1, N, H), ctx (1, N, E)] with axis=2 →
    (1, N, H + E) and split_info [H, E]. With ``add_axis=1`` (from E6) the
    inputs, all of one shape, are stacked along a new axis (split_info all 1).

    As Caffe2's ``ConcatOp`` checked them, the inputs must agree with input 0
    in its dimensions other than the axis; a later input with *more*
    dimensions than input 0 passes (Caffe2 never looked at the extra ones)
    and contributes its first ``before · size · after`` values, in order.
    """

    def setup(self):
        self.axis, self.add_axis = _axis_from_args(self)

    def run(self):
        xs = [self.input(i) for i in range(len(self.inputs))]
        first = xs[0]
        ndim = first.ndim + (1 if self.add_axis else 0)
        axis = _canonical_axis(self, self.axis, ndim)
        self.same_dtype(*range(len(xs)))
        for i, x in enumerate(xs[1:], 1):
            for d in range(first.ndim):
                if d == axis and not self.add_axis:
                    continue
                if d >= x.ndim or x.shape[d] != first.shape[d]:  # dim32(d): "Exceeding ndim"
                    raise self.shape_error(
                        i,
                        "dimension %d of size %d like input 0 %s (the inputs may differ only "
                        "along the axis %d%s)"
                        % (
                            d,
                            first.shape[d],
                            first.shape,
                            axis,
                            "" if self.add_axis else ", when add_axis is 0",
                        ),
                    )
        for i, x in enumerate(xs):
            if not self.add_axis and x.ndim <= axis:
                raise self.shape_error(i, "a dimension %d, the axis" % axis)
        before = int(np.prod(first.shape[:axis]))
        if self.add_axis:
            sizes = [1] * len(xs)
            after = int(np.prod(first.shape[axis:]))
            shape = first.shape[:axis] + (len(xs),) + first.shape[axis:]
        else:
            sizes = [x.shape[axis] for x in xs]
            after = int(np.prod(first.shape[axis + 1 :]))
            shape = first.shape[:axis] + (sum(sizes),) + first.shape[axis + 1 :]
        out = self.output(0, shape, first.dtype).reshape(before, -1)
        offset = 0
        for x, size in zip(xs, sizes):
            block = x.reshape(-1)[: before * size * after].reshape(before, size * after)
            out[:, offset : offset + size * after] = block
            offset += size * after
        self.output(1, (len(xs),), np.int32)[...] = sizes


@register_gradient("Concat")
class GetConcatGradient(GradientMaker):
    def get_gradient_defs(self):
        if not self.has_GO(0):
            return []
        return [
            self.op_def(
                "Split", [self.GO(0), self.O(1)], [self.GI(i) for i in range(len(self.def_.input))]
            )
        ]


@register("Split", inputs=(1, 2), outputs=(1, None))
class Split(Operator):
    """Cut ``input`` along ``axis`` into the outputs.

    Lengths come from the optional int32 ``split`` input, else from the
    ``split`` argument, else equal parts. With ``add_axis=1`` (from E6; "only
    exists for computing the gradient of a Concat with 'add_axis'") the axis
    is removed: one output per index along it.
    """

    def setup(self):
        self.axis, self.add_axis = _axis_from_args(self)
        self.split_arg = self.args.repeated("split", kind=int)
        if len(self.inputs) == 2 and self.split_arg:
            raise ArgumentError(
                "If you set split with the input blob '%s', do "
                "not pass in split in the argument." % self.input_name(1)
            )

    def _lengths(self, dim):
        n = len(self.outputs)
        if len(self.inputs) == 2:
            split = self.input(1)
            if split.dtype != np.int32 or split.size != n:
                raise DTypeError(
                    "input 1 ('%s') is %s of %d elements; expected "
                    "int32 with %d lengths (one per output)"
                    % (self.input_name(1), split.dtype, split.size, n)
                )
            return [int(v) for v in split.reshape(-1)]
        if self.split_arg:
            if len(self.split_arg) != n:
                raise ArgumentError(
                    "argument 'split' has %d lengths; expected %d (The number of splits "
                    "specified should be equal to the number of outputs.)"
                    % (len(self.split_arg), n)
                )
            return list(self.split_arg)
        if dim % n:
            raise self.shape_error(
                0,
                "a dim %d divisible by %d outputs (If you did not specify split explicitly, "
                "the number of input channels should be divisible by the output size.)" % (dim, n),
            )
        return [dim // n] * n

    def run(self):
        x = self.input(0)
        axis = _canonical_axis(self, self.axis, x.ndim)
        dim = x.shape[axis]
        lengths = self._lengths(dim)
        total = len(lengths) if self.add_axis else sum(lengths)
        if total != dim or min(lengths, default=0) < 0:
            raise self.shape_error(
                0,
                "dim %d of size %d: Sum of split dimensions do not match (lengths %s%s)"
                % (axis, dim, lengths, ", add_axis" if self.add_axis else ""),
            )
        start = 0
        for i, length in enumerate(lengths):
            size = 1 if self.add_axis else length
            part = x[(slice(None),) * axis + (slice(start, start + size),)]
            start += size
            if self.add_axis:
                part = part.reshape(x.shape[:axis] + x.shape[axis + 1 :])
            np.copyto(self.output(i, part.shape, x.dtype), part)


@register_gradient("Split")
class GetSplitGradient(GradientMaker):
    """Concat the output gradients that exist (Caffe2 skipped missing ones)."""

    def get_gradient_defs(self):
        grads = [self.GO(i) for i in range(len(self.def_.output)) if self.has_GO(i)]
        if not grads:
            return []
        gi = self.GI(0)
        return [self.op_def("Concat", grads, [gi, "_" + gi + "_dims"])]


_TRANSPOSE_TYPES = (np.float32, np.float64, np.int32, np.int64)


@register("Transpose", inputs=1, outputs=1)
class Transpose(Operator):
    """``Y = numpy.transpose(X, axes)``; ``axes`` defaults to reversed dims.

    Example (attention): encoder outputs (T, N, E) with axes=[1, 2, 0] →
    (N, E, T).
    """

    def setup(self):
        self.axes = self.args.repeated("axes", kind=int) or None

    def run(self):
        # DispatchHelper<TensorTypes<float, double, int, long>> (transpose_op.h, E4..E6)
        x = self.typed_input(0, _TRANSPOSE_TYPES, "float32, float64, int32 or int64")
        if self.axes is not None and sorted(self.axes) != list(range(x.ndim)):
            raise self.shape_error(
                0,
                "%d dims, matching argument axes %s (a "
                "permutation of 0..ndim-1)" % (len(self.axes), self.axes),
            )
        y = np.transpose(x, self.axes)
        np.copyto(self.output(0, y.shape, x.dtype), y)


@register_gradient("Transpose")
class GetTransposeGradient(GradientMaker):
    """Transpose back: the forward arguments, with ``axes`` inverted."""

    copy_arguments = False  # copied below, with axes replaced

    def get_gradient_defs(self):
        op = self.op_def("Transpose", [self.GO(0)], [self.GI(0)])
        op.arg.extend(self.def_.arg)
        for arg in op.arg:
            if arg.name == "axes":
                inverse = [0] * len(arg.ints)
                for i, axis in enumerate(arg.ints):
                    inverse[axis] = i
                arg.ints[:] = inverse
        return [op]


def _sorted_dims(op):
    dims = op.args.repeated("dims", kind=int)
    if not dims:
        raise ArgumentError("Parameter dims must be provided.")
    dims = sorted(set(dims))
    if dims[0] < 0:
        raise ArgumentError("Dimension ids must be non-negative; got dims %s" % dims)
    return dims


@register("Squeeze", inputs=1, outputs=1, inplace=[(0, 0)])
class Squeeze(Operator):
    """Remove the size-1 dims listed in ``dims``: (1, N, D), dims=[0] → (N, D)."""

    def setup(self):
        self.dims = _sorted_dims(self)

    def run(self):
        x = self.input(0)
        if x.ndim <= self.dims[-1]:
            raise self.shape_error(0, "at least %d dims" % (self.dims[-1] + 1))
        for d in self.dims:
            if x.shape[d] != 1:
                raise self.shape_error(
                    0,
                    "dim %d of size 1 (Dimension %d of input "
                    "must be 1 instead of %d.)" % (d, d, x.shape[d]),
                )
        shape = [n for i, n in enumerate(x.shape) if i not in self.dims]
        _write_reshaped(self, x, shape)


@register("ExpandDims", inputs=1, outputs=1, inplace=[(0, 0)])
class ExpandDims(Operator):
    """Insert size-1 dims at the output positions in ``dims``: (N, T), [2] → (N, T, 1)."""

    def setup(self):
        self.dims = _sorted_dims(self)

    def run(self):
        x = self.input(0)
        if x.ndim + len(self.dims) <= self.dims[-1]:
            raise self.shape_error(
                0,
                "at least %d dims given dims %s" % (self.dims[-1] + 1 - len(self.dims), self.dims),
            )
        shape = list(x.shape)
        for d in self.dims:
            shape.insert(d, 1)
        _write_reshaped(self, x, shape)


@register_gradient("Squeeze")
class GetSqueezeGradient(GradientMaker):
    def get_gradient_defs(self):
        return [self.op_def("ExpandDims", [self.GO(0)], [self.GI(0)])]


@register_gradient("ExpandDims")
class GetExpandDimsGradient(GradientMaker):
    def get_gradient_defs(self):
        return [self.op_def("Squeeze", [self.GO(0)], [self.GI(0)])]
