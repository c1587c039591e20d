"""Check an operator's gradient against central finite differences.

Caffe2's ``caffe2/python/gradient_checker.py`` ran an op, asked the gradient
registry for its backward ops, and compared the analytic gradient with a
numerical one. This module does the same in a private workspace:

1. run the op on the given inputs;
2. define ``loss = Σ_j sum(Y_j ⊙ R_j)`` over the outputs that receive a
   gradient, with fixed random ``R_j`` (so every output element matters);
3. the analytic gradient: feed ``R_j`` as the output gradients, run the ops
   :func:`~caffe2rnn.operators.gradient_maker.get_gradient_for_op` makes, read
   the input's gradient blob;
4. the numeric gradient: ``(loss(x + ε e_k) − loss(x − ε e_k)) / 2ε`` for every
   element k of the checked input (:func:`numeric_gradient`, the project's one
   finite-difference loop: the example cells, the history reproductions and the
   demo call it too).

Use float64 inputs for tight checks (``eps=1e-6`` gives ~1e-9 accuracy).
"""

import numpy as np

from .operators.gradient_maker import get_gradient_for_op
from .runtime import Workspace


def numeric_gradient(f, x, eps=1e-6, indices=None):
    """Central differences of the scalar ``f(x)`` with respect to each element of ``x``.

    ``x`` is perturbed *in place*, one element at a time, by ``±eps`` and
    restored, so ``f`` may read it as its argument or through a closure (a
    blob fed from it, an entry of a dict of values). Returns a float64 array
    shaped like ``x``; with ``indices`` (flat indices) only those entries are
    computed and the others are 0. In float64 with ``eps=1e-6`` the error is
    ~1e-9 for smooth ``f`` (truncation ~eps², round-off ~1e-16/eps).
    """
    x = np.asarray(x)
    numeric = np.zeros(x.shape, dtype=np.float64)
    for k in range(x.size) if indices is None else indices:
        where = np.unravel_index(int(k), x.shape)
        orig = x[where]
        x[where] = orig + eps
        plus = float(f(x))
        x[where] = orig - eps
        minus = float(f(x))
        x[where] = orig
        numeric[where] = (plus - minus) / (2 * eps)
    return numeric


def _run(op_def, names, arrays):
    ws = Workspace(name="gradient_checker")
    for name, array in zip(names, arrays):
        ws.feed(name, array)
    ws.run_operator_once(op_def)
    return ws


def _loss(op_def, names, arrays, weights):
    ws = _run(op_def, names, arrays)
    return sum(float(np.sum(ws.fetch(op_def.output[j]) * w)) for j, w in weights.items())


def gradients(
    op_def, inputs, input_index, outputs_with_grads=(0,), eps=1e-6, seed=0, grad_ops_filter=None
):
    """Return ``(analytic, numeric)`` gradients of the op's input ``input_index``.

    ``inputs`` are arrays in the order of ``op_def.input``.
    """
    names = list(op_def.input)
    arrays = [np.array(a, copy=True) for a in inputs]
    rng = np.random.RandomState(seed)
    ws = _run(op_def, names, arrays)
    weights = {}
    for j in outputs_with_grads:
        y = ws.fetch(op_def.output[j])
        weights[j] = rng.standard_normal(y.shape).astype(y.dtype)

    g_output = [
        op_def.output[j] + "_grad" if j in weights else None for j in range(len(op_def.output))
    ]
    grad_ops, g_input = get_gradient_for_op(op_def, g_output)
    if grad_ops_filter is not None:
        grad_ops = grad_ops_filter(grad_ops)
    for j, w in weights.items():
        ws.feed(g_output[j], w)
    for grad_op in grad_ops:
        ws.run_operator_once(grad_op)
    grad_name = g_input[input_index]
    if grad_name is None:
        raise ValueError(
            "%s has no gradient for input %d ('%s')"
            % (op_def.type, input_index, names[input_index])
        )
    analytic = ws.fetch(str(grad_name))

    numeric = numeric_gradient(
        lambda _: _loss(op_def, names, arrays, weights), arrays[input_index], eps
    )
    return analytic, numeric


def assert_gradient_close(
    op_def, inputs, input_index, outputs_with_grads=(0,), eps=1e-6, rtol=1e-5, atol=1e-7, seed=0
):
    """Fail with a clear message when analytic and numeric gradients differ."""
    analytic, numeric = gradients(op_def, inputs, input_index, outputs_with_grads, eps, seed)
    np.testing.assert_allclose(
        analytic,
        numeric,
        rtol=rtol,
        atol=atol,
        err_msg="%s: gradient of input %d ('%s') differs from finite differences"
        % (op_def.type, input_index, op_def.input[input_index]),
    )
    return analytic, numeric
