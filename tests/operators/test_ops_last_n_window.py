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


def _e6_collect(state, data, n):
    """LastNWindowCollectorOp::collect (last_n_window_collector.cc at 042e8ede4), with
    num_visited: ``if (!output_initialized) *num_visited = 0; *num_visited += num_entries;``
    then the ring copy of the last N rows."""
    out, nxt, visited = state
    initialized = out is not None and out.size > 0
    entries = data.shape[0]
    visited = (visited if initialized else 0) + entries
    if entries == 0:
        return (out if initialized else data.copy()), nxt, visited
    to_copy = min(entries, n)
    held = out.shape[0] if initialized else 0
    rows = min(n, held + to_copy)
    new = np.zeros((rows,) + data.shape[1:], data.dtype)
    new[:held] = out[:held] if held else new[:0]
    start = nxt if initialized else 0
    if entries > n:
        new[:to_copy] = data[entries - n :]
        return new, 0, visited
    first = min(to_copy + start, n) - start
    new[start : start + first] = data[:first]
    new[: to_copy - first] = data[first:to_copy]
    return new, (start + to_copy) % n, visited


def test_e6_mutex_and_num_visited():
    n = 4
    ws = Workspace()
    ws.run_operator_once(core.CreateOperator("CreateMutex", [], ["mutex"]))
    ws.create_blob("out")
    ws.feed("next", np.array(0, np.int32))
    ws.feed("visited", np.array([7], np.int64))  # reset to 0 while "out" is empty
    op = core.CreateOperator(
        "LastNWindowCollector",
        ["out", "next", "data", "mutex", "visited"],
        ["out", "next", "visited"],
        num_to_collect=n,
    )
    state = (None, 0, 7)
    value = 0
    for size in (3, 0, 2, 6, 1):
        data = np.arange(value, value + size, dtype=np.float32).reshape(size, 1)
        value += size
        ws.feed("data", data)
        ws.run_operator_once(op)
        state = _e6_collect(state, data, n)
        np.testing.assert_array_equal(ws.fetch("out"), state[0])
        assert int(ws.fetch("next")) == state[1]
        assert ws.fetch("visited").tolist() == [state[2]]
    assert not ws.blob("mutex").value.locked()


def test_e6_forms_refused_as_the_cpp():
    ws = Workspace()
    ws.create_blob("out")
    ws.feed("next", np.array(0, np.int32))
    ws.feed("data", np.ones((2, 1), np.float32))
    ws.feed("mutex", np.zeros(1))
    with pytest.raises(DTypeError, match="CreateMutex"):
        ws.run_operator_once(
            core.CreateOperator(
                "LastNWindowCollector",
                ["out", "next", "data", "mutex"],
                ["out", "next"],
                num_to_collect=2,
            )
        )
    # output 2 without input 4: a fresh blob has no element (CAFFE_ENFORCE_EQ(1, size))
    ws.run_operator_once(core.CreateOperator("CreateMutex", [], ["mutex"]))
    with pytest.raises(ShapeError, match="must hold one element"):
        ws.run_operator_once(
            core.CreateOperator(
                "LastNWindowCollector",
                ["out", "next", "data", "mutex"],
                ["out", "next", "count"],
                num_to_collect=2,
            )
        )
    # EnforceInplace({{0, 0}, {1, 1}, {4, 2}})
    from caffe2rnn.errors import EnforceNotMet

    with pytest.raises(EnforceNotMet, match="requires input 4 and output 2"):
        ws.run_operator_once(
            core.CreateOperator(
                "LastNWindowCollector",
                ["out", "next", "data", "mutex", "v"],
                ["out", "next", "w"],
                num_to_collect=2,
            )
        )


@pytest.mark.parametrize("next_value", [np.array(3, np.int32), np.array(7, np.int64), None])
def test_next_is_reset_while_last_n_is_empty(next_value):
    """collect() at 042e8ede4: ``if (!output_initialized) { *next_data = 0; }`` before
    ``CAFFE_ENFORCE_LT(*next_data, output->dim(0))``: an empty last_n starts at row 0."""
    ws = Workspace()
    ws.create_blob("out")
    if next_value is None:
        ws.create_blob("next")
    else:
        ws.feed("next", next_value)
    ws.feed("data", np.arange(4, dtype=np.float32).reshape(2, 2))
    ws.run_operator_once(_collector(3))
    np.testing.assert_array_equal(ws.fetch("out"), [[0, 1], [2, 3]])
    assert ws.fetch("next").dtype == np.int32 and int(ws.fetch("next")) == 2
    ws.feed("next", np.zeros(2, np.int32))  # CAFFE_ENFORCE_EQ(0, next->ndim())
    ws.create_blob("out2")
    with pytest.raises(ShapeError, match="0-d"):
        ws.run_operator_once(
            core.CreateOperator(
                "LastNWindowCollector",
                ["out2", "next", "data"],
                ["out2", "next"],
                num_to_collect=3,
            )
        )
