# The LSTM unit's maths and checks, included (textually) by _ext/lstm_unit.pyx
# (LSTMUnit's kernels) and _ext/lstm_step.pyx (the fused LSTM step), so both run
# the very same loops. Twin: caffe2rnn/kernels/lstm_unit.py. ``k`` in the checks
# is the name of the kernel being checked (its refusals start with it).
#
# Bit-identical to the twin by construction: every formula below is the twin's
# sequence of IEEE float operations in the same grouping (the build disables
# FMA contraction, -ffp-contract=off), and e^z is NumPy's own exp inner loop
# for the dtype, looked up once in np.exp's loop table and called directly on
# a contiguous scratch buffer -- the very code np.exp runs, without its
# dispatch. (A C exp from libm could differ from NumPy's SIMD exp in the last
# bit, and the twin cannot call libm element-wise at NumPy speed.)
cimport numpy as cnp
from cpython.mem cimport PyMem_RawMalloc, PyMem_RawFree
from _types cimport real, index_t
from _contract cimport (array_arg, same_dtype, index_arg, real_arg, overlaps,
                        no_overlap, same_size, refuse)

import numpy as np

cnp.import_array()
cnp.import_ufunc()

from _loops cimport inner_loop

cdef inner_loop _exp_float = NULL
cdef inner_loop _exp_double = NULL
cdef void *_exp_float_data = NULL
cdef void *_exp_double_data = NULL


cdef _find_exp_loops():
    """Take np.exp's float32 -> float32 and float64 -> float64 inner loops.

    The table can list a type twice (NumPy 2 keeps an older loop after the
    SIMD one), so each candidate is checked against np.exp itself on a probe
    of values spanning the range σ and tanh use (overflow included); the
    first that reproduces it bit for bit is taken. None: ImportError, and
    caffe2rnn runs the Python kernels.
    """
    global _exp_float, _exp_double, _exp_float_data, _exp_double_data
    cdef cnp.ufunc exp = np.exp
    cdef int k
    cdef char* args[2]
    cdef cnp.npy_intp dims[1]
    cdef cnp.npy_intp steps[2]
    cdef cnp.ndarray probe, out
    for k in range(exp.ntypes):
        kind = exp.types[2 * k]
        if kind != exp.types[2 * k + 1] or kind not in (cnp.NPY_FLOAT32, cnp.NPY_FLOAT64):
            continue
        if (kind == cnp.NPY_FLOAT32 and _exp_float != NULL) or (
                kind == cnp.NPY_FLOAT64 and _exp_double != NULL):
            continue
        dtype = np.float32 if kind == cnp.NPY_FLOAT32 else np.float64
        probe = np.concatenate([np.linspace(-120, 120, 4001),
                                np.random.RandomState(0).standard_normal(999) * 8,
                                [0.0, -0.0, 1e-30, -800.0, 800.0]]).astype(dtype)
        out = np.empty_like(probe)
        args[0] = <char*>cnp.PyArray_DATA(probe)
        args[1] = <char*>cnp.PyArray_DATA(out)
        dims[0] = cnp.PyArray_SIZE(probe)
        steps[0] = steps[1] = cnp.PyArray_ITEMSIZE(probe)
        with np.errstate(all="ignore"):
            (<inner_loop><void*>exp.functions[k])(args, dims, steps, exp.data[k])
            if not np.array_equal(out, np.exp(probe)):
                continue
        if kind == cnp.NPY_FLOAT32:
            _exp_float = <inner_loop><void*>exp.functions[k]
            _exp_float_data = exp.data[k]
        else:
            _exp_double = <inner_loop><void*>exp.functions[k]
            _exp_double_data = exp.data[k]
    if _exp_float == NULL or _exp_double == NULL:
        raise ImportError("lstm_unit: no inner loop of np.exp reproduces np.exp "
                          "for float32 and float64")


_find_exp_loops()


