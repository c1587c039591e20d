"""Blob queues: CreateBlobsQueue, EnqueueBlobs, DequeueBlobs, CloseBlobsQueue.

A ``BlobsQueue`` is a bounded, blocking, closable FIFO of *records*, each of
``num_blobs`` blobs, living in a workspace blob (``FetchBlob`` describes it as
``std::shared_ptr<caffe2::BlobsQueue>``). lstm_benchmark fills one with input
batches and its training net dequeues a batch per iteration::

    init.CreateBlobsQueue([], "inputqueue", num_blobs=1, capacity=T)
    fill.EnqueueBlobs(["inputqueue", "scratch"], ["scratch"])
    net.DequeueBlobs("inputqueue", "input_data")

Caffe2 semantics kept here:

* the queue owns ``capacity × num_blobs`` slot blobs in the workspace, named
  ``<queue>_<slot>_<field>``; enqueue and dequeue **swap** blob contents with
  a slot rather than copy. After ``EnqueueBlobs`` its data blobs therefore
  hold what the slot held (nothing, the first time round): feed them again
  before the next enqueue.
* ``EnqueueBlobs`` waits while the queue is full, ``DequeueBlobs`` while it is
  empty; ``DequeueBlobs`` gives up after ``timeout_secs`` if that argument is
  set (> 0; added in Caffe2 3b789ebd2).
* ``CloseBlobsQueue`` wakes every waiter. A closed queue still hands out the
  records it holds, and still accepts records while it has room (the
  predicate Caffe2 waited on); dequeuing from a closed, empty queue (or
  enqueuing into a closed, full one) fails. ``SafeEnqueueBlobs`` /
  ``SafeDequeueBlobs`` report that case in a last, boolean ``status`` output
  instead of failing.

Two checks Caffe2 did not make: a record's field keeps the type (and, for a
tensor, the dtype and rank) of the first record, so a mismatch is a clear
error naming the blob, not a wrong batch three ops later; and a wait that no
other thread could ever end (every other thread is itself waiting on a queue
or for other threads to finish, :mod:`caffe2rnn.runtime.blocking`) fails at
once with :class:`~caffe2rnn.errors.QueueTimeoutError` instead of hanging —
unless the op has a ``timeout_secs``: a bounded wait lasts its timeout, as in
Caffe2 (E6's ``hypothesis_test.py`` times it).

Caffe2: caffe2/queue/blobs_queue.h, queue_ops.{h,cc}.
"""

import threading
import time

import numpy as np

from .. import eras
from ..errors import (
    ArgumentError,
    DTypeError,
    EnforceNotMet,
    QueueClosedError,
    QueueTimeoutError,
    ShapeError,
)
from ..runtime import blocking
from ..runtime.blob import Blob
from ..runtime.registry import register, register_gradient
from .base import Operator, describe_content
from .gradient_maker import NoGradient

#: How often a waiting op re-checks whether another thread is still running.
_POLL_SECONDS = 0.05


def _signature(value):
    """What every record must agree on for one field."""
    if type(value) is np.ndarray:
        return ("tensor", value.dtype, value.ndim)
    return ("object", type(value))


def _describe(signature):
    if signature[0] == "tensor":
        return "a %d-D %s tensor" % (signature[2], signature[1])
    return "a %s" % signature[1].__name__


