"""``Blob.resize`` keeps memory on shrink, as Caffe2's ``Tensor::Resize`` did
(``--caffe2_keep_on_shrink``, default on)."""

import numpy as np
import pytest

from caffe2rnn import workspace
from caffe2rnn.errors import WrongTypeError
from caffe2rnn.runtime import blob
from caffe2rnn.runtime.blob import Blob


@pytest.fixture
def flags():
    yield
    blob.keep_on_shrink = True
    blob.max_keep_on_shrink_memory = blob.sys.maxsize


def test_shrinking_reuses_the_front_of_the_buffer_growing_reallocates(flags):
    b = Blob("x")
    big = b.resize((4, 3), np.float32)
    big[...] = np.arange(12).reshape(4, 3)
    small = b.resize((2, 2), np.float32)
    assert np.shares_memory(small, big)
    np.testing.assert_array_equal(small.ravel(), np.arange(4))  # old content, as C++
    again = b.resize((4, 3), np.float32)  # back to the capacity: still the buffer
    assert np.shares_memory(again, big)
    bigger = b.resize((5, 3), np.float32)
    assert not np.shares_memory(bigger, big)
    other_type = b.resize((2,), np.float64)
    assert not np.shares_memory(other_type, bigger)


def test_the_flag_turns_it_off_and_the_limit_bounds_it(flags):
    b = Blob("x")
    big = b.resize((10,), np.float64)
    blob.keep_on_shrink = False
    assert not np.shares_memory(b.resize((5,), np.float64), big)
    blob.keep_on_shrink = True
    big = b.resize((10,), np.float64)
    blob.max_keep_on_shrink_memory = 8 * 4
    assert not np.shares_memory(b.resize((5,), np.float64), big)  # 40 unused bytes > 32
    big = b.resize((10,), np.float64)
    assert np.shares_memory(b.resize((6,), np.float64), big)  # 32 bytes: kept


def test_capacity_follows_the_tensor_not_the_blob(flags):
    """An aliased or swapped tensor keeps its buffer's capacity (``ShareData``,
    ``std::swap``); a view made by slicing does not (``ShareExternalPointer``)."""
    a, b = Blob("a"), Blob("b")
    buf = a.resize((6,), np.float32)
    b.value = a.value  # Alias
    assert np.shares_memory(b.resize((3,), np.float32), buf)
    c = Blob("c")
    c.resize((2,), np.float32)
    c.swap(a)
    assert np.shares_memory(c.resize((4,), np.float32), buf)
    d = Blob("d", buf[2:5])  # a link-style view: its capacity is its size
    assert np.shares_memory(d.resize((2,), np.float32), buf[2:4])
    assert not np.shares_memory(d.resize((4,), np.float32), buf)


def test_global_init_sets_the_caffe2_flags(flags):
    workspace.GlobalInit(["python", "--caffe2_keep_on_shrink=0", "--caffe2_log_level=0"])
    assert blob.keep_on_shrink is False
    workspace.GlobalInit(
        ["python", "--caffe2_keep_on_shrink", "--caffe2_max_keep_on_shrink_memory=64"]
    )
    assert blob.keep_on_shrink is True and blob.max_keep_on_shrink_memory == 64
    with pytest.raises(WrongTypeError, match="caffe2_keep_on_shrink"):
        workspace.GlobalInit(["python", "--caffe2_keep_on_shrink=maybe"])