cdef inline void _exp(real* buf, index_t count) noexcept nogil:
    """buf = e^buf in place, with NumPy's exp loop."""
    cdef char* args[2]
    cdef cnp.npy_intp dims[1]
    cdef cnp.npy_intp steps[2]
    args[0] = <char*>buf
    args[1] = <char*>buf
    dims[0] = count
    steps[0] = sizeof(real)
    steps[1] = sizeof(real)
    if real is float:
        _exp_float(args, dims, steps, _exp_float_data)
    else:
        _exp_double(args, dims, steps, _exp_double_data)


# The loops below run phase by phase over all rows, each phase a simple loop
# over a few arrays that the compiler vectorises; finished rows are computed
# like the others and overwritten at the end, as the twin does.

cdef void _gate_exponents(const real* x, index_t n_rows, index_t d, real fb,
                          bint has_fb, real* z) noexcept nogil:
    """z = the negated σ arguments of each row: -x_i, -(x_f + fb), -x_o, and
    -(x_g + x_g) for g = tanh(x_g) = 2σ(2 x_g) - 1."""
    cdef index_t k, _row
    for _row in range(n_rows):
        for k in range(d):
            z[k] = -x[k]
        if has_fb:
            for k in range(d):
                z[d + k] = -(x[d + k] + fb)
        else:
            for k in range(d):
                z[d + k] = -x[d + k]
        for k in range(d):
            z[2 * d + k] = -x[2 * d + k]
        for k in range(d):
            z[3 * d + k] = -(x[3 * d + k] + x[3 * d + k])
        x += 4 * d
        z += 4 * d


cdef void _sigmoid_of_exp(real* z, index_t count) noexcept nogil:
    """z = e^z, then z = 1 / (z + 1): σ of the negated arguments stored in z."""
    cdef index_t k
    cdef real one = 1
    _exp(z, count)
    for k in range(count):
        z[k] = one / (z[k] + one)


cdef void _double_minus_one(real* s, index_t count) noexcept nogil:
    """s = (s + s) - 1: tanh(x) from s = σ(2x)."""
    cdef index_t k
    cdef real one = 1
    for k in range(count):
        s[k] = (s[k] + s[k]) - one


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
                   index_t n_rows, index_t d, index_t t, real fb, bint has_fb,
                   bint drop, real* h, real* c, real* z, real* w) noexcept nogil:
    cdef index_t n, k
    cdef const real* i
    cdef const real* f
    cdef const real* o
    cdef real* g
    _gate_exponents(x, n_rows, d, fb, has_fb, z)
    _sigmoid_of_exp(z, 4 * n_rows * d)
    for n in range(n_rows):
        g = z + 4 * d * n + 3 * d
        _double_minus_one(g, d)
        i, f = z + 4 * d * n, z + 4 * d * n + d
        for k in range(d):  # c = (f c_prev) + (i g); w = -(c + c)
            c[n * d + k] = f[k] * cp[n * d + k] + i[k] * g[k]
        for k in range(d):
            w[n * d + k] = -(c[n * d + k] + c[n * d + k])
    _sigmoid_of_exp(w, n_rows * d)
    _double_minus_one(w, n_rows * d)  # tanh(c)
    for n in range(n_rows):
        o = z + 4 * d * n + 2 * d
        for k in range(d):
            h[n * d + k] = o[k] * w[n * d + k]
    _finished_forward(hp, cp, seq, n_rows, d, t, drop, h, c)


