"""LastNWindowCollector: a ring of the last N rows, checked against a plain
Python list of every row seen."""

import numpy as np
import pytest

from caffe2rnn import core
from caffe2rnn.errors import ArgumentError, DTypeError, ShapeError
from caffe2rnn.runtime import Workspace


def _collector(n):
    return core.CreateOperator(
        "LastNWindowCollector", ["out", "next", "data"], ["out", "next"], num_to_collect=n
    )


@pytest.mark.parametrize("batches", [[4, 3, 4], [2, 2, 2, 2], [9, 1], [1] * 8, [6, 0, 5]])
def test_holds_the_last_n_rows_seen(batches):
    n = 6
    ws = Workspace()
    ws.create_blob("out")  # an empty blob, as the 2017 tests made it
    ws.feed("next", np.array(0, np.int32))
    seen = []
    value = 0
    for size in batches:
        data = np.arange(value, value + 2 * size, dtype=np.float32).reshape(size, 2)
        value += 2 * size
        ws.feed("data", data)
        ws.run_operator_once(_collector(n))
        seen.extend(map(tuple, data))
        out = ws.fetch("out")
        assert out.shape == (min(n, len(seen)), 2) and out.dtype == np.float32
        assert sorted(map(tuple, out)) == sorted(seen[-n:])
        if size > n:
            assert ws.fetch("next") == 0
        elif seen:
            # the row written last sits just before "next" (modulo the ring)
            assert tuple(out[(int(ws.fetch("next")) - 1) % len(out)]) == seen[-1]


def test_an_empty_first_batch_gives_type_and_shape():
    ws = Workspace()
    ws.create_blob("out")
    ws.feed("next", np.array(0, np.int32))
    ws.feed("data", np.zeros((0, 3), np.int64))
    ws.run_operator_once(_collector(4))
    assert ws.fetch("out").shape == (0, 3) and ws.fetch("out").dtype == np.int64


def test_refusals():
    ws = Workspace()
    ws.feed("out", np.zeros((2, 3), np.float32))
    ws.feed("next", np.array(0, np.int32))
    ws.feed("data", np.zeros((1, 4), np.float32))
    with pytest.raises(ArgumentError, match="num_to_collect must be > 0"):
        ws.run_operator_once(_collector(0))
    with pytest.raises(ShapeError, match=r"input 0 \('out'\).*rows of shape \(4,\)"):
        ws.run_operator_once(_collector(4))
    ws.feed("data", np.zeros((1, 3), np.float64))
    with pytest.raises(DTypeError, match=r"input 0 \('out'\) holds float32 rows"):
        ws.run_operator_once(_collector(4))
    ws.feed("data", np.zeros((1, 3), np.float32))
    ws.feed("next", np.array(5, np.int32))
    with pytest.raises(ShapeError, match=r"input 1 \('next'\) = 5; expected it in \[0, 3\)"):
        ws.run_operator_once(_collector(4))
    ws.feed("next", np.array([0], np.int32))
    with pytest.raises(ShapeError, match=r"input 1 \('next'\)"):
        ws.run_operator_once(_collector(4))
    np.testing.assert_array_equal(ws.fetch("out"), np.zeros((2, 3)))  # unchanged
