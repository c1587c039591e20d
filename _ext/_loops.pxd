# NumPy's own inner loops, called directly: shared by the RNN executor's loop
# calls (rnn_executor.pyx) and the fused LSTM step (lstm_step.pyx), so both run
# the very code np.matmul and np.add run, on the pointers, sizes and strides
# NumPy would pass. Only decisions are made here; no arithmetic.
cimport numpy as cnp

ctypedef void (*inner_loop)(char **args, cnp.npy_intp *dims, cnp.npy_intp *steps,
                            void *data) noexcept nogil


cdef struct Loop:
    # One call of a ufunc's inner loop. Element-wise: dims[0] = the count,
    # steps[0:3] = each operand's stride. matmul (a gufunc): dims = (outer
    # count 1, m, n, p), steps = (3 outer strides, unused: 0; a's m and n
    # strides; b's n and p strides; out's m and p strides).
    inner_loop fn
    void *data
    char *ptrs[3]  # a, b, out
    cnp.npy_intp dims[4]
    cnp.npy_intp steps[9]


cdef inline bint loop_of(cnp.ufunc u, int typenum, Loop *loop):
    """Take the inner loop of ``u`` whose operands are all ``typenum``."""
    cdef int k, j
    cdef bint match
    for k in range(u.ntypes):
        match = True
        for j in range(u.nargs):
            if u.types[k * u.nargs + j] != typenum:
                match = False
        if match:
            loop.fn = <inner_loop><void*>u.functions[k]
            loop.data = u.data[k]
            return True
    return False


cdef inline bint usable(object a, int typenum):
    """An aligned, native-order ndarray of ``typenum`` with no zero-size dim."""
    return (cnp.PyArray_Check(a) and cnp.PyArray_TYPE(<cnp.ndarray>a) == typenum
            and cnp.PyArray_ISALIGNED(<cnp.ndarray>a)
            and cnp.PyArray_ISNOTSWAPPED(<cnp.ndarray>a)
            and cnp.PyArray_SIZE(<cnp.ndarray>a) > 0)


cdef inline int operands_type(object a, object b, object out):
    """The type number of three usable arrays of one float type, or -1."""
    if not (usable(out, cnp.NPY_FLOAT32) or usable(out, cnp.NPY_FLOAT64)):
        return -1
    cdef int typenum = cnp.PyArray_TYPE(<cnp.ndarray>out)
    return typenum if usable(a, typenum) and usable(b, typenum) else -1


cdef inline bint disjoint(cnp.ndarray a, cnp.ndarray b):
    """No byte of ``a`` is a byte of ``b`` (their spans do not meet)."""
    cdef char *a0 = <char*>cnp.PyArray_DATA(a)
    cdef char *b0 = <char*>cnp.PyArray_DATA(b)
    cdef char *a1 = a0
    cdef char *b1 = b0
    cdef int i
    for i in range(cnp.PyArray_NDIM(a)):
        if cnp.PyArray_STRIDE(a, i) < 0:
            a0 += cnp.PyArray_STRIDE(a, i) * (cnp.PyArray_DIM(a, i) - 1)
        else:
            a1 += cnp.PyArray_STRIDE(a, i) * (cnp.PyArray_DIM(a, i) - 1)
    for i in range(cnp.PyArray_NDIM(b)):
        if cnp.PyArray_STRIDE(b, i) < 0:
            b0 += cnp.PyArray_STRIDE(b, i) * (cnp.PyArray_DIM(b, i) - 1)
        else:
            b1 += cnp.PyArray_STRIDE(b, i) * (cnp.PyArray_DIM(b, i) - 1)
    return a1 + cnp.PyArray_ITEMSIZE(a) <= b0 or b1 + cnp.PyArray_ITEMSIZE(b) <= a0


cdef inline cnp.npy_intp core_stride(cnp.ndarray a, int axis):
    """The stride the gufunc machinery passes for a core dimension: 0 when
    the dimension is 1 (nothing to step over), else the array's own."""
    return 0 if cnp.PyArray_DIM(a, axis) == 1 else cnp.PyArray_STRIDE(a, axis)


cdef inline bint matmul_loop(object a, object b, object out, object matmul, Loop *loop):
    """Fill ``loop`` with ``np.matmul(a, b, out)`` of matrices: NumPy's matmul
    loop with one outer iteration, the core sizes (m, n, p) and each operand's
    own strides, as the gufunc machinery passes them for 2-D operands (0 for a
    dimension of 1); the loop then picks GEMM, GEMV or its own code as it
    would. False (nothing filled in) for anything else, and for an output
    overlapping an input (NumPy would copy)."""
    cdef int typenum = operands_type(a, b, out)
    if typenum < 0:
        return False
    cdef cnp.ndarray x = a, y = b, o = out
    if cnp.PyArray_NDIM(x) != 2 or cnp.PyArray_NDIM(y) != 2 or cnp.PyArray_NDIM(o) != 2:
        return False
    if (cnp.PyArray_DIM(x, 1) != cnp.PyArray_DIM(y, 0)
            or cnp.PyArray_DIM(o, 0) != cnp.PyArray_DIM(x, 0)
            or cnp.PyArray_DIM(o, 1) != cnp.PyArray_DIM(y, 1)):
        return False
    if not (disjoint(o, x) and disjoint(o, y)):
        return False
    if not loop_of(matmul, typenum, loop):
        return False
    loop.ptrs[0] = <char*>cnp.PyArray_DATA(x)
    loop.ptrs[1] = <char*>cnp.PyArray_DATA(y)
    loop.ptrs[2] = <char*>cnp.PyArray_DATA(o)
    loop.dims[0] = 1
    loop.dims[1], loop.dims[2] = cnp.PyArray_DIM(x, 0), cnp.PyArray_DIM(x, 1)
    loop.dims[3] = cnp.PyArray_DIM(y, 1)
    loop.steps[0] = loop.steps[1] = loop.steps[2] = 0
    loop.steps[3], loop.steps[4] = core_stride(x, 0), core_stride(x, 1)
    loop.steps[5], loop.steps[6] = core_stride(y, 0), core_stride(y, 1)
    loop.steps[7], loop.steps[8] = core_stride(o, 0), core_stride(o, 1)
    return True
