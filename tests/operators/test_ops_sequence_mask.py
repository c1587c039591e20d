"""SequenceMask against an oracle transcribed from Caffe2's SequenceMaskOp
(boolean_mask_ops.{h,cc} at 042e8ede4): MaskWithFunctor, RepeatedMaskWithFunctor and
the Sequence/Window/Upper/Lower/UpperDiag/LowerDiag functors, loop for loop."""

import math

import numpy as np
import pytest

from caffe2rnn import core, errors
from caffe2rnn.runtime import Workspace


def oracle(
    x,
    mode,
    lengths=None,
    axis=1,
    radius=10,
    grad=False,
    fill_val=-np.inf,
    batch=None,
    repeat_from_axis=None,
):
    ndim = x.ndim
    canonical_axis = axis % ndim
    canonical_batch = -1 if batch is None else batch % ndim
    if canonical_batch >= 0:
        assert canonical_batch < canonical_axis
    size_to = lambda k: math.prod(x.shape[:k])  # noqa: E731
    size_from = lambda k: math.prod(x.shape[k:])  # noqa: E731
    left = (
        math.prod(x.shape[canonical_batch + 1 : canonical_axis])
        if canonical_batch >= 0
        else size_to(canonical_axis)
    )
    right = size_from(canonical_axis)
    batch_dim = size_to(canonical_batch) * x.shape[canonical_batch] if canonical_batch >= 0 else -1
    fill = 0.0 if grad else fill_val
    functors = {
        "sequence": lambda i, j: j >= lengths[i],
        "window": lambda i, j: j > lengths[i] + radius or j < lengths[i] - radius,
        "upper": lambda i, j: j > i,
        "lower": lambda i, j: j < i,
        "upperdiag": lambda i, j: j >= i,
        "lowerdiag": lambda i, j: j <= i,
    }
    fn = functors[mode]
    inp = x.reshape(-1)
    out = np.empty_like(inp)
    if repeat_from_axis is not None:
        D = size_from(repeat_from_axis % ndim)
        N, M = left, right // D
        for i in range(N):
            for j in range(M):
                for k in range(D):
                    val = inp[M * D * i + D * j + k]
                    out[M * D * i + D * j + k] = fill if fn(i, j) else val
    elif batch_dim >= 0:
        N, M = left, right
        for i in range(batch_dim):
            for j in range(N):
                for k in range(M):
                    val = inp[N * M * i + M * j + k]
                    out[N * M * i + M * j + k] = fill if fn(j, k) else val
    else:
        for i in range(left):
            for j in range(right):
                val = inp[right * i + j]
                out[right * i + j] = fill if fn(i, j) else val
    return out.reshape(x.shape)


def run(x, second=None, **args):
    ws = Workspace()
    ws.feed("x", x)
    inputs = ["x"]
    if second is not None:
        ws.feed("l", second)
        inputs.append("l")
    ws.run_operator_once(core.CreateOperator("SequenceMask", inputs, ["y"], **args))
    return ws.fetch("y")


RNG = np.random.default_rng(7)
CASES = [
    ((4, 5), dict(mode="sequence"), [0, 2, 5, 9]),
    ((4, 5), dict(mode="sequence", fill_val=-3.0, grad=True), [1, 2, 3, 4]),
    ((3, 2, 4), dict(mode="sequence", axis=2), [0, 1, 2, 3, 4, 1]),
    ((3, 2, 4), dict(mode="sequence", axis=-1), [4, 3, 2, 1, 0, 2]),
    ((4, 6), dict(mode="window", radius=1), [0, 2, 5, 3]),
    ((4, 6), dict(mode="window"), [0, 2, 5, 3]),
    ((5, 5), dict(mode="upper"), None),
    ((5, 5), dict(mode="lower", fill_val=2.0), None),
    ((3, 4), dict(mode="upperdiag"), None),
    ((4, 3), dict(mode="lowerdiag"), None),
    ((2, 3, 4), dict(mode="upper", batch=0, axis=2), None),
    ((2, 3, 4), dict(mode="sequence", batch=0, axis=2), [1, 2, 3]),
    ((2, 2, 3, 3), dict(mode="lowerdiag", batch=1, axis=3), None),
    ((3, 4, 2), dict(mode="sequence", axis=1, repeat_from_axis=2), [0, 2, 4]),
    ((3, 4, 2, 2), dict(mode="sequence", axis=1, repeat_from_axis=-2), [1, 3, 2]),
]


@pytest.mark.parametrize("shape, args, second", CASES)
def test_sequence_mask_matches_the_cpp(shape, args, second):
    x = RNG.standard_normal(shape).astype(np.float32)
    lengths = None if second is None else np.array(second, np.int32)
    got = run(x, lengths, **args)
    want = oracle(x, lengths=lengths, **args)
    np.testing.assert_array_equal(got, want)


def test_sequence_mask_refusals():
    x = np.zeros((2, 3), np.float32)
    with pytest.raises(errors.ArgumentError, match="Argument named mode does not exist"):
        run(x, np.zeros(2, np.int32))
    with pytest.raises(errors.EnforceNotMet, match="Unsupported mode for SequenceMaskOp"):
        run(x, mode="diagonal")
    with pytest.raises(errors.EnforceNotMet, match="only supported in sequence mode"):
        run(x, mode="upper", repeat_from_axis=1)
    with pytest.raises(errors.EnforceNotMet, match="not currently supported together"):
        run(x, np.zeros(2, np.int32), mode="sequence", repeat_from_axis=1, batch=0)
    with pytest.raises(errors.DTypeError, match="int32"):  # data<int>()
        run(x, np.zeros(2, np.int64), mode="sequence")
    with pytest.raises(errors.EnforceNotMet, match="batch 1 must be < axis 1"):
        run(x, mode="upper", batch=1)
    with pytest.raises(errors.ShapeError, match="Out of bound"):
        run(x, np.zeros(1, np.int32), mode="window")
    with pytest.raises(errors.DTypeError):  # TensorTypes<float>
        run(np.zeros((2, 3), np.int32), mode="upper")


def test_sequence_mask_gradient_copies_the_arguments_then_grad():
    """GetSequenceMaskGradient: Def().arg() then grad=true; I(1) only with two inputs."""
    from caffe2rnn.operators.gradient_maker import get_gradient_for_op

    op = core.CreateOperator("SequenceMask", ["x"], ["y"], mode="upper", fill_val=-1.0)
    (g,), _ = get_gradient_for_op(op, ["y_grad"])
    assert list(g.input) == ["y_grad"] and list(g.output) == ["x_grad"]
    assert [a.name for a in g.arg] == ["mode", "fill_val", "grad"]
    op = core.CreateOperator("SequenceMask", ["x", "l"], ["y"], mode="sequence")
    (g,), _ = get_gradient_for_op(op, ["y_grad"])
    assert list(g.input) == ["y_grad", "l"]
