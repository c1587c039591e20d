# Compiled twin of caffe2rnn/kernels/add_striped_batch.py:
# y += first_flat[j * stripe : j * stripe + n] for j = 0 .. batch - 1, in order.
cimport numpy as cnp
from _types cimport real, index_t, is_float_array

cnp.import_array()


cdef inline void _add_stripes(const real* first, real* y, index_t n,
                              index_t stripe, index_t batch) noexcept nogil:
    cdef index_t j, i
    for j in range(batch):
        for i in range(n):
            y[i] = y[i] + first[j * stripe + i]


def add_striped_batch(cnp.ndarray first, cnp.ndarray y, Py_ssize_t stripe,
                      Py_ssize_t batch):
    """Add ``batch`` stripes of ``first`` (``stripe`` apart) into ``y``."""
    if not (is_float_array(first) and is_float_array(y)
            and cnp.PyArray_TYPE(first) == cnp.PyArray_TYPE(y)):
        raise TypeError("add_striped_batch: first and y must be C-contiguous "
                        "float arrays of the same type")
    cdef index_t n = cnp.PyArray_SIZE(y)
    if batch < 0 or stripe < n or (batch > 0 and
                                    (batch - 1) * stripe + n > cnp.PyArray_SIZE(first)):
        raise IndexError("add_striped_batch: %d stripes of %d (every %d) do not "
                         "fit in %d elements" % (batch, n, stripe,
                                                 cnp.PyArray_SIZE(first)))
    if cnp.PyArray_TYPE(y) == cnp.NPY_FLOAT32:
        with nogil:
            _add_stripes(<float*>cnp.PyArray_DATA(first),
                         <float*>cnp.PyArray_DATA(y), n, stripe, batch)
    else:
        with nogil:
            _add_stripes(<double*>cnp.PyArray_DATA(first),
                         <double*>cnp.PyArray_DATA(y), n, stripe, batch)
