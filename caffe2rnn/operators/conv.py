"""Conv and ConvGradient: N-d convolution (NCHW), 2-D also in NHWC.

``Conv([X, filter, (bias)] → Y)`` with, in NCHW order, ``X: (N, C, *S)``,
``filter: (M, C / group, *K)``, ``bias: (M,)`` and ``Y: (N, M, *O)``::

    Y[n, m, o] = b[m] + Σ_c Σ_k  W[m, c, k] · Xp[n, g·C/group + c, o·stride + k·dilation]

where ``g = m // (M / group)`` and ``Xp`` is X padded with zeros. In NHWC
order (2-D only, ``group = 1``) X is ``(N, H, W, C)``, the filter ``(M, kH,
kW, C)`` and Y ``(N, H', W', M)``. Each output size is::

    O = (S + pad_head + pad_tail − (dilation·(K − 1) + 1)) // stride + 1

Arguments: the kernel, strides, dilations, pads, ``order``, ``legacy_pad`` and
``group`` (default 1) of Caffe2's ``ConvPoolOpBase``, read as it read them
(:class:`caffe2rnn.operators.conv_pool_base.ConvPoolArguments`; Conv takes
``legacy_pad`` 0, 1 (VALID) or 2 (SAME)). As in Caffe2, pads must be >= 0
only when the op's *name* starts with ``Conv`` (an unnamed Conv with a
negative pad crops X), and X must not be empty (``SetOutputSize``).

The computation loops over the kernel offsets ``k`` (a few) and does one
matrix product per offset over channels, batch and every output position at
once; the gradient runs the same loop backwards. Caffe2's stateful-convolution
RNN test runs a 1-D convolution (NHWC, ``kernel_h=1``) inside a step net.

``ConvGradient([X, filter, dY] → [dW, (db), (dX)])``: ``db`` unless
``no_bias=1``, ``dX`` unless the forward op had ``no_gradient_to_input=1``.

E6 (042e8ede4) also registered the same op as ``Conv1D``, ``Conv2D`` and
``Conv3D``, each with its ``…Gradient``; so does caffe2rnn, in every era.

Caffe2: caffe2/operators/conv_pool_op_base.h, conv_op.{h,cc}, conv_op_impl.h,
conv_gradient_op.cc.
"""

import itertools

import numpy as np

from ..errors import ArgumentError
from ..runtime.registry import register, register_gradient
from .base import Operator
from .conv_pool_base import (
    LEGACY_PADDINGS,
    NOTSET,
    SAME,
    VALID,
    ConvPoolArguments,
    size_and_pad,
)
from .gradient_maker import GradientMaker


