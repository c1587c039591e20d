"""Conv, the pooling ops and PadImage read their arguments as Caffe2's ``ConvPoolOpBase`` did.

``cpp_conv_pool_base`` is the constructor of ``ConvPoolOpBase`` (caffe2/operators/
conv_pool_op_base.h at 0cdd09da6; the same at 23bd132c1 and 042e8ede4) written again in Python:
the list arguments, then the old single-value ones (``kernel`` *resizes* the list to 2, ``kernel_h``
+ ``kernel_w`` are *appended*), the defaults, the enforces — pads >= 0 and a kernel only for an op
whose **name** starts with ``Conv`` or contains ``Pool``. ``cpp_run_checks`` adds what the ops
enforced when they ran (``RunOnDevice``: kernel > 0; ``SetOutputSize``: a non-empty input;
``ComputeSizeAndPad``: ``in + pads >= kernel``) and their own constructors (PoolOp: no dilation,
pads < kernel; PoolGradientOp: nothing; PadImage: no legacy pad, dilation or stride).
"""

import numpy as np
import pytest

from caffe2rnn import core, errors
from caffe2rnn.operators.conv_pool_base import ConvPoolArguments
from caffe2rnn.runtime import Workspace


class Refused(Exception):
    pass


def enforce(condition):
    if not condition:
        raise Refused()


def cpp_conv_pool_base(args, name=""):
    """``(kernel, stride, dilation, pads)`` as ConvPoolOpBase's constructor left them."""
    legacy_pad = args.get("legacy_pad", 0)
    global_pooling = args.get("global_pooling", 0)
    kernel = list(args.get("kernels", []))
    dilation = list(args.get("dilations", []))
    stride = list(args.get("strides", []))
    pads = list(args.get("pads", []))
    group = args.get("group", 1)
    if legacy_pad in (1, 2):
        enforce("pads" not in args)

    def resize(values, n, fill):
        values = values[:n]
        return values + [fill] * (n - len(values))

    if "kernel" in args:
        kernel = resize(kernel, 2, args["kernel"])
    elif "kernel_h" in args and "kernel_w" in args:
        kernel += [args["kernel_h"], args["kernel_w"]]
    if "stride" in args:
        stride = resize(stride, 2, args["stride"])
    elif "stride_h" in args and "stride_w" in args:
        stride += [args["stride_h"], args["stride_w"]]
    if "dilation" in args:
        dilation = resize(dilation, 2, args["dilation"])
    elif "dilation_h" in args and "dilation_w" in args:
        dilation += [args["dilation_h"], args["dilation_w"]]
    if "pad" in args:
        enforce(legacy_pad not in (1, 2))
        pads = resize(pads, 4, args["pad"])
    elif all(k in args for k in ("pad_t", "pad_l", "pad_b", "pad_r")):
        enforce(legacy_pad not in (1, 2))
        pads += [args["pad_t"], args["pad_l"], args["pad_b"], args["pad_r"]]
    if not kernel:
        kernel = [0, 0]
    if not stride:
        stride = [1] * len(kernel)
    if not pads:
        pads = [0] * (2 * len(kernel))
    if not dilation:
        dilation = [1] * len(kernel)
    enforce(len(stride) == len(kernel))
    enforce(len(dilation) == len(kernel))
    if legacy_pad not in (1, 2):
        enforce(len(pads) == 2 * len(kernel))
    if global_pooling:
        for d in range(len(kernel)):
            enforce(pads[2 * d] == 0 and pads[2 * d + 1] == 0)
            enforce(dilation[d] == 1 and stride[d] == 1)
    if name.find("Conv") == 0 or "Pool" in name:
        for d in range(len(kernel)):
            enforce(pads[d] >= 0)
            enforce(pads[len(kernel) + d] >= 0)
            enforce(kernel[d])
    for d in range(len(kernel)):
        enforce(kernel[d] >= 0 and dilation[d] >= 0 and stride[d] >= 0)
    if group != 1:
        for d in range(len(kernel)):
            enforce(dilation[d] == 1)
    return kernel, stride, dilation, pads


