"""UnsafeCoalesce: the byte buffer against NumPy's bytes with 32-byte
alignment, and the outputs as views of it."""

import numpy as np
import pytest
from ops_testing import run_op

from caffe2rnn.errors import DTypeError


def test_unsafe_coalesce_lays_out_aligned_bytes_and_shares_them():
    xs = [np.arange(5, dtype=np.float32), np.array([[1.5, 2.5]]), np.arange(40, dtype=np.uint8)]
    inputs = {"X%d" % i: x for i, x in enumerate(xs)}
    ws = run_op("UnsafeCoalesce", inputs, ["X0", "Y1", "Y2", "all"])
    expected = b"".join(x.tobytes() + b"\0" * (-x.nbytes % 32) for x in xs)
    assert ws.fetch("all").dtype == np.uint8 and ws.fetch("all").tobytes() == expected
    for name, x in zip(["X0", "Y1", "Y2"], xs):
        np.testing.assert_array_equal(ws.fetch(name), x)
        assert ws.fetch(name).dtype == x.dtype
    ws.blob("Y1").value[0, 0] = 9.0  # a view: the buffer changes with it
    assert np.frombuffer(ws.blob("all").value[32:48].tobytes(), np.float64)[0] == 9.0


def test_unsafe_coalesce_refuses_strings():
    with pytest.raises(DTypeError, match="Must only coalesce fundamental types"):
        run_op("UnsafeCoalesce", {"X": np.array(["a"], dtype=object)}, ["Y", "all"])
