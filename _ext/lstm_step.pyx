# Compiled twin of caffe2rnn/kernels/lstm_step.py: the fused LSTM step, forward
# and backward, each one call that runs what an LSTM step net's calls run --
# NumPy's matmul inner loop for each product (NumPy's BLAS: the routine FC and
# FCGradient call), the sums as C loops (exactly rounded element by element,
# as np.add), and the LSTM unit's maths (_lstm_math.pxi, shared with
# lstm_unit.pyx) -- in the same order on the same memory, with Python's lock
# released for the arithmetic. Floating-point errors of each product and sum
# are reported after it as NumPy reports them (np.errstate). Arguments are
# checked first, as the twin checks them.
include "_lstm_math.pxi"

from _loops cimport Loop, matmul_loop
from _contract cimport operand_arg, product_shapes

cdef extern from "numpy/ufuncobject.h":
    void _clear_fp_status "PyUFunc_clearfperr"() noexcept nogil
    int _fp_status "PyUFunc_getfperr"() noexcept nogil

from caffe2rnn._ext.rnn_executor import give_fp_errors

cdef enum:
    MAX_PARTS = 4  # products or sums of one backward step (an LSTM has 3 of each)


cdef void _bias_add(const real* p, bint transposed, const real* bias, bint rows, real* g,
                    index_t n, index_t d4) noexcept nogil:
    """g = p + bias, row by row (p read transposed: p is 4D x N)."""
    cdef index_t r, j
    for r in range(n):
        if transposed:
            for j in range(d4):
                g[r * d4 + j] = p[j * n + r] + (bias[r * d4 + j] if rows else bias[j])
        else:
            for j in range(d4):
                g[r * d4 + j] = p[r * d4 + j] + (bias[r * d4 + j] if rows else bias[j])


cdef enum:
    # A transposed product is read this many of its rows (gate columns) at a
    # time, for every batch row: the rows' cache lines stay in L1 while each
    # batch row takes the next element of each (reading all 4D rows for every
    # batch row misses L1 from 4D ~ 512 on: 2-4x slower at 32 x 1024).
    COLUMNS = 128


cdef void _gates(const real* p, bint transposed, const real* bias, bint rows,
                 const real* x, real* g, index_t n, index_t d4) noexcept nogil:
    """g = (p + bias) + x: FC's bias add and the step net's Sum in one pass,
    each element rounded twice in that order, as the two np.add calls round
    it. p may be g itself (not transposed); transposed, p is 4D x N, read
    COLUMNS of its rows at a time."""
    cdef index_t r, j, j0, j1, b_step = d4 if rows else 0
    cdef const real* b
    if not transposed:
        if <const real*>g == p:  # in place: one pointer less to tell apart
            for r in range(n):
                b = bias + r * b_step
                for j in range(d4):
                    g[r * d4 + j] = (g[r * d4 + j] + b[j]) + x[r * d4 + j]
        else:
            for r in range(n):
                b = bias + r * b_step
                for j in range(d4):
                    g[r * d4 + j] = (p[r * d4 + j] + b[j]) + x[r * d4 + j]
        return
    j0 = 0
    while j0 < d4:
        j1 = j0 + COLUMNS if j0 + COLUMNS < d4 else d4
        for r in range(n):
            b = bias + r * b_step
            for j in range(j0, j1):
                g[r * d4 + j] = (p[j * n + r] + b[j]) + x[r * d4 + j]
        j0 = j1


cdef void _add(real* dst, const real* src, index_t count) noexcept nogil:
    """dst = dst + src."""
    cdef index_t i
    for i in range(count):
        dst[i] = dst[i] + src[i]


cdef int _matmul(Loop* mm) except -1:
    """One product through NumPy's matmul loop; its floating-point errors as NumPy's."""
    cdef char* args[3]
    cdef int flags
    args[0], args[1], args[2] = mm.ptrs[0], mm.ptrs[1], mm.ptrs[2]  # the loop advances them
    with nogil:
        _clear_fp_status()
        mm.fn(args, mm.dims, mm.steps, mm.data)
        flags = _fp_status()
    if flags:
        give_fp_errors("matmul", flags)
    return 0


