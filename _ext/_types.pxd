# Types shared by every caffe2rnn kernel.
#
# ``real`` is the fused float type: each kernel helper written with it is
# compiled twice (float32 and float64) and picked at compile time, so there is
# no run-time dispatch cost inside the loops. ``index_t`` is the index type of
# every loop (Py_ssize_t: the type NumPy sizes and strides use).
cimport numpy as cnp

ctypedef fused real:
    float
    double

ctypedef Py_ssize_t index_t


cdef inline bint is_float_array(cnp.ndarray a) noexcept:
    """float32 or float64, C-contiguous and aligned: what the loops assume."""
    cdef int kind = cnp.PyArray_TYPE(a)
    return ((kind == cnp.NPY_FLOAT32 or kind == cnp.NPY_FLOAT64)
            and cnp.PyArray_IS_C_CONTIGUOUS(a) and cnp.PyArray_ISALIGNED(a))
