"""Every failure class of the raw kernels: refused on both paths, alike, before any write.

One minimal case per class (read-only destination, read-only memmap, None,
big-endian, misaligned, non-contiguous, overlapping, indices that overflow 64
bits or wrap around, negative offsets, non-integers). Each is run on every
available path; the error must be the same :mod:`caffe2rnn.errors` class with
the same message, and the destination must be untouched.
"""

import numpy as np
import pytest

from caffe2rnn import errors, kernels
from caffe2rnn.kernels import checked

BIG = 2**63 - 1  # the largest Py_ssize_t: any sum with it overflows 64 bits


def f32(*shape):
    return np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape) + 1


def read_only(a):
    a.flags.writeable = False
    return a


def misaligned(n):
    raw = np.zeros(4 * n + 1, np.uint8)
    a = raw[1:].view(np.float32)
    assert not a.flags.aligned
    return a


def memmap_read_only(tmp_path, n):
    path = tmp_path / "state.bin"
    f32(n).tofile(path)
    return np.memmap(path, dtype=np.float32, mode="r", shape=(n,))


def lstm_args(**change):
    n, d = 2, 3
    args = dict(
        h_prev=f32(n, d),
        c_prev=f32(n, d),
        gates=f32(n, 4 * d),
        seq_lengths=np.full(n, 5, np.int32),
        t=0,
        forget_bias=0.0,
        drop_states=False,
        h_out=np.zeros((n, d), np.float32),
        c_out=np.zeros((n, d), np.float32),
    )
    args.update(change)
    return args


def lstm_backward_args(**change):
    n, d = 2, 3
    args = dict(
        c_prev=f32(n, d),
        gates=f32(n, 4 * d),
        seq_lengths=np.full(n, 5, np.int32),
        t=0,
        c=f32(n, d),
        dh=f32(n, d),
        dc=f32(n, d),
        forget_bias=0.0,
        drop_states=False,
        dh_prev_out=np.zeros((n, d), np.float32),
        dc_prev_out=np.zeros((n, d), np.float32),
        dgates_out=np.zeros((n, 4 * d), np.float32),
    )
    args.update(change)
    return args


shared = f32(8)  # for overlapping arguments

# id -> (kernel, args factory taking tmp_path, error class, message fragment)
CASES = {
    "read-only destination": (
        "inplace_add",
        lambda tmp: (read_only(np.zeros(4, np.float32)), f32(4)),
        errors.MemoryLayoutError,
        "dst is read-only",
    ),
    "read-only memmap": (
        "repeat_copy",
        lambda tmp: (f32(2), memmap_read_only(tmp, 6)),
        errors.MemoryLayoutError,
        "dst is read-only",
    ),
    "read-only LSTM output": (
        "lstm_unit_forward",
        lambda tmp: tuple(lstm_args(h_out=read_only(np.zeros((2, 3), np.float32))).values()),
        errors.MemoryLayoutError,
        "h_out is read-only",
    ),
    "read-only LSTM gradient": (
        "lstm_unit_backward",
        lambda tmp: tuple(
            lstm_backward_args(dgates_out=read_only(np.zeros((2, 12), np.float32))).values()
        ),
        errors.MemoryLayoutError,
        "dgates_out is read-only",
    ),
    "None destination": (
        "accumulate_input_gradient",
        lambda tmp: (None, f32(2, 2), 0, 0),
        errors.DTypeError,
        "g is None",
    ),
    "None source": ("link_view", lambda tmp: (None, 0, 1), errors.DTypeError, "external is None"),
    "None cell state": (
        "lstm_unit_forward",
        lambda tmp: tuple(lstm_args(c_prev=None).values()),
        errors.DTypeError,
        "c_prev is None",
    ),
    "big-endian source": (
        "inplace_add",
        lambda tmp: (np.zeros(4, np.float32), f32(4).astype(">f4")),
        errors.DTypeError,
        "non-native byte order",
    ),
    "wrong dtype": (
        "add_striped_batch",
        lambda tmp: (np.zeros((2, 2), np.int64), np.zeros(2, np.float32), 2, 2),
        errors.DTypeError,
        "first is int64",
    ),
    "mixed dtypes": (
        "inplace_add",
        lambda tmp: (np.zeros(4, np.float32), f32(4).astype(np.float64)),
        errors.DTypeError,
        "src is float64 but dst is float32",
    ),
    "non-contiguous": (
        "inplace_add",
        lambda tmp: (np.zeros((3, 2), np.float32).T, f32(6)),
        errors.MemoryLayoutError,
        "dst is not C-contiguous",
    ),
    "misaligned": (
        "inplace_add",
        lambda tmp: (misaligned(4), f32(4)),
        errors.MemoryLayoutError,
        "dst is not aligned",
    ),
    "overlapping": (
        "inplace_add",
        lambda tmp: (shared[1:5], shared[:4]),
        errors.MemoryLayoutError,
        "dst overlaps src",
    ),
    "t + offset overflows": (
        "accumulate_input_gradient",
        lambda tmp: (np.zeros((3, 2), np.float32), f32(3, 2), 1, BIG),
        errors.OutOfRangeError,
        "destination address over bounds",
    ),
    "start + window overflows": (
        "link_view",
        lambda tmp: (f32(3, 2), 2, BIG),
        errors.OutOfRangeError,
        "outside the 3 rows",
    ),
    "stripes overflow": (
        "add_striped_batch",
        lambda tmp: (f32(4, 2), np.zeros(2, np.float32), 2**62, 4),
        errors.OutOfRangeError,
        "do not fit",
    ),
    "index beyond 64 bits": (
        "offset_alias",
        lambda tmp: (f32(3, 2), 2**64),
        errors.OutOfRangeError,
        "does not fit in 64 bits",
    ),
    "negative start": (
        "link_view",
        lambda tmp: (f32(3, 2), -1, 1),
        errors.OutOfRangeError,
        "[-1, 0)",
    ),
    "negative alias start": (
        "offset_alias",
        lambda tmp: (f32(3, 2), -1),
        errors.OutOfRangeError,
        "start -1",
    ),
    "negative offset": (
        "accumulate_input_gradient",
        lambda tmp: (np.zeros((3, 2), np.float32), f32(3, 2), 0, -1),
        errors.OutOfRangeError,
        "destination address over bounds",
    ),
    "negative batch": (
        "add_striped_batch",
        lambda tmp: (f32(4, 2), np.zeros(2, np.float32), 2, -1),
        errors.OutOfRangeError,
        "-1 stripes",
    ),
    "negative timestep": (
        "lstm_unit_forward",
        lambda tmp: tuple(lstm_args(t=2.5).values()),
        errors.ArgumentTypeError,
        "t must be an integer",
    ),
    "non-integer window": (
        "link_view",
        lambda tmp: (f32(3, 2), 0, 1.0),
        errors.ArgumentTypeError,
        "window must be an integer, got float",
    ),
    "string forget_bias": (
        "lstm_unit_forward",
        lambda tmp: tuple(lstm_args(forget_bias="1").values()),
        errors.ArgumentTypeError,
        "forget_bias must be a number",
    ),
    "gates of the wrong size": (
        "lstm_unit_backward",
        lambda tmp: tuple(lstm_backward_args(gates=f32(2, 4)).values()),
        errors.ShapeError,
        "gates has 8 elements",
    ),
}