class BlobsQueue:
    """A bounded FIFO of records of blobs, safe to use from several threads."""

    caffe2_type_name = "std::shared_ptr<caffe2::BlobsQueue>"

    def __init__(self, ws, name, capacity, num_blobs, enforce_unique_name=False, field_names=()):
        self.name = name
        self.num_blobs = num_blobs
        self.field_names = list(field_names)
        names = [["%s_%d_%d" % (name, i, j) for j in range(num_blobs)] for i in range(capacity)]
        if enforce_unique_name:  # checked before any slot blob is made
            for slot_name in (n for row in names for n in row):
                if ws.get_blob(slot_name) is not None:
                    raise EnforceNotMet("Queue internal blob already exists: %s" % slot_name)
        self._slots = [[ws.create_blob(n) for n in row] for row in names]
        self._reader = 0  # records read so far
        self._writer = 0  # records written so far; writer - reader are queued
        self._closing = False
        self._fields = [None] * num_blobs
        self._cond = threading.Condition()

    @property
    def capacity(self):
        return len(self._slots)

    def __len__(self):
        return self._writer - self._reader

    @property
    def closed(self):
        return self._closing

    def close(self):
        with self._cond:
            self._closing = True
            self._cond.notify_all()

    def check_record(self, blobs):
        """Refuse a record whose blobs do not match the queue's fields."""
        for j, blob in enumerate(blobs):
            if blob.value is None:
                raise DTypeError(
                    "blob '%s' (field %d of queue '%s') is empty; enqueue needs a value"
                    % (blob.name, j, self.name)
                )
            signature = _signature(blob.value)
            expected = self._fields[j]
            if expected is not None and signature != expected:
                error = ShapeError if signature[:2] == expected[:2] else DTypeError
                raise error(
                    "blob '%s' holds %s; field %d of queue '%s' holds %s"
                    % (blob.name, _describe(signature), j, self.name, _describe(expected))
                )

    def _wait(self, ready, timeout, what):
        """Wait (holding the lock) until ``ready()`` or the queue is closing."""
        deadline = None if not timeout or timeout <= 0 else time.monotonic() + timeout

        def can_go():
            return self._closing or ready()

        if can_go():
            return
        with blocking.waiting(can_go, bounded=deadline is not None) as me:
            while not can_go():
                # A bounded wait ends by itself: it waits out its timeout, as Caffe2 did.
                if deadline is None and blocking.nobody_can_help(me):
                    raise QueueTimeoutError(
                        "%s queue '%s' would wait forever: it is %s and no other thread "
                        "is running that could change that"
                        % (what, self.name, "empty" if what == "dequeue from" else "full")
                    )
                remaining = _POLL_SECONDS
                if deadline is not None:
                    remaining = deadline - time.monotonic()
                    if remaining <= 0:
                        raise QueueTimeoutError(
                            "%s queue '%s' timed out after %g s" % (what, self.name, timeout)
                        )
                self._cond.wait(min(remaining, _POLL_SECONDS))

    def _swap(self, blobs, slot):
        for blob, cell in zip(blobs, slot):
            blob.value, cell.value = cell.value, blob.value

    def write(self, blobs, timeout=None):
        """Swap ``blobs`` into the next free slot; False if closed and full."""
        with self._cond:
            self.check_record(blobs)
            self._wait(lambda: len(self) < self.capacity, timeout, "enqueue into")
            if len(self) == self.capacity:
                return False
            self.check_record(blobs)  # again: a record written meanwhile may fix a field
            for j, blob in enumerate(blobs):
                self._fields[j] = self._fields[j] or _signature(blob.value)
            self._swap(blobs, self._slots[self._writer % self.capacity])
            self._writer += 1
            self._cond.notify_all()
            return True

    def read(self, blobs, timeout=None):
        """Swap the oldest record into ``blobs``; False if closed and empty."""
        with self._cond:
            self._wait(lambda: len(self) > 0, timeout, "dequeue from")
            if len(self) == 0:
                return False
            self._swap(blobs, self._slots[self._reader % self.capacity])
            self._reader += 1
            self._cond.notify_all()
            return True

    def __repr__(self):
        return "BlobsQueue(%r, %d/%d records%s)" % (
            self.name,
            len(self),
            self.capacity,
            ", closed" if self._closing else "",
        )


