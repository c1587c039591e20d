"""Counters: ``CreateCounter``, ``CountDown``, ``CountUp``, ``CheckCounterDone``,
``RetrieveCount``, ``ResetCounter``.

A counter is a blob holding an int64 count (Caffe2
caffe2/operators/counter_ops.{h,cc} at 0cdd09da6), used for example by
``checkpoint.py`` to stop a job after N epochs::

    counter = init_net.CreateCounter([], init_count=3)
    done = net.CountDown([counter])        # False, False, False, then True...

* ``CreateCounter([] → c, init_count=0)``: a new counter (``init_count`` ≥ 0).
* ``CountDown([c] → done)``: ``done`` (a bool scalar) is whether the count
  was already ≤ 0; the count goes down by one either way.
* ``CountUp([c] → before)``: the count before adding one (int64 scalar).
* ``CheckCounterDone([c] → done)``: whether the count is ≤ 0.
* ``RetrieveCount([c] → count)``; ``ResetCounter([c] (→ before), init_count=0)``.

A counter is saved by ``Save`` as Caffe2 saved it (type
``std::unique_ptr<Counter<int64_t>>``, a one-element INT64 tensor), and
loaded back as a counter (:mod:`caffe2rnn.runtime.serialization`).
"""

import threading

import numpy as np

from ..errors import ArgumentError, DTypeError, ShapeError
from ..proto import caffe2_pb2
from ..runtime import serialization
from ..runtime.registry import register, register_gradient
from .base import Operator
from .gradient_maker import ShouldNotDoGradient

COUNTER_TYPE = "std::unique_ptr<Counter<int64_t>>"


class Counter:
    """An int64 count changed atomically (Caffe2's ``Counter<int64_t>``)."""

    caffe2_type_name = COUNTER_TYPE

    def __init__(self, count):
        self._count = int(count)
        self._lock = threading.Lock()

    def count_down(self):
        """True if the count was already <= 0; it goes down by one either way."""
        with self._lock:
            done = self._count <= 0
            self._count -= 1
            return done

    def count_up(self):
        with self._lock:
            before = self._count
            self._count += 1
            return before

    def retrieve(self):
        return self._count

    def reset(self, count):
        with self._lock:
            before, self._count = self._count, int(count)
            return before


def _serialize(counter, name):
    proto = caffe2_pb2.BlobProto(name=name, type=COUNTER_TYPE)
    proto.tensor.name = name
    proto.tensor.data_type = caffe2_pb2.TensorProto.INT64
    proto.tensor.dims.append(1)
    proto.tensor.int64_data.append(counter.retrieve())
    return proto


def _deserialize(proto):
    t = proto.tensor  # the checks of Caffe2's CounterDeserializer
    if list(t.dims) != [1] or t.data_type != caffe2_pb2.TensorProto.INT64 or len(t.int64_data) != 1:
        raise ShapeError("a counter must be one INT64 value (dims [1], one int64_data)")
    return Counter(t.int64_data[0])


serialization.register_blob_type(Counter, COUNTER_TYPE, _serialize, _deserialize)


def _init_count(op):
    count = op.args.single("init_count", 0, int)
    if count < 0:
        raise ArgumentError("negative init_count is not permitted (init_count=%d)." % count)
    return count


class _CounterOp(Operator):
    def counter(self):
        value = self.inputs[0].value
        if not isinstance(value, Counter):
            raise DTypeError(
                "input 0 ('%s') must be a counter (made by CreateCounter); it holds %s"
                % (self.input_name(0), self.inputs[0].type_name())
            )
        return value

    def scalar(self, i, value, dtype):
        self.output(i, (), dtype)[...] = value


@register("CreateCounter", inputs=0, outputs=1)
class CreateCounter(Operator):
    """A new counter at ``init_count``."""

    def setup(self):
        self.init_count = _init_count(self)

    def run(self):
        self.set_output(0, Counter(self.init_count))


@register("ResetCounter", inputs=1, outputs=(0, 1))
class ResetCounter(_CounterOp):
    """Set the count to ``init_count``; output 0 (if any) gets the count before."""

    def setup(self):
        self.init_count = _init_count(self)

    def run(self):
        before = self.counter().reset(self.init_count)
        if self.outputs:
            self.scalar(0, before, np.int64)


@register("CountDown", inputs=1, outputs=1)
class CountDown(_CounterOp):
    def run(self):
        self.scalar(0, self.counter().count_down(), np.bool_)


@register("CheckCounterDone", inputs=1, outputs=1)
class CheckCounterDone(_CounterOp):
    def run(self):
        self.scalar(0, self.counter().retrieve() <= 0, np.bool_)


@register("CountUp", inputs=1, outputs=1)
class CountUp(_CounterOp):
    def run(self):
        self.scalar(0, self.counter().count_up(), np.int64)


@register("RetrieveCount", inputs=1, outputs=1)
class RetrieveCount(_CounterOp):
    def run(self):
        self.scalar(0, self.counter().retrieve(), np.int64)


# (CheckCounterDone had no gradient declaration in Caffe2: asking is "not implemented")
for _op_type in ("CreateCounter", "ResetCounter", "CountDown", "CountUp", "RetrieveCount"):
    register_gradient(_op_type)(ShouldNotDoGradient)
