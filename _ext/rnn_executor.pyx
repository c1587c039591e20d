# Compiled twin of caffe2rnn/kernels/rnn_executor.py: the executor's loops.
# The calls are C-level callables (NumPy inner-loop calls and bound compiled
# kernels, made by compile_calls below; functools.partial for the rest), so
# a plan runs with no Python frame per step.


def run_plan(list calls, Py_ssize_t start, list failed):
    """Call ``calls[start:]`` in order; on an exception append the index of the
    call that raised to ``failed`` and re-raise it."""
    cdef Py_ssize_t i = start
    cdef Py_ssize_t n = len(calls)
    try:
        while i < n:
            calls[i]()
            i += 1
    except BaseException:
        failed.append(i)
        raise


def first_stale_guard(list blobs, list arrays):
    """The index of the first ``blobs[i]`` whose value is not ``arrays[i]``,
    or -1 when every blob still holds its array."""
    cdef Py_ssize_t i
    cdef Py_ssize_t n = len(blobs)
    for i in range(n):
        if blobs[i].value is not arrays[i]:
            return i
    return -1


def assign_values(list blobs, list values):
    """``blobs[i].value = values[i]`` for every i: the link views of one step."""
    cdef Py_ssize_t i
    for i in range(len(blobs)):
        blobs[i].value = values[i]


def run_lane(list calls, list waits, list signals, Py_ssize_t lane, list progress,
             object cond, list failed):
    """Run one lane of a threaded plan: wait where ``waits[p]`` says, call,
    publish progress, wake waiters where ``signals[p]``; a raising call ends
    the lane with ``(lane, p, exception)`` appended to ``failed``."""
    cdef Py_ssize_t p = 0
    cdef Py_ssize_t n = len(calls)
    cdef Py_ssize_t other, count
    try:
        while p < n:
            if failed:
                return
            wait = waits[p]
            if wait is not None:
                for other, count in wait:
                    if <Py_ssize_t>progress[other] < count:
                        with cond:
                            while <Py_ssize_t>progress[other] < count and not failed:
                                cond.wait()
                if failed:
                    return
            calls[p]()
            progress[lane] = p + 1
            if signals[p]:
                with cond:
                    cond.notify_all()
            p += 1
    except BaseException as exc:
        with cond:
            failed.append((lane, p, exc))
            cond.notify_all()


# ---------------------------------------------------------------------------
# compile_calls: a plan's NumPy calls run through NumPy's own inner loops.
#
# A bound call ``partial(np.add, a, b, out)`` spends ~0.4 µs in NumPy's
# dispatch (argument parsing, type resolution, the iterator) around an add
# of a few hundred numbers that takes ~0.2 µs; ``partial(np.matmul, ...)``
# ~0.7 µs around the GEMM. A LoopCall makes the decisions that dispatch
# makes once, when the plan is compiled, and at each call only runs the
# loop: the very function NumPy calls (from the ufunc's loop table), with
# the pointers, sizes and strides NumPy passes it. So the numbers are
# NumPy's by construction. What NumPy checks on every call is checked here
# too: the output must still be writeable, and the floating-point errors the
# loop raised are handled as np.errstate says, in NumPy's words
# (_give_fp_errors).
cimport numpy as cnp

cnp.import_array()
cnp.import_ufunc()

cdef extern from "numpy/ufuncobject.h":
    void _clear_fp_status "PyUFunc_clearfperr"() noexcept nogil
    int _fp_status "PyUFunc_getfperr"() noexcept nogil

ctypedef void (*inner_loop)(char **args, cnp.npy_intp *dims, cnp.npy_intp *steps,
                            void *data) noexcept nogil

#: A LoopCall releases the GIL for an element-wise loop of this many elements
#: or more (NumPy: above 500; operators/rnn/schedule.py models the same
#: threshold) and for every matmul (NumPy: when m·p > 500). Releasing it
#: more often changes nothing in the results, and lets lanes overlap.
cdef cnp.npy_intp UFUNC_NOGIL_SIZE = 500

import functools
import sys
import warnings

import numpy as np

_partial = functools.partial
_ELEMENTWISE = (np.add, np.subtract, np.multiply)


