"""The RNN executor's loops: run a plan of bound calls, check its guards.

A *step plan* (:class:`caffe2rnn.operators.rnn.executor.StepPlan`; not
Caffe2's ``core.Plan``) is the whole time loop of
a recurrent op written out as a flat list of zero-argument calls, each an
operator's kernel already bound to the arrays of one timestep. Running it is
this loop; the compiled twin (``_ext/rnn_executor.pyx``) is the same loop
without the interpreter's per-iteration cost. Neither computes anything
itself, so the two give the same numbers by construction.

:func:`compile_calls` is where the two differ in what they run, not in what
it computes: the compiled one replaces a bound ``np.add(a, b, out)`` or
``np.matmul(a, b, out)`` (:class:`~caffe2rnn.operators.bound_call.BoundCall`)
by a call of the ufunc's own inner loop on the same pointers (no NumPy
dispatch), and a compiled kernel's call by the kernel with its checks done
once. Here the bound calls stay as they are.
"""


def run_step_plan(calls, start, failed):
    """Call ``calls[start:]`` in order; on an exception append the index of the
    call that raised to ``failed`` (a list) and re-raise it."""
    i = start
    try:
        for i in range(start, len(calls)):  # noqa: B007 (read in except)
            calls[i]()
    except BaseException:
        failed.append(i)
        raise


def compile_calls(calls):
    """The calls a plan runs, as this path runs them: the bound calls
    themselves (the compiled twin runs the same NumPy loops and kernels
    without their per-call dispatch and checks)."""
    return list(calls)


def first_stale_guard(blobs, arrays):
    """The index of the first ``blobs[i]`` whose value is not ``arrays[i]``
    (the very object), or -1 when every blob still holds its array."""
    for i, blob in enumerate(blobs):
        if blob.value is not arrays[i]:
            return i
    return -1


def assign_values(blobs, values):
    """``blobs[i].value = values[i]`` for every i: the link views of one step."""
    for blob, value in zip(blobs, values):
        blob.value = value


def run_lane(calls, waits, signals, lane, progress, cond, failed):
    """Run one lane of a threaded plan (:mod:`caffe2rnn.operators.rnn.schedule`).

    Before ``calls[p]``, for each ``(other, count)`` in ``waits[p]`` wait
    until ``progress[other] >= count``; after it set ``progress[lane] = p + 1``
    and, when ``signals[p]``, wake the waiting lanes. A call that raises ends
    the lane and appends ``(lane, p, exception)`` to ``failed``; every lane
    stops at its next call or wait once ``failed`` is not empty.
    """
    p = 0
    try:
        for p in range(len(calls)):  # noqa: B007 (read in except)
            if failed:
                return
            wait = waits[p]
            if wait is not None:
                for other, count in wait:
                    if progress[other] < count:
                        with cond:
                            while progress[other] < count and not failed:
                                cond.wait()
                if failed:
                    return
            calls[p]()
            progress[lane] = p + 1
            if signals[p]:
                with cond:
                    cond.notify_all()
    except BaseException as exc:
        with cond:
            failed.append((lane, p, exc))
            cond.notify_all()