cdef int _sum(void* dst, const void* src, index_t count, bint is_float) except -1:
    cdef int flags
    with nogil:
        _clear_fp_status()
        if is_float:
            _add(<float*>dst, <const float*>src, count)
        else:
            _add(<double*>dst, <const double*>src, count)
        flags = _fp_status()
    if flags:
        give_fp_errors("add", flags)
    return 0


cdef int _product(str k, tuple names, object a, object b, object out, Loop* mm) except -1:
    """The twin's _product: operands, destination, dtypes, shapes; fills ``mm``."""
    operand_arg(a, k, names[0])
    operand_arg(b, k, names[1])
    cdef cnp.ndarray o = array_arg(out, k, names[2], "float", True)
    same_dtype(k, names[0], <cnp.ndarray>a, names[1], <cnp.ndarray>b)
    same_dtype(k, names[0], <cnp.ndarray>a, names[2], o)
    product_shapes(k, names, <cnp.ndarray>a, <cnp.ndarray>b, o)
    return 0


cdef int _loop(str k, tuple names, object a, object b, object out, Loop* mm) except -1:
    """After every check passed: NumPy's matmul loop for ``a · b → out``."""
    if not matmul_loop(a, b, out, np.matmul, mm):
        # Only a strided operand overlapping the destination gets here (the
        # contract compares contiguous spans): a contract bug, said so.
        raise SystemError("kernel contract mismatch: %s: NumPy's matmul loop refuses %s"
                          % (k, names[0]))
    return 0


# --- forward ---------------------------------------------------------------
cdef struct Forward:
    Step unit
    Loop mm
    void* p
    void* bias
    void* x
    void* g
    bint transposed, bias_rows
    index_t n, d4


cdef int _check_step_forward(tuple args, Forward* f) except -1:
    a, b, product, transposed, bias, x, unit = args
    unit = tuple(unit)
    h_prev, c_prev, gates, seq_lengths, _, _, _, h_out, c_out = unit
    cdef str k = "lstm_step_forward"
    # the twin's checks, in its order (kernels/lstm_step.py, check_forward)
    _check_forward(unit, &f.unit, k)
    cdef cnp.ndarray cp = <cnp.ndarray>c_prev
    cdef cnp.ndarray g = array_arg(gates, k, "gates", "float", True)
    _product(k, ("a", "b", "product"), a, b, product, &f.mm)
    cdef cnp.ndarray p = <cnp.ndarray>product
    same_dtype(k, "c_prev", cp, "product", p)
    cdef cnp.ndarray bs = array_arg(bias, k, "bias", "float", False)
    same_dtype(k, "c_prev", cp, "bias", bs)
    cdef cnp.ndarray xs = array_arg(x, k, "x", "float", False)
    same_dtype(k, "c_prev", cp, "x", xs)
    cdef index_t n = cnp.PyArray_DIM(cp, 0), d4 = 4 * cnp.PyArray_DIM(cp, 1)
    f.transposed = bool(transposed)
    if (cnp.PyArray_DIM(p, 0) != (d4 if f.transposed else n)
            or cnp.PyArray_DIM(p, 1) != (n if f.transposed else d4)):
        refuse("gates_product", (k, p, f.transposed, n, d4))
    if cnp.PyArray_SIZE(bs) != d4 and cnp.PyArray_SIZE(bs) != n * d4:
        refuse("rows_or_row", (k, "bias", bs, n, d4))
    same_size(k, "x", xs, n * d4)
    cdef bint same = (not f.transposed and cnp.PyArray_DATA(p) == cnp.PyArray_DATA(g)
                      and cnp.PyArray_NBYTES(p) == cnp.PyArray_NBYTES(g))
    cdef list written = [("gates", g), ("h_out", h_out), ("c_out", c_out)]
    if not same:
        written.insert(0, ("product", p))
    no_overlap(k, written, [("a", a), ("b", b), ("bias", bs), ("x", xs), ("h_prev", h_prev),
                            ("c_prev", cp), ("seq_lengths", seq_lengths)])
    _loop(k, ("a", "b", "product"), a, b, product, &f.mm)
    f.p, f.bias, f.x, f.g = (cnp.PyArray_DATA(p), cnp.PyArray_DATA(bs), cnp.PyArray_DATA(xs),
                             cnp.PyArray_DATA(g))
    f.bias_rows = cnp.PyArray_SIZE(bs) == n * d4
    f.n, f.d4 = n, d4
    return 0


