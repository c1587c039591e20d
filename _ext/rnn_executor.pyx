# Compiled twin of caffe2rnn/kernels/rnn_executor.py: the executor's loops.
# The calls are C-level callables (functools.partial over NumPy functions and
# the compiled kernels), so a plan runs with no Python frame per step.


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
