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
fused call keeps the indices of the ops it stands for and gives its parts
back on demand (:func:`split_forward`, :func:`split_backward`, rebuilt from
its arguments: a plan holds T fused calls): an error in a fused call is
raised again by running the parts one by one, so it names the op that
failed, as the op-by-op loop would.

Forward-only nets (``forward_only=True``, inference) go through the same
plans, so they run the fused forward step too.
"""

import numpy as np

from ... import kernels
from ...kernels import lstm_step
from .. import fc_layout
from ..bound_call import SPLITTERS, BoundCall

_OPS = {}  # one tuple of op indices per kind of fused step, shared by every step


def _ops(parts):
    ops = tuple(j for _, j in parts)
    return _OPS.setdefault(ops, ops)


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
    if u is v:
        return True
    return (
        isinstance(u, np.ndarray)
        and isinstance(v, np.ndarray)
        and u.shape == v.shape
        and u.strides == v.strides
        and _address(u) == _address(v)
    )


def _same_elements(u, v):
    """``u`` and ``v`` are the same contiguous elements (in any shape)."""
    if u is v:
        return True
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
    # FC's bias repeated over the batch rows (its "x.WT" layout): the fused
    # kernel reads the one row instead, the same sums with N times less memory.
    row = fc_layout.tiled_row(bias)
    bias = bias if row is None else row
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
    call.part_ops = _ops(parts)
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
    call.part_ops = _ops(parts)
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


def _implementation(fused):
    """The kernel path whose fused kernel ``fused`` calls."""
    for path in kernels.PATHS:
        if path == "python" or kernels.cython_available():
            impl = kernels.implementation(path)
            if fused in (impl.lstm_step_forward, impl.lstm_step_backward):
                return impl
    raise ValueError("not a fused LSTM step kernel: %r" % (fused,))


def split_forward(call):
    """The calls a fused forward step computes: FC's product and bias add,
    the Sum with input_t, LSTMUnit (on 2-D views of the same memory: the
    same element-wise sums)."""
    a, b, p, transposed, bias, x, unit = call.args
    impl = _implementation(call.func)
    gates = unit[2]
    n, d4 = gates.shape
    product = p.T if transposed else p.reshape(n, d4)
    reads = [r for r in unit[:4] if r is not None]
    row_or_rows = bias if bias.shape in ((d4,), (n, d4)) else bias.reshape(-1, d4)
    return [
        BoundCall.product(a, b, p),
        BoundCall.elementwise(np.add, product, row_or_rows, gates),
        BoundCall.elementwise(np.add, gates, x.reshape(n, d4), gates),
        BoundCall.kernel(
            impl.lstm_unit_forward, "lstm_unit_forward", unit, reads, unit[7:], impl.releases_gil, n
        ),
    ]


def split_backward(call):
    """The calls a fused backward step computes: LSTMUnitGradient, each
    product, each sum (``dst + src`` into dst)."""
    unit, products, sums = call.args
    impl = _implementation(call.func)
    written = [w for w in unit[9:] if w is not None]
    reads = unit[:3] + unit[4:7]
    parts = [
        BoundCall.kernel(
            impl.lstm_unit_backward,
            "lstm_unit_backward",
            unit,
            reads,
            written,
            impl.releases_gil,
            1,
        )
    ]
    parts += [BoundCall.product(a, b, out) for a, b, out in products]
    parts += [BoundCall.elementwise(np.add, dst, src, dst) for dst, src in sums]
    return parts


SPLITTERS["lstm_step_forward"] = split_forward
SPLITTERS["lstm_step_backward"] = split_backward
