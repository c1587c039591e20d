"""Slice and SliceGradient against an oracle hand-translated from Caffe2's C++.

``slice_impl`` below is ``SliceImpl`` of caffe2/operators/utility_ops.h (0cdd09da6; the same
function is slice_op.h at 042e8ede4) written again in NumPy, statement by statement: the bounds
arithmetic, the enforces (as ``Refused``), the "only one dimension" rule, the early return on empty
data and the block-by-block byte copy (flat copies, not NumPy slicing). caffe2rnn's operator is
compared with it on every case.
"""

import numpy as np
import pytest

from caffe2rnn import core, errors
from caffe2rnn.runtime import Workspace


class Refused(Exception):
    pass


class OutOfBounds(Exception):
    """The C++ would write or read outside a buffer here."""


def enforce(condition):
    if not condition:
        raise Refused()


def slice_impl(data, starts, ends, go=None, gdata=None):
    """Forward (``go`` None): the output array. Backward: the gradient array
    (``gdata`` = what the output held before; returned unchanged on empty data)."""
    backward = go is not None
    enforce(starts.ndim == 1)
    enforce(ends.ndim == 1)
    enforce(data.ndim >= starts.size)
    enforce(starts.size == ends.size)
    n = data.ndim
    starts_idx, ends_idx, dst_sizes = [0] * n, [0] * n, [0] * n
    for i in range(n):
        if i >= starts.size:
            starts_idx[i] = 0
            ends_idx[i] = data.shape[i]
            continue
        if data.shape[i] > 0:
            start, end = int(starts[i]), int(ends[i])
            if start < 0:
                start = data.shape[i] + 1 + start
            if end < 0:
                end = data.shape[i] + 1 + end
            enforce(start >= 0)
            enforce(end >= 0)
            enforce(start < data.shape[i])
            enforce(end <= data.shape[i])
            enforce(end >= start)
            starts_idx[i], ends_idx[i], dst_sizes[i] = start, end, end - start
        else:
            starts_idx[i] = ends_idx[i] = dst_sizes[i] = 0
    if data.size <= 0:
        if not backward:
            return np.zeros(dst_sizes, data.dtype)
        return gdata
    dim = -1
    for i in range(n):
        if starts_idx[i] > 0 or ends_idx[i] < data.shape[i]:
            enforce(dim == -1)
            dim = i
    if dim == -1:
        return (go if backward else data).copy()
    unit = int(np.prod(data.shape[dim + 1 :]))
    num_blocks = int(np.prod(data.shape[:dim]))
    if not backward:
        out = np.zeros(int(np.prod(dst_sizes)), data.dtype)
        src = data.reshape(-1)
        src_block = unit * data.shape[dim]
        dst_block = unit * (ends_idx[dim] - starts_idx[dim])
        src_offset = unit * starts_idx[dim]
        if num_blocks == 0 or dst_block == 0:
            return out.reshape(dst_sizes)
        for i in range(num_blocks):
            if (i + 1) * dst_block > out.size:
                raise OutOfBounds()
            lo = src_offset + i * src_block
            out[i * dst_block : (i + 1) * dst_block] = src[lo : lo + dst_block]
        return out.reshape(dst_sizes)
    grad = np.zeros(data.size, go.dtype)
    src = go.reshape(-1)
    src_block = unit * (ends_idx[dim] - starts_idx[dim])
    dst_block = unit * data.shape[dim]
    dst_offset = unit * starts_idx[dim]
    if go.size == 0:
        return grad.reshape(data.shape)
    for i in range(num_blocks):
        if (i + 1) * src_block > src.size:
            raise OutOfBounds()
        lo = dst_offset + i * dst_block
        grad[lo : lo + src_block] = src[i * src_block : (i + 1) * src_block]
    return grad.reshape(data.shape)


def run_slice(data, starts, ends, as_inputs=False):
    ws = Workspace()
    ws.feed("data", data)
    if as_inputs:
        ws.feed("s", starts)
        ws.feed("e", ends)
        op = core.CreateOperator("Slice", ["data", "s", "e"], ["out"])
    else:
        op = core.CreateOperator(
            "Slice", ["data"], ["out"], starts=[int(v) for v in starts], ends=[int(v) for v in ends]
        )
    ws.run_operator_once(op)
    return ws.fetch("out")


X = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
CASES = [
    ([0, 1], [-1, 3]),  # the example of Caffe2's docstring, on 3-D data
    ([0, 0, -3], [-1, -1, -1]),  # a negative start: dims + 1 + start = 2
    ([0, 0, 1], [-1, -1, -2]),
    ([1, 0, 0], [2, 3, 4]),
    ([0, 0, 0], [2, 3, 4]),  # nothing cut: a copy
    ([0, 0, 3], [2, 3, 3]),  # an empty block
    ([0, 1, 1], [-1, 3, -2]),  # two dimensions cut: refused
    ([0, 0, 4], [2, 3, 4]),  # start == dim: refused (CAFFE_ENFORCE_LT)
    ([0, 0, -1], [2, 3, 4]),  # start -1 means dim: refused
    ([0, 2], [1, 1]),  # end < start: refused
    ([0, 0, 0, 0], [1, 1, 1, 1]),  # more bounds than dimensions: refused
    ([1], [2]),  # starts shorter than ndim, cutting: Caffe2 wrote past the output
    ([0], [-1]),  # shorter, nothing cut: a copy
]


@pytest.mark.parametrize("starts, ends", CASES)
@pytest.mark.parametrize("as_inputs", [False, True])
def test_slice_matches_the_cpp(starts, ends, as_inputs):
    s, e = np.array(starts, np.int32), np.array(ends, np.int32)
    try:
        want = slice_impl(X, s, e)
    except (Refused, OutOfBounds):
        with pytest.raises(errors.Caffe2RNNError):
            run_slice(X, s, e, as_inputs)
        return
    got = run_slice(X, s, e, as_inputs)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("shape", [(0, 3), (2, 0, 4), (0,)])
def test_slice_of_empty_data_has_caffe2s_shape(shape):
    data = np.zeros(shape, np.float32)
    s = np.zeros(1, np.int32)
    e = np.full(1, -1, np.int32)
    want = slice_impl(data, s, e)
    got = run_slice(data, s, e)
    assert got.shape == want.shape  # (0, 3) -> (0, 0): Caffe2 left the uncovered sizes at 0


def test_slice_bounds_are_int32():
    with pytest.raises(errors.DTypeError, match="int32"):
        run_slice(X, np.array([0, 0, 1], np.int64), np.array([-1, -1, -1], np.int64), True)
    with pytest.raises(errors.ArgumentError, match="cannot be represented"):
        run_slice(X, [0, 0, 2**40], [-1, -1, -1])


def test_slice_without_bounds_is_refused():
    ws = Workspace()
    ws.feed("data", X)
    with pytest.raises(errors.ArgumentError, match="needs the argument 'starts'"):
        ws.run_operator_once(core.CreateOperator("Slice", ["data"], ["out"], ends=[1]))


def run_gradient(data, starts, ends, dy, before=None):
    ws = Workspace()
    ws.feed("data", data)
    ws.feed("dy", dy)
    if before is not None:
        ws.feed("dx", before)
    op = core.CreateOperator(
        "SliceGradient", ["data", "dy"], ["dx"], starts=list(starts), ends=list(ends)
    )
    ws.run_operator_once(op)
    return ws.fetch("dx")


GRAD_CASES = [
    ([0, 1], [-1, 3], (2, 2, 4)),
    ([0, 0, -3], [-1, -1, -1], (2, 3, 2)),
    ([1], [2], (1, 3, 4)),  # fewer bounds than dimensions: fine backward
    ([0, 0, 0], [2, 3, 4], (5, 5)),  # nothing cut: dX is a copy of dY, whatever its shape
    ([0, 0, 1], [-1, -1, -2], (30,)),  # a longer dY: its head is read
    ([0, 0, 1], [-1, -1, -2], (3,)),  # a shorter one: Caffe2 read past its end
    ([0, 0, 1], [-1, -1, -2], (0,)),  # an empty one: the zeroed gradient
]


@pytest.mark.parametrize("starts, ends, dy_shape", GRAD_CASES)
def test_slice_gradient_matches_the_cpp(starts, ends, dy_shape):
    dy = np.arange(1, 1 + int(np.prod(dy_shape)), dtype=np.float32).reshape(dy_shape)
    s, e = np.array(starts, np.int32), np.array(ends, np.int32)
    try:
        want = slice_impl(X, s, e, go=dy)
    except (Refused, OutOfBounds):
        with pytest.raises(errors.Caffe2RNNError):
            run_gradient(X, starts, ends, dy)
        return
    np.testing.assert_array_equal(run_gradient(X, starts, ends, dy), want)


def test_slice_gradient_of_empty_data_leaves_its_output():
    before = np.array([7.0], np.float32)
    got = run_gradient(np.zeros((0, 3), np.float32), [0], [-1], np.zeros(0, np.float32), before)
    np.testing.assert_array_equal(got, before)


def test_slice_gradient_maker_passes_the_bounds_inputs():
    from ops_testing import gradient_of

    ops, _ = gradient_of("Slice", ["x", "s", "e"], ["y"])
    assert ops[0][:4] == ("SliceGradient", "", ["x", "s", "e", "y_grad"], ["x_grad"])
    ops, _ = gradient_of("Slice", ["x"], ["y"], starts=[0], ends=[1])
    assert ops[0][2:4] == (["x", "y_grad"], ["x_grad"])
