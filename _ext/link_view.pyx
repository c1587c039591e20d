# Compiled twin of caffe2rnn/kernels/link_view.py: rows [start, start + window)
# of ``external`` as a view, built with NumPy's C API (see _views.pxd).
cimport numpy as cnp
from _views cimport row_view

cnp.import_array()


def link_view(cnp.ndarray external, Py_ssize_t start, Py_ssize_t window):
    """View of rows ``[start, start + window)`` of ``external``."""
    if (cnp.PyArray_NDIM(external) < 1 or start < 0 or window < 0
            or start + window > cnp.PyArray_DIMS(external)[0]):
        raise IndexError("link_view: rows [%d, %d) outside an array of shape %s"
                         % (start, start + window, (<object>external).shape))
    return row_view(external, start, window)