class _Op:
    """What ConvPoolArguments reads from: an op's args, type and definition."""

    def __init__(self, op_type, name, args):
        from caffe2rnn.runtime.arguments import ArgumentHelper

        self.def_ = core.CreateOperator(op_type, [], [], name=name, **args)
        self.args = ArgumentHelper(self.def_)
        self.op_type = op_type


ARGUMENTS = [
    {"kernel": 3},
    {"kernels": [3, 3, 3], "kernel": 2},  # resize(2, 2) keeps the first two: [3, 3]
    {"kernels": [3], "kernel": 2},  # ... and pads the list: [3, 2]
    {"kernels": [3], "kernel_h": 2, "kernel_w": 4},  # appended: [3, 2, 4]
    {"kernel": 3, "strides": [2, 2], "stride": 1},
    {"kernel": 3, "pad": -1},
    {"kernel": 3, "pads": [1, 1, 1], "pad": 2},
    {"kernel": 3, "pad_t": 1, "pad_l": 0, "pad_b": -2, "pad_r": 1},
    {"kernel": 3, "pad_t": 1, "pad_l": 0},  # not all four: ignored
    {"kernel_h": 3},  # not both: ignored, the kernel is {0, 0}
    {"stride": 2},
    {"kernel": 3, "legacy_pad": 1, "pads": [0, 0, 0, 0]},
    {"kernel": 3, "legacy_pad": 2, "pad": 1},
    {"kernel": 3, "strides": [1]},
    {"kernel": 3, "global_pooling": 1, "stride": 2},
    {"global_pooling": 1},
    {"kernel": 3, "group": 2, "dilation": 2},
    {"kernel": -1},
]


@pytest.mark.parametrize("args", ARGUMENTS, ids=lambda a: repr(a))
@pytest.mark.parametrize("name", ["", "Conv_1", "conv_1", "MaxPool_2", "features"])
def test_arguments_are_read_like_the_cpp_constructor(args, name):
    try:
        want = cpp_conv_pool_base(args, name)
    except Refused:
        with pytest.raises(errors.ArgumentError):
            ConvPoolArguments(_Op("Conv", name, args))
        return
    a = ConvPoolArguments(_Op("Conv", name, args))
    assert (a.kernel, a.stride, a.dilation, a.pads) == want


def direct_conv(x, w, pads):
    """Y[n, m, i, j] = Σ_c Σ_a Σ_b W[m, c, a, b] · Xp[n, c, i + a, j + b]; a negative pad
    removes rows/columns (the C++ im2col reads nothing there)."""
    t, left, b, r = pads
    xp = np.pad(x, ((0, 0), (0, 0), (max(t, 0), max(b, 0)), (max(left, 0), max(r, 0))))
    xp = xp[:, :, max(-t, 0) : xp.shape[2] - max(-b, 0), max(-left, 0) : xp.shape[3] - max(-r, 0)]
    kh, kw = w.shape[2:]
    out = np.zeros((x.shape[0], w.shape[0], xp.shape[2] - kh + 1, xp.shape[3] - kw + 1))
    for i in range(out.shape[2]):
        for j in range(out.shape[3]):
            out[:, :, i, j] = np.einsum("ncab,mcab->nm", xp[:, :, i : i + kh, j : j + kw], w)
    return out


def run(op_type, inputs, outputs=("Y",), **args):
    ws = Workspace()
    for k, v in inputs.items():
        ws.feed(k, v)
    ws.run_operator_once(core.CreateOperator(op_type, list(inputs), list(outputs), **args))
    return ws.fetch(outputs[0])