def outcome(path, kernel, args):
    """(error class, message) of the call on ``path``, and copies of the arrays after."""
    try:
        getattr(kernels.implementation(path), kernel)(*args)
    except errors.Caffe2RNNError as exc:
        return type(exc), str(exc)
    return None, None


@pytest.mark.parametrize("case", list(CASES))
def test_both_paths_refuse_alike_before_writing(case, kernel_path, tmp_path):
    kernel, make, error, fragment = CASES[case]
    args = make(tmp_path)
    before = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    with pytest.raises(error) as raised:
        getattr(kernels.implementation(kernel_path), kernel)(*args)
    assert fragment in str(raised.value) and str(raised.value).startswith(kernel)
    for a, b in zip(args, before):
        if isinstance(a, np.ndarray):
            np.testing.assert_array_equal(a, b)  # refused before the first write
    # the other path (when built) raises the very same error
    other = "python" if kernel_path == "cython" else "cython"
    if kernel_path == "python" and not kernels.cython_available():
        return
    assert outcome(other, kernel, make(tmp_path)) == (type(raised.value), str(raised.value))


def test_checked_entry_points_name_the_link_and_refuse_read_only(kernel_path):
    g = read_only(np.zeros((3, 2), np.float32))
    with pytest.raises(errors.MemoryLayoutError, match="^link 'h' -> 'states': g is read-only"):
        checked.accumulate_input_gradient(g, f32(3, 2), 0, 1, "link 'h' -> 'states'")
    with pytest.raises(errors.DTypeError, match="expected a tensor, got NoneType"):
        checked.link_view(None, 0, 0, 1, "link")
    mm = np.memmap  # a memmap is an ndarray: it is a tensor, and may be read
    assert issubclass(mm, np.ndarray)


def test_lstm_unit_refuses_a_read_only_output_blob(kernel_path):
    from caffe2rnn import core, workspace

    n, d = 2, 3
    for name, value in [
        ("h_prev", np.zeros((1, n, d), np.float32)),
        ("c_prev", np.zeros((1, n, d), np.float32)),
        ("gates", np.zeros((1, n, 4 * d), np.float32)),
        ("seq", np.full(n, 3, np.int32)),
        ("t", np.zeros(1, np.int32)),
    ]:
        workspace.FeedBlob(name, value)
    op = core.CreateOperator("LSTMUnit", ["h_prev", "c_prev", "gates", "seq", "t"], ["h", "c"])
    workspace.RunOperatorOnce(op)
    blob = workspace.C.current().get_blob("h")
    blob.value.flags.writeable = False
    frozen = blob.value.copy()
    with pytest.raises(
        errors.MemoryLayoutError,
        match="LSTMUnit: lstm_unit_forward: output 0 \\(hidden_t\\) is read-only",
    ):
        workspace.RunOperatorOnce(op)
    np.testing.assert_array_equal(workspace.C.current().get_blob("h").value, frozen)


