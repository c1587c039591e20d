# Compiled twin of caffe2rnn/kernels/activations.py: e^x, σ and tanh over an
# array, one vectorised loop each. The operations are in _activations.pxi,
# which the LSTM kernels (_lstm_math.pxi) include too; these functions expose
# them so that the tests can hold each against its twin on any input. Checks
# from _contract.pxd, in the twin's order, before the first write.
cimport numpy as cnp
from _types cimport real, index_t
from _contract cimport array_arg, same_dtype, same_size, overlaps, refuse

include "_activations.pxi"

cnp.import_array()

cdef enum Function:
    EXP
    SIGMOID
    TANH


cdef void _apply(const real* x, real* out, index_t n, Function f) noexcept nogil:
    cdef index_t i
    if f == EXP:
        for i in range(n):
            out[i] = _exp(x[i])
    elif f == SIGMOID:
        for i in range(n):
            out[i] = _sigmoid(x[i])
    else:
        for i in range(n):
            out[i] = _tanh(x[i])


cdef object _run(str k, object x, object out, Function f):
    cdef cnp.ndarray a = array_arg(x, k, "x", "float", False)
    cdef cnp.ndarray o = array_arg(out, k, "out", "float", True)
    same_dtype(k, "x", a, "out", o)
    cdef index_t n = cnp.PyArray_SIZE(a)
    same_size(k, "out", o, n)
    cdef bint in_place = (cnp.PyArray_DATA(a) == cnp.PyArray_DATA(o)
                          and cnp.PyArray_NBYTES(a) == cnp.PyArray_NBYTES(o))
    if not in_place and overlaps(o, a):
        refuse("no_overlap", (k, [("out", o)], [("x", a)]))
    if cnp.PyArray_TYPE(a) == cnp.NPY_FLOAT32:
        with nogil:
            _apply(<const float*>cnp.PyArray_DATA(a), <float*>cnp.PyArray_DATA(o), n, f)
    else:
        with nogil:
            _apply(<const double*>cnp.PyArray_DATA(a), <double*>cnp.PyArray_DATA(o), n, f)
    return out.reshape(x.shape)


def exp(object x, object out):
    """e^x into ``out`` (see the Python twin)."""
    return _run("exp", x, out, EXP)


def sigmoid(object x, object out):
    """σ(x) = 1 / (e^(−x) + 1) into ``out`` (see the Python twin)."""
    return _run("sigmoid", x, out, SIGMOID)


def tanh(object x, object out):
    """tanh(x) = 2σ(2x) − 1 into ``out`` (see the Python twin)."""
    return _run("tanh", x, out, TANH)
