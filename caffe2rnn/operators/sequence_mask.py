"""SequenceMask: hide the positions past each sequence's length.

``X`` is viewed as a matrix split at ``axis`` (default 1): row ``i`` of the
``size_to_dim(axis)`` rows belongs to sequence ``i`` and its ``j``-th entry
(of ``size_from_dim(axis)``) is replaced by ``fill_val`` (default −∞) when
``j >= sequence_lengths[i]`` (mode ``"sequence"``). Attention uses it on
N × S × 1 logits with the encoder lengths, so the softmax gives padded
encoder positions weight 0 (Caffe2 2017-09 ``attention._calc_attention_weights``).

The gradient is the same op on ``dY`` with ``grad=1``: masked entries get 0.
Only mode ``"sequence"`` is implemented (``window``/``upper``/``lower``...
raise an ArgumentError).

Caffe2: caffe2/operators/boolean_mask_ops.cc (``SequenceMaskOp``).
"""

import math

import numpy as np

from ..errors import ArgumentError, DTypeError
from ..runtime.registry import register, register_gradient
from .base import Operator
from .gradient_maker import GradientMaker


@register("SequenceMask", inputs=(1, 2), outputs=1)
class SequenceMask(Operator):
    """Y = X with entries past each row's length set to ``fill_val``."""

    def setup(self):
        self.mode = self.args.single("mode", "sequence", str)
        self.axis = self.args.single("axis", 1, int)
        self.grad = self.args.single("grad", False, bool)
        self.fill_val = self.args.single("fill_val", -np.inf, float)
        if self.mode != "sequence":
            raise ArgumentError(
                "SequenceMask: mode %r is not implemented (only 'sequence')" % (self.mode,)
            )
        if self.args.has("batch") or self.args.has("repeat_from_axis"):
            raise ArgumentError("SequenceMask: 'batch'/'repeat_from_axis' are not implemented")

    def run(self):
        x = self.float_input(0)
        if len(self.inputs) < 2:
            raise ArgumentError("SequenceMask: sequence lengths not provided for mode 'sequence'")
        lengths = self.input(1)
        if lengths.dtype.kind not in "iu":
            raise DTypeError(
                "input 1 ('%s') is %s; sequence lengths must be integers"
                % (self.input_name(1), lengths.dtype)
            )
        if not -x.ndim <= self.axis < x.ndim:
            raise self.shape_error(
                0,
                "more than %d dims (argument axis=%d)"
                % (self.axis if self.axis >= 0 else -self.axis - 1, self.axis),
            )
        axis = self.axis % x.ndim
        left, right = math.prod(x.shape[:axis]), math.prod(x.shape[axis:])
        if lengths.size != left:
            raise self.shape_error(
                1,
                "(%d,): one length per row of input 0 ('%s')" % (left, self.input_name(0)),
                lengths.shape,
            )
        fill = 0.0 if self.grad else self.fill_val
        masked = np.arange(right)[None, :] >= lengths.reshape(left, 1)
        y = np.where(masked, np.asarray(fill, x.dtype), x.reshape(left, right))
        self.output(0, x.shape, x.dtype)[...] = y.reshape(x.shape)


@register_gradient("SequenceMask")
class GetSequenceMaskGradient(GradientMaker):
    """SequenceMask([GO0, (I1)] → [GI0], grad=1) with the forward arguments."""

    copy_arguments = False

    def get_gradient_defs(self):
        inputs = [self.GO(0)] + ([self.I(1)] if len(self.def_.input) > 1 else [])
        op = self.op_def("SequenceMask", inputs, [self.GI(0)])
        op.arg.extend(self.def_.arg)  # the forward arguments, then grad=1
        op.arg.extend(self.op_def("", [], [], grad=True).arg)
        return [op]