def test_kernel_path_switches_the_path_the_operators_call(kernel_path, monkeypatch):
    assert kernels.active() == kernel_path
    calls = []
    impl = kernels.implementation(kernel_path)
    monkeypatch.setattr(impl, "inplace_add", lambda d, s: calls.append(kernel_path))
    checked.inplace_add(np.zeros(2, np.float32), f32(2))
    assert calls == [kernel_path]


@pytest.mark.parametrize("junk", ["x", None, [1.0, 2.0], 3], ids=["str", "None", "list", "int"])
def test_checked_entry_points_refuse_what_is_not_an_array(junk, kernel_path):
    # not an AttributeError from reaching for .dtype: the family's DTypeError (a TypeError)
    dst = f32(2, 3)
    with pytest.raises(errors.DTypeError, match="expected a tensor, got"):
        checked.inplace_add(dst, junk)
    with pytest.raises(errors.DTypeError, match="expected a tensor, got"):
        checked.inplace_add(junk, dst)
    assert isinstance(errors.DTypeError("x"), TypeError)
    np.testing.assert_array_equal(dst, f32(2, 3))


def _overlapping_calls():
    """Each checked entry point given a destination that shares bytes with an
    argument it reads, and the names the refusal must give (destination first)."""
    buf = np.zeros(64, np.float32)
    n, d = 2, 3
    seq = np.full(n, 5, np.int32)

    def state(offset):
        return buf[offset : offset + n * d].reshape(n, d)

    gates = np.zeros((n, 4 * d), np.float32)
    return {
        "repeat_copy": (
            lambda where: checked.repeat_copy(buf[:4], buf[2:10], where),
            ("dst", "src"),
        ),
        "accumulate_input_gradient": (
            lambda where: checked.accumulate_input_gradient(
                buf[:12].reshape(2, 6), buf[:12].reshape(2, 6), 0, 1, where
            ),
            ("g", "og"),
        ),
        "add_striped_batch": (
            lambda where: checked.add_striped_batch(buf[:16], buf[:4], 8, 2, where),
            ("y", "first"),
        ),
        "inplace_add": (
            lambda where: checked.inplace_add(buf[:8], buf[4:12], where),
            ("dst", "src"),
        ),
        "lstm_unit_forward h_out/c_out": (
            lambda where: checked.lstm_unit_forward(
                None, f32(n, d), gates, seq, 0, 0.0, False, state(0), state(3), where
            ),
            ("h_out", "c_out"),
        ),
        "lstm_unit_backward": (
            lambda where: checked.lstm_unit_backward(
                state(0),
                gates,
                seq,
                0,
                f32(n, d),
                f32(n, d),
                f32(n, d),
                0.0,
                False,
                None,
                state(3),
                np.zeros((n, 4 * d), np.float32),
                where,
            ),
            ("dc_prev_out", "c_prev"),
        ),
    }


@pytest.mark.parametrize("case", sorted(_overlapping_calls()))
def test_overlap_refusals_carry_the_callers_where_like_every_other_refusal(case, kernel_path):
    """A checked entry point's refusals all start with the caller's ``where``
    (the link, the op): an overlap found by the raw kernel used to name only
    the kernel (``lstm_unit_forward: h_out overlaps c_out``)."""
    call, (written, read) = _overlapping_calls()[case]
    where = "link 'h' -> 'states'"
    with pytest.raises(errors.MemoryLayoutError) as info:
        call(where)
    message = str(info.value)
    assert message.startswith(where + ": "), message
    assert "%s overlaps %s" % (written, read) in message, message


@pytest.mark.parametrize("junk", [None, [0.0] * 6], ids=["None", "list"])
@pytest.mark.parametrize("name", ["dc_prev_out", "dgates_out", "dh", "gates"])
def test_lstm_unit_backward_names_an_argument_that_is_not_an_array(name, junk, kernel_path):
    """Issue 34: not "'list' object has no attribute 'size'": the entry point,
    the argument, and what it expected; nothing written."""
    args = lstm_backward_args(**{name: junk})
    before = {k: v.copy() for k, v in args.items() if isinstance(v, np.ndarray)}
    with pytest.raises(errors.DTypeError, match="lstm_unit_backward: %s " % name):
        checked.lstm_unit_backward(*args.values())
    for k, v in before.items():
        np.testing.assert_array_equal(args[k], v)


@pytest.mark.parametrize("name", ["h_out", "c_out", "gates"])
def test_lstm_unit_forward_names_an_argument_that_is_not_an_array(name, kernel_path):
    args = lstm_args(**{name: [0.0] * 6})
    with pytest.raises(errors.DTypeError, match="lstm_unit_forward: %s must be a tensor" % name):
        checked.lstm_unit_forward(*args.values())


def test_lstm_unit_backward_takes_no_hidden_gradient_output(kernel_path):
    """dh_prev_out=None is the documented form without a hidden-state input."""
    args = lstm_backward_args(dh_prev_out=None)
    checked.lstm_unit_backward(*args.values())
