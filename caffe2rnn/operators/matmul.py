"""BatchMatMul: one matrix product per batch entry.

``Y[c] = op(A[c]) · op(B[c])`` for ``c < C``, where ``op`` transposes the
last two dims when ``trans_a`` / ``trans_b`` is set. A and B are 3-D with the
same batch size C (the 2017 operator, before numpy-style broadcasting).
Attention uses it to weight the encoder outputs: (N, E, T) · (N, T, 1) →
(N, E, 1).

Caffe2: caffe2/operators/batch_matmul_op.{h,cc} (at 0cdd09da6).
"""

import numpy as np

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


@register_gradient("BatchMatMul")
class GetBatchMatMulGradient(GradientMaker):
    """dA and dB as two BatchMatMuls; which operands and flags depends on the
    forward flags (the transposes move between the factors)."""

    copy_arguments = False  # each gradient op sets its own trans_a/trans_b

    def get_gradient_defs(self):
        trans_a = bool(self.arg("trans_a", 0))
        trans_b = bool(self.arg("trans_b", 0))
        a, b, dy = self.I(0), self.I(1), self.GO(0)
        da, db = self.GI(0), self.GI(1)
        mm = self.op_def
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
