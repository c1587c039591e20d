"""Blob queues: FIFO order, swap semantics, blocking across threads, closing,
timeouts, the Safe* status outputs, and clear errors (never a hang)."""

import threading
import time

import numpy as np
import pytest

from caffe2rnn import core
from caffe2rnn.errors import (
    ArgumentError,
    DTypeError,
    EnforceNotMet,
    QueueClosedError,
    QueueTimeoutError,
    ShapeError,
)
from caffe2rnn.operators.queue import BlobsQueue
from caffe2rnn.proto import caffe2_pb2
from caffe2rnn.runtime import Workspace

#: Every wait in these tests is bounded: a broken queue fails, it never hangs.
JOIN_SECONDS = 30.0  # a float: Caffe2 reads timeout_secs with GetSingleArgument<float>


def op(op_type, inputs, outputs, **args):
    return core.CreateOperator(op_type, inputs, outputs, **args)


def make_queue(ws, capacity=2, num_blobs=1, name="q"):
    ws.run_operator_once(op("CreateBlobsQueue", [], [name], capacity=capacity, num_blobs=num_blobs))
    return ws.blob(name).value


def enqueue(ws, *values, queue="q"):
    names = ["in%d" % j for j in range(len(values))]
    for name, value in zip(names, values):
        ws.feed(name, value)
    ws.run_operator_once(op("EnqueueBlobs", [queue] + names, names))


def dequeue(ws, n=1, queue="q", **args):
    names = ["out%d" % j for j in range(n)]
    ws.run_operator_once(op("DequeueBlobs", [queue], names, **args))
    return [ws.fetch(name) for name in names]


def test_fifo_records_of_several_blobs():
    ws = Workspace()
    queue = make_queue(ws, capacity=3, num_blobs=2)
    assert isinstance(queue, BlobsQueue) and queue.capacity == 3 and len(queue) == 0
    assert b"std::shared_ptr<caffe2::BlobsQueue>" in ws.fetch("q")
    for k in range(3):
        enqueue(ws, np.full((k + 1, 2), k, np.float32), np.array([k], np.int32))
    assert len(queue) == 3
    for k in range(3):
        x, label = dequeue(ws, 2)
        np.testing.assert_array_equal(x, np.full((k + 1, 2), k, np.float32))
        assert label.tolist() == [k]
    assert len(queue) == 0


def test_enqueue_and_dequeue_swap_with_named_slot_blobs():
    ws = Workspace()
    make_queue(ws, capacity=2)
    assert {"q_0_0", "q_1_0"} <= set(ws.blobs())
    enqueue(ws, np.arange(3.0))
    assert ws.blob("in0").value is None  # swapped with the empty slot
    np.testing.assert_array_equal(ws.fetch("q_0_0"), np.arange(3.0))
    ws.feed("out0", np.zeros(1))
    dequeue(ws)
    np.testing.assert_array_equal(ws.fetch("out0"), np.arange(3.0))
    np.testing.assert_array_equal(ws.fetch("q_0_0"), np.zeros(1))  # the old content


def test_lstm_benchmark_pattern_through_nets():
    """Fill with one net run per batch, then dequeue a batch per training-net run."""
    ws = Workspace()
    ws.run_net_once(_net("init", [op("CreateBlobsQueue", [], ["inputqueue"], capacity=4)]))
    fill = _net("fill", [op("EnqueueBlobs", ["inputqueue", "scratch"], ["scratch"])])
    batches = [np.random.RandomState(k).rand(k + 1, 2, 3).astype(np.float32) for k in range(4)]
    for batch in batches:
        ws.feed("scratch", batch)
        ws.run_net_once(fill)
    ws.create_net(_net("train", [op("DequeueBlobs", ["inputqueue"], ["input_data"])]))
    for batch in batches:
        ws.run_net("train")
        np.testing.assert_array_equal(ws.fetch("input_data"), batch)


def _net(name, ops):
    netdef = caffe2_pb2.NetDef()
    netdef.name = name
    netdef.op.extend(ops)
    return netdef


def test_dequeue_blocks_until_another_thread_enqueues():
    ws = Workspace()
    make_queue(ws, capacity=1)
    got, errors = [], []

    def consumer():
        try:
            got.extend(dequeue(ws, timeout_secs=JOIN_SECONDS))
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    thread = threading.Thread(target=consumer)
    thread.start()
    time.sleep(0.1)  # the consumer is (very likely) waiting by now; either way it must get it
    enqueue(ws, np.array([7.0]))
    thread.join(JOIN_SECONDS)
    assert not thread.is_alive() and not errors
    assert got[0].tolist() == [7.0]


