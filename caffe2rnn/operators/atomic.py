"""CreateMutex: a blob holding a mutex, for ops that must update atomically; AtomicFetchAdd.

Caffe2's optimizers count iterations with ``AtomicIter([mutex, iter] → iter)``
rather than ``Iter``, so that several nets sharing one workspace (Hogwild
training, one net per thread) never lose an increment. The mutex lives in a
blob created once by ``param_init_net.CreateMutex([], ["iteration_mutex"])``.

A mutex blob is not a tensor: ``FetchBlob`` describes it
(``std::unique_ptr<std::mutex>``, the C++ type Caffe2 reported) and an op that
expects one names the blob when it finds anything else.

``AtomicFetchAdd([mutex, a, b] → [c, d])``: under the mutex, ``d = a`` and
``c = a + b``, both 0-d int32 (with c = a in place, a shared counter that many
threads fetch from and add to). The sum wraps around as int32.

Caffe2: caffe2/operators/atomic_ops.cc (CreateMutex, AtomicFetchAdd),
caffe2/sgd/iter_op.h (AtomicIter, in :mod:`caffe2rnn.operators.training`).
"""

import threading

import numpy as np

from ..errors import DTypeError
from ..runtime.registry import register, register_gradient
from .base import Operator, describe_content
from .gradient_maker import ShouldNotDoGradient


class Mutex:
    """The content of a CreateMutex blob: a lock, used as a context manager."""

    caffe2_type_name = "std::unique_ptr<std::mutex>"

    def __init__(self):
        self._lock = threading.Lock()

    def __enter__(self):
        self._lock.acquire()
        return self

    def __exit__(self, *exc):
        self._lock.release()

    def locked(self):
        return self._lock.locked()

    def __repr__(self):
        return "Mutex(%s)" % ("locked" if self.locked() else "unlocked")


def mutex_input(op, i):
    """Input ``i`` of ``op``, which must be a blob written by CreateMutex."""
    value = op.inputs[i].value
    if not isinstance(value, Mutex):
        raise DTypeError(
            "input %d ('%s') holds %s; expected a mutex made by CreateMutex"
            % (i, op.input_name(i), describe_content(op.inputs[i]))
        )
    return value


@register("CreateMutex", inputs=0, outputs=1)
class CreateMutex(Operator):
    """Write a new, unlocked mutex into the output blob (replacing its content)."""

    def run(self):
        self.set_output(0, Mutex())


register_gradient("CreateMutex")(ShouldNotDoGradient)


@register("AtomicFetchAdd", inputs=3, outputs=2, inplace=[(1, 0)])
class AtomicFetchAdd(Operator):
    """Under the mutex: d = a (the value fetched), c = a + b; 0-d int32 outputs."""

    def run(self):
        mutex = mutex_input(self, 0)
        with mutex:  # read and write under the lock: other threads share a and c
            values = []
            for i in (1, 2):
                x = self.typed_input(i, (np.int32,), "an int32 tensor")
                if x.size == 0:
                    raise self.shape_error(i, "at least one element (its first is read)")
                values.append(x.reshape(-1)[:1].copy())
            total = np.add(values[0], values[1])  # an array sum wraps around, as int32 did
            self.output(1, (), np.int32)[...] = values[0][0]
            self.output(0, (), np.int32)[...] = total[0]


register_gradient("AtomicFetchAdd")(ShouldNotDoGradient)