def test_an_unnamed_conv_with_a_negative_pad_crops():
    rng = np.random.default_rng(0)
    x, w = rng.normal(size=(1, 2, 6, 6)), rng.normal(size=(3, 2, 2, 2))
    y = run("Conv", {"X": x, "W": w}, kernel=2, pad_t=-1, pad_l=1, pad_b=0, pad_r=-2)
    np.testing.assert_allclose(y, direct_conv(x, w, (-1, 1, 0, -2)), rtol=1e-12)
    with pytest.raises(errors.ArgumentError, match="pads"):
        run("Conv", {"X": x, "W": w}, kernel=2, pad=-1, name="Conv_3")


def test_conv_refuses_an_empty_batch():
    x, w = np.zeros((0, 2, 4, 4), np.float32), np.ones((3, 2, 2, 2), np.float32)
    for op_type in ("Conv", "Conv3D"):
        kernel = {"kernel": 2} if op_type == "Conv" else {"kernels": [1, 2, 2]}
        xx = x if op_type == "Conv" else x[:, :, None]
        ww = w if op_type == "Conv" else w[:, :, None]
        with pytest.raises(errors.ShapeError, match="non-empty"):
            run(op_type, {"X": xx, "W": ww}, **kernel)


def test_pool_gradient_accepts_and_ignores_a_dilation():
    x = np.random.default_rng(1).normal(size=(1, 1, 4, 4)).astype(np.float32)
    y = run("AveragePool", {"X": x}, kernel=2, stride=2)
    dy = np.ones_like(y)
    blobs = {"X": x, "Yp": y, "dY": dy}
    plain = run("AveragePoolGradient", blobs, ["dX"], kernel=2, stride=2)
    dilated = run("AveragePoolGradient", blobs, ["dX"], kernel=2, stride=2, dilation=2)
    np.testing.assert_array_equal(dilated, plain)
    np.testing.assert_array_equal(plain, np.full((1, 1, 4, 4), 0.25, np.float32))
    with pytest.raises(errors.ArgumentError, match="dilation"):
        run("AveragePool", {"X": x}, kernel=2, stride=2, dilation=2)


@pytest.mark.parametrize(
    "pads, refused",
    [
        ((-1, 0, -2, 0), False),
        ((-2, 0, -2, 0), True),
        ((0, -3, 0, -1), True),
        ((0, 0, 0, -3), False),
    ],
)
def test_pad_image_keeps_at_least_one_row_and_column(pads, refused):
    x = np.arange(16.0, dtype=np.float32).reshape(1, 1, 4, 4)
    t, left, b, r = pads
    args = dict(pad_t=t, pad_l=left, pad_b=b, pad_r=r)
    # ComputeSizeAndPad(NOTSET): CAFFE_ENFORCE_GE(in + head + tail, dkernel = 1)
    assert refused == (4 + t + b < 1 or 4 + left + r < 1)
    if refused:
        with pytest.raises(errors.ShapeError, match="at least"):
            run("PadImage", {"X": x}, **args)
        return
    y = run("PadImage", {"X": x}, **args)
    np.testing.assert_array_equal(y, x[:, :, -t : 4 + b or None, -left : 4 + r or None])


def test_pad_image_value_is_a_float():
    x = np.zeros((1, 1, 2, 2), np.float32)
    with pytest.raises(errors.ArgumentTypeError, match="'value' must be a float"):
        run("PadImage", {"X": x}, pad=1, value=2)
    assert run("PadImage", {"X": x}, pad=1, value=2.0)[0, 0, 0, 0] == 2.0


def test_pad_image_gradient_does_not_check_the_stride():
    dy = np.ones((1, 1, 4, 4), np.float32)
    dx = run("PadImageGradient", {"dY": dy}, pad=1, stride=2)
    np.testing.assert_array_equal(dx, np.ones((1, 1, 2, 2), np.float32))
    with pytest.raises(errors.ArgumentError, match="stride"):
        run("PadImage", {"X": dy}, pad=1, stride=2)
