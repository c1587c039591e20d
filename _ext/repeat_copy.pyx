# Compiled twin of caffe2rnn/kernels/repeat_copy.py: dst[n, :] = src for each row.
# Checks from _contract.pxd, in the twin's order, before the first write.
cimport numpy as cnp
from libc.string cimport memcpy
from _types cimport real, index_t
from _contract cimport array_arg, same_dtype, overlaps, refuse

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


def repeat_copy(object src, object dst):
    """``dst[n] = src`` for every row n of ``dst`` (``dst.size`` = k * ``src.size``)."""
    cdef cnp.ndarray s = array_arg(src, "repeat_copy", "src", "float", False)
    cdef cnp.ndarray d = array_arg(dst, "repeat_copy", "dst", "float", True)
    same_dtype("repeat_copy", "src", s, "dst", d)
    if overlaps(d, s):
        refuse("no_overlap", ("repeat_copy", [("dst", d)], [("src", s)]))
    cdef index_t n = cnp.PyArray_SIZE(s)
    cdef index_t size = cnp.PyArray_SIZE(d)
    if n == 0 or size % n:
        refuse("repeat", ("repeat_copy", s, d))
    if cnp.PyArray_TYPE(d) == cnp.NPY_FLOAT32:
        with nogil:
            _repeat_copy(<float*>cnp.PyArray_DATA(s), <float*>cnp.PyArray_DATA(d), n,
                         size // n)
    else:
        with nogil:
            _repeat_copy(<double*>cnp.PyArray_DATA(s), <double*>cnp.PyArray_DATA(d), n,
                         size // n)
