"""NHWC2NCHW and NCHW2NHWC: an image batch between its two memory layouts.

``NHWC2NCHW(X → Y)``: X of shape (N, H, W, C) becomes Y (N, C, H, W) with
``Y[n, c, h, w] = X[n, h, w, c]``; ``NCHW2NHWC`` is the inverse. Each is the
other's gradient. ``brew.image_input`` with ``order='NCHW'`` appends a
``NHWC2NCHW`` to the images ``ImageInput`` decodes (they come out NHWC).

Caffe2: caffe2/operators/order_switch_ops.cc (0cdd09da6), which enforced a
4-D input and was registered for float only (float64: the extension).
"""

import numpy as np

from ..runtime.registry import register, register_gradient
from .base import Operator
from .gradient_maker import GradientMaker


class _OrderSwitch(Operator):
    #: where each output axis comes from in the input
    axes: tuple = ()
    layout = ""

    def run(self):
        x = self.float_input(0)  # NCHW2NHWCOp<float, CPUContext>: X.data<float>()
        if x.ndim != 4:
            raise self.shape_error(0, "a 4-D %s tensor" % self.layout)
        y = self.output(0, tuple(x.shape[a] for a in self.axes), x.dtype)
        np.copyto(y, x.transpose(self.axes))


@register("NHWC2NCHW", inputs=1, outputs=1)
class NHWC2NCHW(_OrderSwitch):
    """(N, H, W, C) → (N, C, H, W)."""

    axes = (0, 3, 1, 2)
    layout = "NHWC"


@register("NCHW2NHWC", inputs=1, outputs=1)
class NCHW2NHWC(_OrderSwitch):
    """(N, C, H, W) → (N, H, W, C)."""

    axes = (0, 2, 3, 1)
    layout = "NCHW"


class _GetInverseGradient(GradientMaker):
    """The gradient of a layout switch is the switch back."""

    inverse = ""

    def get_gradient_defs(self):
        return [self.op_def(self.inverse, [self.GO(0)], [self.GI(0)])]


@register_gradient("NHWC2NCHW")
class GetNHWC2NCHWGradient(_GetInverseGradient):
    inverse = "NCHW2NHWC"


@register_gradient("NCHW2NHWC")
class GetNCHW2NHWCGradient(_GetInverseGradient):
    inverse = "NHWC2NCHW"