@register("CreateBlobsQueue", inputs=0, outputs=1)
class CreateBlobsQueue(Operator):
    """A new, empty queue named after the output blob.

    Arguments: ``capacity`` (records, default 1), ``num_blobs`` (blobs per
    record, default 1), ``enforce_unique_name`` (refuse slot blobs that
    already exist), ``field_names`` (one per blob).

    As in Caffe2 (queue_ops.h, blobs_queue.h at 0cdd09da6), ``capacity=0`` and
    ``num_blobs=0`` make a queue: one of capacity 0 never has room, so an
    enqueue waits until another thread closes it (alone, it fails at once with
    :class:`~caffe2rnn.errors.QueueTimeoutError`, module docstring); one of
    no blobs cannot be used by EnqueueBlobs or DequeueBlobs, whose schemas
    need at least one blob. A negative size, which Caffe2 turned into a huge
    ``size_t`` and failed to allocate, is refused. ``field_names`` given as
    ints is refused: Caffe2's ``GetRepeatedArgument<string>`` read an empty
    list there and ignored them (caffe2rnn refuses a list in the wrong field
    everywhere, :mod:`caffe2rnn.runtime.arguments`).
    """

    def setup(self):
        self.capacity = self.args.single("capacity", 1, int)
        self.num_blobs = self.args.single("num_blobs", 1, int)
        self.enforce_unique_name = self.args.single("enforce_unique_name", False, bool)
        self.field_names = self.args.repeated("field_names", kind=str)
        if self.capacity < 0 or self.num_blobs < 0:
            raise ArgumentError(
                "capacity (%d) and num_blobs (%d) must be >= 0 (Caffe2 made them size_t)"
                % (self.capacity, self.num_blobs)
            )
        if self.field_names and len(self.field_names) != self.num_blobs:
            raise ArgumentError(
                "Wrong number of fieldNames provided: %d field_names for num_blobs=%d"
                % (len(self.field_names), self.num_blobs)
            )

    def run(self):
        name = self.def_.output[0]
        queue = BlobsQueue(
            self.ws,
            name,
            self.capacity,
            self.num_blobs,
            self.enforce_unique_name,
            self.field_names,
        )
        self.set_output(0, queue)


def queue_input(op, i=0):
    """Input ``i`` of ``op``, which must hold a queue made by CreateBlobsQueue."""
    value = op.inputs[i].value
    if not isinstance(value, BlobsQueue):
        raise DTypeError(
            "input %d ('%s') holds %s; expected a queue made by CreateBlobsQueue"
            % (i, op.input_name(i), describe_content(op.inputs[i]))
        )
    return value


class _QueueOp(Operator):
    """Ops that move one record between a queue (input 0) and data blobs."""

    status = False  # the Safe* ops add a last, boolean status output

    def data_blobs(self):
        return self.outputs[:-1] if self.status else self.outputs

    def queue(self):
        queue = queue_input(self)
        blobs = self.data_blobs()
        if len(blobs) != queue.num_blobs:
            raise ShapeError(
                "queue '%s' holds records of %d blobs; %s names %d: %s"
                % (
                    self.input_name(0),
                    queue.num_blobs,
                    self.op_type,
                    len(blobs),
                    [b.name for b in blobs],
                )
            )
        return queue, blobs

    def finish(self, ok, failure):
        if self.status:
            self.output(len(self.outputs) - 1, (), np.bool_)[...] = not ok
        elif not ok:
            raise QueueClosedError(failure % self.input_name(0))


def _one_more_input(n_in, n_out):
    """one input more than outputs (the queue)"""
    return n_in == n_out + 1


def _same_count(n_in, n_out):
    """as many outputs as inputs (the blobs, then the status)"""
    return n_in == n_out


def _shifted_by_queue(i, j):
    """EnforceInplace(input == output + 1): blob k is input k + 1 and output k."""
    return i == j + 1


@register(
    "EnqueueBlobs",
    inputs=(2, None),
    outputs=(1, None),
    counts=_one_more_input,
    enforce_inplace=_shifted_by_queue,
)
class EnqueueBlobs(_QueueOp):
    """``[queue, b_1 ... b_k] → [b_1 ... b_k]``: enqueue one record, in place."""

    def setup(self):
        data_in = list(self.def_.input[1:])
        data_out = [b.name for b in self.data_blobs()]
        if data_in != data_out:
            raise EnforceNotMet(
                "%s takes the queue and the record's blobs as inputs and the same blobs, "
                "in the same order, as outputs%s; got inputs %s, outputs %s"
                % (
                    self.op_type,
                    " (then the status)" if self.status else "",
                    list(self.def_.input),
                    list(self.def_.output),
                )
            )

    def run(self):
        queue, blobs = self.queue()
        ok = queue.write(blobs)
        self.finish(ok, "enqueue into queue '%s' failed: it is closed and full")


