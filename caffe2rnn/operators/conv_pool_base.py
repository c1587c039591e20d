"""Caffe2's ``ConvPoolOpBase``: the arguments and output sizes Conv and the pooling ops share.

Arguments: the kernel as ``kernels`` (a list), ``kernel`` (square: two equal
values) or ``kernel_h`` + ``kernel_w``; likewise ``strides`` / ``stride`` /
``stride_h`` + ``stride_w`` and ``dilations`` / ``dilation`` / ``dilation_h`` +
``dilation_w`` (both default 1 per kernel dim); the pads as ``pads`` (heads,
then tails: ``[t, l, b, r]`` in 2-D), ``pad`` (the same everywhere) or
``pad_t`` + ``pad_l`` + ``pad_b`` + ``pad_r`` (default 0); ``order`` (``NCHW``
or ``NHWC``) and ``legacy_pad``.

Each output size along a spatial dim of size ``S`` (kernel ``K``, stride ``s``,
dilation ``d``, span ``D = d·(K − 1) + 1``) depends on ``legacy_pad``
(caffe2_legacy.proto's ``LegacyPadding``; ``ComputeSizeAndPad``):

* ``0`` (NOTSET): the given pads; ``O = (S + head + tail − D) // s + 1``, and
  ``S + head + tail`` must be at least ``D``;
* ``1`` (VALID): no padding; ``O = (S − D) / s + 1``, C++ division (towards zero);
* ``2`` (SAME): ``O = ceil(S / s)``, the padding ``(O − 1)·s + K − S`` split with
  the odd one at the tail (no dilation);
* ``3`` (CAFFE_LEGACY_POOLING): Caffe's pooling rule, ``O = ceil((S + 2·head −
  K) / s) + 1``, minus one if the last window would start in the padding; the
  tail pad becomes whatever that needs.

:class:`ConvPoolArguments` reads them as the C++ constructor did, step by
step — including its surprises: ``kernel`` *resizes* a ``kernels`` list to two
entries, ``kernel_h``/``kernel_w`` are *appended* to it; ``global_pooling``
forbids pads, strides and dilations; ``group`` and ``shared_buffer`` are read
by every op of the family (``shared_buffer`` only chose where Caffe2 kept
Conv's column buffer, so it changes nothing here). And: the kernel must be set
and the pads must be >= 0 **only for an op whose name** (``OperatorDef.name``,
not its type) starts with ``Conv`` or contains ``Pool`` — "a few other ops,
like PadImage, are also using this base class". An unnamed Conv with a
negative pad runs (it crops, as in Caffe2); the kernel is checked when the op
runs (``RunOnDevice``: every kernel dim > 0 unless ``global_pooling``).

Caffe2: caffe2/operators/conv_pool_op_base.h, caffe2/proto/caffe2_legacy.proto
(at 0cdd09da6; the same at 23bd132c1 and 042e8ede4).
"""

import math

from ..errors import ArgumentError, ShapeError

NOTSET, VALID, SAME, CAFFE_LEGACY_POOLING = 0, 1, 2, 3
LEGACY_PADDINGS = {NOTSET: "NOTSET", VALID: "VALID", SAME: "SAME"}
LEGACY_PADDINGS[CAFFE_LEGACY_POOLING] = "CAFFE_LEGACY_POOLING"
_PAD_NAMES = ("pad_t", "pad_l", "pad_b", "pad_r")


