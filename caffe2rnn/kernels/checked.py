"""The checked kernel entry points operators call, and their validation.

The compiled kernels run unchecked loops over raw memory, so every argument
that decides *where* they read or write is checked here first: a bad offset,
window or shape becomes a clear :mod:`caffe2rnn.errors` exception naming the
blobs involved, never an out-of-bounds access. The messages keep the words of
Caffe2's own checks ("Invalid offset", "Accumulation destination address over
bounds", ...) so they can be searched for in the C++ source.

Each entry point validates, then runs the active path's raw kernel
(:func:`caffe2rnn.kernels.current`). ``where`` is a short description the
caller supplies (``"link 'hidden_t' ->
'states'"``); the operator's net adds ``net 'n', op #i Type`` in front.
"""

import numpy as np

from ..errors import ArgumentError, DTypeError, EnforceNotMet, ShapeError
from . import contract, current
from .lstm_unit import backward_arrays, forward_arrays

FLOAT_TYPES = (np.dtype(np.float32), np.dtype(np.float64))


def tensor(value, where):
    """``value`` must be an ndarray with at least one dimension."""
    if not isinstance(value, np.ndarray):
        raise DTypeError("%s: expected a tensor, got %s" % (where, type(value).__name__))
    if value.ndim < 1:
        raise ShapeError(
            "%s: expected a tensor with a leading (time) dimension, got a scalar" % where
        )
    return value


def memory(where, sources, destinations=()):
    """What the raw kernels need of each (name, array): see :mod:`.contract`
    (not None, native byte order, C-contiguous, aligned; destinations writable)."""
    for name, a in sources:
        contract.array(a, where, name)
    for name, a in destinations:
        if a is not None:
            contract.array(a, where, name, writable=True)


def disjoint(where, written, read):
    """No written (name, array) shares bytes with a later one or a read one:
    the raw kernel's own overlap refusal, in the kernel's names, but starting
    with ``where`` like every other refusal of an entry point."""
    contract.no_overlap(where, written, read)


def float_tensors(where, *arrays):
    """Contiguous float32/float64 tensors of one type: what the data kernels loop over."""
    for a in arrays:
        if not isinstance(a, np.ndarray):
            raise DTypeError("%s: expected a tensor, got %s" % (where, type(a).__name__))
    dtype = arrays[0].dtype
    for a in arrays:
        if a.dtype not in FLOAT_TYPES or a.dtype != dtype:
            raise DTypeError(
                "%s: expected float32 or float64 tensors of one type, "
                "got %s" % (where, ", ".join(str(x.dtype) for x in arrays))
            )
        if not a.flags.c_contiguous:
            raise EnforceNotMet("%s: expected C-contiguous tensors" % where)


def offset_alias_start(src, offset, where):
    """First row of the alias ``src[offset:]`` (negative offsets count from the end).

    Caffe2 enforced ``Invalid offset`` / ``Invalid number of timesteps``; an
    offset before the first row (``offset < -rows``), which the C++ did not
    catch, is an ``Invalid offset`` here too.
    """
    rows = tensor(src, where).shape[0]
    start = offset if offset >= 0 else rows + offset
    if start < 0:
        raise ArgumentError(
            "%s: Invalid offset %d for a tensor of %d rows (shape "
            "%s): expected -%d <= offset <= %d" % (where, offset, rows, src.shape, rows, rows)
        )
    if start > rows:
        raise ArgumentError(
            "%s: Invalid number of timesteps: %d (offset %d, "
            "tensor of %d rows, shape %s)" % (where, rows - start, offset, rows, src.shape)
        )
    return start


def link_start(external, t, offset, window, where):
    """First row of the link window ``external[t + offset : t + offset + window]``."""
    rows = tensor(external, where).shape[0]
    if external.size == 0:
        raise ShapeError("%s: the external tensor is empty (shape %s)" % (where, external.shape))
    start = t + offset
    if offset < 0 or window < 0 or start < 0 or start + window > rows:
        raise ShapeError(
            "%s: rows [%d, %d) (timestep %d + offset %d, window %d) "
            "are outside the %d rows of the external tensor (shape %s)"
            % (where, start, start + window, t, offset, window, rows, external.shape)
        )
    return start