def test_enqueue_blocks_while_full_until_a_reader_makes_room():
    ws = Workspace()
    make_queue(ws, capacity=1)
    enqueue(ws, np.array([1.0]))
    done = threading.Event()

    def producer():
        enqueue(ws, np.array([2.0]))
        done.set()

    thread = threading.Thread(target=producer)
    thread.start()
    assert not done.wait(0.1)  # full: the producer waits
    assert dequeue(ws)[0].tolist() == [1.0]
    thread.join(JOIN_SECONDS)
    assert done.is_set() and dequeue(ws)[0].tolist() == [2.0]


def test_close_wakes_a_waiting_reader_with_a_clear_error():
    ws = Workspace()
    make_queue(ws)
    errors = []

    def consumer():
        try:
            dequeue(ws)
        except Exception as exc:  # noqa: BLE001 - checked below
            errors.append(exc)

    thread = threading.Thread(target=consumer)
    thread.start()
    time.sleep(0.1)
    ws.run_operator_once(op("CloseBlobsQueue", ["q"], []))
    thread.join(JOIN_SECONDS)
    assert not thread.is_alive()
    assert isinstance(errors[0], QueueClosedError) and isinstance(errors[0], EOFError)
    assert "queue 'q' failed: it is closed and empty" in str(errors[0])


def test_closed_queue_drains_then_fails():
    ws = Workspace()
    queue = make_queue(ws, capacity=3)
    enqueue(ws, np.array([1.0]))
    ws.run_operator_once(op("CloseBlobsQueue", ["q"], []))
    assert queue.closed
    enqueue(ws, np.array([2.0]))  # Caffe2 still accepted records while there was room
    assert [dequeue(ws)[0].tolist() for _ in range(2)] == [[1.0], [2.0]]
    with pytest.raises(QueueClosedError, match=r"DequeueBlobs.*dequeue from queue 'q' failed"):
        dequeue(ws)


def test_safe_ops_report_status_instead_of_failing():
    ws = Workspace()
    make_queue(ws, capacity=1)
    ws.feed("x", np.array([3.0]))
    ws.run_operator_once(op("SafeEnqueueBlobs", ["q", "x"], ["x", "full"]))
    assert ws.fetch("full").shape == () and not ws.fetch("full")
    ws.run_operator_once(op("CloseBlobsQueue", ["q"], []))
    ws.feed("x", np.array([4.0]))
    ws.run_operator_once(op("SafeEnqueueBlobs", ["q", "x"], ["x", "full"]))
    assert ws.fetch("full")  # closed and full: not enqueued
    ws.run_operator_once(op("SafeDequeueBlobs", ["q"], ["y", "empty"]))
    assert ws.fetch("y").tolist() == [3.0] and not ws.fetch("empty")
    ws.run_operator_once(op("SafeDequeueBlobs", ["q"], ["y", "empty"]))
    assert ws.fetch("empty") and ws.fetch("y").tolist() == [3.0]


def test_a_wait_nobody_can_end_fails_at_once_instead_of_hanging():
    ws = Workspace()
    make_queue(ws, capacity=1)
    with pytest.raises(
        QueueTimeoutError, match="dequeue from queue 'q' would wait forever: it is empty"
    ):
        dequeue(ws)
    enqueue(ws, np.array([1.0]))
    ws.feed("in0", np.array([2.0]))
    with pytest.raises(
        QueueTimeoutError, match="enqueue into queue 'q' would wait forever: it is full"
    ):
        ws.run_operator_once(op("EnqueueBlobs", ["q", "in0"], ["in0"]))
    assert ws.fetch("in0").tolist() == [2.0]  # not swapped: nothing half-done


def test_a_bounded_wait_nobody_can_end_lasts_its_timeout():
    ws = Workspace()
    make_queue(ws)
    start = time.monotonic()
    with pytest.raises(QueueTimeoutError, match=r"timed out after 0.2 s"):
        dequeue(ws, timeout_secs=0.2)
    assert time.monotonic() - start >= 0.19  # Caffe2 waited it out


def test_timeout_secs_bounds_the_wait():
    ws = Workspace()
    make_queue(ws)
    idle = threading.Thread(target=time.sleep, args=(1.0,))  # another thread keeps us waiting
    idle.start()
    try:
        with pytest.raises(QueueTimeoutError, match=r"timed out after 0.2 s") as info:
            dequeue(ws, timeout_secs=0.2)
        assert isinstance(info.value, TimeoutError)
    finally:
        idle.join(JOIN_SECONDS)