class ConvPoolArguments:
    """The arguments of ``ConvPoolOpBase``, read and checked as its constructor did.

    Attributes: ``legacy_pad``, ``global_pooling`` (bool), ``kernel``,
    ``stride``, ``dilation`` (one value per kernel dim), ``pads`` (heads then
    tails; for VALID/SAME whatever was given), ``group``, ``order``,
    ``shared_buffer``.
    """

    def __init__(self, op):
        args, where = op.args, op.op_type
        self.legacy_pad = args.single("legacy_pad", NOTSET, int)
        self.global_pooling = args.single("global_pooling", 0, int) != 0
        kernel = args.repeated("kernels", kind=int)
        dilation = args.repeated("dilations", kind=int)
        stride = args.repeated("strides", kind=int)
        pads = args.repeated("pads", kind=int)
        self.group = args.single("group", 1, int)
        order = args.single("order", "NCHW", str)
        # StringToStorageOrder (caffe2/core/types.h) also took lower case
        self.order = {"nchw": "NCHW", "nhwc": "NHWC"}.get(order, order)
        self.shared_buffer = args.single("shared_buffer", 0, int)
        legacy = self.legacy_pad in (VALID, SAME)
        no_pads = (
            "%s: If you use legacy padding VALID or SAME, you should not specify any "
            "specific padding values." % where
        )
        if legacy and args.has("pads"):
            raise ArgumentError(no_pads)
        kernel = _old_style(args, "kernel", kernel)
        stride = _old_style(args, "stride", stride)
        dilation = _old_style(args, "dilation", dilation)
        if args.has("pad"):
            if legacy:
                raise ArgumentError(no_pads)
            pads = _resized(pads, 4, args.single("pad", 0, int))
        elif all(args.has(n) for n in _PAD_NAMES):
            if legacy:
                raise ArgumentError(no_pads)
            pads = pads + [args.single(n, 0, int) for n in _PAD_NAMES]
        kernel = kernel or [0, 0]
        stride = stride or [1] * len(kernel)
        pads = pads or [0] * (2 * len(kernel))
        dilation = dilation or [1] * len(kernel)
        for name, values in (("strides", stride), ("dilations", dilation)):
            if len(values) != len(kernel):
                raise ArgumentError(
                    "%s: %d %s for a %d-D kernel %s"
                    % (where, len(values), name, len(kernel), kernel)
                )
        if not legacy and len(pads) != 2 * len(kernel):
            raise ArgumentError(
                "%s: %d pads for a %d-D kernel %s; expected %d (heads, then tails)"
                % (where, len(pads), len(kernel), kernel, 2 * len(kernel))
            )
        if self.global_pooling:
            for i in range(len(kernel)):
                if pads[i] or pads[len(kernel) + i] or dilation[i] != 1 or stride[i] != 1:
                    raise ArgumentError(
                        "%s: If global_pooling is set dilation and stride shouldn't be set "
                        "(nor pads): strides %s, dilations %s, pads %s"
                        % (where, stride, dilation, pads)
                    )
        name = op.def_.name
        if name.startswith("Conv") or "Pool" in name:
            for i in range(len(kernel)):
                if pads[i] < 0 or pads[len(kernel) + i] < 0:
                    raise ArgumentError("%s '%s': pads %s must be >= 0" % (where, name, pads))
                if not kernel[i]:
                    raise ArgumentError(
                        "%s '%s': If you are doing convolution or pooling, you will need to "
                        "set explicitly the kernel size." % (where, name)
                    )
        for what, values in (("kernel", kernel), ("dilation", dilation), ("stride", stride)):
            if min(values) < 0:
                raise ArgumentError("%s: %s %s must be >= 0" % (where, what, values))
        if self.group != 1 and set(dilation) != {1}:
            raise ArgumentError(
                "%s: When group is used, dilation should not be set at the same time." % where
            )
        self.kernel, self.stride, self.dilation, self.pads = kernel, stride, dilation, pads

    def check_kernel(self, op):
        """``ConvPoolOpBase::RunOnDevice``: every kernel dim > 0 (unless global)."""
        if not self.global_pooling and min(self.kernel) <= 0:
            raise ArgumentError(
                "%s: kernel %s: every kernel dim must be > 0 (argument kernel, kernels or "
                "kernel_h and kernel_w)" % (op.op_type, self.kernel)
            )


def _resized(values, n, fill):
    """C++ ``vector::resize(n, fill)``: keep the first n, pad with ``fill``."""
    return (list(values) + [fill] * n)[:n]


