"""benchmarks/bench_lstm.py at toy sizes, so the benchmark cannot rot: the NumPy
floor agrees with caffe2rnn (outputs and every gradient), each contender is
timed on each kernel path (executor off and on), and the per-op cost table covers both step nets."""

import importlib.util
import os

import numpy as np
import pytest

BENCH = os.path.join(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks", "bench_lstm.py"
)
THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


@pytest.fixture(scope="module")
def bench():
    saved = {v: os.environ.get(v) for v in THREAD_VARS}
    spec = importlib.util.spec_from_file_location("bench_lstm", BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # sets 1-thread variables: put them back
    for var, value in saved.items():
        if value is None:
            os.environ.pop(var, None)
        else:
            os.environ[var] = value
    return module


def test_floor_matches_caffe2rnn_and_every_contender_is_timed(bench):
    rows, model = bench.time_shape((3, 2, 5, 4), repeat=1, with_torch=False)
    names = [name for name, _, _ in rows]
    assert names[0] == "NumPy floor" and "caffe2rnn executor on (python)" in names
    assert {bench.BLAS_ALONE, bench.PRODUCTS_AND_CELL} <= set(names)
    if bench.kernels.cython_available():
        assert {
            "caffe2rnn executor off (cython)",
            "caffe2rnn executor on (cython)",
            "caffe2rnn executor, %d threads" % bench.THREADS,
        } <= set(names)
    assert all(f > 0 and fb > 0 for _, f, fb in rows)
    costs = bench.step_op_costs(model, repeat=2)
    types = {op_type for _, op_type in costs}
    assert {"FC", "LSTMUnit", "LSTMUnitGradient", "FCGradient", "rnn_internal_apply_link"} <= types


def test_floor_check_catches_a_wrong_gradient(bench):
    p = bench.make_problem(2, 2, 3, 4)
    floor, model = bench.NumpyLSTM(p), bench.Caffe2RNNLSTM(p)
    bench.check_against_floor(p, floor, model)
    p["w_h"] += np.float32(0.1)  # the floor now sees other weights than caffe2rnn
    with pytest.raises(AssertionError, match="caffe2rnn vs NumPy floor"):
        bench.check_against_floor(p, bench.NumpyLSTM(p), model)


def test_quick_run_prints_the_tables(bench, capsys, monkeypatch):
    monkeypatch.setattr(bench, "QUICK_SHAPES", [(2, 2, 3, 4)])
    bench.main(["--quick", "--no-torch", "--repeat", "1"])
    out = capsys.readouterr().out
    assert "NumPy floor" in out and "us per op on average" in out
    assert "reproduce: python benchmarks/bench_lstm.py --quick --no-torch" in out


def test_stacked_layers_threaded_equal_sequential_and_are_timed(bench):
    rows = bench.time_stacked(bench.QUICK_STACKED_SHAPE, repeat=1, with_torch=False)
    assert [name for name, _ in rows] == [
        "caffe2rnn executor on",
        "caffe2rnn executor, %d threads" % bench.THREADS,
    ]
    assert all(ms > 0 for _, ms in rows)


def test_blas_products_are_every_matmul_of_one_run(bench):
    """The "BLAS products alone" contender: the outer FC's product and one per
    step forward; FCGradient's three outside and three per step backward."""
    T = 3
    model = bench.Caffe2RNNLSTM(bench.make_problem(T, 2, 5, 4)).use_executor(True)
    # a loop this short runs op by op first and builds on its second run
    # (executor.BUILD_ON_FIRST_RUN_FROM); the third chooses its steady calls
    for _ in range(3):
        model.forward_backward()
    forward, both = bench.blas_products(model)
    assert len(forward) == 1 + T and len(both) == (1 + T) + 3 * (1 + T)
    assert all(call.func is np.matmul for call in both)
    assert forward == both[: len(forward)]


def test_products_and_cell_adds_one_cell_kernel_per_step_and_changes_no_array_of_the_run(bench):
    T = 6
    model = bench.Caffe2RNNLSTM(bench.make_problem(T, 2, 5, 4)).use_executor(True)
    for _ in range(3):  # the plans built and steady (a loop this short builds on its 2nd run)
        model.forward_backward()
    forward, both = bench.blas_products(model)
    forward_cell, both_cell = bench.products_and_cell(model)
    assert len(forward_cell) == len(forward) + T
    assert len(both_cell) == len(both) + 2 * T
    # the cell kernels write scratch: the run's arrays keep the run's values
    parts = [call for _, call in bench._plan_parts(model)]
    run_arrays = {id(a): a for call in parts for a in call.args if isinstance(a, np.ndarray)}
    assert sum(call.name in bench.CELL_KERNELS for call in parts) == 2 * T
    before = {k: a.copy() for k, a in run_arrays.items()}
    bench.kernels.current().run_step_plan(both_cell, 0, [])
    changed = [k for k, a in run_arrays.items() if not np.array_equal(a, before[k], equal_nan=True)]
    written = [c.args[2] for c in parts if c.name == "matmul"]
    # only memory a product writes (its output: gates in place, the products' temporaries)
    assert all(any(np.shares_memory(run_arrays[k], w) for w in written) for k in changed)
    assert len(changed) < len(run_arrays)
