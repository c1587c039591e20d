# The C half of caffe2rnn/kernels/contract.py: what every compiled kernel checks
# before its first read or write. Each check here is a few C comparisons; when
# one fails, the Python function of the same name in contract.py builds the
# error, so both kernel paths refuse the same calls with the same class and
# message. Bounds are compared in 64-bit arithmetic arranged so that nothing
# can overflow (``count <= n_rows - start``, never ``start + count <= n_rows``).
cimport numpy as cnp

cdef extern from "Python.h":
    Py_ssize_t PyLong_AsSsize_t(object) except? -1
    object PyNumber_Index(object)
    double PyFloat_AsDouble(object) except? -1.0


cdef inline object _contract():
    from caffe2rnn.kernels import contract
    return contract


cdef inline int refuse(str check, tuple args) except -1:
    """Let contract.<check>(*args) raise the error (SystemError if it does not)."""
    c = _contract()
    c.refused(getattr(c, check), *args)
    return -1


cdef inline Py_ssize_t index_arg(object value, str kernel, str name) except? -1:
    """``value`` (anything with __index__) as a Py_ssize_t, or contract.index's error."""
    try:
        return PyLong_AsSsize_t(PyNumber_Index(value))
    except Exception:
        pass
    refuse("index", (value, kernel, name))
    return -1


cdef inline double real_arg(object value, str kernel, str name) except? -1.0:
    """``value`` as a C double (no strings), or contract.real's error."""
    if not isinstance(value, (str, bytes, bytearray)):
        try:
            return PyFloat_AsDouble(value)
        except Exception:
            pass
    refuse("real", (value, kernel, name))
    return -1.0


cdef inline cnp.ndarray array_arg(object a, str kernel, str name, str kind,
                                  bint writable):
    """``a`` if the loops can use it (see contract.array), else its error."""
    cdef cnp.ndarray arr
    cdef int num
    if cnp.PyArray_Check(a):
        arr = <cnp.ndarray>a
        num = cnp.PyArray_TYPE(arr)
        if (((num == cnp.NPY_FLOAT32 or num == cnp.NPY_FLOAT64) if kind == "float"
             else num == cnp.NPY_INT32)
                and cnp.PyArray_ISNOTSWAPPED(arr) and cnp.PyArray_IS_C_CONTIGUOUS(arr)
                and cnp.PyArray_ISALIGNED(arr)
                and (not writable or cnp.PyArray_ISWRITEABLE(arr))):
            return arr
    refuse("array", (a, kernel, name, kind, writable))


cdef inline int same_dtype(str kernel, str first_name, cnp.ndarray first, str name,
                           cnp.ndarray a) except -1:
    if cnp.PyArray_TYPE(a) != cnp.PyArray_TYPE(first):
        refuse("same_dtype", (kernel, first_name, first, name, a))
    return 0


cdef inline bint overlaps(object a, object b):
    """Two contiguous arrays (or None) share bytes; empty arrays share none."""
    if a is None or b is None:
        return False
    cdef cnp.ndarray x = <cnp.ndarray>a, y = <cnp.ndarray>b
    cdef char* x_low = cnp.PyArray_BYTES(x)
    cdef char* y_low = cnp.PyArray_BYTES(y)
    cdef Py_ssize_t x_n = cnp.PyArray_NBYTES(x), y_n = cnp.PyArray_NBYTES(y)
    return x_n > 0 and y_n > 0 and x_low < y_low + y_n and y_low < x_low + x_n


cdef inline int no_overlap(str kernel, list written, list others) except -1:
    """contract.no_overlap: no written array shares bytes with a later argument."""
    cdef Py_ssize_t i, j
    cdef list rest
    for i in range(len(written)):
        rest = written[i + 1:] + others
        for j in range(len(rest)):
            if overlaps(written[i][1], rest[j][1]):
                refuse("no_overlap", (kernel, written, others))
    return 0


cdef inline int rows(str kernel, Py_ssize_t n_rows, Py_ssize_t start,
                     Py_ssize_t count) except -1:
    """contract.rows: ``[start, start + count)`` within ``[0, n_rows)``."""
    if not (0 <= start <= n_rows and 0 <= count <= n_rows - start):
        refuse("rows", (kernel, n_rows, start, count))
    return 0


cdef inline int same_size(str kernel, str name, cnp.ndarray a,
                          Py_ssize_t size) except -1:
    if cnp.PyArray_SIZE(a) != size:
        refuse("same_size", (kernel, name, a, size))
    return 0


cdef inline Py_ssize_t view_rows(object a, str kernel, str name) except -1:
    """contract.view_source: the rows of an ndarray with at least one dimension."""
    if cnp.PyArray_Check(a) and cnp.PyArray_NDIM(<cnp.ndarray>a) >= 1:
        return cnp.PyArray_DIMS(<cnp.ndarray>a)[0]
    refuse("view_source", (a, kernel, name))
    return -1


cdef inline int operand_arg(object a, str kernel, str name) except -1:
    """contract.operand: a native, aligned, non-empty float matrix (any strides)."""
    cdef cnp.ndarray arr
    cdef int num
    if cnp.PyArray_Check(a):
        arr = <cnp.ndarray>a
        num = cnp.PyArray_TYPE(arr)
        if ((num == cnp.NPY_FLOAT32 or num == cnp.NPY_FLOAT64)
                and cnp.PyArray_ISNOTSWAPPED(arr) and cnp.PyArray_ISALIGNED(arr)
                and cnp.PyArray_NDIM(arr) == 2 and cnp.PyArray_SIZE(arr) > 0):
            return 0
    refuse("operand", (a, kernel, name))
    return -1


cdef inline int product_shapes(str kernel, tuple names, cnp.ndarray a, cnp.ndarray b,
                               cnp.ndarray out) except -1:
    """contract.product: ``a`` (M x K) times ``b`` (K x N) fits ``out`` (M x N)."""
    if (cnp.PyArray_DIM(b, 0) != cnp.PyArray_DIM(a, 1) or cnp.PyArray_NDIM(out) != 2
            or cnp.PyArray_DIM(out, 0) != cnp.PyArray_DIM(a, 0)
            or cnp.PyArray_DIM(out, 1) != cnp.PyArray_DIM(b, 1)):
        refuse("product", (kernel, names, a, b, out))
    return 0
