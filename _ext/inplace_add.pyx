# Compiled twin of caffe2rnn/kernels/inplace_add.py: dst += src, same size.
cimport numpy as cnp
from _types cimport real, index_t, is_float_array

cnp.import_array()


cdef inline void _add(real* dst, const real* src, index_t n) noexcept nogil:
    cdef index_t i
    for i in range(n):
        dst[i] = dst[i] + src[i]


def inplace_add(cnp.ndarray dst, cnp.ndarray src):
    """``dst += src`` element-wise over two arrays of the same size and type."""
    if not (is_float_array(dst) and is_float_array(src)
            and cnp.PyArray_TYPE(dst) == cnp.PyArray_TYPE(src)
            and cnp.PyArray_SIZE(dst) == cnp.PyArray_SIZE(src)):
        raise TypeError("inplace_add: dst and src must be C-contiguous float "
                        "arrays of the same type and size")
    cdef index_t n = cnp.PyArray_SIZE(dst)
    if cnp.PyArray_TYPE(dst) == cnp.NPY_FLOAT32:
        with nogil:
            _add(<float*>cnp.PyArray_DATA(dst), <float*>cnp.PyArray_DATA(src), n)
    else:
        with nogil:
            _add(<double*>cnp.PyArray_DATA(dst), <double*>cnp.PyArray_DATA(src), n)