#: NumPy's floating-point error flags, np.errstate's key for each, and its words.
_FP_ERRORS = ((1, "divide", "divide by zero"), (2, "over", "overflow"),
              (4, "under", "underflow"), (8, "invalid", "invalid value"))


def _give_fp_errors(str name, int flags):
    """What NumPy does after a ufunc loop that raised ``flags``: for each, in
    its order, ignore, warn, raise, call, print or log as np.geterr() says."""
    how = np.geterr()
    for bit, key, text in _FP_ERRORS:
        if not flags & bit or how[key] == "ignore":
            continue
        message = "%s encountered in %s" % (text, name)
        if how[key] == "warn":
            warnings.warn(message, RuntimeWarning, stacklevel=2)
        elif how[key] == "raise":
            raise FloatingPointError(message)
        elif how[key] == "call":
            np.geterrcall()(text, flags)
        elif how[key] == "log":
            np.geterrcall().write("Warning: %s\n" % message)
        else:  # print
            sys.stderr.write("Warning: %s\n" % message)


cdef bint _loop_of(cnp.ufunc u, int typenum, inner_loop *fn, void **data):
    """The inner loop of ``u`` whose operands are all ``typenum``."""
    cdef int k, j
    cdef bint match
    for k in range(u.ntypes):
        match = True
        for j in range(u.nargs):
            if u.types[k * u.nargs + j] != typenum:
                match = False
        if match:
            fn[0] = <inner_loop><void*>u.functions[k]
            data[0] = u.data[k]
            return True
    return False


cdef class LoopCall:
    """``func(a, b, out)`` for an element-wise ufunc or ``np.matmul``, through
    the ufunc's inner loop. Looks like the partial it replaces (``func``,
    ``args``, ``keywords``), so the executor's descriptions and its schedule
    read it the same way."""

    cdef inner_loop fn
    cdef void *data
    cdef char *ptrs[3]  # a, b, out
    # What NumPy passes the loop. Element-wise: dims[0] = the count,
    # steps[0:3] = each operand's stride. matmul (a gufunc): dims = (outer
    # count 1, m, n, p), steps = (3 outer strides, unused: 0; a's m and n
    # strides; b's n and p strides; out's m and p strides).
    cdef cnp.npy_intp dims[4]
    cdef cnp.npy_intp steps[9]
    cdef cnp.npy_intp repeat  # calls of the loop (rows of a broadcast operand)
    cdef cnp.npy_intp advance[3]  # bytes each pointer moves between calls
    cdef bint release_gil
    cdef cnp.ndarray out
    cdef str name
    cdef readonly object func
    cdef readonly tuple args

    @property
    def keywords(self):
        return {}

    def __call__(self):
        self.call()

    cdef int call(self) except -1:
        cdef int errors
        if self.out is None:
            raise TypeError("a LoopCall is made by compile_calls")
        if not cnp.PyArray_ISWRITEABLE(self.out):
            raise ValueError("output array is read-only")
        if self.release_gil:
            with nogil:
                errors = self._loop()
        else:
            errors = self._loop()
        if errors:
            _give_fp_errors(self.name, errors)
        return 0

    cdef int _loop(self) noexcept nogil:
        cdef char *args[3]
        cdef cnp.npy_intp r
        _clear_fp_status()
        for r in range(self.repeat):
            # a fresh copy each time: the matmul loop advances its args
            args[0] = self.ptrs[0] + r * self.advance[0]
            args[1] = self.ptrs[1] + r * self.advance[1]
            args[2] = self.ptrs[2] + r * self.advance[2]
            self.fn(args, self.dims, self.steps, self.data)
        return _fp_status()


cdef bint _usable(object a, int typenum):
    """An aligned, native-order ndarray of ``typenum`` with no zero-size dim."""
    return (cnp.PyArray_Check(a) and cnp.PyArray_TYPE(<cnp.ndarray>a) == typenum
            and cnp.PyArray_ISALIGNED(<cnp.ndarray>a)
            and cnp.PyArray_ISNOTSWAPPED(<cnp.ndarray>a)
            and cnp.PyArray_SIZE(<cnp.ndarray>a) > 0)


