# Compiled twin of caffe2rnn/kernels/link_view.py: rows [start, start + window)
# of ``external`` as a view, built with NumPy's C API (see _views.pxd); checks
# from _contract.pxd.
cimport numpy as cnp
from _views cimport row_view
from _contract cimport view_rows, index_arg, rows

cnp.import_array()


def link_view(object external, object start, object window):
    """View of rows ``[start, start + window)`` of ``external``."""
    cdef Py_ssize_t n_rows = view_rows(external, "link_view", "external")
    cdef Py_ssize_t s = index_arg(start, "link_view", "start")
    cdef Py_ssize_t w = index_arg(window, "link_view", "window")
    rows("link_view", n_rows, s, w)
    return row_view(<cnp.ndarray>external, s, w)
