"""``ClipTensorByScaling``: scale a tensor down when a norm passes a threshold (E7).

``ClipTensorByScaling([input_tensor, val] → [clipped])``, argument
``threshold``::

    clipped = input_tensor · (threshold / val)    when val > threshold
    clipped = input_tensor                        otherwise

``val`` is a 1-element tensor, usually the tensor's norm computed before
(gradient clipping); the op may run in place (``input_tensor`` → ``clipped``).

Caffe2: caffe2/sgd/clip_tensor_op.{h,cc} at 929c33cee (the op came after
042e8ede4): registered for float, no gradient (``SHOULD_NOT_DO_GRADIENT``).
Its refusals (``CAFFE_ENFORCE``), each here with the op's input or argument
named: a ``threshold`` that is not greater than 0 ("Threshold must be greater
than 0", checked when the op is created; the default, 0.0, is refused), an
empty ``input_tensor`` (``CAFFE_ENFORCE_GT(input_tensor.size(), 0)``) and a
``val`` of other than one element (``CAFFE_ENFORCE_EQ(val.size(), 1)``). The
ratio is a float32 and the comparison float32 against float32, as in the C++;
with caffe2rnn's float64 extension, both inputs float64, in float64.
"""

from ..errors import ArgumentError, ShapeError
from ..runtime.registry import register, register_gradient
from .base import Operator
from .gradient_maker import ShouldNotDoGradient


@register("ClipTensorByScaling", inputs=2, outputs=1, inplace=[(0, 0)])
class ClipTensorByScaling(Operator):
    """``[input_tensor, val] → [clipped]`` (module docstring)."""

    def setup(self):
        self.threshold = self.args.single("threshold", 0.0, float)
        if not self.threshold > 0:  # CAFFE_ENFORCE_GT(threshold_, 0, ...) in the constructor
            raise ArgumentError(
                "ClipTensorByScaling: argument threshold is %g: Threshold must be greater than 0"
                % self.threshold
            )

    def run(self):
        x = self.float_input(0)
        if x.size == 0:  # CAFFE_ENFORCE_GT(input_tensor.size(), 0)
            raise self.shape_error(0, "a tensor with at least one element")
        val = self.float_input(1)
        if val.size != 1:  # CAFFE_ENFORCE_EQ(val.size(), 1)
            raise ShapeError(
                "ClipTensorByScaling: input 1 ('%s') has %d elements; expected 1 (the value "
                "compared with the threshold)" % (self.input_name(1), val.size)
            )
        self.same_dtype(0, 1)
        t = x.dtype.type
        value, threshold = val.reshape(-1)[0], t(self.threshold)
        out = self.output(0, x.shape, x.dtype)
        if value > threshold:
            ratio = threshold / value
            out[...] = x * ratio
        elif out is not x:
            out[...] = x


register_gradient("ClipTensorByScaling")(ShouldNotDoGradient)
