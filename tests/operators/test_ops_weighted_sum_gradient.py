"""E6's WeightedSum gradient (dX_i = w_i dY, dw_i = <dY, X_i>) by finite
differences; E5 keeps refusing it."""

import numpy as np
import pytest
from ops_testing import gradient_of, random

from caffe2rnn import core, eras
from caffe2rnn.errors import GradientError
from caffe2rnn.gradient_checker import assert_gradient_close


@pytest.mark.parametrize("grad_on_w", [False, True])
def test_e6_weighted_sum_gradient(grad_on_w):
    inputs = [random((3, 2), 1, np.float64), random((1,), 2, np.float64)]
    inputs += [random((3, 2), 3, np.float64), random((1,), 4, np.float64)]
    op = core.CreateOperator("WeightedSum", ["X0", "w0", "X1", "w1"], ["Y"], grad_on_w=grad_on_w)
    with eras.use("E6"):
        for i in range(4) if grad_on_w else (0, 2):
            assert_gradient_close(op, inputs, i)
        ops, g_input = gradient_of("WeightedSum", ["X0", "w0", "X1", "w1"], ["Y"], grad_on_w=1)
    assert ops[0][2:4] == (
        ["Y_grad", "X0", "w0", "X1", "w1"],
        ["X0_grad", "X1_grad", "w0_grad", "w1_grad"],
    )
    with eras.use("E5"), pytest.raises(GradientError, match="should not call gradient"):
        gradient_of("WeightedSum", ["X0", "w0"], ["Y"])


def test_e7_keeps_the_e6_gradient():
    # 929c33cee's utility_ops.cc registers the same GetWeightedSumGradient
    for era in ("E6", "E7"):
        with eras.use(era):
            ops, _ = gradient_of("WeightedSum", ["X0", "w0"], ["Y"], grad_on_w=1)
        assert ops[0][:4] == (
            "WeightedSumGradient",
            "",
            ["Y_grad", "X0", "w0"],
            ["X0_grad", "w0_grad"],
        )
