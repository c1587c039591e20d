"""stream_copy (the rollback journal's copies): both paths leave the same
bytes in dst, at any size and alignment, and refuse the same arguments."""

import numpy as np
import pytest

from caffe2rnn import errors
from caffe2rnn.kernels import stream_copy as PY

CY = pytest.importorskip("caffe2rnn._ext.stream_copy")


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int8, np.int64, np.complex64])
@pytest.mark.parametrize("size", [0, 1, 7, 4095, 4096, 70001, 1 << 18])
def test_the_same_bytes_at_any_size_and_alignment(dtype, size):
    rng = np.random.default_rng(size)
    src = rng.integers(-100, 100, size + 8).astype(dtype)
    for shift in (0, 1, 3):  # dst starting off any vector boundary
        for path in (PY, CY):
            room = np.zeros(size + 8, dtype)
            dst = room[shift : shift + size]
            path.stream_copy(dst, src[:size])
            assert dst.tobytes() == src[:size].tobytes()
            assert not room[:shift].any() and not room[shift + size :].any()  # nothing else


def test_bad_arguments_are_refused_alike():
    a = np.ones((4, 5), np.float32)
    readonly = np.ones((4, 5), np.float32)
    readonly.flags.writeable = False
    room = np.ones(30, np.float32)
    cases = [
        (np.ones((4, 5), np.float64), a),
        (np.ones((5, 4), np.float32), a),
        (np.ones((8, 5), np.float32)[::2], a),
        (readonly, a),
        (room[:20].reshape(4, 5), room[5:25].reshape(4, 5)),
        (np.empty(3, object), np.array([1, "x", None], object)),
        ([1.0] * 20, a),
    ]
    for dst, src in cases:
        with pytest.raises(errors.EnforceNotMet) as py:
            PY.stream_copy(dst, src)
        with pytest.raises(errors.EnforceNotMet) as cy:
            CY.stream_copy(dst, src)
        assert (type(py.value), str(py.value)) == (type(cy.value), str(cy.value))
