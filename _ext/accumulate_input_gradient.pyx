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


def accumulate_input_gradient(object g, object og, object t, object offset):
    """``g[t + offset] += og[t]``, rows of ``g.size / g.shape[0]`` elements."""
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
    if cnp.PyArray_TYPE(a) == cnp.NPY_FLOAT32:
        with nogil:
            _add_row(<float*>cnp.PyArray_DATA(a) + (ti + oi) * step,
                     <float*>cnp.PyArray_DATA(b) + ti * step, step)
    else:
        with nogil:
            _add_row(<double*>cnp.PyArray_DATA(a) + (ti + oi) * step,
                     <double*>cnp.PyArray_DATA(b) + ti * step, step)