cdef int _run_step_forward(Forward* f) except -1:
    cdef int flags
    _matmul(&f.mm)
    with nogil:
        _clear_fp_status()
        if f.unit.is_float:
            _gates(<const float*>f.p, f.transposed, <const float*>f.bias, f.bias_rows,
                   <const float*>f.x, <float*>f.g, f.n, f.d4)
        else:
            _gates(<const double*>f.p, f.transposed, <const double*>f.bias, f.bias_rows,
                   <const double*>f.x, <double*>f.g, f.n, f.d4)
        flags = _fp_status()
    if flags:  # an add overflowed or was invalid: the two adds again, one by one,
        _redo_adds(f)  # each reporting its errors as np.add does
    _run_forward(&f.unit)
    return 0


cdef int _redo_adds(Forward* f) except -1:
    """The bias add and the Sum as two passes, each followed by NumPy's error
    handling, from the product on (recomputed when it was the gates)."""
    cdef int flags
    if f.p == f.g:
        _matmul(&f.mm)
    with nogil:
        _clear_fp_status()
        if f.unit.is_float:
            _bias_add(<const float*>f.p, f.transposed, <const float*>f.bias, f.bias_rows,
                      <float*>f.g, f.n, f.d4)
        else:
            _bias_add(<const double*>f.p, f.transposed, <const double*>f.bias, f.bias_rows,
                      <double*>f.g, f.n, f.d4)
        flags = _fp_status()
    if flags:
        give_fp_errors("add", flags)
    _sum(f.g, f.x, f.n * f.d4, f.unit.is_float)
    return 0


def lstm_step_forward(object a, object b, object product, object transposed, object bias,
                      object x, object unit):
    """One forward LSTM step from the recurrent product on (see the Python twin)."""
    cdef Forward f
    _check_step_forward((a, b, product, transposed, bias, x, unit), &f)
    _run_step_forward(&f)


# --- backward --------------------------------------------------------------
cdef struct Backward:
    Step unit
    Loop mm[MAX_PARTS]
    void* dst[MAX_PARTS]
    void* src[MAX_PARTS]
    index_t size[MAX_PARTS]
    int n_products, n_sums


# The parts' names in the errors, made once (not on every check: the executor
# checks a backward step's call once per timestep when it compiles the plan).
cdef tuple _PRODUCT_NAMES = tuple(
    ("product %d's a" % i, "product %d's b" % i, "product %d" % i) for i in range(MAX_PARTS))
cdef tuple _SUM_NAMES = tuple(
    ("sum %d's destination" % i, "sum %d's addend" % i) for i in range(MAX_PARTS))