cdef void _backward(const real* cp, const real* x, const int* seq, const real* c,
                    const real* dh, const real* dc, index_t n_rows, index_t d,
                    index_t t, real fb, bint has_fb, bint drop, real* dhp, real* dcp,
                    real* dx, real* z, real* w, real* ct) noexcept nogil:
    cdef index_t n, k, j
    cdef real one = 1, zero = 0
    cdef const real* i
    cdef const real* f
    cdef const real* o
    cdef real* g
    _gate_exponents(x, n_rows, d, fb, has_fb, z)
    _sigmoid_of_exp(z, 4 * n_rows * d)
    for k in range(n_rows * d):
        w[k] = -(c[k] + c[k])
    _sigmoid_of_exp(w, n_rows * d)
    _double_minus_one(w, n_rows * d)  # w = tanh(c)
    for n in range(n_rows):
        i, f = z + 4 * d * n, z + 4 * d * n + d
        o, g = z + 4 * d * n + 2 * d, z + 4 * d * n + 3 * d
        _double_minus_one(g, d)
        j = n * d
        for k in range(d):  # c_term = (((1 - tanh²c) o) dh) + dc
            ct[j + k] = (((one - w[j + k] * w[j + k]) * o[k]) * dh[j + k]) + dc[j + k]
        for k in range(d):
            dx[4 * j + k] = ct[j + k] * (((one - i[k]) * i[k]) * g[k])
        for k in range(d):
            dx[4 * j + d + k] = ct[j + k] * (((one - f[k]) * f[k]) * cp[j + k])
        for k in range(d):
            dx[4 * j + 2 * d + k] = dh[j + k] * (((one - o[k]) * o[k]) * w[j + k])
        for k in range(d):
            dx[4 * j + 3 * d + k] = ct[j + k] * ((one - g[k] * g[k]) * i[k])
        for k in range(d):
            dcp[j + k] = ct[j + k] * f[k]
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


cdef void* _scratch(index_t count, index_t itemsize) except NULL:
    cdef void* z = PyMem_RawMalloc((count if count > 0 else 1) * itemsize)
    if z == NULL:
        raise MemoryError()
    return z


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
    bint has_fb, drop, is_float


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
    s.n, s.d, s.has_fb = n, d, s.fb != 0
    s.is_float = cnp.PyArray_TYPE(cp) == cnp.NPY_FLOAT32
    return 0


cdef int _run_forward(Step* s) except -1:
    cdef index_t nd = s.n * s.d
    cdef void* z = _scratch(5 * nd, sizeof(float) if s.is_float else sizeof(double))
    with nogil:
        if s.is_float:
            _forward(<float*>s.hp, <float*>s.cp, <float*>s.x, s.seq, s.n, s.d, s.t,
                     <float>s.fb, s.has_fb, s.drop, <float*>s.h, <float*>s.c,
                     <float*>z, <float*>z + 4 * nd)
        else:
            _forward(<double*>s.hp, <double*>s.cp, <double*>s.x, s.seq, s.n, s.d, s.t,
                     s.fb, s.has_fb, s.drop, <double*>s.h, <double*>s.c,
                     <double*>z, <double*>z + 4 * nd)
    PyMem_RawFree(z)
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
    s.n, s.d, s.has_fb = n, d, s.fb != 0
    s.is_float = cnp.PyArray_TYPE(cp) == cnp.NPY_FLOAT32
    return 0


cdef int _run_backward(Step* s) except -1:
    cdef index_t nd = s.n * s.d
    cdef void* z = _scratch(6 * nd, sizeof(float) if s.is_float else sizeof(double))
    with nogil:
        if s.is_float:
            _backward(<float*>s.cp, <float*>s.x, s.seq, <float*>s.c, <float*>s.dh,
                      <float*>s.dc, s.n, s.d, s.t, <float>s.fb, s.has_fb, s.drop,
                      <float*>s.dhp, <float*>s.dcp, <float*>s.dx, <float*>z,
                      <float*>z + 4 * nd, <float*>z + 5 * nd)
        else:
            _backward(<double*>s.cp, <double*>s.x, s.seq, <double*>s.c, <double*>s.dh,
                      <double*>s.dc, s.n, s.d, s.t, s.fb, s.has_fb, s.drop,
                      <double*>s.dhp, <double*>s.dcp, <double*>s.dx, <double*>z,
                      <double*>z + 4 * nd, <double*>z + 5 * nd)
    PyMem_RawFree(z)
    return 0
