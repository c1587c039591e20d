"""MatMul and BatchMatMul: a matrix product, and one per batch entry.

``MatMul([A, B] → Y)``: ``Y = op(A) · op(B)`` of two matrices. From E6
(042e8ede4) A and B may have more dims: each is read as a matrix by
flattening its dims before ``axis_a`` / ``axis_b`` (default 1; negative counts
from the end) into rows and the rest into columns. E5's MatMul required 2-D
inputs (``CAFFE_ENFORCE(A.ndim() == 2)``, matmul_op.h at 0cdd09da6), where
flattening at axis 1 changes nothing, so caffe2rnn accepts E6's arguments in
every era. The gradient is two MatMuls, as for BatchMatMul below (Caffe2's
maker passes no ``axis_*`` on, so it is the gradient of the 2-D case).

``Y[c] = op(A[c]) · op(B[c])`` for ``c < C``, where ``op`` transposes the
last two dims when ``trans_a`` / ``trans_b`` is set. A and B are 3-D with the
same batch size C (the 2017 operator, before numpy-style broadcasting).
Attention uses it to weight the encoder outputs: (N, E, T) · (N, T, 1) →
(N, E, 1).

Caffe2: caffe2/operators/matmul_op.{h,cc}, batch_matmul_op.{h,cc} (at 0cdd09da6).
"""

import numpy as np

from ..errors import ArgumentError
from ..runtime.registry import register, register_gradient
from .base import Operator
from .gradient_maker import GradientMaker


@register("BatchMatMul", inputs=2, outputs=1)
class BatchMatMul(Operator):
    """A (C, M, K) · B (C, K, N) → Y (C, M, N), with optional transposes."""

    def setup(self):
        self.trans_a = self.args.single("trans_a", 0, int)
        self.trans_b = self.args.single("trans_b", 0, int)

    def run(self):
        a, b = self.float_input(0), self.float_input(1)
        dtype = self.same_dtype(0, 1)
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


@register("MatMul", inputs=2, outputs=1)
class MatMul(Operator):
    """A · B of two matrices (N-D inputs flattened at ``axis_a`` / ``axis_b``)."""

    def setup(self):
        self.trans_a = self.args.single("trans_a", 0, int)
        self.trans_b = self.args.single("trans_b", 0, int)
        self.axis_a = self.args.single("axis_a", 1, int)
        self.axis_b = self.args.single("axis_b", 1, int)

    def matrix(self, i, axis):
        x = self.float_input(i)
        canonical = axis + x.ndim if axis < 0 else axis
        if not 0 <= canonical < max(x.ndim, 1) or x.ndim == 0:
            raise ArgumentError(
                "axis_%s %d is outside the %d dims of input %d ('%s')"
                % ("ab"[i], axis, x.ndim, i, self.input_name(i))
            )
        rows = int(np.prod(x.shape[:canonical], dtype=np.int64))
        m = x.reshape(rows, int(np.prod(x.shape[canonical:], dtype=np.int64)))
        return m.T if (self.trans_a, self.trans_b)[i] else m

    def run(self):
        a, b = self.matrix(0, self.axis_a), self.matrix(1, self.axis_b)
        dtype = self.same_dtype(0, 1)
        if a.shape[1] != b.shape[0]:
            raise self.shape_error(
                1,
                "%d rows after trans_b=%d (op(A) is %s, trans_a=%d)"
                % (a.shape[1], self.trans_b, a.shape, self.trans_a),
                got=b.shape,
            )
        np.matmul(a, b, out=self.output(0, (a.shape[0], b.shape[1]), dtype))


class GetMatrixProductGradient(GradientMaker):
    """dA and dB as two products of the forward type; which operands and flags
    depends on the forward flags (the transposes move between the factors)."""

    copy_arguments = False  # each gradient op sets its own trans_a/trans_b

    def get_gradient_defs(self):
        trans_a = bool(self.arg("trans_a", 0))
        trans_b = bool(self.arg("trans_b", 0))
        a, b, dy = self.I(0), self.I(1), self.GO(0)
        da, db = self.GI(0), self.GI(1)
        kind = self.def_.type

        def mm(inputs, output, **flags):
            return self.op_def(kind, inputs, [output], **flags)

        if trans_a and trans_b:
            return [mm([b, dy], da, trans_a=1, trans_b=1), mm([dy, a], db, trans_a=1, trans_b=1)]
        if trans_a:
            return [mm([b, dy], da, trans_b=1), mm([a, dy], db)]
        if trans_b:
            return [mm([dy, b], da), mm([dy, a], db, trans_a=1)]
        return [mm([dy, b], da, trans_b=1), mm([a, dy], db, trans_a=1)]


register_gradient("BatchMatMul")(GetMatrixProductGradient)
register_gradient("MatMul")(GetMatrixProductGradient)
