"""WeightedSampleDequeueBlobs: records come from the queues in proportion to
their weights; a closed, empty queue gives status True; bad weights refused."""

import numpy as np
import pytest

from caffe2rnn import core
from caffe2rnn.errors import ArgumentError
from caffe2rnn.operators import rng
from caffe2rnn.runtime import Workspace


def _queues(ws, count, capacity=200):
    for q in range(count):
        ws.run_operator_once(
            core.CreateOperator("CreateBlobsQueue", [], ["q%d" % q], capacity=capacity, num_blobs=1)
        )
        for _ in range(capacity):
            ws.feed("x", np.array([q], np.int32))
            ws.run_operator_once(core.CreateOperator("EnqueueBlobs", ["q%d" % q, "x"], ["x"]))


def test_draws_queues_in_proportion_to_their_weights():
    rng.seed(0)
    ws = Workspace()
    _queues(ws, 3)
    op = core.CreateOperator(
        "WeightedSampleDequeueBlobs", ["q0", "q1", "q2"], ["y", "status"], weights=[1.0, 0.0, 3.0]
    )
    counts = np.zeros(3)
    for _ in range(200):
        ws.run_operator_once(op)
        assert not ws.fetch("status")
        counts[int(ws.fetch("y")[0])] += 1
    assert counts[1] == 0
    assert 0.15 < counts[0] / 200 < 0.35  # expected 0.25


def test_a_closed_empty_queue_gives_status_true():
    ws = Workspace()
    ws.run_operator_once(core.CreateOperator("CreateBlobsQueue", [], ["q"], num_blobs=1))
    ws.run_operator_once(core.CreateOperator("CloseBlobsQueue", ["q"], []))
    ws.run_operator_once(core.CreateOperator("WeightedSampleDequeueBlobs", ["q"], ["y", "status"]))
    assert ws.fetch("status") == True  # noqa: E712 (a 0-d bool array)


@pytest.mark.parametrize(
    "weights, match",
    [([1.0], "one per queue"), ([0.0, 0.0], "must be positive"), ([2.0, -1.0], "non-negative")],
)
def test_bad_weights(weights, match):
    ws = Workspace()
    _queues(ws, 2, capacity=1)
    op = core.CreateOperator(
        "WeightedSampleDequeueBlobs", ["q0", "q1"], ["y", "status"], weights=weights
    )
    with pytest.raises(ArgumentError, match=match):
        ws.run_operator_once(op)
