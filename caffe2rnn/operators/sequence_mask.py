"""SequenceMask: hide the entries a mask function picks, as Caffe2's SequenceMaskOp.

``X`` is viewed as a matrix split at ``axis`` (default 1): ``N`` rows (the
dims before ``axis``) of ``M`` entries (the dims from ``axis`` on). Entry
``(i, j)`` becomes ``fill_val`` (default −∞; 0 with ``grad=1``) when the
``mode`` (required) says so:

* ``"sequence"``: ``j >= lengths[i]`` (input 1, int32 lengths);
* ``"window"``: ``j`` outside ``[c[i] − radius, c[i] + radius]`` (input 1, int32
  window centres; ``radius`` defaults to 10);
* ``"upper"`` ``j > i``, ``"lower"`` ``j < i``, ``"upperdiag"`` ``j >= i``,
  ``"lowerdiag"`` ``j <= i``.

``batch`` (an axis before ``axis``) masks each of the
``size_to_dim(batch + 1)`` blocks separately: ``i`` then counts rows within
the block (the dims strictly between ``batch`` and ``axis``).
``repeat_from_axis`` (sequence mode, no ``batch``) applies one mask per
``(i, j)`` to every entry of the dims from that axis on. Attention uses mode
``"sequence"`` on N × S × 1 logits with the encoder lengths, so the softmax
gives padded encoder positions weight 0 (Caffe2 2017-09
``attention._calc_attention_weights``).

The gradient is the same op on ``dY`` with the forward arguments and
``grad=1``: masked entries get 0.

One check Caffe2 did not make: a row index past the end of the lengths or
the window centres is refused in both modes (the C++ checked it in sequence
mode only — "Out of bound." — and read past the centres in window mode).

Caffe2: caffe2/operators/boolean_mask_ops.{h,cc} (``SequenceMaskOp``, 042e8ede4).
"""

import math

import numpy as np

from ..errors import ArgumentError, DTypeError, EnforceNotMet
from ..runtime.registry import register, register_gradient
from .base import Operator
from .gradient_maker import GradientMaker

#: mode -> masked(i, j) on index grids (boolean_mask_ops.cc's functors)
_TRIANGLES = {
    "upper": lambda i, j: j > i,
    "lower": lambda i, j: j < i,
    "upperdiag": lambda i, j: j >= i,
    "lowerdiag": lambda i, j: j <= i,
}


@register("SequenceMask", inputs=(1, 2), outputs=1)
class SequenceMask(Operator):
    """Y = X with the entries the mode picks set to ``fill_val`` (module docstring)."""

    def setup(self):
        self.axis = self.args.single("axis", 1, int)
        self.radius = self.args.single("radius", 10, int)
        self.grad = self.args.single("grad", False, bool)
        self.fill_val = self.args.single("fill_val", -np.inf, float)
        # GetArgument(operator_def, "mode").s(): required
        if not self.args.has("mode"):
            raise ArgumentError(
                "Argument named mode does not exist in operator SequenceMask (one of "
                "sequence, window, upper, lower, upperdiag, lowerdiag)"
            )
        self.mode = self.args.single("mode", "", str)
        self.batch = self.args.single("batch", 0, int) if self.args.has("batch") else None
        self.repeat_from = None
        if self.args.has("repeat_from_axis"):
            if self.mode != "sequence":
                raise EnforceNotMet("repeat_from_axis currently only supported in sequence mode.")
            if self.batch is not None:
                raise EnforceNotMet("repeat_from_axis and batch not currently supported together.")
            self.repeat_from = self.args.single("repeat_from_axis", -1, int)

    def _canonical(self, x, axis, name):
        if not -x.ndim <= axis < x.ndim:
            raise self.shape_error(
                0,
                "more than %d dims (argument %s=%d)"
                % (axis if axis >= 0 else -axis - 1, name, axis),
            )
        return axis % x.ndim

    def _per_row(self, rows):
        """Input 1 (int32 lengths or window centres), one value per row index."""
        if len(self.inputs) < 2:
            raise ArgumentError(
                "SequenceMask: mode '%s' takes input 1 (%s)"
                % (self.mode, "sequence lengths" if self.mode == "sequence" else "window centres")
            )
        values = self.input(1)
        if values.dtype != np.int32:  # data<int>()
            raise DTypeError(
                "input 1 ('%s') is %s; SequenceMask reads it as int32"
                % (self.input_name(1), values.dtype)
            )
        values = values.reshape(-1)
        if rows > values.size:  # SequenceFunctor: CAFFE_ENFORCE(i < len_, "Out of bound.")
            raise self.shape_error(
                1, "at least %d values, one per row: Out of bound." % rows, values.shape
            )
        return values[:rows].astype(np.int64)

    def _mask(self, rows, cols):
        i = np.arange(rows)[:, None]
        j = np.arange(cols)[None, :]
        if self.mode == "sequence":
            return j >= self._per_row(rows)[:, None]
        if self.mode == "window":
            c = self._per_row(rows)[:, None]
            return (j > c + self.radius) | (j < c - self.radius)
        if self.mode in _TRIANGLES:
            return _TRIANGLES[self.mode](i, j)
        raise EnforceNotMet("Unsupported mode for SequenceMaskOp!")

    def run(self):
        x = self.float_input(0)  # DispatchHelper<TensorTypes<float>>
        axis = self._canonical(x, self.axis, "axis")
        right = math.prod(x.shape[axis:])
        fill = np.asarray(0.0 if self.grad else self.fill_val, x.dtype)
        if self.batch is not None:
            batch = self._canonical(x, self.batch, "batch")
            if not batch < axis:
                raise EnforceNotMet("SequenceMask: batch %d must be < axis %d" % (batch, axis))
            blocks = math.prod(x.shape[: batch + 1])
            rows = math.prod(x.shape[batch + 1 : axis])
            masked = self._mask(rows, right)[None, :, :]
            view = x.reshape(blocks, rows, right)
        elif self.repeat_from is not None:
            repeat = self._canonical(x, self.repeat_from, "repeat_from_axis")
            rows = math.prod(x.shape[:axis])
            repeated = math.prod(x.shape[repeat:])
            masked = self._mask(rows, right // repeated)[:, :, None]
            view = x.reshape(rows, right // repeated, repeated)
        else:
            rows = math.prod(x.shape[:axis])
            masked = self._mask(rows, right)
            view = x.reshape(rows, right)
        y = np.where(masked, fill, view)
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
