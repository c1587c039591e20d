"""The threaded RNN executor's schedule: which calls wait for which, which
lane runs them, and the lane loop on both kernel paths. The schedule reads
only what each bound call declares (reads, writes, GIL, cost)."""

import concurrent.futures
import threading

import numpy as np
import pytest

from caffe2rnn import kernels
from caffe2rnn.operators.bound_call import BoundCall
from caffe2rnn.operators.rnn import schedule

PATHS = ["python"] + (["cython"] if kernels.cython_available() else [])


def add(a, b, out):
    return BoundCall.elementwise(np.add, a, b, out)


def test_read_after_write_write_after_read_and_write_after_write_on_overlapping_views():
    a, y, b, c, d = np.zeros(8), np.ones(4), np.zeros(4), np.zeros(4), np.zeros(4)
    calls = [
        add(y, y, a[:4]),  # 0 writes a[0:4]
        add(a[2:6], y, b),  # 1 reads a[2:6]: after 0 (RAW)
        add(c, y, a[4:]),  # 2 writes a[4:8]: after 1, which read a[4:6] (WAR)
        BoundCall.copy(a, np.arange(8.0)),  # 3 writes all of a (WAW, WAR)
        add(d, y, d),  # 4 touches only d (and reads y, as others do): free
    ]
    assert schedule.dependencies(calls) == [[], [0], [1], [0, 1, 2], []]


def test_disjoint_rows_of_one_tensor_are_independent():
    states = np.zeros((4, 2, 3))
    x = np.ones((2, 3))
    calls = [add(x, x, states[t]) for t in range(4)]
    calls.append(add(states[1], states[2], x))  # reads rows 1 and 2, writes x (read by all)
    assert schedule.dependencies(calls) == [[], [], [], [], [0, 1, 2, 3]]


def test_a_call_that_declares_nothing_is_a_barrier():
    a, b = np.zeros(2), np.zeros(2)
    unknown = BoundCall(print, (), "print", None, None)  # an op run as itself
    calls = [add(a, a, a), add(b, b, b), unknown, add(b, b, b)]
    assert schedule.dependencies(calls) == [[], [], [0, 1], [1, 2]]


def test_a_call_is_ordered_by_the_rows_it_declares():
    g, og = np.zeros((5, 2, 3), np.float32), np.ones((4, 2, 3), np.float32)
    kernel = kernels.implementation("python").accumulate_input_gradient
    calls = [
        BoundCall.kernel(kernel, "accumulate", (g, og, 2, 1), (og[2],), (g[3],), False, 6),
        add(g[1], g[1], g[1]),  # another row: independent
        add(g[3], g[3], g[0]),  # reads g[3]: after 0
    ]
    assert schedule.dependencies(calls) == [[], [], [0]]


def big_product(seed, out):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((64, 256)).astype(np.float32)
    b = rng.standard_normal((256, 256)).astype(np.float32)
    return BoundCall.product(a, b, out)


def test_two_independent_chains_take_two_lanes_and_a_chain_stays_on_one():
    outs = [np.empty((64, 256), np.float32) for _ in range(2)]
    two_chains = [big_product(i, outs[i % 2]) for i in range(8)]
    sched = schedule.build(two_chains, 2)
    assert not sched.sequential
    assert sorted(map(len, sched.lanes)) == [4, 4] and sched.handoffs == 0
    one_chain = [big_product(i, outs[0]) for i in range(8)]
    assert schedule.build(one_chain, 2).sequential


def test_tiny_work_is_not_worth_a_thread():
    small = [add(np.ones(2), np.ones(2), np.zeros(2)) for _ in range(20)]
    assert schedule.build(small, 4).sequential


@pytest.mark.parametrize("path", PATHS)
def test_lanes_wait_for_each_other_and_stop_at_the_first_failure(path):
    run_lane = kernels.implementation(path).run_lane
    log, lock = [], threading.Lock()

    def step(name, fail=False):
        def call():
            with lock:
                log.append(name)
            if fail:
                raise ValueError("call %s failed" % name)

        return call

    # Lane 1's second call waits for lane 0's first; lane 0's second for lane 1's first.
    lanes = [[step("a0"), step("a1", fail=True), step("a2")], [step("b0"), step("b1"), step("b2")]]
    waits = [[None, ((1, 1),), None], [None, ((0, 1),), ((0, 3),)]]
    signals = [[True, False, False], [True, False, False]]
    progress, cond, failed = [0, 0], threading.Condition(), []
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        other = pool.submit(run_lane, lanes[1], waits[1], signals[1], 1, progress, cond, failed)
        run_lane(lanes[0], waits[0], signals[0], 0, progress, cond, failed)
        other.result(timeout=10)
    assert [(lane, p, str(exc)) for lane, p, exc in failed] == [(0, 1, "call a1 failed")]
    assert "a2" not in log and "b2" not in log  # b2 waited for a2, which never ran
    assert log.index("b0") < log.index("a1")
    if "b1" in log:  # unless lane 1 saw the failure first
        assert log.index("a0") < log.index("b1")


def test_calls_that_hold_the_gil_stay_on_their_home_lane():
    """A tiny add gains nothing from another thread (it runs under Python's
    lock): it stays on the lane of its data, or lane 0, even when lane 1 is idle."""
    outs = [np.empty((64, 256), np.float32) for _ in range(2)]
    tiny = add(np.ones(2), np.ones(2), np.zeros(2))
    calls = [big_product(0, outs[0]), big_product(1, outs[1]), tiny]
    sched = schedule.build(calls, 2)
    assert sched.lanes == [[0, 2], [1]]
    assert calls[0].releases_gil and not tiny.releases_gil
