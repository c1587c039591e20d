# Types shared by every caffe2rnn kernel.
#
# ``real`` is the fused float type: each kernel helper written with it is
# compiled twice (float32 and float64) and picked at compile time, so there is
# no run-time dispatch cost inside the loops. ``index_t`` is the index type of
# every loop (Py_ssize_t: the type NumPy sizes and strides use). What the loops
# assume of their arrays is checked first by _contract.pxd.
cimport numpy as cnp

ctypedef fused real:
    float
    double

ctypedef Py_ssize_t index_t