def accumulate_rows(g, og, t, offset, where):
    """Bounds of ``g[t + offset] += og[t]`` (rows of ``g.size / g.shape[0]``)."""
    float_tensors(where, tensor(g, where), tensor(og, where))
    if g.shape[0] == 0:
        raise ShapeError("%s: the gradient tensor has no rows (shape %s)" % (where, g.shape))
    step = g.size // g.shape[0]
    if t < 0 or t + offset < 0 or (t + offset) * step + step > g.size:
        raise ShapeError(
            "%s: Accumulation destination address over bounds: row "
            "%d (timestep %d + offset %d) of a gradient of shape %s"
            % (where, t + offset, t, offset, g.shape)
        )
    if t * step + step > og.size:
        raise ShapeError(
            "%s: Accumulation source address out of bounds: row %d "
            "(of %d elements) of an output gradient of shape %s" % (where, t, step, og.shape)
        )


def same_size(dst, src, where):
    """``dst`` and ``src`` hold the same number of elements (and one float type)."""
    float_tensors(where, dst, src)
    if dst.size != src.size:
        raise ShapeError(
            "%s: shapes %s and %s hold different numbers of elements"
            % (where, dst.shape, src.shape)
        )


def repeat_rows(src, dst, where):
    """``dst`` is whole copies of ``src`` (``dst.size`` a multiple of ``src.size``)."""
    float_tensors(where, src, dst)
    if src.size == 0 or dst.size % src.size:
        raise ShapeError(
            "%s: cannot repeat a tensor of shape %s to fill shape %s"
            % (where, src.shape, dst.shape)
        )


def stripes(first, y, stripe, batch, where):
    """``batch`` stripes of ``len(y)`` elements, ``stripe`` apart, fit in ``first``."""
    float_tensors(where, first, y)
    n = y.size
    if (
        y.ndim != 1
        or stripe < n
        or batch < 0
        or (batch > 0 and (batch - 1) * stripe + n > first.size)
    ):
        raise ShapeError(
            "%s: %d stripes of %d elements every %d do not fit in a "
            "tensor of shape %s" % (where, batch, n, stripe, first.shape)
        )


def named_arrays(where, optional=(), **arrays):
    """Each keyword must be an ndarray (those named in ``optional`` may be
    None): a refusal names the argument, before any shape or memory check."""
    for name, value in arrays.items():
        if value is None and name in optional:
            continue
        if value is None:
            raise DTypeError("%s: %s is None; expected a float32 or float64 array" % (where, name))
        if not isinstance(value, np.ndarray):
            raise DTypeError(
                "%s: %s must be a tensor (a NumPy array), got %s"
                % (where, name, type(value).__name__)
            )


def lstm_unit_arrays(where, c_prev, gates, seq_lengths, *states):
    """One float type, C-contiguous: ``c_prev`` (N, D), ``gates`` N x 4D elements,
    each of ``states`` (None allowed) N x D, ``seq_lengths`` N int32."""
    if tensor(c_prev, where).ndim != 2:
        raise ShapeError(
            "%s: cell_t_prev must be read as (N, D), got shape %s" % (where, c_prev.shape)
        )
    present = [s for s in states if s is not None]
    float_tensors(where, c_prev, tensor(gates, where), *present)
    n, d = c_prev.shape
    if gates.size != 4 * n * d or any(s.size != n * d for s in present):
        raise ShapeError(
            "%s: expected gates of %d x %d and states of %d x %d "
            "elements, got shapes %s and %s"
            % (where, n, 4 * d, n, d, gates.shape, ", ".join(str(s.shape) for s in present))
        )
    if (
        type(seq_lengths) is not np.ndarray
        or seq_lengths.dtype != np.int32
        or seq_lengths.size != n
        or not seq_lengths.flags.c_contiguous
    ):
        raise DTypeError(
            "%s: seq_lengths must be a contiguous int32 tensor of N = %d elements" % (where, n)
        )


# --- entry points ---------------------------------------------------------
def offset_alias(src, offset, where="alias"):
    """View of ``src`` from row ``offset`` (negative: from the end) to the end."""
    start = offset_alias_start(src, offset, where)
    return current().offset_alias(src, start)


def link_view(external, t, offset, window, where="link"):
    """View of rows ``[t + offset, t + offset + window)`` of ``external``."""
    start = link_start(external, t, offset, window, where)
    return current().link_view(external, start, window)


