"""CreateMutex and AtomicIter: the mutex blob, counting under it from several
threads, and clear errors when the blobs are not what the ops expect."""

import threading

import numpy as np
import pytest

from caffe2rnn import core
from caffe2rnn.errors import DTypeError, EnforceNotMet, GradientError, ShapeError
from caffe2rnn.operators.atomic import Mutex
from caffe2rnn.operators.gradient_maker import get_gradient_for_op
from caffe2rnn.proto import caffe2_pb2
from caffe2rnn.runtime import Workspace


def _workspace_with_counter():
    ws = Workspace()
    ws.run_operator_once(core.CreateOperator("CreateMutex", [], ["mutex"]))
    ws.feed("iter", np.zeros(1, np.int64))
    return ws


def test_create_mutex_makes_a_fresh_unlocked_mutex():
    ws = _workspace_with_counter()
    first = ws.blob("mutex").value
    assert isinstance(first, Mutex) and not first.locked()
    assert b"std::unique_ptr<std::mutex>" in ws.fetch("mutex")
    ws.run_operator_once(core.CreateOperator("CreateMutex", [], ["mutex"]))
    assert ws.blob("mutex").value is not first
    with pytest.raises(GradientError, match="should not call gradient"):
        get_gradient_for_op(core.CreateOperator("CreateMutex", [], ["m"]), ["m_grad"])


def test_atomic_iter_counts_once_per_run_from_many_threads():
    ws = _workspace_with_counter()
    netdef = caffe2_pb2.NetDef()
    netdef.name = "count"
    netdef.op.add().CopyFrom(core.CreateOperator("AtomicIter", ["mutex", "iter"], ["iter"]))
    ws.create_net(netdef)
    errors = []

    def count():
        try:
            ws.run_net("count", 200)
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=count) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not errors
    assert ws.fetch("iter").tolist() == [800]


def test_atomic_iter_errors_name_the_blob():
    ws = _workspace_with_counter()
    ws.feed("not_a_mutex", np.zeros(1, np.float32))
    with pytest.raises(DTypeError, match=r"input 0 \('not_a_mutex'\) holds .*expected a mutex"):
        ws.run_operator_once(core.CreateOperator("AtomicIter", ["not_a_mutex", "iter"], ["iter"]))
    ws.feed("iter", np.zeros(2, np.int64))
    with pytest.raises(ShapeError, match="'iter' has shape \\(2,\\); expected 1 element"):
        ws.run_operator_once(core.CreateOperator("AtomicIter", ["mutex", "iter"], ["iter"]))
    with pytest.raises(EnforceNotMet, match="same blob"):
        ws.run_operator_once(core.CreateOperator("AtomicIter", ["mutex", "iter"], ["other"]))


def test_atomic_fetch_add_from_threads_loses_no_update():
    ws = Workspace()
    ws.run_operator_once(core.CreateOperator("CreateMutex", [], ["mutex"]))
    ws.feed("counter", np.array(0, np.int32))
    ws.feed("one", np.array(1, np.int32))
    op = core.CreateOperator("AtomicFetchAdd", ["mutex", "counter", "one"], ["counter", "old"])

    def work():
        for _ in range(200):
            ws.run_operator_once(op)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert ws.fetch("counter") == 800 and ws.fetch("counter").dtype == np.int32
    ws.feed("counter", np.array([5], np.int32))
    ws.feed("step", np.array(np.iinfo(np.int32).max, np.int32))
    ws.run_operator_once(
        core.CreateOperator("AtomicFetchAdd", ["mutex", "counter", "step"], ["sum", "old"])
    )
    assert ws.fetch("old") == 5 and ws.fetch("old").shape == ()
    assert ws.fetch("sum") == np.iinfo(np.int32).min + 4  # wraps around as int32


def test_atomic_fetch_add_names_a_bad_blob():
    ws = Workspace()
    ws.run_operator_once(core.CreateOperator("CreateMutex", [], ["mutex"]))
    ws.feed("a", np.array(1.0, np.float32))
    ws.feed("b", np.array(1, np.int32))
    with pytest.raises(DTypeError, match=r"input 1 \('a'\)"):
        ws.run_operator_once(core.CreateOperator("AtomicFetchAdd", ["mutex", "a", "b"], ["c", "d"]))
    with pytest.raises(DTypeError, match=r"input 0 \('b'\).*CreateMutex"):
        ws.run_operator_once(core.CreateOperator("AtomicFetchAdd", ["b", "b", "b"], ["c", "d"]))
