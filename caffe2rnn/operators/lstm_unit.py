"""LSTMUnit / LSTMUnitGradient: the element-wise half of one LSTM step.

An LSTM step in Caffe2 is ``gates = FC(hidden_t_prev) + input_t`` (the GEMMs)
followed by this op, which turns the ``4D`` pre-activations of each batch row
into the new hidden and cell states. Gate order along the last axis:
**input i, forget f, output o, cell candidate g**, each a block of D::

    i = σ(x_i)   f = σ(x_f + forget_bias)   o = σ(x_o)   g = tanh(x_g)
    c = f · c_prev + i · g                  h = o · tanh(c)

Rows whose sequence has ended (``t >= seq_lengths[n]``) carry the previous
state through (``h = h_prev``, ``c = c_prev``), or zeros with ``drop_states``,
so padded batches give the same final states as unpadded ones.

Two input forms, chosen by the number of inputs (spec caffe2-core.md §7.17):

* 5 inputs (from 2017-02, eras E2+): ``hidden_t_prev (1, N, D), cell_t_prev
  (1, N, D), gates (1, N, 4D), seq_lengths (N,) int32, timestep`` (int32, value
  t) → ``hidden_t, cell_t``;
* 4 inputs (eras E0–E1): no ``hidden_t_prev``; finished rows get ``h = 0``.

Like Caffe2 the maths runs in the input dtype and computes ``tanh(x)`` as
``2σ(2x) − 1``. It is the hottest op of every LSTM (once per timestep), so
:func:`lstm_unit_forward` and :func:`lstm_unit_backward` are plain vectorised
functions over 2-D ``(N, D)`` views with caller-provided outputs — the exact
signature a compiled kernel can take over.

Caffe2: caffe2/operators/lstm_unit_op.{h,cc}.
"""
import numpy as np

from ..errors import DTypeError, EnforceNotMet
from .base import Operator
from .gradient_maker import GradientMaker
from .registry import register, register_gradient


def _sigmoid(x, out):
    """σ(x) = 1 / (1 + e^(−x)) into ``out`` (may be ``x``)."""
    np.negative(x, out=out)
    np.exp(out, out=out)  # may overflow to inf: σ is then exactly 0
    out += 1
    np.reciprocal(out, out=out)


def _tanh(x, out):
    """tanh(x) as Caffe2 computed it: 2σ(2x) − 1, into ``out`` (may be ``x``)."""
    np.add(x, x, out=out)  # 2x; adding is cheaper than a scalar multiply
    _sigmoid(out, out)
    out += out
    out -= 1


