# Compiled twin of caffe2rnn/kernels/rnn_executor.py: the executor's loops.
# The calls are C-level callables (NumPy inner-loop calls and bound compiled
# kernels, made by compile_calls below; the bound calls themselves for the
# rest), so a step plan runs with no Python frame per step.


def run_step_plan(list calls, Py_ssize_t start, list failed):
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
# A bound call ``np.add(a, b, out)`` spends ~0.4 µs in NumPy's
# dispatch (argument parsing, type resolution, the iterator) around an add
# of a few hundred numbers that takes ~0.2 µs; ``np.matmul(a, b, out)``
# ~0.7 µs around the GEMM. A LoopCall makes the decisions that dispatch
# makes once, when the plan is compiled, and at each call only runs the
# loop: the very function NumPy calls (from the ufunc's loop table), with
# the pointers, sizes and strides NumPy passes it. So the numbers are
# NumPy's by construction. What NumPy checks on every call is checked here
# too: the output must still be writeable, and the floating-point errors the
# loop raised are handled as np.errstate says, in NumPy's words
# (give_fp_errors).
cimport numpy as cnp
from _loops cimport Loop, loop_of, operands_type, disjoint, matmul_loop

cnp.import_array()
cnp.import_ufunc()

cdef extern from "numpy/ufuncobject.h":
    void _clear_fp_status "PyUFunc_clearfperr"() noexcept nogil
    int _fp_status "PyUFunc_getfperr"() noexcept nogil

# A LoopCall releases the GIL where its bound call declares that it does
# (BoundCall.releases_gil: element-wise loops from 500 elements, as NumPy;
# every product). Releasing it more often changes nothing in the results,
# and lets lanes overlap.

import sys
import warnings

import numpy as np

_ELEMENTWISE = (np.add, np.subtract, np.multiply)


#: NumPy's floating-point error flags, np.errstate's key for each, and its words.
_FP_ERRORS = ((1, "divide", "divide by zero"), (2, "over", "overflow"),
              (4, "under", "underflow"), (8, "invalid", "invalid value"))


def give_fp_errors(str name, int flags):
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


cdef class LoopCall:
    """``func(a, b, out)`` for an element-wise ufunc or ``np.matmul``, through
    the ufunc's inner loop. Keeps the bound call it replaces (``bound``) and
    shows its ``func`` and ``args``."""

    cdef Loop loop  # what NumPy passes the loop (_loops.pxd)
    cdef cnp.npy_intp repeat  # calls of the loop (rows of a broadcast operand)
    cdef cnp.npy_intp advance[3]  # bytes each pointer moves between calls
    cdef bint release_gil
    cdef cnp.ndarray out
    cdef str name
    cdef readonly object bound

    @property
    def func(self):
        return self.bound.func

    @property
    def args(self):
        return self.bound.args

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
            give_fp_errors(self.name, errors)
        return 0

    cdef int _loop(self) noexcept nogil:
        cdef char *args[3]
        cdef cnp.npy_intp r
        _clear_fp_status()
        for r in range(self.repeat):
            # a fresh copy each time: the matmul loop advances its args
            args[0] = self.loop.ptrs[0] + r * self.advance[0]
            args[1] = self.loop.ptrs[1] + r * self.advance[1]
            args[2] = self.loop.ptrs[2] + r * self.advance[2]
            self.loop.fn(args, self.loop.dims, self.loop.steps, self.loop.data)
        return _fp_status()


