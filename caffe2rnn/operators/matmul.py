"""Matrix products: MatMul (two matrices) and BatchMatMul (one product per batch entry).

``MatMul([A, B] → Y)``: ``Y = op(A) · op(B)``, where ``op`` transposes when
``trans_a`` / ``trans_b`` is set. Until Caffe2 c5307e6f9 (2017-10-10) A and B
had to be 2-D; from then (the era policy ``matmul_axes``, E6) each is read as
a matrix by flattening at ``axis_a`` / ``axis_b`` (default 1: rows are the dims
before the axis, columns the dims from it; negative axes count from the end),
and an optional third input gives Y its shape (the gradient ops pass the
forward input there, so dA comes back in A's N-D shape). ``model_helper``
lists MatMul among the ops a model may call; Caffe2's ``layers`` build
``fc_without_bias`` with it.

``BatchMatMul``: ``Y[c] = op(A[c]) · op(B[c])`` for every batch index c, where
``op`` transposes the last two dims. Attention uses it to weight the encoder
outputs: (N, E, T) · (N, T, 1) → (N, E, 1). Until 0cdd09da6 (E5) A and B are
3-D with the same batch size. From 042e8ede4 (E6, the era policy
``batch_matmul_broadcast``; today's) they are N-D: ``[B..., M, K] · [B..., K,
N]`` with equal ranks >= 2, and with ``broadcast=1`` also of different ranks —
the shorter one's batch dims must equal the *last* batch dims of the longer
one (no size-1 stretching), a 1-D A is a row ``[1, K]`` and a 1-D B a column
``[K, 1]`` whose M or N is then left out of Y, and two vectors give their dot
product as a ``(1,)`` tensor. Caffe2 had no gradient for ``broadcast=1``
("Gradient is currently not supported with broadcast=1 for BatchMatMul").

Caffe2: caffe2/operators/matmul_op.{h,cc} and batch_matmul_op.{h,cc} (at
0cdd09da6; MatMul's axes at 042e8ede4).
"""

import math

import numpy as np

from .. import eras
from ..errors import ArgumentError, EnforceNotMet, GradientError, ShapeError
from ..runtime.registry import register, register_gradient
from .base import Operator
from .gradient_maker import GradientMaker


@register("BatchMatMul", inputs=2, outputs=1)
class BatchMatMul(Operator):
    """A · B batch by batch, with optional transposes (module docstring)."""

    def setup(self):
        self.trans_a = self.args.single("trans_a", 0, int)
        self.trans_b = self.args.single("trans_b", 0, int)
        self.nd = self.era is None or eras.get(self.era).batch_matmul_broadcast
        if self.nd:
            self.broadcast = self.args.single("broadcast", 0, int)
            self.args.single("use_scratch", 0, int)  # where Caffe2 kept a scratch buffer

    def run(self):
        a, b = self.float_input(0), self.float_input(1)
        dtype = self.same_dtype(0, 1)
        if not self.nd:
            self.run_3d(a, b, dtype)
            return
        if not self.broadcast and (a.ndim != b.ndim or a.ndim < 2):
            raise ShapeError(
                "BatchMatMul: Inputs with dimensions A = %d and B = %d is not supported with "
                "broadcast=0. Did you forget to set the broadcast flag?" % (a.ndim, b.ndim)
            )
        if a.ndim == 0 or b.ndim == 0:
            raise self.shape_error(0 if a.ndim == 0 else 1, "at least 1 dimension")
        if a.ndim == 1 and b.ndim == 1:
            if a.shape != b.shape:
                raise self.shape_error(
                    1,
                    "%s: Vector-vector product requires each of the vectors to be the same "
                    "size." % (a.shape,),
                )
            self.output(0, (1,), dtype)[0] = np.dot(a, b)
            return
        a_vec, b_vec = a.ndim == 1, b.ndim == 1
        a = a.reshape(1, -1) if a_vec else a
        b = b.reshape(-1, 1) if b_vec else b
        inner = min(a.ndim, b.ndim)
        for i in range(2, inner):
            if a.shape[-1 - i] != b.shape[-1 - i]:
                raise self.shape_error(
                    1,
                    "dimension %d of size %d like dimension %d of A (%d); the batch dims of "
                    "the shorter operand must be the last of the longer's"
                    % (b.ndim - i - 1, a.shape[-1 - i], a.ndim - i - 1, a.shape[-1 - i]),
                    got=b.shape,
                )
        opa = np.swapaxes(a, -1, -2) if self.trans_a else a
        opb = np.swapaxes(b, -1, -2) if self.trans_b else b
        if opa.shape[-1] != opb.shape[-2]:
            raise self.shape_error(
                1,
                "inner dim %d (op(A) is %s, trans_a=%d, trans_b=%d)"
                % (opa.shape[-1], opa.shape, self.trans_a, self.trans_b),
                got=b.shape,
            )
        longer = a if a.ndim >= b.ndim else b
        shape = longer.shape[:-2]
        shape += () if a_vec else (opa.shape[-2],)
        shape += () if b_vec else (opb.shape[-1],)
        y = np.matmul(opa, opb)
        np.copyto(self.output(0, shape, dtype), y.reshape(shape))

    def run_3d(self, a, b, dtype):
        """The operator until 0cdd09da6: (C, M, K) · (C, K, N)."""
        if a.ndim != 3:
            raise self.shape_error(0, "3 dims (C, M, K)")
        if b.ndim != 3 or b.shape[0] != a.shape[0]:
            raise self.shape_error(1, "3 dims with dim 0 = %d (like input 0)" % a.shape[0])
        a = a.transpose(0, 2, 1) if self.trans_a else a
        b = b.transpose(0, 2, 1) if self.trans_b else b
        if a.shape[2] != b.shape[1]:
            raise self.shape_error(
                1,
                "inner dim %d (op(A) is %s, trans_a=%d, "
                "trans_b=%d)" % (a.shape[2], a.shape, self.trans_a, self.trans_b),
                got=b.shape,
            )
        np.matmul(a, b, out=self.output(0, (a.shape[0], a.shape[1], b.shape[2]), dtype))