cdef int _operands_type(object a, object b, object out):
    """The type number of three usable arrays of one float type, or -1."""
    if not (_usable(out, cnp.NPY_FLOAT32) or _usable(out, cnp.NPY_FLOAT64)):
        return -1
    cdef int typenum = cnp.PyArray_TYPE(<cnp.ndarray>out)
    return typenum if _usable(a, typenum) and _usable(b, typenum) else -1


cdef bint _disjoint(cnp.ndarray a, cnp.ndarray b):
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


cdef object _elementwise(object call):
    """A LoopCall for ``partial(ufunc, a, b, out)`` with out C-contiguous and
    each input of one of three kinds:

    * out's shape, C-contiguous (out may be that very input);
    * out's shape, a strided matrix (a transposed view), when out is 2-D;
    * a row of out's last dimension (``(n,)``, ``(1, n)``; any stride),
      broadcast over out's rows.

    Two of the first kind: one call of the loop over all elements (NumPy's
    "trivial" loop). Otherwise a call per row of out, as NumPy's iterator
    makes them. Sums, differences and products are exactly rounded element by
    element, so every element is NumPy's however the loop is split. Anything
    else (a partial overlap NumPy would copy for, a column broadcast): None.
    """
    a, b, out = call.args
    cdef int typenum = _operands_type(a, b, out)
    if typenum < 0:
        return None
    cdef cnp.ndarray o = out
    cdef int nd = cnp.PyArray_NDIM(o)
    if nd == 0 or not cnp.PyArray_IS_C_CONTIGUOUS(o):
        return None
    cdef cnp.npy_intp itemsize = cnp.PyArray_ITEMSIZE(o)
    cdef cnp.npy_intp row = cnp.PyArray_DIM(o, nd - 1)
    cdef cnp.npy_intp step[2]
    cdef cnp.npy_intp advance[2]
    cdef bint flat = True
    cdef cnp.ndarray x
    cdef int i, xd
    for i, operand in enumerate((a, b)):
        x = operand
        xd = cnp.PyArray_NDIM(x)
        if operand.shape == out.shape and cnp.PyArray_IS_C_CONTIGUOUS(x):
            step[i], advance[i] = itemsize, row * itemsize
            if not (_disjoint(x, o) or cnp.PyArray_DATA(x) == cnp.PyArray_DATA(o)):
                return None  # a partial overlap: NumPy would copy
            continue
        flat = False
        if not _disjoint(x, o):
            return None
        if nd == 2 and operand.shape == out.shape:
            step[i], advance[i] = cnp.PyArray_STRIDE(x, 1), cnp.PyArray_STRIDE(x, 0)
        elif (1 <= xd <= nd and cnp.PyArray_DIM(x, xd - 1) == row
              and cnp.PyArray_SIZE(x) == row):
            step[i], advance[i] = cnp.PyArray_STRIDE(x, xd - 1), 0
        else:
            return None
    cdef LoopCall c = LoopCall.__new__(LoopCall)
    if not _loop_of(call.func, typenum, &c.fn, &c.data):
        return None
    c.func, c.args, c.out = call.func, call.args, o
    c.name = call.func.__name__
    c.ptrs[0] = <char*>cnp.PyArray_DATA(<cnp.ndarray>a)
    c.ptrs[1] = <char*>cnp.PyArray_DATA(<cnp.ndarray>b)
    c.ptrs[2] = <char*>cnp.PyArray_DATA(o)
    c.advance[0] = c.advance[1] = c.advance[2] = 0
    if flat:
        c.repeat, c.dims[0] = 1, cnp.PyArray_SIZE(o)
        c.steps[0] = c.steps[1] = c.steps[2] = itemsize
    else:
        c.repeat, c.dims[0] = cnp.PyArray_SIZE(o) // row, row
        c.steps[0], c.steps[1], c.steps[2] = step[0], step[1], itemsize
        c.advance[0], c.advance[1], c.advance[2] = advance[0], advance[1], row * itemsize
    c.release_gil = cnp.PyArray_SIZE(o) >= UFUNC_NOGIL_SIZE
    return c


