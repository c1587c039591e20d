"""TT: a fully connected layer whose weight matrix is a tensor train.

``TT([X, b, cores] → [Y])`` computes ``Y = X · W + b`` for an M x K input, where
the K x N weight ``W`` is never formed: it is stored as a *tensor train* of d
cores (Oseledets, "Tensor-Train Decomposition", 2011). Core i is a
``(inp_sizes[i] · tt_ranks[i+1]) x (tt_ranks[i] · out_sizes[i])`` matrix, the
cores laid end to end in the 1-D blob ``cores`` from the last to the first
(Caffe2's ``tt_core.init_tt_cores`` builds that layout); ``K = Π inp_sizes``,
``N = Π out_sizes`` and ``tt_ranks`` has d + 1 entries, the first and last 1.

The product is taken core by core, from the last to the first, as Caffe2's
``TTLinearOp`` did (caffe2/operators/tt_linear_op.h at 0cdd09da6 and
042e8ede4): the running matrix is reshaped to ``rows`` columns, multiplied
by the core, and its elements regrouped so that the core's output index
becomes the slowest; at the end the batch index is brought back to the front
and the bias is added to every row. For one row (M = 1) that is ``x · W + b``.
With M > 1, Caffe2's regrouping carries the batch index along with the
others and its last step reads the row-major buffer through column-major
maps: Y holds exactly the values of ``X · W`` (plus b), in an order that
mixes the rows. That is what Caffe2 computed (its TT layer was marked
unfinished: "Complete after verifying utility of TT-layer's forward pass"),
so it is what this operator computes.

Caffe2 registered no gradient for TT (``GRADIENT_NOT_IMPLEMENTED_YET``; its
``TTLinearGradient`` was an empty placeholder), so there is none here either.
"""

import math

import numpy as np

from ..errors import ShapeError
from ..runtime.registry import register, register_gradient
from .base import Operator
from .gradient_maker import GradientNotImplementedYet


def tt_matmul(x, cores, inp_sizes, out_sizes, tt_ranks):
    """``x`` (M x K) times the tensor-train matrix ``cores``, in Caffe2's order."""
    batch = x.shape[0]
    y = x.reshape(-1)
    start = 0
    for i in range(len(inp_sizes) - 1, -1, -1):
        rows = inp_sizes[i] * tt_ranks[i + 1]
        cols = tt_ranks[i] * out_sizes[i]
        core = cores[start : start + rows * cols].reshape(rows, cols)
        product = y.reshape(-1, rows) @ core
        # Regroup: the element (r, o) of the product viewed as (S, out) goes to (o, r).
        y = product.reshape(-1, out_sizes[i]).T.reshape(-1)
        start += rows * cols
    return y.reshape(batch, -1).T.reshape(batch, -1)


@register("TT", inputs=3, outputs=1)
class TTLinear(Operator):
    """``Y = X · W + b`` with W a tensor train (module docstring)."""

    def setup(self):
        # GetRepeatedArgument<int> (tt_linear_op.h): lists of ints
        self.inp_sizes = self.args.repeated("inp_sizes", kind=int)
        self.out_sizes = self.args.repeated("out_sizes", kind=int)
        self.tt_ranks = self.args.repeated("tt_ranks", kind=int)

    def run(self):
        # TTLinearOp<float>: float32 (and float64, caffe2rnn's extension), one type
        x, b, cores = self.float_input(0), self.float_input(1), self.float_input(2)
        self.same_dtype(0, 1, 2)
        d = len(self.inp_sizes)
        # tt_linear_op.h's CAFFE_ENFORCEs, in its order.
        self.check(x.ndim > 1, "Number of dimensions in X: %d" % x.ndim, ShapeError)
        self.check(b.ndim == 1, "Number of dimensions in b: %d" % b.ndim, ShapeError)
        self.check(
            d == len(self.out_sizes),
            "inp_sizes has size: %d, out_sizes has size: %d" % (d, len(self.out_sizes)),
            ShapeError,
        )
        self.check(cores.ndim == 1, "Number of dimensions in cores: %d" % cores.ndim, ShapeError)
        # Caffe2 read tt_ranks[i] and [i + 1] unchecked: fewer than d + 1 is out of bounds.
        self.check(
            len(self.tt_ranks) >= d + 1,
            "tt_ranks has %d entries; %d cores need %d" % (len(self.tt_ranks), d, d + 1),
            ShapeError,
        )
        # Caffe2 divided Y's size by the batch size at the end.
        self.check(x.shape[0] > 0, "X has no rows (batch size 0)", ShapeError)
        size, start = x.size, 0
        for i in range(d - 1, -1, -1):
            rows = self.inp_sizes[i] * self.tt_ranks[i + 1]
            cols = self.tt_ranks[i] * self.out_sizes[i]
            self.check(rows > 0 and cols > 0, "core %d is %d x %d" % (i, rows, cols), ShapeError)
            self.check(size % rows == 0, "%d %d" % (size, rows), ShapeError)
            self.check(
                start + rows * cols <= cores.size,
                "%d %d" % (start + rows * cols, cores.size),
                ShapeError,
            )
            size = size // rows * cols
            self.check(
                size % self.out_sizes[i] == 0, "%d %d" % (size, self.out_sizes[i]), ShapeError
            )
            start += rows * cols
        n = math.prod(self.out_sizes)
        self.check(
            size // x.shape[0] == n,
            "Output dimension of Y: %d, product of out_sizes: %d" % (size // x.shape[0], n),
            ShapeError,
        )
        # The bias GEMM read N values of b: a shorter b is read past its end.
        self.check(b.size == n, "b has %d values; Y has %d columns" % (b.size, n), ShapeError)
        y = tt_matmul(x, cores, self.inp_sizes, self.out_sizes, self.tt_ranks)
        out = self.output(0, y.shape, x.dtype)
        np.add(y, b, out=out)


register_gradient("TT")(GradientNotImplementedYet)