@register_gradient("BatchMatMul")
class GetBatchMatMulGradient(GradientMaker):
    """dA and dB as two BatchMatMuls; which operands and flags depends on the
    forward flags (the transposes move between the factors)."""

    copy_arguments = False  # each gradient op sets its own trans_a/trans_b

    def get_gradient_defs(self):
        if self.arg("broadcast", 0):  # batch_matmul_op.cc, 042e8ede4
            raise GradientError(
                "Gradient is currently not supported with broadcast=1 for BatchMatMul."
            )
        trans_a = bool(self.arg("trans_a", 0))
        trans_b = bool(self.arg("trans_b", 0))
        a, b, dy = self.I(0), self.I(1), self.GO(0)
        da, db = self.GI(0), self.GI(1)
        scratch = {"use_scratch": 1} if self.has_arg("use_scratch") else {}

        def mm(op_type, inputs, outputs, **args):
            return self.op_def(op_type, inputs, outputs, **dict(args, **scratch))

        if trans_a and trans_b:
            return [
                mm("BatchMatMul", [b, dy], [da], trans_a=1, trans_b=1),
                mm("BatchMatMul", [dy, a], [db], trans_a=1, trans_b=1),
            ]
        if trans_a:
            return [mm("BatchMatMul", [b, dy], [da], trans_b=1), mm("BatchMatMul", [a, dy], [db])]
        if trans_b:
            return [mm("BatchMatMul", [dy, b], [da]), mm("BatchMatMul", [dy, a], [db], trans_a=1)]
        return [
            mm("BatchMatMul", [dy, b], [da], trans_b=1),
            mm("BatchMatMul", [a, dy], [db], trans_a=1),
        ]


