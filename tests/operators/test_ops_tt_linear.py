"""TT (tensor-train fully connected layer): Y = X · W + b against W formed
explicitly from the cores, in NumPy written here; Caffe2's refusals."""

import numpy as np
import pytest

from caffe2rnn import core, errors, workspace


def tt_cores(inp_sizes, out_sizes, tt_ranks, rng):
    """Random cores in Caffe2's layout (the last core first), and each core
    as a 4-D array G_i[r_i, n_i, m_i, r_{i+1}] (input index n, output m)."""
    d = len(inp_sizes)
    cores4 = [
        rng.standard_normal((tt_ranks[i], inp_sizes[i], out_sizes[i], tt_ranks[i + 1]))
        for i in range(d)
    ]
    # Caffe2's core i is the (n_i r_{i+1}) x (r_i m_i) matrix of G_i.
    flat = [
        cores4[i].transpose(1, 3, 0, 2).reshape(inp_sizes[i] * tt_ranks[i + 1], -1).ravel()
        for i in range(d - 1, -1, -1)
    ]
    return np.concatenate(flat).astype(np.float32), cores4


def full_weight(cores4):
    """W[(n_1..n_d), (m_1..m_d)] = G_1[:, n_1, m_1, :] ... G_d[:, n_d, m_d, :]."""
    w = cores4[0][0]  # (n1, m1, r1)
    for g in cores4[1:]:
        w = np.einsum("abr,rcds->acbds", w, g)  # (N, n, M, m, r') -> merge
        a, c, b, dd, s = w.shape
        w = w.reshape(a * c, b * dd, s)
    return w[..., 0]


def run_tt(x, b, cores, inp_sizes, out_sizes, tt_ranks):
    for name, value in (("X", x), ("b", b), ("cores", cores)):
        workspace.FeedBlob(name, value)
    workspace.RunOperatorOnce(
        core.CreateOperator(
            "TT",
            ["X", "b", "cores"],
            ["Y"],
            inp_sizes=inp_sizes,
            out_sizes=out_sizes,
            tt_ranks=tt_ranks,
        )  # fmt: skip
    )
    return workspace.FetchBlob("Y")


SHAPES = [
    ([2, 2, 2, 2], [2, 2, 2, 2], [1, 3, 3, 3, 1]),
    ([3, 2], [2, 4], [1, 2, 1]),
    ([2, 3, 2], [3, 1, 2], [1, 2, 4, 1]),
    ([5], [3], [1, 1]),
]


def tt_and_reference(sizes, rows, bias, seed):
    """TT of ``rows`` random rows (with a random bias or none), and X · W + b in
    float64 from the full weight."""
    inp_sizes, out_sizes, tt_ranks = sizes
    rng = np.random.default_rng(seed)
    cores, cores4 = tt_cores(inp_sizes, out_sizes, tt_ranks, rng)
    K, N = int(np.prod(inp_sizes)), int(np.prod(out_sizes))
    x = rng.standard_normal((rows, K)).astype(np.float32)
    b = rng.standard_normal(N).astype(np.float32) if bias else np.zeros(N, np.float32)
    y = run_tt(x, b, cores, inp_sizes, out_sizes, tt_ranks)
    return y, x.astype(np.float64) @ full_weight([c.astype(np.float64) for c in cores4]) + b


@pytest.mark.parametrize("sizes", SHAPES)
def test_tt_of_one_row_is_x_times_the_full_weight_plus_bias(sizes):
    y, expected = tt_and_reference(sizes, rows=1, bias=True, seed=0)
    np.testing.assert_allclose(y, expected, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("sizes", SHAPES)
def test_tt_of_several_rows_holds_the_products_in_caffe2s_order(sizes):
    # Caffe2's regrouping keeps the batch index among the others: with M > 1 rows
    # Y holds exactly the values of X · W, in its own order (module docstring).
    y, expected = tt_and_reference(sizes, rows=3, bias=False, seed=1)
    assert y.shape == expected.shape
    np.testing.assert_allclose(np.sort(y.ravel()), np.sort(expected.ravel()), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize(
    "change, error, match",
    [
        (dict(X=np.ones(16, np.float32)), errors.ShapeError, "Number of dimensions in X"),
        (dict(b=np.zeros((1, 16), np.float32)), errors.ShapeError, "Number of dimensions in b"),
        (dict(b=np.zeros(15, np.float32)), errors.ShapeError, "b has 15 values"),
        (dict(cores=np.zeros(10, np.float32)), errors.ShapeError, "10"),
        (dict(X=np.ones((0, 16), np.float32)), errors.ShapeError, "batch size 0"),
        (dict(X=np.ones((1, 16))), errors.DTypeError, "float32"),
        (dict(args=dict(tt_ranks=[1, 3, 3])), errors.ShapeError, "tt_ranks has 3 entries"),
        (dict(args=dict(out_sizes=[2, 2, 2])), errors.ShapeError, "out_sizes has size: 3"),
    ],
)
def test_tt_refuses_what_caffe2_enforced_or_read_out_of_bounds(change, error, match):
    inputs = dict(
        X=np.ones((1, 16), np.float32),
        b=np.zeros(16, np.float32),
        cores=tt_cores([2] * 4, [2] * 4, [1, 3, 3, 3, 1], np.random.default_rng(1))[0],
    )
    args = dict(inp_sizes=[2] * 4, out_sizes=[2] * 4, tt_ranks=[1, 3, 3, 3, 1])
    args.update(change.pop("args", {}))
    inputs.update(change)
    for name, value in inputs.items():
        workspace.FeedBlob(name, value)
    with pytest.raises(error, match=match):
        workspace.RunOperatorOnce(core.CreateOperator("TT", ["X", "b", "cores"], ["Y"], **args))
    assert not workspace.HasBlob("Y")


def test_tt_has_no_gradient_as_in_caffe2():
    op = core.CreateOperator("TT", ["X", "b", "cores"], ["Y"])
    with pytest.raises(errors.GradientError):
        core.GradientRegistry.GetGradientForOp(op, ["Y_grad"])
