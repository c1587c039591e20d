# Row views made with NumPy's C API, shared by the view kernels.
#
# A view is a new array header over the same data (base = the source array),
# exactly what ``a[start:start + count]`` returns, without the cost of building
# a slice object and going through NumPy's Python-level indexing.
cimport numpy as cnp
from cpython.ref cimport Py_INCREF

cdef extern from "numpy/arrayobject.h":
    object PyArray_NewFromDescr(void* subtype, void* descr, int nd,
                                cnp.npy_intp* dims, cnp.npy_intp* strides,
                                void* data, int flags, void* obj)


cdef inline object row_view(cnp.ndarray a, Py_ssize_t start, Py_ssize_t count):
    """Rows ``[start, start + count)`` of ``a`` (the caller checked the bounds)."""
    cdef int nd = cnp.PyArray_NDIM(a)
    cdef cnp.npy_intp[64] dims
    cdef int i
    for i in range(nd):
        dims[i] = cnp.PyArray_DIMS(a)[i]
    dims[0] = count
    cdef object cls = type(a)
    cdef object descr = <object>cnp.PyArray_DESCR(a)
    Py_INCREF(descr)  # PyArray_NewFromDescr steals this reference
    cdef cnp.ndarray view = PyArray_NewFromDescr(
        <void*>cls, <void*>descr, nd, dims, cnp.PyArray_STRIDES(a),
        cnp.PyArray_BYTES(a) + start * cnp.PyArray_STRIDES(a)[0],
        cnp.PyArray_FLAGS(a) & cnp.NPY_ARRAY_WRITEABLE, NULL)
    cnp.set_array_base(view, a)
    return view
