# Compiled twin of caffe2rnn/kernels/accumulate_input_gradient.py:
# g[t + offset] += og[t], rows of g.size / g.shape[0] elements.
cimport numpy as cnp
from _types cimport real, index_t, is_float_array

cnp.import_array()


cdef inline void _add_row(real* dst, const real* src, index_t n) noexcept nogil:
    cdef index_t i
    for i in range(n):
        dst[i] = dst[i] + src[i]


def accumulate_input_gradient(cnp.ndarray g, cnp.ndarray og, Py_ssize_t t,
                              Py_ssize_t offset):
    """``g[t + offset] += og[t]`` (bounds re-checked here in C: cheap, and safe)."""
    if not (is_float_array(g) and is_float_array(og)
            and cnp.PyArray_TYPE(g) == cnp.PyArray_TYPE(og)
            and cnp.PyArray_NDIM(g) >= 1 and cnp.PyArray_DIMS(g)[0] > 0):
        raise TypeError("accumulate_input_gradient: g and og must be non-empty "
                        "C-contiguous float arrays of the same type")
    cdef index_t step = cnp.PyArray_SIZE(g) // cnp.PyArray_DIMS(g)[0]
    if t < 0 or (t + offset) * step + step > cnp.PyArray_SIZE(g) or t + offset < 0:
        raise IndexError("Accumulation destination address over bounds")
    if t * step + step > cnp.PyArray_SIZE(og):
        raise IndexError("Accumulation source address out of bounds")
    if cnp.PyArray_TYPE(g) == cnp.NPY_FLOAT32:
        with nogil:
            _add_row(<float*>cnp.PyArray_DATA(g) + (t + offset) * step,
                     <float*>cnp.PyArray_DATA(og) + t * step, step)
    else:
        with nogil:
            _add_row(<double*>cnp.PyArray_DATA(g) + (t + offset) * step,
                     <double*>cnp.PyArray_DATA(og) + t * step, step)
