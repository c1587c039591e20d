# Compiled twin of caffe2rnn/kernels/inplace_add.py: dst += src, same size.
# Checks from _contract.pxd, in the twin's order, before the first write.
cimport numpy as cnp
from _types cimport real, index_t
from _contract cimport array_arg, same_dtype, overlaps, refuse, same_size

cnp.import_array()


cdef inline void _add(real* dst, const real* src, index_t n) noexcept nogil:
    cdef index_t i
    for i in range(n):
        dst[i] = dst[i] + src[i]


def inplace_add(object dst, object src):
    """``dst += src`` element-wise over two arrays of the same size and type."""
    cdef cnp.ndarray d = array_arg(dst, "inplace_add", "dst", "float", True)
    cdef cnp.ndarray s = array_arg(src, "inplace_add", "src", "float", False)
    same_dtype("inplace_add", "dst", d, "src", s)
    if overlaps(d, s):
        refuse("no_overlap", ("inplace_add", [("dst", d)], [("src", s)]))
    cdef index_t n = cnp.PyArray_SIZE(d)
    same_size("inplace_add", "src", s, n)
    if cnp.PyArray_TYPE(d) == cnp.NPY_FLOAT32:
        with nogil:
            _add(<float*>cnp.PyArray_DATA(d), <float*>cnp.PyArray_DATA(s), n)
    else:
        with nogil:
            _add(<double*>cnp.PyArray_DATA(d), <double*>cnp.PyArray_DATA(s), n)