class ConvBase(Operator):
    """Argument parsing and geometry shared by Conv and ConvGradient."""

    #: Conv sizes its output with ConvPoolOpBase::SetOutputSize (X must be non-empty)
    forward = True

    def setup(self):
        a = ConvPoolArguments(self)
        self.legacy_pad = a.legacy_pad
        if self.legacy_pad not in (NOTSET, VALID, SAME):
            raise ArgumentError(
                "argument legacy_pad is %d; supported: %s"
                % (
                    self.legacy_pad,
                    ", ".join("%d (%s)" % (v, LEGACY_PADDINGS[v]) for v in (NOTSET, VALID, SAME)),
                )
            )
        if a.global_pooling:
            raise ArgumentError("%s: global_pooling is a pooling argument" % self.op_type)
        a.check_kernel(self)
        self.kernel, self.stride, self.dilation = a.kernel, a.stride, a.dilation
        self.pads, self.group, self.order = a.pads, a.group, a.order
        self._check_arguments(len(self.kernel))

    def _check_arguments(self, d):
        for name, values in (("stride", self.stride), ("dilation", self.dilation)):
            if min(values) < 1:  # 0: Caffe2 divided by it, or read no input
                raise ArgumentError(
                    "argument %ss is %s; expected values >= 1 (one per kernel dim %s)"
                    % (name, values, self.kernel)
                )
        if self.order not in ("NCHW", "NHWC"):
            raise ArgumentError("argument order is '%s'; expected NCHW or NHWC" % self.order)
        if self.group < 1:
            raise ArgumentError("argument group is %d; it must be >= 1" % self.group)
        if self.group != 1 and (self.order != "NCHW" or max(self.dilation) != 1):
            raise ArgumentError(
                "group convolution needs order NCHW and no dilation (group=%d, order=%s, "
                "dilations=%s)" % (self.group, self.order, self.dilation)
            )
        if self.order == "NHWC" and d != 2:
            raise ArgumentError("Only 2d convolution is supported for NHWC storage type")
        if self.legacy_pad == SAME and max(self.dilation) != 1:
            raise ArgumentError("Dilation not supported for legacy padding.")

    # --- geometry -----------------------------------------------------------
    def canonical_inputs(self):
        """X and the filter in NCHW layout, validated against each other."""
        x, w = self.float_input(0), self.float_input(1)
        if x.size == 0 and self.forward:  # ConvPoolOpBase::SetOutputSize
            raise self.shape_error(0, "a non-empty input (CAFFE_ENFORCE(input.size() > 0))")
        d = len(self.kernel)
        if x.ndim != d + 2 or w.ndim != d + 2:
            raise self.shape_error(
                0 if x.ndim != d + 2 else 1,
                "%d dims for a %d-D kernel %s" % (d + 2, d, self.kernel),
            )
        self.same_dtype(0, 1)
        if self.order == "NHWC":
            x, w = np.moveaxis(x, -1, 1), np.moveaxis(w, -1, 1)
        channels, m = x.shape[1], w.shape[0]
        if w.shape[1] * self.group != channels or m % self.group:
            raise self.shape_error(
                1,
                "%d output channels divisible by group=%d, each reading %d input channels "
                "(input 0 has %d)" % (m, self.group, channels // self.group, channels),
            )
        if list(w.shape[2:]) != self.kernel:
            raise self.shape_error(1, "kernel dims %s" % self.kernel)
        return x, w

    def padding(self, spatial):
        """``[(head, tail)]`` per spatial dim (legacy SAME may give a negative tail)."""
        d = len(self.kernel)
        if self.legacy_pad == NOTSET:
            return list(zip(self.pads[:d], self.pads[d:]))
        return [
            size_and_pad(size, k, s, dil, self.legacy_pad, 0, 0)[:2]
            for size, k, s, dil in zip(spatial, self.kernel, self.stride, self.dilation)
        ]

    def output_spatial(self, spatial, pads):
        out = []
        for i, (size, (head, tail)) in enumerate(zip(spatial, pads)):
            span = self.dilation[i] * (self.kernel[i] - 1) + 1
            if size + head + tail < span:
                raise self.shape_error(
                    0,
                    "spatial dim %d of at least %d (padded: %d) for kernel %s, dilation %s"
                    % (i, span, size + head + tail, self.kernel, self.dilation),
                )
            out.append((size + head + tail - span) // self.stride[i] + 1)
        return out

    def windows(self, out):
        """For every kernel offset: the offset and the slices of padded X it reads."""
        for offset in itertools.product(*(range(k) for k in self.kernel)):
            slices = tuple(
                slice(k * dil, k * dil + (o - 1) * s + 1, s)
                for k, dil, o, s in zip(offset, self.dilation, out, self.stride)
            )
            yield offset, (slice(None), slice(None)) + slices

    def groups(self, channels, m):
        cg, mg = channels // self.group, m // self.group
        for g in range(self.group):
            yield slice(g * cg, (g + 1) * cg), slice(g * mg, (g + 1) * mg)

    def to_order(self, array):
        """An NCHW result in the op's order."""
        return np.moveaxis(array, 1, -1) if self.order == "NHWC" else array


def _pad(x, pads):
    """X with zeros added (or, for a negative pad, values cut) at each spatial end."""
    widths = [(0, 0), (0, 0)] + [(max(h, 0), max(t, 0)) for h, t in pads]
    xp = np.pad(x, widths)
    kept = tuple(slice(max(-h, 0), n - max(-t, 0)) for n, (h, t) in zip(xp.shape[2:], pads))
    return xp[(slice(None), slice(None)) + kept]


def _unpad(dxp, x_shape, pads):
    """The gradient of :func:`_pad`: X[i] sits at padded position ``i + head``."""
    dx = np.zeros(x_shape, dxp.dtype)
    x_part, xp_part = [slice(None)] * 2, [slice(None)] * 2
    for n, (h, t) in zip(x_shape[2:], pads):
        start, stop = max(-h, 0), n - max(-t, 0)  # X's values that were not cut
        x_part.append(slice(start, stop))
        xp_part.append(slice(start + h, stop + h))
    dx[tuple(x_part)] = dxp[tuple(xp_part)]
    return dx


@register("Conv", inputs=(2, 3), outputs=1)
class Conv(ConvBase):
    """``Y = X ⋆ filter (+ bias)``; see the module docstring for shapes and arguments."""

    def run(self):
        x, w = self.canonical_inputs()
        m = w.shape[0]
        bias = None
        if len(self.inputs) == 3:
            bias = self.float_input(2)
            if bias.shape != (m,):
                raise self.shape_error(2, "(%d,), one bias per output channel" % m)
        pads = self.padding(x.shape[2:])
        out = self.output_spatial(x.shape[2:], pads)
        xp = _pad(x, pads)
        y = np.zeros((x.shape[0], m) + tuple(out), x.dtype)
        for cs, ms in self.groups(x.shape[1], m):
            for offset, where in self.windows(out):
                part = np.tensordot(
                    w[(ms, slice(None)) + offset], xp[where][:, cs], axes=([1], [1])
                )
                y[:, ms] += np.moveaxis(part, 0, 1)
        if bias is not None:
            y += bias.reshape((m,) + (1,) * len(out))
        y = self.to_order(y)
        np.copyto(self.output(0, y.shape, x.dtype), y)


@register("ConvGradient", inputs=3, outputs=(1, 3))
class ConvGradient(ConvBase):
    """``[X, filter, dY] → [dW, (db), (dX)]`` (module docstring)."""

    forward = False

    def setup(self):
        super().setup()
        self.no_bias = self.args.single("no_bias", 0, int) != 0
        if self.no_bias and len(self.outputs) == 3:
            raise ArgumentError("If bias is not present, you should not have 3 grad output.")

    def run(self):
        x, w = self.canonical_inputs()
        dy = self.float_input(2)
        m = w.shape[0]
        pads = self.padding(x.shape[2:])
        out = self.output_spatial(x.shape[2:], pads)
        if self.order == "NHWC":
            dy = np.moveaxis(dy, -1, 1)
        expected = (x.shape[0], m) + tuple(out)
        if dy.shape != expected:
            if self.order == "NHWC":
                expected = expected[:1] + expected[2:] + expected[1:2]
            raise self.shape_error(2, "%s, the shape of Conv's output" % (expected,))
        xp = _pad(x, pads)
        dw = np.zeros_like(w)
        dxp = np.zeros_like(xp)
        batch_and_out = [0] + list(range(2, 2 + len(out)))
        for cs, ms in self.groups(x.shape[1], m):
            for offset, where in self.windows(out):
                window = xp[where][:, cs]
                dw[(ms, slice(None)) + offset] = np.tensordot(
                    dy[:, ms], window, axes=(batch_and_out, batch_and_out)
                )
                part = np.tensordot(w[(ms, slice(None)) + offset], dy[:, ms], axes=([0], [1]))
                dxp[where][:, cs] += np.moveaxis(part, 0, 1)
        outputs = [np.moveaxis(dw, 1, -1) if self.order == "NHWC" else dw]
        if not self.no_bias:
            outputs.append(dy.sum(axis=tuple(batch_and_out)))
        if len(self.outputs) > len(outputs):
            outputs.append(self.to_order(_unpad(dxp, x.shape, pads)))
        for i, value in enumerate(outputs):
            np.copyto(self.output(i, value.shape, x.dtype), value)


@register_gradient("Conv")
class GetConvGradient(GradientMaker):
    """``<Op>Gradient([I0, I1, GO0] → [GI1, GI2, GI0])`` (no GI2 and ``no_bias=1``
    without a bias input; no GI0 when ``no_gradient_to_input=1``)."""

    def get_gradient_defs(self):
        with_dx = not self.arg("no_gradient_to_input", 0)
        inputs = [self.I(0), self.I(1), self.GO(0)]
        kind = self.def_.type + "Gradient"
        if len(self.def_.input) == 3:
            outputs = [self.GI(1), self.GI(2)] + ([self.GI(0)] if with_dx else [])
            return [self.op_def(kind, inputs, outputs)]
        outputs = [self.GI(1)] + ([self.GI(0)] if with_dx else [])
        return [self.op_def(kind, inputs, outputs, no_bias=1)]


# E6's Conv1D, Conv2D and Conv3D are Conv under other names (conv_op.cc,
# conv_gradient_op.cc at 042e8ede4); their gradients are <name>Gradient.
for _name in ("Conv1D", "Conv2D", "Conv3D"):
    register(_name, inputs=(2, 3), outputs=1)(type(_name, (Conv,), {"__module__": __name__}))
    register(_name + "Gradient", inputs=3, outputs=(1, 3))(
        type(_name + "Gradient", (ConvGradient,), {"__module__": __name__})
    )
    register_gradient(_name)(GetConvGradient)