def test_type_and_rank_mismatches_are_clear_errors():
    ws = Workspace()
    make_queue(ws, capacity=4, num_blobs=2)
    enqueue(ws, np.zeros((2, 3), np.float32), np.zeros(2, np.int32))
    enqueue(ws, np.zeros((5, 3), np.float32), np.zeros(5, np.int32))  # lengths may vary
    with pytest.raises(
        DTypeError,
        match=r"blob 'in0' holds a 2-D float64 tensor; field 0 of queue 'q' holds a 2-D float32",
    ):
        enqueue(ws, np.zeros((2, 3)), np.zeros(2, np.int32))
    with pytest.raises(
        ShapeError,
        match=r"blob 'in1' holds a 2-D int32 tensor; field 1 of queue 'q' holds a 1-D int32",
    ):
        enqueue(ws, np.zeros((2, 3), np.float32), np.zeros((2, 1), np.int32))
    ws.create_blob("empty")
    with pytest.raises(DTypeError, match=r"blob 'empty' \(field 0 of queue 'q'\) is empty"):
        ws.run_operator_once(op("EnqueueBlobs", ["q", "empty", "in1"], ["empty", "in1"]))
    assert len(ws.blob("q").value) == 2


@pytest.mark.parametrize(
    "make, error, match",
    [
        (
            lambda: op("EnqueueBlobs", ["q", "a"], ["a"]),
            DTypeError,
            r"input 0 \('q'\) holds .*float32.*expected a queue",
        ),
        (lambda: op("DequeueBlobs", ["q"], ["a"]), DTypeError, r"input 0 \('q'\)"),
        (lambda: op("CloseBlobsQueue", ["q"], []), DTypeError, r"input 0 \('q'\)"),
    ],
)
def test_ops_need_a_queue(make, error, match):
    ws = Workspace()
    ws.feed("q", np.zeros(1, np.float32))
    ws.feed("a", np.zeros(1, np.float32))
    with pytest.raises(error, match=match):
        ws.run_operator_once(make())


def test_record_size_and_argument_errors():
    ws = Workspace()
    make_queue(ws, num_blobs=2)
    ws.feed("a", np.zeros(1))
    ws.feed("b", np.zeros(1))
    with pytest.raises(
        ShapeError, match=r"queue 'q' holds records of 2 blobs; EnqueueBlobs names 1"
    ):
        ws.run_operator_once(op("EnqueueBlobs", ["q", "a"], ["a"]))
    with pytest.raises(ShapeError, match=r"DequeueBlobs names 3"):
        ws.run_operator_once(op("DequeueBlobs", ["q"], ["x", "y", "z"]))
    # queue_ops.cc: EnforceInplace([](int input, int output) { return input == output + 1; })
    with pytest.raises(EnforceNotMet, match="EnqueueBlobs requires input 1 and output 0 to be"):
        ws.run_operator_once(op("EnqueueBlobs", ["q", "a", "b"], ["c", "d"]))
    with pytest.raises(EnforceNotMet, match=r"does not allow input 1 \(.a.\) .* as output 1"):
        ws.run_operator_once(op("EnqueueBlobs", ["q", "a", "b"], ["b", "a"]))
    with pytest.raises(EnforceNotMet, match="does not allow input 0 .* as output 0"):
        ws.run_operator_once(op("SafeEnqueueBlobs", ["q", "a", "b"], ["q", "b", "s"]))
    # NumInputsOutputs: inputs == outputs + 1 (EnqueueBlobs), inputs == outputs (Safe)
    with pytest.raises(EnforceNotMet, match="one input more than outputs"):
        ws.run_operator_once(op("EnqueueBlobs", ["q", "a", "b"], ["a"]))
    with pytest.raises(EnforceNotMet, match="as many outputs as inputs"):
        ws.run_operator_once(op("SafeEnqueueBlobs", ["q", "a"], ["a", "s", "t"]))
    with pytest.raises(ArgumentError, match="capacity"):
        ws.run_operator_once(op("CreateBlobsQueue", [], ["q2"], capacity=-2))
    with pytest.raises(ArgumentError, match="fieldNames"):
        ws.run_operator_once(op("CreateBlobsQueue", [], ["q2"], num_blobs=2, field_names=["x"]))
    with pytest.raises(EnforceNotMet, match="Queue internal blob already exists: q_0_0"):
        ws.run_operator_once(op("CreateBlobsQueue", [], ["q"], enforce_unique_name=1))
    ws.feed("r_1_0", np.zeros(1))
    with pytest.raises(EnforceNotMet, match="Queue internal blob already exists: r_1_0"):
        ws.run_operator_once(op("CreateBlobsQueue", [], ["r"], capacity=2, enforce_unique_name=1))
    assert not ws.has_blob("r_0_0")  # nothing half-made