cdef inline cnp.npy_intp _core_stride(cnp.ndarray a, int axis):
    """The stride the gufunc machinery passes for a core dimension: 0 when
    the dimension is 1 (nothing to step over), else the array's own."""
    return 0 if cnp.PyArray_DIM(a, axis) == 1 else cnp.PyArray_STRIDE(a, axis)


cdef object _matmul(object call):
    """A LoopCall for ``partial(np.matmul, a, b, out)`` of matrices: NumPy's
    matmul loop with one outer iteration, the core sizes (m, n, p) and each
    operand's own strides, as the gufunc machinery passes them for 2-D
    operands (0 for a dimension of 1); the loop then picks GEMM, GEMV or its
    own code as it would.
    An output overlapping an input (NumPy would copy): None."""
    a, b, out = call.args
    cdef int typenum = _operands_type(a, b, out)
    if typenum < 0:
        return None
    cdef cnp.ndarray x = a, y = b, o = out
    if cnp.PyArray_NDIM(x) != 2 or cnp.PyArray_NDIM(y) != 2 or cnp.PyArray_NDIM(o) != 2:
        return None
    if (cnp.PyArray_DIM(x, 1) != cnp.PyArray_DIM(y, 0)
            or cnp.PyArray_DIM(o, 0) != cnp.PyArray_DIM(x, 0)
            or cnp.PyArray_DIM(o, 1) != cnp.PyArray_DIM(y, 1)):
        return None
    if not (_disjoint(o, x) and _disjoint(o, y)):
        return None
    cdef LoopCall c = LoopCall.__new__(LoopCall)
    if not _loop_of(np.matmul, typenum, &c.fn, &c.data):
        return None
    c.func, c.args, c.out, c.name = call.func, call.args, o, "matmul"
    c.ptrs[0] = <char*>cnp.PyArray_DATA(x)
    c.ptrs[1] = <char*>cnp.PyArray_DATA(y)
    c.ptrs[2] = <char*>cnp.PyArray_DATA(o)
    c.dims[0] = 1
    c.dims[1], c.dims[2] = cnp.PyArray_DIM(x, 0), cnp.PyArray_DIM(x, 1)
    c.dims[3] = cnp.PyArray_DIM(y, 1)
    c.steps[0] = c.steps[1] = c.steps[2] = 0
    c.steps[3], c.steps[4] = _core_stride(x, 0), _core_stride(x, 1)
    c.steps[5], c.steps[6] = _core_stride(y, 0), _core_stride(y, 1)
    c.steps[7], c.steps[8] = _core_stride(o, 0), _core_stride(o, 1)
    c.repeat = 1
    c.advance[0] = c.advance[1] = c.advance[2] = 0
    c.release_gil = True
    return c


cdef dict _binders_cache = None


cdef dict _binders():
    """Compiled kernel -> its binder (checks once, returns a bound call)."""
    global _binders_cache
    if _binders_cache is None:
        from caffe2rnn._ext import lstm_unit
        _binders_cache = {
            lstm_unit.lstm_unit_forward: lstm_unit.bound_lstm_unit_forward,
            lstm_unit.lstm_unit_backward: lstm_unit.bound_lstm_unit_backward,
        }
    return _binders_cache


cdef object _compiled(object call):
    """``call`` as a LoopCall or a bound kernel, or ``call`` itself."""
    if type(call) is not _partial or call.keywords:
        return call
    func = call.func
    compiled = None
    if len(call.args) == 3 and func is np.matmul:
        compiled = _matmul(call)
    elif len(call.args) == 3 and func in _ELEMENTWISE:
        compiled = _elementwise(call)
    else:
        binder = _binders().get(func)
        if binder is not None:
            try:
                compiled = binder(*call.args)
            except Exception:
                # Refused now (an output made read-only since the build...):
                # the partial stays, and raises in the plan, naming its step.
                compiled = None
    return call if compiled is None else compiled


def compile_calls(list calls):
    """The plan's calls with each NumPy call it can run directly replaced by
    a LoopCall and each compiled kernel's call by that kernel bound to its
    arrays (checked now, not on every call). The twin returns the calls as
    they are: each replacement computes what it replaces, bit for bit."""
    return [_compiled(call) for call in calls]
