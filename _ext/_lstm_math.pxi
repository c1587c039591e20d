# The LSTM unit's maths and checks, included (textually) by _ext/lstm_unit.pyx
# (LSTMUnit's kernels) and _ext/lstm_step.pyx (the fused LSTM step), so both run
# the very same loops. Twin: caffe2rnn/kernels/lstm_unit.py. ``k`` in the checks
# is the name of the kernel being checked (its refusals start with it).
#
# Bit-identical to the twin by construction: every formula below is the twin's
# sequence of IEEE float operations in the same grouping (the build disables
# FMA contraction, -ffp-contract=off), and σ and tanh are the operations of
# _activations.pxi, which the twin runs as ufuncs (kernels/activations.py).
# Each row is one loop over k in [0, D) that computes all four gates of column
# k, the cell and the hidden state (backward: every gradient) element by
# element: no scratch buffer, no second pass, and the compiler turns the loop
# into SIMD instructions (16 float32 at a time with AVX-512).
cimport numpy as cnp
from _types cimport real, index_t
from _contract cimport (array_arg, same_dtype, index_arg, real_arg, overlaps,
                        no_overlap, same_size, refuse)

include "_activations.pxi"

import numpy as np

cnp.import_array()
cnp.import_ufunc()


cdef inline void _forward_row(const real* x, const real* cp, index_t d, real fb,
                              real* h, real* c) noexcept nogil:
    """One row: x = the 4D gates (i, f, o, g), cp = c_prev; writes h, c.
    c = (f c_prev) + (i g); h = o tanh(c)."""
    cdef index_t k
    cdef real i, f, o, g, cell
    for k in range(d):
        i = _sigmoid(x[k])
        f = _sigmoid(x[d + k] + fb)
        o = _sigmoid(x[2 * d + k])
        g = _tanh(x[3 * d + k])
        cell = f * cp[k] + i * g
        c[k] = cell
        h[k] = o * _tanh(cell)


cdef void _finished_forward(const real* hp, const real* cp, const int* seq,
                            index_t n_rows, index_t d, index_t t, bint drop, real* h,
                            real* c) noexcept nogil:
    """Rows whose sequence ended carry the state (zeros with drop / no h_prev)."""
    cdef index_t n, k
    cdef real zero = 0
    for n in range(n_rows):
        if seq[n] <= t:
            for k in range(d):
                c[n * d + k] = zero if drop else cp[n * d + k]
                h[n * d + k] = zero if (drop or hp == NULL) else hp[n * d + k]


cdef void _forward(const real* hp, const real* cp, const real* x, const int* seq,
                   index_t n_rows, index_t d, index_t t, real fb, bint drop, real* h,
                   real* c) noexcept nogil:
    cdef index_t n
    for n in range(n_rows):
        _forward_row(x + 4 * d * n, cp + d * n, d, fb, h + d * n, c + d * n)
    _finished_forward(hp, cp, seq, n_rows, d, t, drop, h, c)


cdef inline void _backward_row(const real* x, const real* cp, const real* c,
                               const real* dh, const real* dc, index_t d, real fb,
                               real* dcp, real* dx) noexcept nogil:
    """One running row's gradients (the twin's formulas, in its grouping)."""
    cdef index_t k
    cdef real one = 1
    cdef real i, f, o, g, tanh_c, c_term
    for k in range(d):
        i = _sigmoid(x[k])
        f = _sigmoid(x[d + k] + fb)
        o = _sigmoid(x[2 * d + k])
        g = _tanh(x[3 * d + k])
        tanh_c = _tanh(c[k])
        c_term = (((one - tanh_c * tanh_c) * o) * dh[k]) + dc[k]
        dx[k] = c_term * (((one - i) * i) * g)
        dx[d + k] = c_term * (((one - f) * f) * cp[k])
        dx[2 * d + k] = dh[k] * (((one - o) * o) * tanh_c)
        dx[3 * d + k] = c_term * ((one - g * g) * i)
        dcp[k] = c_term * f


cdef void _backward(const real* cp, const real* x, const int* seq, const real* c,
                    const real* dh, const real* dc, index_t n_rows, index_t d,
                    index_t t, real fb, bint drop, real* dhp, real* dcp,
                    real* dx) noexcept nogil:
    cdef index_t n, k, j
    cdef real zero = 0
    for n in range(n_rows):
        j = n * d
        _backward_row(x + 4 * j, cp + j, c + j, dh + j, dc + j, d, fb, dcp + j, dx + 4 * j)
    for n in range(n_rows):  # finished rows: pass dh, dc through; no gate gradient
        j = n * d
        if seq[n] <= t:
            for k in range(4 * d):
                dx[4 * j + k] = zero
            for k in range(d):
                dcp[j + k] = zero if drop else dc[j + k]
        if dhp != NULL:
            for k in range(d):
                dhp[j + k] = dh[j + k] if (seq[n] <= t and not drop) else zero