def test_queues_of_capacity_or_num_blobs_zero_are_made_as_in_caffe2():
    """blobs_queue.h (0cdd09da6): the constructor loops ``capacity`` x ``num_blobs`` times and
    enforces nothing else; a capacity-0 queue never has room (canWrite: writer != reader + 0)."""
    from caffe2rnn import errors

    ws = Workspace()
    ws.run_operator_once(core.CreateOperator("CreateBlobsQueue", [], ["q0"], capacity=0))
    ws.run_operator_once(core.CreateOperator("CreateBlobsQueue", [], ["qn"], num_blobs=0))
    ws.feed("x", np.ones(2, np.float32))
    with pytest.raises(errors.QueueTimeoutError):  # alone: nobody could ever make room
        ws.run_operator_once(core.CreateOperator("EnqueueBlobs", ["q0", "x"], ["x"]))
    ws.run_operator_once(core.CreateOperator("CloseBlobsQueue", ["q0"], []))
    ws.run_operator_once(core.CreateOperator("SafeEnqueueBlobs", ["q0", "x"], ["x", "status"]))
    assert bool(ws.fetch("status"))  # closed and "full": the enqueue failed
    with pytest.raises(errors.ArgumentError, match="must be >= 0"):
        ws.run_operator_once(core.CreateOperator("CreateBlobsQueue", [], ["qm"], capacity=-1))


def test_safe_dequeue_num_records_concatenates_as_the_cpp():
    """SafeDequeueBlobsOp::dequeueMany (queue_ops.h at 042e8ede4): record 0 copied, later ones
    appended along dim 0; a closed queue after >= 1 record: status False (``return i > 0``)."""
    ws = Workspace()
    ws.run_operator_once(
        core.CreateOperator("CreateBlobsQueue", [], ["q"], capacity=4, num_blobs=2)
    )
    records = [(np.full((1, 2), k, np.float32), np.array([k], np.int64)) for k in range(3)]
    for a, b in records:
        ws.feed("a", a)
        ws.feed("b", b)
        ws.run_operator_once(core.CreateOperator("EnqueueBlobs", ["q", "a", "b"], ["a", "b"]))
    ws.run_operator_once(core.CreateOperator("CloseBlobsQueue", ["q"], []))
    op = core.CreateOperator("SafeDequeueBlobs", ["q"], ["x", "y", "s"], num_records=2)
    ws.run_operator_once(op)
    np.testing.assert_array_equal(ws.fetch("x"), np.concatenate([records[0][0], records[1][0]]))
    np.testing.assert_array_equal(ws.fetch("y"), [0, 1])
    assert not ws.fetch("s")
    ws.run_operator_once(op)  # one record left, then closed: a batch of one, status False
    np.testing.assert_array_equal(ws.fetch("y"), [2])
    assert not ws.fetch("s")
    ws.run_operator_once(op)  # nothing left: status True, outputs as they were
    assert ws.fetch("s")
    np.testing.assert_array_equal(ws.fetch("y"), [2])
    with pytest.raises(ArgumentError, match="num_records must be > 0"):
        ws.run_operator_once(
            core.CreateOperator("SafeDequeueBlobs", ["q"], ["x", "y", "s"], num_records=0)
        )


def test_safe_dequeue_does_not_read_timeout_secs():
    """SafeDequeueBlobsOp (queue_ops.h, every era) called ``queue->blockingRead(outputs)``
    with no timeout: its ``timeout_secs`` is ignored, the wait unbounded (here: a wait no
    thread can end fails at once, as every unbounded wait does)."""
    ws = Workspace()
    make_queue(ws)
    start = time.monotonic()
    with pytest.raises(QueueTimeoutError, match="would wait forever"):
        ws.run_operator_once(op("SafeDequeueBlobs", ["q"], ["y", "s"], timeout_secs=5.0))
    assert time.monotonic() - start < 4.0


def test_dequeue_timeout_secs_is_read_from_e6():
    """DequeueBlobsOp read timeout_secs from 3b789ebd2 (2017-07-13): E5's (0cdd09da6) did
    not, so its wait was unbounded (here: a wait nobody can end fails at once)."""
    ws = Workspace()
    make_queue(ws)
    dequeue_op = op("DequeueBlobs", ["q"], ["y"], timeout_secs=0.2)
    with pytest.raises(QueueTimeoutError, match="would wait forever"):
        ws.run_operator_once(dequeue_op, era="E5")
    with pytest.raises(QueueTimeoutError, match=r"timed out after 0.2 s"):
        ws.run_operator_once(dequeue_op, era="E6")
