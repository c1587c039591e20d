"""The fused LSTM step: one call for what an LSTM's step net computes.

Twin of ``_ext/lstm_step.pyx`` (same checks, bit-identical results).

Caffe2's LSTM step net (``recurrent.LSTM``) is, forward,
``FC(hidden_t_prev) → gates``, ``Sum(gates, input_t) → gates``,
``LSTMUnit(...) → hidden_t, cell_t``, and backward ``LSTMUnitGradient``,
``FCGradient`` (dW, db, dX as three products) and the ``Sum`` s that add dX
into ``hidden_t_prev``'s gradient and the step's dW and db into the
parameters' gradients. The RNN executor
(:mod:`caffe2rnn.operators.rnn.fusion`) replaces those calls of one step by
one call of :func:`lstm_step_forward` or :func:`lstm_step_backward`.

**The same routines in the same order.** Each kernel here is the sequence of
the calls it replaces, written out: ``np.matmul`` for each product (NumPy's
BLAS, as ``FC`` and ``FCGradient`` call it), ``np.add`` for each sum, and the
LSTM unit kernels of :mod:`caffe2rnn.kernels.lstm_unit`. The compiled twin
runs the same inner loops (np.matmul's and np.add's, taken from their loop
tables) and the same LSTM maths (``_ext/_lstm_math.pxi``) on the same memory,
in one call with Python's lock released, and reports floating-point errors
after each product and sum as NumPy does. So the executor with fusion, the
executor without it and the op-by-op loop compute the same bits by
construction. Nothing is summed in a new order: a product with ``beta = 1``
(accumulating dW inside the GEMM) would, and then the op-by-op path would
have to change with it (docs/concepts/rnn-executor.md says why it does not).

Both kernels refuse, before writing anything, what either of their parts
would (:mod:`caffe2rnn.kernels.contract`), with ``lstm_step_forward`` /
``lstm_step_backward`` at the start of the message.
"""

import numpy as np

from . import contract
from .lstm_unit import _check_backward, _check_forward, lstm_unit_backward, lstm_unit_forward

FORWARD = "lstm_step_forward"
BACKWARD = "lstm_step_backward"


def _product(k, names, a, b, out):
    """``a`` (M x K) and ``b`` (K x N) float matrices (any strides), ``out``
    an M x N destination (:func:`~caffe2rnn.kernels.contract.product`)."""
    contract.operand(a, k, names[0])
    contract.operand(b, k, names[1])
    contract.array(out, k, names[2], writable=True)
    contract.same_dtype(k, names[0], a, names[1], b)
    contract.same_dtype(k, names[0], a, names[2], out)
    contract.product(k, names, a, b, out)


def check_forward(a, b, product, transposed, bias, x, unit):
    """The compiled kernel's checks, in its order: the LSTM unit's, then the
    product's, the gate sums', and that nothing written overlaps what is read
    (the product may be the gates themselves). Returns the gates' (N, 4D) shape."""
    h_prev, c_prev, gates, seq_lengths, t, forget_bias, _, h_out, c_out = unit
    _check_forward(FORWARD, h_prev, c_prev, gates, seq_lengths, t, forget_bias, h_out, c_out)
    contract.array(gates, FORWARD, "gates", writable=True)
    _product(FORWARD, ("a", "b", "product"), a, b, product)
    for name, arr in (("product", product), ("bias", bias), ("x", x)):
        if name != "product":
            contract.array(arr, FORWARD, name)
        contract.same_dtype(FORWARD, "c_prev", c_prev, name, arr)
    n, d4 = c_prev.shape[0], 4 * c_prev.shape[1]
    contract.gates_product(FORWARD, product, bool(transposed), n, d4)
    contract.rows_or_row(FORWARD, "bias", bias, n, d4)
    contract.same_size(FORWARD, "x", x, n * d4)
    written = [("gates", gates), ("h_out", h_out), ("c_out", c_out)]
    if transposed or contract.extent(product) != contract.extent(gates):
        written.insert(0, ("product", product))
    read = [("a", a), ("b", b), ("bias", bias), ("x", x), ("h_prev", h_prev)]
    read += [("c_prev", c_prev), ("seq_lengths", seq_lengths)]
    contract.no_overlap(FORWARD, written, read)
    return n, d4