cdef cnp.ndarray _c_prev(object c_prev, str k):
    cdef cnp.ndarray c = array_arg(c_prev, k, "c_prev", "float", False)
    if cnp.PyArray_NDIM(c) != 2:
        refuse("matrix", (k, "c_prev", c))
    return c


# The checks of each kernel fill a struct of pointers and sizes; the run
# takes only the struct. The kernel functions check and run on every call; a
# *bound* kernel (the RNN executor's plan: the same arrays at every run)
# checks once, when it is made. It holds the arrays, so their memory stays
# where it was checked; what can still change is the writeable flag, which
# it checks on every call.
cdef struct Step:
    # forward: hp, cp, x -> h, c.  backward: cp, x, c, dh, dc -> dhp, dcp, dx.
    void* hp  # h_prev, may be NULL (forward)
    void* cp  # c_prev
    void* x  # the gates
    const int* seq
    void* h  # h_out (forward)
    void* c  # c_out (forward); c, read (backward)
    void* dh
    void* dc
    void* dhp  # may be NULL
    void* dcp
    void* dx
    index_t n, d, t
    double fb
    bint drop, is_float


cdef int _check_forward(tuple a, Step* s, str k) except -1:
    h_prev, c_prev, gates, seq_lengths, t, forget_bias, drop_states, h_out, c_out = a
    # the twin's checks, in its order (kernels/lstm_unit.py, _check_forward)
    cdef cnp.ndarray cp = _c_prev(c_prev, k)
    cdef cnp.ndarray x = array_arg(gates, k, "gates", "float", False)
    cdef cnp.ndarray seq = array_arg(seq_lengths, k, "seq_lengths", "int32", False)
    cdef cnp.ndarray hp = None
    if h_prev is not None:
        hp = array_arg(h_prev, k, "h_prev", "float", False)
    cdef cnp.ndarray h = array_arg(h_out, k, "h_out", "float", True)
    cdef cnp.ndarray c = array_arg(c_out, k, "c_out", "float", True)
    same_dtype(k, "c_prev", cp, "gates", x)
    if hp is not None:
        same_dtype(k, "c_prev", cp, "h_prev", hp)
    same_dtype(k, "c_prev", cp, "h_out", h)
    same_dtype(k, "c_prev", cp, "c_out", c)
    s.t = index_arg(t, k, "t")
    s.fb = real_arg(forget_bias, k, "forget_bias")
    s.drop = drop_states
    cdef index_t n = cnp.PyArray_DIMS(cp)[0], d = cnp.PyArray_DIMS(cp)[1]
    same_size(k, "gates", x, 4 * n * d)
    same_size(k, "seq_lengths", seq, n)
    if hp is not None:
        same_size(k, "h_prev", hp, n * d)
    same_size(k, "h_out", h, n * d)
    same_size(k, "c_out", c, n * d)
    if (overlaps(h, c) or overlaps(h, hp) or overlaps(h, cp) or overlaps(h, x)
            or overlaps(h, seq) or overlaps(c, hp) or overlaps(c, cp) or overlaps(c, x)
            or overlaps(c, seq)):
        refuse("no_overlap", (k, [("h_out", h), ("c_out", c)],
                              [("h_prev", hp), ("c_prev", cp), ("gates", x),
                               ("seq_lengths", seq)]))
    s.hp = NULL if hp is None else cnp.PyArray_DATA(hp)
    s.cp, s.x, s.h, s.c = (cnp.PyArray_DATA(cp), cnp.PyArray_DATA(x),
                           cnp.PyArray_DATA(h), cnp.PyArray_DATA(c))
    s.seq = <const int*>cnp.PyArray_DATA(seq)
    s.n, s.d = n, d
    s.is_float = cnp.PyArray_TYPE(cp) == cnp.NPY_FLOAT32
    return 0


