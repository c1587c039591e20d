"""WeightedSampleDequeueBlobs: dequeue a record from one of several queues,
picked at random by weight.

``WeightedSampleDequeueBlobs([queue_0 ... queue_{k−1}] → [b_1 ... b_m,
status])`` with ``weights`` (one per queue, default all 1; each ≥ 0, their
sum > 0 — Caffe2's ``CAFFE_ENFORCE``s): each run draws ``r`` uniform in
[0, 1) and reads from the first queue whose cumulative probability reaches
``r`` (the last one's is set to 1.0001 against rounding), waiting while it
is empty, like ``SafeDequeueBlobs``; ``status`` (a 0-d bool) is True when that
queue was closed and empty. The chosen queue's records must have ``m`` blobs.
The random stream is the op's (:mod:`caffe2rnn.operators.rng`).

Caffe2: caffe2/queue/queue_ops.{h,cc} at 0cdd09da6.
"""

import numpy as np

from ..errors import ArgumentError, ShapeError
from ..runtime.registry import register, register_gradient
from . import rng
from .base import Operator
from .gradient_maker import NoGradient
from .queue import queue_input


@register("WeightedSampleDequeueBlobs", inputs=(1, None), outputs=(2, None))
class WeightedSampleDequeueBlobs(Operator):
    """Read one record from a queue drawn with probability ∝ its weight."""

    def setup(self):
        weights = self.args.repeated("weights", kind=float) or [1.0] * len(self.inputs)
        if len(weights) != len(self.inputs):
            raise ArgumentError(
                "%d weights for %d queues; expected one per queue"
                % (len(weights), len(self.inputs))
            )
        total = float(np.sum(np.asarray(weights, np.float32), dtype=np.float32))
        if not total > 0:
            raise ArgumentError("Sum of weights must be positive")
        probabilities = np.asarray(weights, np.float32) / np.float32(total)
        if (probabilities < 0).any():
            raise ArgumentError("Each probability must be non-negative")
        self.cumulative = np.cumsum(probabilities, dtype=np.float32)
        self.cumulative[-1] = 1.0001
        self.random = rng.OpRandom(self.def_)

    def run(self):
        for i in range(len(self.inputs)):  # every input must be a queue, chosen or not
            queue_input(self, i)
        r = np.float32(self.random.generator.uniform(0.0, 1.0))
        chosen = int(np.searchsorted(self.cumulative, r, side="left"))
        queue = queue_input(self, chosen)
        blobs = self.outputs[:-1]
        if len(blobs) != queue.num_blobs:
            raise ShapeError(
                "queue '%s' holds records of %d blobs; the op has %d outputs before the status"
                % (self.input_name(chosen), queue.num_blobs, len(blobs))
            )
        ok = queue.read(blobs)
        self.output(len(self.outputs) - 1, (), np.bool_)[...] = not ok


register_gradient("WeightedSampleDequeueBlobs")(NoGradient)
