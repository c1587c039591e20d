# Compiled twin of caffe2rnn/kernels/offset_alias.py: src[start:] as a view,
# built with NumPy's C API (see _views.pxd); checks from _contract.pxd.
cimport numpy as cnp
from _views cimport row_view
from _contract cimport view_rows, index_arg, refuse

cnp.import_array()


def offset_alias(object src, object start):
    """View of ``src[start:]`` (shares memory with ``src``)."""
    cdef Py_ssize_t n_rows = view_rows(src, "offset_alias", "src")
    cdef Py_ssize_t s = index_arg(start, "offset_alias", "start")
    if not 0 <= s <= n_rows:
        refuse("alias_start", ("offset_alias", n_rows, s))
    return row_view(<cnp.ndarray>src, s, n_rows - s)