def repeat_copy(src, dst, where="repeat_copy"):
    """Fill ``dst`` with copies of ``src`` (a 1-D initial state over the batch)."""
    repeat_rows(src, dst, where)
    memory(where, [("src", src)], [("dst", dst)])
    disjoint(where, [("dst", dst)], [("src", src)])
    current().repeat_copy(src, dst)


def accumulate_input_gradient(g, og, t, offset, where="accumulate_gradient_input"):
    """``g[t + offset] += og[t]``, rows of ``g.size / g.shape[0]`` elements."""
    accumulate_rows(g, og, t, offset, where)
    memory(where, [("og", og)], [("g", g)])
    disjoint(where, [("g", g)], [("og", og)])
    current().accumulate_input_gradient(g, og, t, offset)


def add_striped_batch(first, y, stripe, batch, where="AddStripedBatch"):
    """``y += first[j * stripe : j * stripe + len(y)]`` for j = 0 .. batch - 1."""
    stripes(first, y, stripe, batch, where)
    memory(where, [("first", first)], [("y", y)])
    disjoint(where, [("y", y)], [("first", first)])
    current().add_striped_batch(first, y, stripe, batch)


def inplace_add(dst, src, where="inplace_add"):
    """``dst += src`` over two tensors of the same size."""
    same_size(dst, src, where)
    memory(where, [("src", src)], [("dst", dst)])
    disjoint(where, [("dst", dst)], [("src", src)])
    current().inplace_add(dst, src)


def lstm_unit_forward(
    h_prev,
    c_prev,
    gates,
    seq_lengths,
    t,
    forget_bias,
    drop_states,
    h_out,
    c_out,
    where="lstm_unit_forward",
):
    """One LSTM step into ``h_out``, ``c_out`` (see :mod:`caffe2rnn.kernels.lstm_unit`)."""
    named_arrays(
        where, ("h_prev",), h_prev=h_prev, c_prev=c_prev, gates=gates, h_out=h_out, c_out=c_out
    )
    lstm_unit_arrays(where, c_prev, gates, seq_lengths, h_prev, h_out, c_out)
    memory(
        where,
        [("cell_t_prev", c_prev), ("gates", gates)],
        [("output 0 (hidden_t)", h_out), ("output 1 (cell_t)", c_out)],
    )
    disjoint(where, *forward_arrays(h_prev, c_prev, gates, seq_lengths, h_out, c_out))
    current().lstm_unit_forward(
        h_prev, c_prev, gates, seq_lengths, t, forget_bias, drop_states, h_out, c_out
    )


def lstm_unit_backward(
    c_prev,
    gates,
    seq_lengths,
    t,
    c,
    dh,
    dc,
    forget_bias,
    drop_states,
    dh_prev_out,
    dc_prev_out,
    dgates_out,
    where="lstm_unit_backward",
):
    """Gradients of one LSTM step (see :mod:`caffe2rnn.kernels.lstm_unit`)."""
    named_arrays(
        where,
        ("dh_prev_out",),
        c_prev=c_prev,
        gates=gates,
        c=c,
        dh=dh,
        dc=dc,
        dh_prev_out=dh_prev_out,
        dc_prev_out=dc_prev_out,
        dgates_out=dgates_out,
    )
    lstm_unit_arrays(where, c_prev, gates, seq_lengths, c, dh, dc, dh_prev_out, dc_prev_out)
    if (
        dgates_out.size != gates.size
        or dgates_out.dtype != gates.dtype
        or not dgates_out.flags.c_contiguous
    ):
        raise ShapeError(
            "%s: the gates gradient must be like the gates (%s %s)"
            % (where, gates.dtype, gates.shape)
        )
    memory(
        where,
        [
            ("cell_t_prev", c_prev),
            ("gates", gates),
            ("cell_t", c),
            ("hidden_t_grad", dh),
            ("cell_t_grad", dc),
        ],
        [
            ("the hidden_t_prev gradient", dh_prev_out),
            ("the cell_t_prev gradient", dc_prev_out),
            ("the gates gradient", dgates_out),
        ],
    )
    disjoint(
        where,
        *backward_arrays(
            c_prev, gates, seq_lengths, c, dh, dc, dh_prev_out, dc_prev_out, dgates_out
        ),
    )
    current().lstm_unit_backward(
        c_prev,
        gates,
        seq_lengths,
        t,
        c,
        dh,
        dc,
        forget_bias,
        drop_states,
        dh_prev_out,
        dc_prev_out,
        dgates_out,
    )