@register("MatMul", inputs=(2, 3), outputs=1)
class MatMul(Operator):
    """A (M×K) · B (K×N) → Y (M×N), with optional transposes (and, from E6, axes)."""

    def setup(self):
        self.trans_a = self.args.single("trans_a", 0, int) != 0
        self.trans_b = self.args.single("trans_b", 0, int) != 0
        self.axes = eras.current().matmul_axes
        if self.axes:
            self.axis_a = self.args.single("axis_a", 1, int)
            self.axis_b = self.args.single("axis_b", 1, int)
        elif len(self.inputs) == 3:
            # matmul_op.cc, 0cdd09da6: OPERATOR_SCHEMA(MatMul).NumInputs(2)
            raise EnforceNotMet(
                "Operator def did not pass schema checking: MatMul takes 2 inputs, got 3 "
                "(the third input, Y's shape, came with Caffe2 c5307e6f9)"
            )

    def matrix(self, i):
        """Input i as the 2-D matrix MatMul multiplies (a reshape, no copy when possible)."""
        x = self.float_input(i)
        if not self.axes:
            if x.ndim != 2:  # matmul_op.h, 0cdd09da6: CAFFE_ENFORCE(A.ndim() == 2)
                raise self.shape_error(i, "a 2-D matrix")
            return x
        name, axis = ("axis_a", self.axis_a) if i == 0 else ("axis_b", self.axis_b)
        if not -x.ndim <= axis < x.ndim:  # tensor.h: canonical_axis_index_'s enforces
            raise ArgumentError(
                "argument %s is %d; expected an axis of input %d ('%s', %d dims): "
                "%d <= axis < %d" % (name, axis, i, self.input_name(i), x.ndim, -x.ndim, x.ndim)
            )
        axis %= x.ndim
        return x.reshape(math.prod(x.shape[:axis]), math.prod(x.shape[axis:]))

    def run(self):
        a, b = self.matrix(0), self.matrix(1)
        dtype = self.same_dtype(0, 1)
        a = a.T if self.trans_a else a
        b = b.T if self.trans_b else b
        if a.shape[1] != b.shape[0]:
            raise ShapeError(
                "Dimension mismatch: %s%d %d, %s%d %d (inputs 'A' = '%s', 'B' = '%s')"
                % (
                    "trans(A): " if self.trans_a else "A: ",
                    a.shape[0],
                    a.shape[1],
                    "trans(B): " if self.trans_b else "B: ",
                    b.shape[0],
                    b.shape[1],
                    self.input_name(0),
                    self.input_name(1),
                )
            )
        shape = (a.shape[0], b.shape[1])
        if len(self.inputs) < 3:
            np.matmul(a, b, out=self.output(0, shape, dtype))
            return
        # Y->ResizeLike(Input(2)) after the product: Caffe2's Resize keeps the
        # product's memory when the new size is not larger (keep_on_shrink), so Y
        # holds the product's first elements in the new shape; a larger shape
        # would leave Y's extra elements unwritten.
        like = self.input(2).shape
        if math.prod(like) > math.prod(shape):
            raise self.shape_error(
                2, "at most %d elements, the size of the product %s" % (math.prod(shape), shape)
            )
        product = np.matmul(a, b)
        self.output(0, like, dtype)[...] = product.reshape(-1)[: math.prod(like)].reshape(like)


@register_gradient("MatMul")
class GetMatMulGradient(GradientMaker):
    """dA and dB as two MatMuls (the transposes move between the factors).

    From E6 each also takes the forward input it differentiates as a third
    input (dA gets A's shape) and passes the axes on. Caffe2 held the axes in
    C++ ``bool`` variables (matmul_op.cc, 042e8ede4), so an axis other than 0
    reaches the gradient ops as 1; that is what they get here too.
    """

    copy_arguments = False  # each gradient op sets its own arguments

    def get_gradient_defs(self):
        if len(self.def_.input) != 2:  # CAFFE_ENFORCE_EQ(def_.input_size(), 2)
            raise EnforceNotMet(
                "MatMul's gradient needs a MatMul with 2 inputs; '%s' has %d"
                % (self.def_.name or self.O(0), len(self.def_.input))
            )
        trans_a = bool(self.arg("trans_a", 0))
        trans_b = bool(self.arg("trans_b", 0))
        a, b, dy = self.I(0), self.I(1), self.GO(0)
        if trans_a and trans_b:  # dA = B'G', dB = G'A'
            da = ([b, dy], dict(trans_a=1, trans_b=1), "axis_a", "axis_b")
            db = ([dy, a], dict(trans_a=1, trans_b=1), "axis_b", "axis_a")
        elif trans_a:  # dA = BG', dB = AG
            da = ([b, dy], dict(trans_b=1), "axis_a", "axis_b")
            db = ([a, dy], {}, "axis_a", "axis_a")
        elif trans_b:  # dA = GB, dB = G'A
            da = ([dy, b], {}, "axis_b", "axis_b")
            db = ([dy, a], dict(trans_a=1), "axis_b", "axis_a")
        else:  # dA = GB', dB = A'G
            da = ([dy, b], dict(trans_b=1), "axis_b", "axis_b")
            db = ([a, dy], dict(trans_a=1), "axis_a", "axis_a")
        axes = eras.current().matmul_axes
        ops = []
        for (inputs, args, axis_name, source), like, grad in ((da, a, 0), (db, b, 1)):
            if axes:
                inputs = inputs + [like]
                args = dict(args, **{axis_name: int(bool(self.arg(source, 1)))})
            ops.append(self.op_def("MatMul", inputs, [self.GI(grad)], **args))
        return ops
