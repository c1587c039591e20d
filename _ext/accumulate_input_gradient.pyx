# Compiled twin of caffe2rnn/kernels/accumulate_input_gradient.py:
# g[t + offset] += og[t], rows of g.size / g.shape[0] elements.
# Checks from _contract.pxd, in the twin's order, before the first write; the
# bounds are compared so that no 64-bit intermediate can overflow.
cimport numpy as cnp
from _types cimport real, index_t
from _contract cimport array_arg, same_dtype, index_arg, overlaps, refuse

cnp.import_array()


cdef inline void _add_row(real* dst, const real* src, index_t n) noexcept nogil:
    cdef index_t i
    for i in range(n):
        dst[i] = dst[i] + src[i]


cdef struct Rows:
    void* dst
    void* src
    index_t count
    bint is_float


cdef int _check(tuple args, Rows* w) except -1:
    g, og, t, offset = args
    cdef str k = "accumulate_input_gradient"
    cdef cnp.ndarray a = array_arg(g, k, "g", "float", True)
    cdef cnp.ndarray b = array_arg(og, k, "og", "float", False)
    same_dtype(k, "g", a, "og", b)
    cdef index_t ti = index_arg(t, k, "t")
    cdef index_t oi = index_arg(offset, k, "offset")
    if overlaps(a, b):
        refuse("no_overlap", (k, [("g", a)], [("og", b)]))
    if cnp.PyArray_NDIM(a) < 1 or cnp.PyArray_DIMS(a)[0] == 0:
        refuse("accumulate_rows", (k, a, b, ti, oi))
    cdef index_t n_rows = cnp.PyArray_DIMS(a)[0]
    cdef index_t step = cnp.PyArray_SIZE(a) // n_rows
    # 0 <= t and 0 <= t + offset < n_rows, without forming t + offset
    if ti < 0 or oi < -ti or oi > n_rows - 1 - ti:
        refuse("accumulate_rows", (k, a, b, ti, oi))
    if step > 0 and ti >= cnp.PyArray_SIZE(b) // step:
        refuse("accumulate_rows", (k, a, b, ti, oi))
    w.is_float = cnp.PyArray_TYPE(a) == cnp.NPY_FLOAT32
    cdef index_t size = sizeof(float) if w.is_float else sizeof(double)
    w.dst = <char*>cnp.PyArray_DATA(a) + (ti + oi) * step * size
    w.src = <char*>cnp.PyArray_DATA(b) + ti * step * size
    w.count = step
    return 0


cdef void _run(Rows* w) noexcept nogil:
    if w.is_float:
        _add_row(<float*>w.dst, <const float*>w.src, w.count)
    else:
        _add_row(<double*>w.dst, <const double*>w.src, w.count)


def accumulate_input_gradient(object g, object og, object t, object offset):
    """``g[t + offset] += og[t]``, rows of ``g.size / g.shape[0]`` elements."""
    cdef Rows w
    _check((g, og, t, offset), &w)
    with nogil:
        _run(&w)


cdef class BoundAccumulate:
    """``accumulate_input_gradient(*args)``, its arguments checked when it was
    made (the RNN executor's compile_calls): a call adds one row. Whether g
    is still writeable is checked on every call (else the full checks refuse)."""

    cdef Rows w
    cdef cnp.ndarray g
    cdef readonly object func
    cdef readonly tuple args

    def __call__(self):
        if self.args is None:
            raise TypeError("a BoundAccumulate is made by bound_accumulate_input_gradient")
        if not cnp.PyArray_ISWRITEABLE(self.g):
            return self.func(*self.args)
        with nogil:
            _run(&self.w)


def bound_accumulate_input_gradient(*args):
    """accumulate_input_gradient's arguments checked now; the call only adds."""
    cdef BoundAccumulate bound = BoundAccumulate.__new__(BoundAccumulate)
    _check(args, &bound.w)
    bound.func, bound.args, bound.g = accumulate_input_gradient, args, args[0]
    return bound
