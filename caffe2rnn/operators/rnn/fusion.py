"""Fusion: the calls of one LSTM step as one call of a fused kernel.

An LSTM's step net (``recurrent.LSTM``, ``rnn_cell.LSTM``) binds, per step,

* forward: ``FC`` (a product and a bias add), ``Sum`` (the input projection
  added) and ``LSTMUnit`` (one kernel) — four calls;
* backward: ``LSTMUnitGradient`` (one kernel), ``FCGradient`` (dW, db, dX:
  up to three products) and the ``Sum`` s that follow it (dX into
  ``hidden_t_prev``'s gradient, the step's dW and db into the parameters'
  gradients) — seven calls.

:func:`fuse` finds those runs of consecutive calls in a step of the
executor's plan, by what the calls declare (their routine and their arrays,
:class:`~caffe2rnn.operators.bound_call.BoundCall`), and replaces each by one
call of :func:`~caffe2rnn.kernels.lstm_step.lstm_step_forward` or
``lstm_step_backward``: the same routines in the same order on the same
arrays, in one compiled call (docs/concepts/rnn-executor.md, "The fused LSTM
step"). A run the fused kernel refuses (its checks: :func:`_accepted`)
runs as the calls it stands for. The
fused call keeps its parts and their ops: an error in a fused call is raised
again by running the parts one by one, so it names the op that failed, as
the op-by-op loop would.

Forward-only nets (``forward_only=True``, inference) go through the same
plans, so they run the fused forward step too.
"""

import numpy as np

from ... import kernels
from ...kernels import lstm_step
from ..bound_call import BoundCall


def fuse(step, backward=True):
    """The ``(call, op index)`` pairs of one step, with each fusable run of
    calls replaced by one fused call (whose op index is its first part's).

    ``backward=False`` leaves the backward step's calls apart: on several
    threads the executor overlaps the step's weight-gradient product with the
    recurrence (:mod:`.schedule`), which one fused call would not allow."""
    out, i = [], 0
    while i < len(step):
        fused, used = _forward(step, i) or (backward and _backward(step, i)) or (None, 0)
        if fused is None:
            out.append(step[i])
            i += 1
        else:
            out.append((fused, step[i][1]))
            i += used
    return out


def _names(step, i, names):
    return i + len(names) <= len(step) and all(
        step[i + k][0].name == name for k, name in enumerate(names)
    )


def _address(a):
    return a.__array_interface__["data"][0]


def _same(u, v):
    """``u`` and ``v`` are views of the same memory in the same layout."""
    return (
        isinstance(u, np.ndarray)
        and isinstance(v, np.ndarray)
        and u.shape == v.shape
        and u.strides == v.strides
        and _address(u) == _address(v)
    )


def _same_elements(u, v):
    """``u`` and ``v`` are the same contiguous elements (in any shape)."""
    return (
        u.flags.c_contiguous
        and v.flags.c_contiguous
        and u.nbytes == v.nbytes
        and _address(u) == _address(v)
    )


def _forward(step, i):
    """FC's product and bias add, the Sum with input_t, LSTMUnit: one call."""
    if not _names(step, i, ("matmul", "add", "add", "lstm_unit_forward")):
        return None
    product, bias_add, input_add, unit = (step[i + k][0] for k in range(4))
    impl = kernels.current()
    if unit.func is not impl.lstm_unit_forward or bias_add.func is not np.add:
        return None
    a, b, p = product.args
    v, bias, y = bias_add.args
    if _same(v, p):
        transposed = False
    elif _same(v.T, p):
        transposed = True
    else:
        return None
    g, x, g_out = input_add.args
    gates = unit.args[2]
    if input_add.func is not np.add or not all(_same_elements(gates, z) for z in (y, g, g_out)):
        return None
    args = (a, b, p, transposed, bias, x, unit.args)
    if not _accepted(impl, lstm_step.check_forward, a, b, p, transposed, bias, x, unit.args):
        return None
    parts = tuple(step[i : i + 4])
    reads = (a, b, bias, x) + tuple(r for r in unit.reads if r is not gates)
    writes = (p, gates) + unit.writes
    size = unit.args[1].size
    call = BoundCall.kernel(
        impl.lstm_step_forward, "lstm_step_forward", args, reads, writes, impl.releases_gil, size
    )
    call.cost = sum(part.cost for part, _ in parts)
    call.parts = parts
    return call, 4


def _backward(step, i):
    """LSTMUnitGradient, FCGradient's products and the Sums after them: one call."""
    if i >= len(step) or step[i][0].name != "lstm_unit_backward":
        return None
    impl = kernels.current()
    unit = step[i][0]
    if unit.func is not impl.lstm_unit_backward:
        return None
    k = i + 1
    products, sums = [], []
    while k < len(step) and step[k][0].name == "matmul" and len(products) < 4:
        products.append(step[k][0].args)
        k += 1
    while k < len(step) and step[k][0].name == "add" and len(sums) < 4:
        a, b, out = step[k][0].args
        if step[k][0].func is not np.add or not isinstance(b, np.ndarray):
            break
        if out is a:
            sums.append((out, b))
        elif out is b:
            sums.append((out, a))
        else:
            break
        k += 1
    if not products:
        return None
    if not _accepted(impl, lstm_step.check_backward, unit.args, tuple(products), tuple(sums)):
        return None
    parts = tuple(step[i:k])
    args = (unit.args, tuple(products), tuple(sums))
    reads = unit.reads + tuple(x for a, b, _ in products for x in (a, b))
    reads += tuple(src for _, src in sums) + tuple(dst for dst, _ in sums)
    writes = unit.writes + tuple(out for _, _, out in products) + tuple(d for d, _ in sums)
    size = unit.args[0].size
    call = BoundCall.kernel(
        impl.lstm_step_backward, "lstm_step_backward", args, reads, writes, impl.releases_gil, size
    )
    call.cost = sum(part.cost for part, _ in parts)
    call.parts = parts
    return call, k - i


def _accepted(impl, check, *args):
    """Whether the fused kernel's checks accept these arrays.

    On the compiled path they run when the plan's calls are compiled (in C,
    once: ``compile_calls`` binds the fused kernel, and a fused call it
    refuses runs as its parts); the twin checks on every call, so there
    they run here, and a refused run is not fused.
    """
    if impl.path != "python":
        return True
    try:
        check(*args)
    except Exception:
        return False
    return True