def _old_style(args, name, values):
    """``<name>`` resizes the list to two entries; ``<name>_h`` + ``<name>_w``
    are appended to it (ConvPoolOpBase's constructor)."""
    if args.has(name):
        return _resized(values, 2, args.single(name, 0, int))
    pair = (name + "_h", name + "_w")
    if all(args.has(n) for n in pair):
        return list(values) + [args.single(n, 0, int) for n in pair]
    return list(values)


def spatial_argument(args, name, default):
    """A per-dimension list from ``<name>`` (square: two values), ``<name>_h`` +
    ``<name>_w``, or the list ``<name>s``; ``default`` when none is given."""
    if args.has(name):
        return [args.single(name)] * 2
    pair = (name + "_h", name + "_w")
    if all(args.has(n) for n in pair):
        return [args.single(n) for n in pair]
    return args.repeated(name + "s") or list(default)


def pads_argument(args, legacy_pad, dims):
    """The pads, heads then tails, for ``dims`` spatial dims (``pad`` fills all of
    them); ``[]`` when none is given. Legacy VALID and SAME padding take none."""
    pads = args.repeated("pads")
    if args.has("pad"):
        pads = [args.single("pad")] * (2 * dims)
    elif all(args.has(n) for n in _PAD_NAMES):
        pads = [args.single(n) for n in _PAD_NAMES]
    if pads and legacy_pad in (VALID, SAME):
        raise ArgumentError(
            "If you use legacy padding VALID or SAME, you should not specify "
            "any specific padding values."
        )
    return pads


def legacy_pad_argument(args, allowed):
    """``legacy_pad`` (default NOTSET), one of ``allowed``."""
    legacy_pad = args.single("legacy_pad", NOTSET, int)
    if legacy_pad not in allowed:
        raise ArgumentError(
            "argument legacy_pad is %d; supported: %s"
            % (legacy_pad, ", ".join("%d (%s)" % (v, LEGACY_PADDINGS[v]) for v in allowed))
        )
    return legacy_pad


def _c_div(a, b):
    """C++ integer division: the quotient truncated towards zero."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def size_and_pad(size, kernel, stride, dilation, legacy_pad, head, tail):
    """``(head, tail, out)`` for one spatial dim (module docstring), or a ShapeError
    naming the dim's sizes when Caffe2 enforced against them or would have
    made a tensor of negative size."""
    span = dilation * (kernel - 1) + 1
    if legacy_pad == NOTSET:
        if size + head + tail < span:  # CAFFE_ENFORCE_GE(in_size + pads, dkernel)
            raise ShapeError(
                "a spatial dim of %d (padded: %d) is smaller than the kernel's span %d"
                % (size, size + head + tail, span)
            )
        out = (size + head + tail - span) // stride + 1
    elif legacy_pad == VALID:
        head = tail = 0
        out = _c_div(size - span, stride) + 1
    elif legacy_pad == SAME:
        if dilation != 1:
            raise ArgumentError("Dilation not supported for legacy padding.")
        needed = ((size + stride - 1) // stride - 1) * stride + kernel - size
        head = _c_div(needed, 2)
        tail = needed - head
        out = _c_div(size + needed - span, stride) + 1
    else:  # CAFFE_LEGACY_POOLING
        if head < 0:
            raise ArgumentError("CAFFE_LEGACY_POOLING needs pads >= 0; got %d" % head)
        out = math.ceil((size + 2 * head - kernel) / stride + 1)
        if head > 0 and (out - 1) * stride >= size + head:
            out -= 1
        standard = int((size + 2 * head - kernel) / stride + 1)
        tail = head + stride * (out - standard)
    if out < 0:
        raise ShapeError(
            "a spatial dim of %d gives an output size of %d for kernel %d, stride %d "
            "and legacy_pad %d" % (size, out, kernel, stride, legacy_pad)
        )
    return head, tail, out
