# Compiled twin of caffe2rnn/kernels/offset_alias.py: src[start:] as a view,
# built with NumPy's C API (see _views.pxd).
cimport numpy as cnp
from _views cimport row_view

cnp.import_array()


def offset_alias(cnp.ndarray src, Py_ssize_t start):
    """View of ``src[start:]`` (shares memory with ``src``)."""
    if cnp.PyArray_NDIM(src) < 1 or start < 0 or start > cnp.PyArray_DIMS(src)[0]:
        raise IndexError("offset_alias: start %d outside the rows of an array of "
                         "shape %s" % (start, (<object>src).shape))
    return row_view(src, start, cnp.PyArray_DIMS(src)[0] - start)
