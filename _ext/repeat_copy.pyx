# Compiled twin of caffe2rnn/kernels/repeat_copy.py: dst[n, :] = src for each row.
cimport numpy as cnp
from libc.string cimport memcpy
from _types cimport real, index_t, is_float_array

cnp.import_array()


cdef inline void _repeat_copy(const real* src, real* dst, index_t n,
                              index_t repeat) noexcept nogil:
    # memcpy: libc picks the widest vector moves the CPU has. Copy one row,
    # then double the filled part (1, 2, 4... rows): log2(repeat) calls
    # instead of one per row, which is what short rows pay for.
    if repeat == 0:
        return
    memcpy(dst, src, n * sizeof(real))
    cdef index_t done = 1, chunk
    while done < repeat:
        chunk = done if 2 * done <= repeat else repeat - done
        memcpy(dst + done * n, dst, chunk * n * sizeof(real))
        done += chunk


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