cdef int _check_step_backward(tuple args, Backward* w) except -1:
    unit, products, sums = args
    unit, products, sums = tuple(unit), tuple(products), tuple(sums)
    c_prev, gates, dgates_out = unit[0], unit[1], unit[11]
    cdef str k = "lstm_step_backward"
    if len(products) > MAX_PARTS or len(sums) > MAX_PARTS:
        refuse("parts", (k, products, sums))
    # the twin's checks, in its order (kernels/lstm_step.py, check_backward)
    _check_backward(unit, &w.unit, k)
    cdef cnp.ndarray cp = <cnp.ndarray>c_prev
    cdef int i
    cdef tuple names
    for i in range(len(products)):
        a, b, out = products[i]
        names = _PRODUCT_NAMES[i]
        _product(k, names, a, b, out, &w.mm[i])
        same_dtype(k, "c_prev", cp, names[2], <cnp.ndarray>out)
    cdef cnp.ndarray d, s
    for i in range(len(sums)):
        dst, src = sums[i]
        names = _SUM_NAMES[i]
        d = array_arg(dst, k, names[0], "float", True)
        s = array_arg(src, k, names[1], "float", False)
        same_dtype(k, "c_prev", cp, names[0], d)
        same_dtype(k, "c_prev", cp, names[1], s)
        same_size(k, names[1], s, cnp.PyArray_SIZE(d))
        if (cnp.PyArray_DATA(d) != cnp.PyArray_DATA(s)
                or cnp.PyArray_NBYTES(d) != cnp.PyArray_NBYTES(s)):  # in place, or apart
            no_overlap(k, [(names[0], d)], [(names[1], s)])
        w.dst[i], w.src[i] = cnp.PyArray_DATA(d), cnp.PyArray_DATA(s)
        w.size[i] = cnp.PyArray_SIZE(d)
    cdef list written = [(_PRODUCT_NAMES[i][2], products[i][2]) for i in range(len(products))]
    cdef list read = [("dgates_out", dgates_out), ("c_prev", cp), ("gates", gates)]
    read += [(_PRODUCT_NAMES[i][0], products[i][0]) for i in range(len(products))]
    read += [(_PRODUCT_NAMES[i][1], products[i][1]) for i in range(len(products))]
    no_overlap(k, written, read)
    for i in range(len(products)):
        a, b, out = products[i]
        _loop(k, _PRODUCT_NAMES[i][:1], a, b, out, &w.mm[i])
    w.n_products, w.n_sums = len(products), len(sums)
    return 0


cdef int _run_step_backward(Backward* w) except -1:
    cdef int i
    _run_backward(&w.unit)
    for i in range(w.n_products):
        _matmul(&w.mm[i])
    for i in range(w.n_sums):
        _sum(w.dst[i], w.src[i], w.size[i], w.unit.is_float)
    return 0


def lstm_step_backward(object unit, object products, object sums):
    """One backward LSTM step (see the Python twin)."""
    cdef Backward w
    _check_step_backward((unit, products, sums), &w)
    _run_step_backward(&w)


# --- bound: the executor's plan (checked once) -------------------------------
cdef class BoundLSTMStep:
    """``func(*args)`` with ``func`` lstm_step_forward or lstm_step_backward,
    its arguments checked when it was made (the RNN executor's compile_calls;
    one subclass per direction, each holding only its own checked struct).
    What can still change is an output's writeable flag, checked on every
    call: then the full checks run (and refuse)."""

    cdef tuple written
    cdef readonly object func
    cdef readonly tuple args

    def __call__(self):
        cdef cnp.ndarray a
        if self.args is None:
            raise TypeError("a BoundLSTMStep is made by bound_lstm_step_forward/_backward")
        for a in self.written:
            if not cnp.PyArray_ISWRITEABLE(a):
                return self.func(*self.args)
        self.run()

    cdef int run(self) except -1:
        return 0


cdef class _BoundForward(BoundLSTMStep):
    cdef Forward f

    cdef int run(self) except -1:
        return _run_step_forward(&self.f)


cdef class _BoundBackward(BoundLSTMStep):
    cdef Backward w

    cdef int run(self) except -1:
        return _run_step_backward(&self.w)


def bound_lstm_step_forward(*args):
    """lstm_step_forward's arguments checked now; the call runs only the step."""
    cdef _BoundForward bound = _BoundForward.__new__(_BoundForward)
    _check_step_forward(args, &bound.f)
    bound.func, bound.args = lstm_step_forward, args
    unit = args[6]
    bound.written = (args[2], unit[2], unit[7], unit[8])
    return bound


def bound_lstm_step_backward(*args):
    """lstm_step_backward's arguments checked now; the call runs only the step."""
    cdef _BoundBackward bound = _BoundBackward.__new__(_BoundBackward)
    _check_step_backward(args, &bound.w)
    bound.func, bound.args = lstm_step_backward, args
    written = [a for a in args[0][9:12] if a is not None]
    written += [out for _, _, out in args[1]] + [dst for dst, _ in args[2]]
    bound.written = tuple(written)
    return bound