@register("DequeueBlobs", inputs=1, outputs=(1, None))
class DequeueBlobs(_QueueOp):
    """``queue → [b_1 ... b_k]``: the oldest record; waits while the queue is empty.

    ``timeout_secs`` (> 0) bounds the wait (:class:`QueueTimeoutError`); from
    3b789ebd2 (E6; era policy ``dequeue_timeout``).
    """

    def setup(self):
        self.timeout = 0.0  # no limit (a wait nobody can end still fails at once)
        if self.era is None or eras.get(self.era).dequeue_timeout:
            self.timeout = self.args.single("timeout_secs", 0.0, float)

    def run(self):
        queue, blobs = self.queue()
        ok = queue.read(blobs, self.timeout)
        self.finish(ok, "dequeue from queue '%s' failed: it is closed and empty")


@register("CloseBlobsQueue", inputs=1, outputs=0)
class CloseBlobsQueue(Operator):
    """Close the queue: waiters wake up; reads drain what is left."""

    def run(self):
        queue_input(self).close()


@register(
    "SafeEnqueueBlobs",
    inputs=(2, None),
    outputs=(2, None),
    counts=_same_count,
    enforce_inplace=_shifted_by_queue,
)
class SafeEnqueueBlobs(EnqueueBlobs):
    """EnqueueBlobs with a last output ``status``: True when the queue was closed and full."""

    status = True


@register("SafeDequeueBlobs", inputs=1, outputs=(2, None))
class SafeDequeueBlobs(DequeueBlobs):
    """DequeueBlobs with a last output ``status``: True when the queue was closed and empty.

    It waits without a time limit: ``timeout_secs`` is not read (Caffe2's
    SafeDequeueBlobsOp never read it).

    From E6 (042e8ede4, queue_ops.h) ``num_records`` (default 1, > 0) dequeues
    up to that many records and concatenates each field's tensors along dim 0
    (``Tensor::Extend``); a queue closed after at least one record ends the
    batch early with status False, as the C++ returned ``i > 0``. The records
    must agree in their dims after the first (Caffe2 copied the bytes into an
    output grown by the first dim only: other dims were a write past its end).
    """

    status = True

    def setup(self):
        # no timeout_secs: SafeDequeueBlobsOp called blockingRead without one
        # (queue_ops.h at every era); the argument is DequeueBlobs' only
        self.timeout = 0.0
        self.num_records = 1
        if self.era is None or eras.get(self.era).safe_dequeue_num_records:
            self.num_records = self.args.single("num_records", 1, int)
            if self.num_records <= 0:
                raise ArgumentError(
                    "SafeDequeueBlobs: num_records must be > 0, got %d" % self.num_records
                )

    def run(self):
        if self.num_records == 1:
            super().run()
            return
        queue, blobs = self.queue()
        scratch = [Blob("%s/record_%d" % (self.def_.output[j], j)) for j in range(len(blobs))]
        parts = [[] for _ in blobs]
        for _ in range(self.num_records):
            if not queue.read(scratch, self.timeout):
                break
            for j, blob in enumerate(scratch):
                value = blob.value
                if type(value) is not np.ndarray or value.ndim == 0:
                    raise ShapeError(
                        "SafeDequeueBlobs: field %d of queue '%s' holds %s; num_records > 1 "
                        "concatenates tensors of at least one dimension"
                        % (j, self.input_name(0), describe_content(blob))
                    )
                if parts[j] and (
                    value.shape[1:] != parts[j][0].shape[1:] or value.dtype != parts[j][0].dtype
                ):
                    raise ShapeError(
                        "SafeDequeueBlobs: field %d of queue '%s': a record of %s %s after "
                        "one of %s %s (the dims after the first must agree)"
                        % (
                            j,
                            self.input_name(0),
                            value.dtype,
                            value.shape,
                            parts[j][0].dtype,
                            parts[j][0].shape,
                        )
                    )
                parts[j].append(value.copy())
        got = len(parts[0]) if parts else 0
        if got:
            for j, out in enumerate(blobs):
                out.value = np.concatenate(parts[j], axis=0)
        self.finish(got > 0, "dequeue from queue '%s' failed: it is closed and empty")


for _op_type in (
    "CreateBlobsQueue",
    "EnqueueBlobs",
    "DequeueBlobs",
    "CloseBlobsQueue",
    "SafeEnqueueBlobs",
    "SafeDequeueBlobs",
):
    register_gradient(_op_type)(NoGradient)
