"""MaxPool, AveragePool, LpPool and their gradients: pooling over 1-, 2- or 3-D windows.

``MaxPool([X] → Y)`` in ``order="NCHW"`` (the default): X is ``(N, C, *S)`` with
one to three spatial dims and Y ``(N, C, *O)``; in ``"NHWC"`` the channels come
last. Each output element reduces one window of its channel::

    window(o) = [o·stride − pad_head, o·stride − pad_head + kernel)  ∩  [0, S)

per spatial dim, so a window never reads the padding: MaxPool takes the largest
element in it, AveragePool the mean *of the elements in the window* (the
padding is not counted), LpPool ``(Σ |x|^p)^(1/p)`` (argument ``p``, default 2;
2-D only, as in Caffe2). The output sizes and the pads come from the
arguments Conv takes (:mod:`caffe2rnn.operators.conv_pool_base`: kernel,
stride, pads, ``legacy_pad`` including Caffe's pooling rule ``3``); the tail
pad only makes more windows, which stop at the edge. ``global_pooling=1``
pools each channel whole (``O = 1``; no kernel, stride or pads then). A pad
must be smaller than the kernel, and the forward ops take no dilation; the
gradient ops accept one and ignore it, as Caffe2's ``PoolGradientOp`` did.
The arguments are read as Caffe2's ``ConvPoolOpBase`` read them
(:class:`~caffe2rnn.operators.conv_pool_base.ConvPoolArguments`: pads >= 0 and
a kernel are enforced there only for ops *named* ``Conv…`` or ``…Pool…``; the
kernel is checked again when the op runs).

As in Caffe2, MaxPool starts from the lowest finite float and skips NaNs
(C++'s ``x > y`` is false for them). Its gradient sends dY to *every* element
of the window equal to Y (ties all get it); AveragePool's spreads dY evenly
over the window's elements; LpPool's is ``dY · x · |x|^(p−2) / Y^(p−1)``.
The gradient ops ``<Op>Gradient([X, Y, dY] → dX)`` take the windows from X's
sizes and dY's.

Caffe2 registered the same operators again as ``MaxPool1D``/``2D``/``3D`` and
``AveragePool1D``/``2D``/``3D`` (by 042e8ede4); they are here too. With legacy
``SAME`` padding Caffe2 0cdd09da6's forward ops placed the windows as if the
head pad were 0 while their gradients used the computed one (f811e312d,
2017-11-20, made the forward use it); both use it here, as Conv does.
``brew.max_pool`` / ``brew.average_pool`` (helpers/pooling.py) and
``CNNModelHelper.MaxPool`` create them.

Caffe2: caffe2/operators/pool_op.{h,cc}, pool_gradient_op.cc, lp_pool_op.cc,
conv_pool_op_base.h (at 0cdd09da6 and 042e8ede4).
"""

import functools
import itertools

import numpy as np

from ..errors import ArgumentError, ShapeError
from ..runtime.registry import register, register_gradient
from .base import Operator
from .conv_pool_base import LEGACY_PADDINGS, NOTSET, ConvPoolArguments, size_and_pad
from .gradient_maker import GradientMaker

ORDERS = ("NCHW", "NHWC")


def _geometry_key(*geometry):
    """A pooling geometry (sizes, kernel, stride, heads, out) as tuples of ints."""
    return tuple(tuple(int(n) for n in v) for v in geometry)


@functools.lru_cache(maxsize=512)
def _window_sizes(spatial, kernel, stride, heads, out):
    """Each output window's element count (int64) and the gradient's scale
    ``1. / count_0 / count_1 ...`` divided in double, both read-only."""
    counts, scales = np.ones((), np.int64), np.ones((), np.float64)
    for size, k, s, head, n in zip(spatial, kernel, stride, heads, out):
        start = np.arange(n) * s - head
        count = np.minimum(start + k, size) - np.maximum(start, 0)
        counts = np.multiply.outer(counts, count)
        with np.errstate(divide="ignore"):
            scales = np.divide.outer(scales, count.astype(np.float64))
    counts.setflags(write=False)
    scales.setflags(write=False)
    return counts, scales