cdef object _elementwise(object call):
    """A LoopCall for a bound ``ufunc(a, b, out)`` with out C-contiguous and
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
    cdef int typenum = operands_type(a, b, out)
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
            if not (disjoint(x, o) or cnp.PyArray_DATA(x) == cnp.PyArray_DATA(o)):
                return None  # a partial overlap: NumPy would copy
            continue
        flat = False
        if not disjoint(x, o):
            return None
        if nd == 2 and operand.shape == out.shape:
            step[i], advance[i] = cnp.PyArray_STRIDE(x, 1), cnp.PyArray_STRIDE(x, 0)
        elif (1 <= xd <= nd and cnp.PyArray_DIM(x, xd - 1) == row
              and cnp.PyArray_SIZE(x) == row):
            step[i], advance[i] = cnp.PyArray_STRIDE(x, xd - 1), 0
        else:
            return None
    cdef LoopCall c = LoopCall.__new__(LoopCall)
    if not loop_of(call.func, typenum, &c.loop):
        return None
    c.bound, c.out, c.name = call, o, call.func.__name__
    c.loop.ptrs[0] = <char*>cnp.PyArray_DATA(<cnp.ndarray>a)
    c.loop.ptrs[1] = <char*>cnp.PyArray_DATA(<cnp.ndarray>b)
    c.loop.ptrs[2] = <char*>cnp.PyArray_DATA(o)
    c.advance[0] = c.advance[1] = c.advance[2] = 0
    if flat:
        c.repeat, c.loop.dims[0] = 1, cnp.PyArray_SIZE(o)
        c.loop.steps[0] = c.loop.steps[1] = c.loop.steps[2] = itemsize
    else:
        c.repeat, c.loop.dims[0] = cnp.PyArray_SIZE(o) // row, row
        c.loop.steps[0], c.loop.steps[1], c.loop.steps[2] = step[0], step[1], itemsize
        c.advance[0], c.advance[1], c.advance[2] = advance[0], advance[1], row * itemsize
    c.release_gil = getattr(call, "releases_gil", True)
    return c


cdef object _matmul(object call):
    """A LoopCall for a bound ``np.matmul(a, b, out)`` of matrices
    (_loops.pxd: matmul_loop), or None."""
    a, b, out = call.args
    cdef LoopCall c = LoopCall.__new__(LoopCall)
    if not matmul_loop(a, b, out, np.matmul, &c.loop):
        return None
    c.bound, c.out, c.name = call, out, "matmul"
    c.repeat = 1
    c.advance[0] = c.advance[1] = c.advance[2] = 0
    c.release_gil = getattr(call, "releases_gil", True)
    return c


cdef class Parts:
    """A fused call the fused kernel refused when compiled (fusion.py): its
    parts, compiled, run one after the other. A part that raises leaves the
    number of parts done on the exception (``fused_parts_done``), so that the
    executor names that part's op without running the others again."""

    cdef readonly list calls
    cdef readonly object bound

    def __call__(self):
        cdef Py_ssize_t k = 0
        try:
            while k < len(self.calls):
                self.calls[k]()
                k += 1
        except BaseException as exc:
            exc.fused_parts_done = k
            raise


cdef dict _binders_cache = None


cdef dict _binders():
    """Compiled kernel -> its binder (checks once, returns a bound call)."""
    global _binders_cache
    if _binders_cache is None:
        from caffe2rnn._ext import accumulate_input_gradient as acc, lstm_step, lstm_unit
        _binders_cache = {
            acc.accumulate_input_gradient: acc.bound_accumulate_input_gradient,
            lstm_unit.lstm_unit_forward: lstm_unit.bound_lstm_unit_forward,
            lstm_unit.lstm_unit_backward: lstm_unit.bound_lstm_unit_backward,
            lstm_step.lstm_step_forward: lstm_step.bound_lstm_step_forward,
            lstm_step.lstm_step_backward: lstm_step.bound_lstm_step_backward,
        }
    return _binders_cache


cdef object _compiled(object call):
    """``call`` (a BoundCall, or any object with ``func`` and ``args`` and no
    ``keywords``) as a LoopCall or a bound kernel, or ``call`` itself."""
    func = getattr(call, "func", None)
    if type(getattr(call, "args", None)) is not tuple or getattr(call, "keywords", None):
        return call
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
                # the bound call stays, and raises in the plan, naming its
                # step; a fused call runs as its parts instead.
                compiled = _parts(call)
    return call if compiled is None else compiled


cdef object _parts(object call):
    """A refused fused call as its compiled parts, or None (not fused)."""
    split = getattr(call, "parts", None)
    if not split:
        return None
    cdef Parts parts = Parts.__new__(Parts)
    parts.calls = [_compiled(part) for part, _ in split]
    parts.bound = call
    return parts


def compile_calls(list calls):
    """The plan's calls with each NumPy call it can run directly replaced by
    a LoopCall and each compiled kernel's call by that kernel bound to its
    arrays (checked now, not on every call). The twin returns the calls as
    they are: each replacement computes what it replaces, bit for bit."""
    return [_compiled(call) for call in calls]