def _activations(gates, forget_bias):
    """The gate values as one (4, N, D) array: i, f, o, g blocks made contiguous."""
    n, d4 = gates.shape
    act = np.empty((4, n, d4 // 4), dtype=gates.dtype)
    np.copyto(act, gates.reshape(n, 4, d4 // 4).transpose(1, 0, 2))
    if forget_bias:
        act[1] += forget_bias
    _sigmoid(act[:3], act[:3])
    _tanh(act[3], act[3])
    return act


def lstm_unit_forward(h_prev, c_prev, gates, seq_lengths, t, forget_bias,
                      drop_states, h_out, c_out):
    """One LSTM step, written into ``h_out`` and ``c_out``.

    Args:
        h_prev: (N, D) previous hidden state, or None (4-input form: finished
            rows then get h = 0).
        c_prev: (N, D) previous cell state.
        gates: (N, 4D) pre-activations, blocks i, f, o, g.
        seq_lengths: (N,) int32; row n is valid while ``t < seq_lengths[n]``.
        t: the timestep (int).
        forget_bias: added to the forget pre-activation.
        drop_states: finished rows get zeros instead of the previous state.
        h_out, c_out: (N, D) arrays written in place (may be views into the
            recurrent states tensor); must not overlap the inputs.
    """
    with np.errstate(over="ignore"):
        i, f, o, g = _activations(gates, forget_bias)
        np.multiply(f, c_prev, out=c_out)
        np.multiply(i, g, out=i)
        c_out += i
        _tanh(c_out, f)
    np.multiply(o, f, out=h_out)
    if seq_lengths.size and seq_lengths.min() <= t:  # some sequences have ended
        rows = (seq_lengths <= t)[:, None]
        zero_h = drop_states or h_prev is None
        np.copyto(c_out, 0 if drop_states else c_prev, where=rows)
        np.copyto(h_out, 0 if zero_h else h_prev, where=rows)


def lstm_unit_backward(c_prev, gates, seq_lengths, t, c, dh, dc, forget_bias,
                       drop_states, dh_prev_out, dc_prev_out, dgates_out):
    """Gradients of one LSTM step, written into the ``*_out`` arrays.

    ``c`` is the forward cell output; ``dh``/``dc`` the gradients of the
    forward outputs (all (N, D)). The gate values are recomputed from
    ``gates``. For a valid row::

        c_term = dc + dh·o·(1 − tanh²c)     dc_prev = c_term·f     dh_prev = 0
        di = c_term·g·i(1 − i)   df = c_term·c_prev·f(1 − f)
        do = dh·tanh(c)·o(1 − o) dg = c_term·i·(1 − g²)

    (``dh_prev`` is 0 because h_prev reaches the loss only through the gates:
    its gradient comes from the FC gradient.) A finished row passes ``dh`` and
    ``dc`` straight through (zeros with ``drop_states``) and has zero gate
    gradients. ``dh_prev_out`` is None in the 4-input form.
    """
    n, d = c_prev.shape
    with np.errstate(over="ignore"):
        i, f, o, g = _activations(gates, forget_bias)
        tanh_c = np.empty_like(c_prev)
        _tanh(c, tanh_c)
    c_term = np.empty_like(c_prev)
    slope = np.empty_like(c_prev)  # the local derivative of each gate
    di, df, do, dg = dgates_out.reshape(n, 4, d).transpose(1, 0, 2)

    np.multiply(tanh_c, tanh_c, out=c_term)
    np.subtract(1, c_term, out=c_term)
    c_term *= o
    c_term *= dh
    c_term += dc

    np.subtract(1, o, out=slope)
    slope *= o
    slope *= tanh_c
    np.multiply(dh, slope, out=do)

    np.subtract(1, i, out=slope)
    slope *= i
    slope *= g
    np.multiply(c_term, slope, out=di)

    np.subtract(1, f, out=slope)
    slope *= f
    slope *= c_prev
    np.multiply(c_term, slope, out=df)

    np.multiply(g, g, out=slope)
    np.subtract(1, slope, out=slope)
    slope *= i
    np.multiply(c_term, slope, out=dg)

    np.multiply(c_term, f, out=dc_prev_out)
    if dh_prev_out is not None:
        dh_prev_out.fill(0)
    if seq_lengths.size and seq_lengths.min() <= t:  # some sequences have ended
        rows = (seq_lengths <= t)[:, None]
        np.copyto(dgates_out, 0, where=rows)
        np.copyto(dc_prev_out, 0 if drop_states else dc, where=rows)
        if dh_prev_out is not None and not drop_states:
            np.copyto(dh_prev_out, dh, where=rows)


class _LSTMUnitBase(Operator):
    """Arguments and the validation of the step inputs, shared by both ops."""

    def setup(self):
        self.forget_bias = self.args.single("forget_bias", 0.0, float)
        self.drop_states = self.args.single("drop_states", False, bool)

    def read_step_inputs(self, has_hidden):
        """Validate the forward inputs; return 2-D views and (t, N, D).

        Returns ``(h_prev or None, c_prev, gates, seq_lengths, t, cell_shape)``.
        """
        k = 1 if has_hidden else 0  # index of cell_t_prev
        c_prev = self.float_input(k)
        if c_prev.ndim != 3 or c_prev.shape[0] != 1:
            raise self.shape_error(k, "(1, N, D) (cell_t_prev)")
        _, n, d = c_prev.shape
        h_prev = None
        if has_hidden:
            h_prev = self.float_input(0)
            if h_prev.shape != c_prev.shape:
                raise self.shape_error(0, "%s (hidden_t_prev, like cell_t_prev)"
                                       % (c_prev.shape,))
            h_prev = h_prev.reshape(n, d)
        gates = self.float_input(k + 1)
        if gates.shape != (1, n, 4 * d):
            raise self.shape_error(k + 1, "(1, %d, %d) (4 x cell_t_prev.dim(2))"
                                   % (n, 4 * d))
        self.same_dtype(*range(k + 2))
        seq_lengths = self.input(k + 2)
        if seq_lengths.dtype != np.int32 or seq_lengths.size != n:
            raise DTypeError("input %d ('%s') is %s %s; seq_lengths must be int32 "
                             "of size N = %d" % (k + 2, self.input_name(k + 2),
                                                 seq_lengths.dtype,
                                                 seq_lengths.shape, n))
        timestep = self.input(k + 3)
        if timestep.dtype != np.int32 or timestep.size < 1:
            raise DTypeError("input %d ('%s') is %s %s; the timestep must be an "
                             "int32 tensor (value t)" % (
                                 k + 3, self.input_name(k + 3), timestep.dtype,
                                 timestep.shape))
        return (h_prev, c_prev.reshape(n, d), gates.reshape(n, 4 * d),
                seq_lengths.reshape(n), int(timestep.reshape(-1)[0]), c_prev.shape)


@register("LSTMUnit", inputs=(4, 5), outputs=2)
class LSTMUnit(_LSTMUnitBase):
    """hidden_t, cell_t = one LSTM step (module docstring); outputs (1, N, D)."""

    def run(self):
        h_prev, c_prev, gates, seq_lengths, t, shape = self.read_step_inputs(
            len(self.inputs) == 5)
        n, d = c_prev.shape
        h_out = self.output(0, shape, c_prev.dtype).reshape(n, d)
        c_out = self.output(1, shape, c_prev.dtype).reshape(n, d)
        lstm_unit_forward(h_prev, c_prev, gates, seq_lengths, t, self.forget_bias,
                          self.drop_states, h_out, c_out)


@register("LSTMUnitGradient", inputs=(8, 9), outputs=(2, 3))
class LSTMUnitGradient(_LSTMUnitBase):
    """Inputs: the forward inputs, hidden_t, cell_t, hidden_t_grad, cell_t_grad.

    Outputs: (hidden_t_prev_grad,) cell_t_prev_grad, gates_grad.
    """

    def setup(self):
        super().setup()
        self.has_hidden = len(self.inputs) == 9
        if len(self.outputs) != (3 if self.has_hidden else 2):
            raise EnforceNotMet("LSTMUnitGradient with %d inputs has %d outputs "
                                "(9 inputs → 3 outputs, 8 → 2)"
                                % (len(self.inputs), len(self.outputs)))

    def run(self):
        h_prev, c_prev, gates, seq_lengths, t, shape = self.read_step_inputs(
            self.has_hidden)
        n, d = c_prev.shape
        first = 5 if self.has_hidden else 4  # index of hidden_t
        for j, role in enumerate(("hidden_t", "cell_t", "hidden_t_grad",
                                  "cell_t_grad")):
            x = self.float_input(first + j)
            if x.shape != shape or x.dtype != c_prev.dtype:
                raise self.shape_error(first + j, "%s %s (%s, like cell_t_prev)"
                                       % (c_prev.dtype, shape, role))
        c, dh, dc = (self.input(first + j).reshape(n, d) for j in (1, 2, 3))
        dtype, last = c_prev.dtype, len(self.outputs) - 1
        dh_prev = (self.output(0, shape, dtype).reshape(n, d)
                   if self.has_hidden else None)
        dc_prev = self.output(last - 1, shape, dtype).reshape(n, d)
        dgates = self.output(last, (1, n, 4 * d), dtype).reshape(n, 4 * d)
        lstm_unit_backward(c_prev, gates, seq_lengths, t, c, dh, dc,
                           self.forget_bias, self.drop_states, dh_prev, dc_prev,
                           dgates)


@register_gradient("LSTMUnit")
class GetLSTMUnitGradient(GradientMaker):
    """LSTMUnitGradient([inputs..., hidden_t, cell_t, GO0, GO1] → [GI...]).

    Both output gradients are required (a missing one raises; rnn_cell feeds
    a ZeroGradient for an unused output). Arguments are copied, so
    forget_bias and drop_states reach the gradient op.
    """

    def get_gradient_defs(self):
        n_inputs = len(self.def_.input)
        inputs = [self.I(i) for i in range(n_inputs)]
        inputs += [self.O(0), self.O(1), self.GO(0), self.GO(1)]
        n_grads = 3 if n_inputs == 5 else 2
        return [self.op_def("LSTMUnitGradient", inputs,
                            [self.GI(i) for i in range(n_grads)])]
