"""GRUUnit, LayerNorm, SequenceMask and Slice: forward against NumPy formulas
written here, every gradient against central differences (float64), and
their errors naming the blob."""

import numpy as np
import pytest

from caffe2rnn import core, errors, workspace
from caffe2rnn.gradient_checker import assert_gradient_close


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def run(op, **blobs):
    for name, value in blobs.items():
        workspace.FeedBlob(name, value)
    workspace.RunOperatorOnce(op)
    return [workspace.FetchBlob(o) for o in op.output]


@pytest.mark.parametrize("drop_states", [False, True])
def test_gru_unit_forward_and_gradients(drop_states):
    rng = np.random.default_rng(0)
    N, D, t = 3, 2, 1
    h_prev = rng.uniform(-1, 1, (1, N, D))
    gates = rng.uniform(-2, 2, (1, N, 3 * D))
    lengths = np.array([2, 1, 3], np.int32)  # row 1 has ended at t = 1
    timestep = np.array([t], np.int32)
    op = core.CreateOperator("GRUUnit", ["h", "g", "l", "t"], ["h_t"], drop_states=drop_states)
    (h,) = run(op, h=h_prev, g=gates, l=lengths, t=timestep)
    z = sigmoid(gates[0, :, D : 2 * D])
    o = np.tanh(gates[0, :, 2 * D :])
    expected = z * h_prev[0] + (1 - z) * o
    expected[1] = 0 if drop_states else h_prev[0, 1]
    np.testing.assert_allclose(h[0], expected, rtol=1e-12)
    inputs = [h_prev, gates, lengths, timestep]
    for index in (0, 1):
        assert_gradient_close(op, inputs, index, rtol=1e-6, atol=1e-9)


def test_gru_unit_bad_gates_name_the_blob():
    op = core.CreateOperator("GRUUnit", ["h", "g", "l", "t"], ["h_t"])
    with pytest.raises(errors.ShapeError, match=r"'g'.*\(1, 2, 6\)"):
        run(
            op,
            h=np.zeros((1, 2, 2)),
            g=np.zeros((1, 2, 5)),
            l=np.ones(2, np.int32),
            t=np.zeros(1, np.int32),
        )


@pytest.mark.parametrize("axis,shape", [(1, (2, 3, 4)), (-1, (2, 3, 4)), (2, (1, 2, 5))])
def test_layer_norm_forward_and_gradient(axis, shape):
    rng = np.random.default_rng(1)
    x = rng.normal(size=shape)
    op = core.CreateOperator("LayerNorm", ["x"], ["y", "mean", "stdev"], axis=axis, epsilon=1e-3)
    y, mean, stdev = run(op, x=x)
    a = axis % len(shape)
    rows = x.reshape(int(np.prod(shape[:a])), -1)
    m = rows.mean(axis=1, keepdims=True)
    eps = float(np.float32(1e-3))  # float arguments travel as float32 in the proto
    s = np.sqrt(rows.var(axis=1, keepdims=True) + eps)
    np.testing.assert_allclose(y, ((rows - m) / s).reshape(shape), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(mean, m.reshape(shape[:a] + (1,)), rtol=1e-12)
    np.testing.assert_allclose(stdev, s.reshape(shape[:a] + (1,)), rtol=1e-12)
    assert_gradient_close(op, [x], 0, rtol=1e-6, atol=1e-8)


def test_layer_norm_bad_axis_names_the_blob():
    op = core.CreateOperator("LayerNorm", ["x"], ["y", "m", "s"], axis=3)
    with pytest.raises(errors.ShapeError, match=r"'x'.*axis=3"):
        run(op, x=np.zeros((2, 3)))


def test_sequence_mask_forward_and_gradient():
    rng = np.random.default_rng(2)
    x = rng.normal(size=(3, 4, 1))
    lengths = np.array([1, 4, 2], np.int32)
    op = core.CreateOperator("SequenceMask", ["x", "l"], ["y"], mode="sequence", fill_val=-7.0)
    (y,) = run(op, x=x, l=lengths)
    expected = x.copy()
    for n, length in enumerate(lengths):
        expected[n, length:] = -7.0
    np.testing.assert_array_equal(y, expected)
    assert_gradient_close(op, [x, lengths], 0, rtol=1e-6, atol=1e-9)
    with pytest.raises(errors.ShapeError, match=r"'l'.*at least 3 values.*Out of bound"):
        run(op, x=x, l=np.ones(2, np.int32))


def test_slice_forward_gradient_and_range_errors():
    """The gradient by finite differences; tests/operators/test_ops_slice.py compares both ops
    with an oracle translated from Caffe2's SliceImpl."""
    x = np.arange(24.0).reshape(2, 3, 4)
    op = core.CreateOperator("Slice", ["x"], ["y"], starts=[0, 1, 0], ends=[-1, 3, -1])
    (y,) = run(op, x=x)
    np.testing.assert_array_equal(y, x[:, 1:3])
    assert_gradient_close(op, [x], 0, rtol=1e-6, atol=1e-9)
    shape = np.array([5, 2, 3], np.int64)
    (first,) = run(core.CreateOperator("Slice", ["s"], ["f"], starts=[0], ends=[1]), s=shape)
    np.testing.assert_array_equal(first, [5])
    with pytest.raises(errors.ArgumentError, match=r"out of range for dimension 1 .*'x'"):
        run(core.CreateOperator("Slice", ["x"], ["y"], starts=[0, 2], ends=[1, 1]), x=x)