def lstm_step_forward(a, b, product, transposed, bias, x, unit):
    """One forward LSTM step from the recurrent product on::

        product = a · b                  FC's product (np.matmul)
        gates = product + bias           FC's bias (product read transposed
                                         when ``transposed``: FC's (W·Xᵀ)ᵀ)
        gates = gates + x                the step net's Sum with input_t
        lstm_unit_forward(*unit)         LSTMUnit → h_out, c_out

    ``unit`` is lstm_unit_forward's arguments ``(h_prev, c_prev, gates,
    seq_lengths, t, forget_bias, drop_states, h_out, c_out)``. ``gates``
    (N x 4D), ``bias`` (4D, or N x 4D rows) and ``x`` (N·4D elements) are
    contiguous; ``a`` and ``b`` are matrices of any strides.
    """
    unit = tuple(unit)
    n, d4 = check_forward(a, b, product, transposed, bias, x, unit)
    np.matmul(a, b, out=product)
    g = unit[2].reshape(n, d4)
    np.add(product.T if transposed else product.reshape(n, d4), bias.reshape(-1, d4), out=g)
    np.add(g, x.reshape(n, d4), out=g)
    lstm_unit_forward(*unit)


def check_backward(unit, products, sums):
    """The compiled kernel's checks, in its order: the LSTM unit gradient's,
    each product's, each sum's (destination, addend: same size and type), and
    that no product overwrites what a later part reads."""
    (c_prev, gates, seq_lengths, t, c, dh, dc, forget_bias, _, dhp, dcp, dgates) = unit
    contract.parts(BACKWARD, products, sums)
    _check_backward(
        BACKWARD, c_prev, gates, seq_lengths, t, c, dh, dc, forget_bias, dhp, dcp, dgates
    )
    for i, (a, b, out) in enumerate(products):
        names = ("product %d's a" % i, "product %d's b" % i, "product %d" % i)
        _product(BACKWARD, names, a, b, out)
        contract.same_dtype(BACKWARD, "c_prev", c_prev, names[2], out)
    for i, (dst, src) in enumerate(sums):
        names = ("sum %d's destination" % i, "sum %d's addend" % i)
        contract.array(dst, BACKWARD, names[0], writable=True)
        contract.array(src, BACKWARD, names[1])
        contract.same_dtype(BACKWARD, "c_prev", c_prev, names[0], dst)
        contract.same_dtype(BACKWARD, "c_prev", c_prev, names[1], src)
        contract.same_size(BACKWARD, names[1], src, dst.size)
        if contract.extent(src) != contract.extent(dst):  # in place, or apart
            contract.no_overlap(BACKWARD, [(names[0], dst)], [(names[1], src)])
    written = [("product %d" % i, out) for i, (_, _, out) in enumerate(products)]
    read = [("dgates_out", dgates), ("c_prev", c_prev), ("gates", gates)]
    read += [("product %d's a" % i, a) for i, (a, _, _) in enumerate(products)]
    read += [("product %d's b" % i, b) for i, (_, b, _) in enumerate(products)]
    contract.no_overlap(BACKWARD, written, read)


def lstm_step_backward(unit, products, sums):
    """One backward LSTM step::

        lstm_unit_backward(*unit)        LSTMUnitGradient → dh_prev_out,
                                         dc_prev_out, dgates_out
        out = a · b                      for each (a, b, out) of ``products``
                                         (FCGradient's dW, db and dX)
        dst = dst + src                  for each (dst, src) of ``sums`` (the
                                         Sums after it: dX into hidden_t_prev's
                                         gradient, dW and db into the
                                         parameters' gradients)

    ``unit`` is lstm_unit_backward's arguments ``(c_prev, gates,
    seq_lengths, t, c, dh, dc, forget_bias, drop_states, dh_prev_out,
    dc_prev_out, dgates_out)``.
    """
    unit, products, sums = tuple(unit), tuple(products), tuple(sums)
    check_backward(unit, products, sums)
    lstm_unit_backward(*unit)
    for a, b, out in products:
        np.matmul(a, b, out=out)
    for dst, src in sums:
        np.add(dst, src.reshape(dst.shape), out=dst)