cdef int _run_forward(Step* s) except -1:
    with nogil:
        if s.is_float:
            _forward(<float*>s.hp, <float*>s.cp, <float*>s.x, s.seq, s.n, s.d, s.t,
                     <float>s.fb, s.drop, <float*>s.h, <float*>s.c)
        else:
            _forward(<double*>s.hp, <double*>s.cp, <double*>s.x, s.seq, s.n, s.d, s.t,
                     s.fb, s.drop, <double*>s.h, <double*>s.c)
    return 0


cdef int _check_backward(tuple a, Step* s, str k) except -1:
    (c_prev, gates, seq_lengths, t, c, dh, dc, forget_bias, drop_states, dh_prev_out,
     dc_prev_out, dgates_out) = a
    # the twin's checks, in its order (kernels/lstm_unit.py, _check_backward)
    cdef cnp.ndarray cp = _c_prev(c_prev, k)
    cdef cnp.ndarray x = array_arg(gates, k, "gates", "float", False)
    cdef cnp.ndarray seq = array_arg(seq_lengths, k, "seq_lengths", "int32", False)
    cdef cnp.ndarray cc = array_arg(c, k, "c", "float", False)
    cdef cnp.ndarray gh = array_arg(dh, k, "dh", "float", False)
    cdef cnp.ndarray gc = array_arg(dc, k, "dc", "float", False)
    cdef cnp.ndarray ghp = None
    if dh_prev_out is not None:
        ghp = array_arg(dh_prev_out, k, "dh_prev_out", "float", True)
    cdef cnp.ndarray gcp = array_arg(dc_prev_out, k, "dc_prev_out", "float", True)
    cdef cnp.ndarray gx = array_arg(dgates_out, k, "dgates_out", "float", True)
    same_dtype(k, "c_prev", cp, "gates", x)
    same_dtype(k, "c_prev", cp, "c", cc)
    same_dtype(k, "c_prev", cp, "dh", gh)
    same_dtype(k, "c_prev", cp, "dc", gc)
    if ghp is not None:
        same_dtype(k, "c_prev", cp, "dh_prev_out", ghp)
    same_dtype(k, "c_prev", cp, "dc_prev_out", gcp)
    same_dtype(k, "c_prev", cp, "dgates_out", gx)
    s.t = index_arg(t, k, "t")
    s.fb = real_arg(forget_bias, k, "forget_bias")
    s.drop = drop_states
    cdef index_t n = cnp.PyArray_DIMS(cp)[0], d = cnp.PyArray_DIMS(cp)[1]
    same_size(k, "gates", x, 4 * n * d)
    same_size(k, "seq_lengths", seq, n)
    same_size(k, "c", cc, n * d)
    same_size(k, "dh", gh, n * d)
    same_size(k, "dc", gc, n * d)
    if ghp is not None:
        same_size(k, "dh_prev_out", ghp, n * d)
    same_size(k, "dc_prev_out", gcp, n * d)
    same_size(k, "dgates_out", gx, 4 * n * d)
    cdef list written = [("dh_prev_out", ghp), ("dc_prev_out", gcp), ("dgates_out", gx)]
    cdef list others = [("c_prev", cp), ("gates", x), ("seq_lengths", seq), ("c", cc),
                        ("dh", gh), ("dc", gc)]
    no_overlap(k, written, others)
    s.cp, s.x, s.c = cnp.PyArray_DATA(cp), cnp.PyArray_DATA(x), cnp.PyArray_DATA(cc)
    s.dh, s.dc = cnp.PyArray_DATA(gh), cnp.PyArray_DATA(gc)
    s.dhp = NULL if ghp is None else cnp.PyArray_DATA(ghp)
    s.dcp, s.dx = cnp.PyArray_DATA(gcp), cnp.PyArray_DATA(gx)
    s.seq = <const int*>cnp.PyArray_DATA(seq)
    s.n, s.d = n, d
    s.is_float = cnp.PyArray_TYPE(cp) == cnp.NPY_FLOAT32
    return 0


cdef int _run_backward(Step* s) except -1:
    with nogil:
        if s.is_float:
            _backward(<float*>s.cp, <float*>s.x, s.seq, <float*>s.c, <float*>s.dh,
                      <float*>s.dc, s.n, s.d, s.t, <float>s.fb, s.drop,
                      <float*>s.dhp, <float*>s.dcp, <float*>s.dx)
        else:
            _backward(<double*>s.cp, <double*>s.x, s.seq, <double*>s.c, <double*>s.dh,
                      <double*>s.dc, s.n, s.d, s.t, s.fb, s.drop,
                      <double*>s.dhp, <double*>s.dcp, <double*>s.dx)
    return 0
