# Compiled twin of caffe2rnn/kernels/repeat_copy.py: dst[n, :] = src for each row.
cimport numpy as cnp
from libc.string cimport memcpy
from _types cimport real, index_t, is_float_array

cnp.import_array()


cdef inline void _repeat_copy(const real* src, real* dst, index_t n,
                              index_t repeat) noexcept nogil:
    # memcpy: libc picks the widest vector moves the CPU has.
    cdef index_t r
    for r in range(repeat):
        memcpy(dst + r * n, src, n * sizeof(real))


def repeat_copy(cnp.ndarray src, cnp.ndarray dst):
    """``dst[n] = src`` for every row n of ``dst`` (``dst.size`` = k * ``src.size``)."""
    if not (is_float_array(src) and is_float_array(dst)
            and cnp.PyArray_TYPE(src) == cnp.PyArray_TYPE(dst)):
        raise TypeError("repeat_copy: src and dst must be C-contiguous float "
                        "arrays of the same type")
    cdef index_t n = cnp.PyArray_SIZE(src)
    cdef index_t size = cnp.PyArray_SIZE(dst)
    if n == 0 or size % n:
        raise ValueError("repeat_copy: dst size %d is not a multiple of src "
                         "size %d" % (size, n))
    cdef index_t repeat = size // n
    if cnp.PyArray_TYPE(dst) == cnp.NPY_FLOAT32:
        with nogil:
            _repeat_copy(<float*>cnp.PyArray_DATA(src),
                         <float*>cnp.PyArray_DATA(dst), n, repeat)
    else:
        with nogil:
            _repeat_copy(<double*>cnp.PyArray_DATA(src),
                         <double*>cnp.PyArray_DATA(dst), n, repeat)