@functools.lru_cache(maxsize=512)
def _offsets(spatial, kernel, stride, heads, out):
    """:meth:`PoolBase.offsets` for one geometry (tuples of ints), as a tuple."""
    pairs = []
    for offset in itertools.product(*(range(k) for k in kernel)):
        x_part, y_part = [slice(None)] * 2, [slice(None)] * 2
        for j, size, s, head, n in zip(offset, spatial, stride, heads, out):
            low = max(0, -((j - head) // s))
            high = min(n, (size - 1 + head - j) // s + 1)
            if high <= low:
                break
            start = low * s - head + j
            x_part.append(slice(start, start + (high - low - 1) * s + 1, s))
            y_part.append(slice(low, high))
        else:
            pairs.append((tuple(x_part), tuple(y_part)))
    return tuple(pairs)


class PoolBase(Operator):
    """The arguments and windows of a pooling op and of its gradient."""

    #: The spatial ranks the op supports (LpPool: 2-D only).
    ranks: tuple = (1, 2, 3)

    def setup(self):
        a = ConvPoolArguments(self)
        if a.legacy_pad not in LEGACY_PADDINGS:
            raise ArgumentError(
                "argument legacy_pad is %d; supported: %s"
                % (a.legacy_pad, ", ".join("%d (%s)" % kv for kv in LEGACY_PADDINGS.items()))
            )
        self.legacy_pad, self.global_pooling = a.legacy_pad, a.global_pooling
        self.kernel, self.stride, self.pads, self.order = a.kernel, a.stride, a.pads, a.order
        self.dilation = a.dilation
        if self.order not in ORDERS:
            raise ArgumentError("Unknown storage order: '%s'; expected NCHW or NHWC" % self.order)
        a.check_kernel(self)
        if min(self.stride) < 1:  # 0: Caffe2 divided by it
            raise ArgumentError(
                "argument strides is %s; expected values >= 1 (one per kernel dim %s)"
                % (self.stride, self.kernel)
            )

    # --- geometry -------------------------------------------------------------
    def nchw(self, i, what):
        """Input i as a float ``(N, C, *S)`` view, checked against the kernel."""
        x = self.float_input(i)
        d = x.ndim - 2 if self.global_pooling else len(self.kernel)
        if d not in self.ranks or x.ndim != d + 2:
            raise self.shape_error(
                i,
                "%s with %s spatial dims (%s; kernel %s)"
                % (
                    what,
                    " or ".join(map(str, self.ranks)),
                    self.order,
                    "global" if self.global_pooling else self.kernel,
                ),
            )
        return np.moveaxis(x, -1, 1) if self.order == "NHWC" else x

    def windows(self, spatial):
        """``(kernel, stride, heads, out)`` per spatial dim of an input of sizes ``spatial``."""
        d = len(spatial)
        if self.global_pooling:
            return list(spatial), [1] * d, [0] * d, [1] * d
        heads, out = [], []
        for i, size in enumerate(spatial):
            try:
                head, _, o = size_and_pad(
                    size,
                    self.kernel[i],
                    self.stride[i],
                    1,
                    self.legacy_pad,
                    self.pads[i],
                    self.pads[d + i],
                )
            except ShapeError as exc:
                raise ShapeError(
                    "input 0 ('%s'), spatial dim %d: %s" % (self.input_name(0), i, exc)
                ) from None
            heads.append(head)
            out.append(o)
        return self.kernel, self.stride, heads, out

    @staticmethod
    def offsets(spatial, kernel, stride, heads, out):
        """For each offset in the kernel: the slices of X and of Y it pairs up.

        Output ``o`` reads X at ``o·stride − head + offset``; the outputs that
        lands inside X form a range, and the positions a strided slice. The
        pairs depend on the geometry alone, so they are worked out once per
        geometry (a gradient check runs the op hundreds of times on one shape).
        """
        return _offsets(*_geometry_key(spatial, kernel, stride, heads, out))

    @classmethod
    def offsets_by_window(cls, spatial, kernel, stride, heads, out):
        """:meth:`offsets` last to first: each X element then gets its windows'
        terms in the order the C++ gradients added them (windows ascending;
        pool_gradient_op.cc, lp_pool_op.cc), so the float sums are the same."""
        return reversed(cls.offsets(spatial, kernel, stride, heads, out))

    @staticmethod
    def scales(spatial, kernel, stride, heads, out):
        """AveragePoolGradient's ``float scale = 1. / (hend − hstart) / (wend − wstart)
        ...``: divided in double, dim by dim, then float (read-only, one per geometry)."""
        return _window_sizes(*_geometry_key(spatial, kernel, stride, heads, out))[1]

    @staticmethod
    def counts(spatial, kernel, stride, heads, out):
        """How many elements of X each output window holds (Caffe2's ``hend − hstart``;
        read-only, one per geometry)."""
        return _window_sizes(*_geometry_key(spatial, kernel, stride, heads, out))[0]

    def to_order(self, array):
        return np.moveaxis(array, 1, -1) if self.order == "NHWC" else array


class Pool(PoolBase):
    """A pooling op: :meth:`pool` reduces X's windows (module docstring)."""

    def setup(self):
        super().setup()
        if set(self.dilation) != {1}:  # PoolOp's constructor (the gradient has no such check)
            raise ArgumentError("Pooling op does not support dilation right now.")
        d = len(self.kernel)
        if not self.global_pooling and any(
            self.pads[i] >= self.kernel[i] or self.pads[d + i] >= self.kernel[i] for i in range(d)
        ):  # pool_op.h: CAFFE_ENFORCE(pads_[i] < kernel_[i] && ...)
            raise ArgumentError(
                "Pad should be smaller than kernel (pads %s, kernel %s)" % (self.pads, self.kernel)
            )

    def run(self):
        x = self.nchw(0, "a tensor")
        if x.size == 0:  # ConvPoolOpBase::SetOutputSize: CAFFE_ENFORCE(input.size() > 0)
            raise self.shape_error(0, "a non-empty tensor")
        geometry = self.windows(x.shape[2:])
        y = self.pool(x, geometry)
        y = self.to_order(y)
        np.copyto(self.output(0, y.shape, x.dtype), y)


class PoolGradient(PoolBase):
    """``[X, Y, dY] → dX`` of a pooling op: :meth:`backward` (module docstring)."""

    def run(self):
        x = self.nchw(0, "X")
        y, dy = self.nchw(1, "Y"), self.nchw(2, "dY")
        self.same_dtype(0, 1, 2)
        if dy.shape[:2] != x.shape[:2] or y.shape != dy.shape:
            # pool_gradient_op.cc: CAFFE_ENFORCE_EQ(channels, dY.dim32(...)); Y and dY
            # are read with dY's sizes, X's batch with X's.
            raise ShapeError(
                "%sGradient: Y ('%s', %s) and dY ('%s', %s) must have the same shape, with "
                "X's batch size and channels (X '%s' is %s, order %s)"
                % (
                    self.op_type[: -len("Gradient")],
                    self.input_name(1),
                    self.input(1).shape,
                    self.input_name(2),
                    self.input(2).shape,
                    self.input_name(0),
                    self.input(0).shape,
                    self.order,
                )
            )
        d = x.ndim - 2
        if self.legacy_pad == NOTSET and not self.global_pooling:
            # ComputePads leaves given pads alone (and checks no sizes)
            kernel, stride, heads = self.kernel, self.stride, self.pads[:d]
        else:
            kernel, stride, heads, _ = self.windows(x.shape[2:])
        geometry = (kernel, stride, heads, list(dy.shape[2:]))  # dY's sizes, as Caffe2 read them
        dx = np.zeros(x.shape, x.dtype)
        self.backward(x, y, dy, dx, geometry)
        dx = self.to_order(dx)
        np.copyto(self.output(0, dx.shape, x.dtype), dx)


@register("MaxPool", inputs=1, outputs=1)
class MaxPool(Pool):
    """Y = the largest element of each window (module docstring)."""

    def pool(self, x, geometry):
        y = np.full(x.shape[:2] + tuple(geometry[3]), np.finfo(x.dtype).min, x.dtype)
        for xs, ys in self.offsets(x.shape[2:], *geometry):
            np.fmax(y[ys], x[xs], out=y[ys])
        return y


@register("AveragePool", inputs=1, outputs=1)
class AveragePool(Pool):
    """Y = the mean of the elements in each window (module docstring)."""

    def pool(self, x, geometry):
        y = np.zeros(x.shape[:2] + tuple(geometry[3]), x.dtype)
        for xs, ys in self.offsets(x.shape[2:], *geometry):
            y[ys] += x[xs]
        with np.errstate(divide="ignore", invalid="ignore"):
            y /= self.counts(x.shape[2:], *geometry)
        return y


@register("LpPool", inputs=1, outputs=1)
class LpPool(Pool):
    """Y = ``(Σ |x|^p)^(1/p)`` over each window; 2-D only (module docstring)."""

    ranks = (2,)

    def setup(self):
        super().setup()
        self.p = self.args.single("p", 2.0, float)

    def pool(self, x, geometry):
        y = np.zeros(x.shape[:2] + tuple(geometry[3]), x.dtype)
        for xs, ys in self.offsets(x.shape[2:], *geometry):
            y[ys] += np.abs(x[xs]) ** self.p
        return y ** (1.0 / self.p)


@register("MaxPoolGradient", inputs=3, outputs=1)
class MaxPoolGradient(PoolGradient):
    def backward(self, x, y, dy, dx, geometry):
        # MaxPool::process_grad: if (x_data == y_data) dx_data += dy_data;
        for xs, ys in self.offsets_by_window(x.shape[2:], *geometry):
            dx[xs] += np.where(x[xs] == y[ys], dy[ys], 0)


@register("AveragePoolGradient", inputs=3, outputs=1)
class AveragePoolGradient(PoolGradient):
    def backward(self, x, y, dy, dx, geometry):
        # AveragePool::process_grad: dx_data += (scale * dy_data);
        scaled = self.scales(x.shape[2:], *geometry).astype(x.dtype) * dy
        for xs, ys in self.offsets_by_window(x.shape[2:], *geometry):
            dx[xs] += scaled[ys]


@register("LpPoolGradient", inputs=3, outputs=1)
class LpPoolGradient(PoolGradient):
    ranks = (2,)

    def setup(self):
        super().setup()
        self.p = self.args.single("p", 2.0, float)

    def backward(self, x, y, dy, dx, geometry):
        p = self.p
        with np.errstate(divide="ignore", invalid="ignore"):
            for xs, ys in self.offsets_by_window(x.shape[2:], *geometry):
                window = x[xs]
                dx[xs] += dy[ys] * window * np.abs(window) ** (p - 2) / y[ys] ** (p - 1)


class GetPoolGradient(GradientMaker):
    """``<Op>Gradient([X, Y, dY] → dX)``, with the forward op's arguments."""

    def get_gradient_defs(self):
        gradient = self.def_.type + "Gradient"
        return [self.op_def(gradient, [self.I(0), self.O(0), self.GO(0)], [self.GI(0)])]


for _forward, _backward in ((MaxPool, MaxPoolGradient), (AveragePool, AveragePoolGradient)):
    register_gradient(_forward.op_type)(GetPoolGradient)
    for _rank in (1, 2, 3):  # Caffe2 042e8ede4's MaxPool1D ... AveragePool3D: the same ops
        _name = "%s%dD" % (_forward.op_type, _rank)
        register(_name, inputs=1, outputs=1)(type(_name, (_forward,), {}))
        register(_name + "Gradient", inputs=3, outputs=1)(
            type(_name + "Gradient", (_backward,), {})
        )
        register_gradient(_name)(GetPoolGradient)
register_gradient("LpPool")(GetPoolGradient)
