# Compiled twin of caffe2rnn/kernels/add_striped_batch.py:
# y += first_flat[j * stripe : j * stripe + n] for j = 0 .. batch - 1, in order.
# Checks from _contract.pxd, in the twin's order, before the first write; the
# bounds are compared so that no 64-bit intermediate can overflow.
cimport numpy as cnp
from _types cimport real, index_t
from _contract cimport array_arg, same_dtype, index_arg, overlaps, refuse

cnp.import_array()


cdef inline void _add_stripes(const real* first, real* y, index_t n,
                              index_t stripe, index_t batch) noexcept nogil:
    cdef index_t j, i
    for j in range(batch):
        for i in range(n):
            y[i] = y[i] + first[j * stripe + i]


def add_striped_batch(object first, object y, object stripe, object batch):
    """Add ``batch`` stripes of ``first`` (``stripe`` apart) into ``y``."""
    cdef str k = "add_striped_batch"
    cdef cnp.ndarray f = array_arg(first, k, "first", "float", False)
    cdef cnp.ndarray a = array_arg(y, k, "y", "float", True)
    same_dtype(k, "first", f, "y", a)
    cdef index_t s = index_arg(stripe, k, "stripe")
    cdef index_t b = index_arg(batch, k, "batch")
    if overlaps(a, f):
        refuse("no_overlap", (k, [("y", a)], [("first", f)]))
    cdef index_t n = cnp.PyArray_SIZE(a), size = cnp.PyArray_SIZE(f)
    # (b - 1) * s + n <= size, without forming the product
    if b < 0 or s < n or (b > 0 and (n > size or (s > 0 and b - 1 > (size - n) // s))):
        refuse("stripes", (k, f, a, s, b))
    if n == 0:
        return  # nothing to add (and no batch-long empty loop)
    if cnp.PyArray_TYPE(a) == cnp.NPY_FLOAT32:
        with nogil:
            _add_stripes(<float*>cnp.PyArray_DATA(f), <float*>cnp.PyArray_DATA(a), n, s, b)
    else:
        with nogil:
            _add_stripes(<double*>cnp.PyArray_DATA(f), <double*>cnp.PyArray_DATA(a), n, s, b)
