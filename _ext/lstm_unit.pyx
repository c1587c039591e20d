# Compiled twin of caffe2rnn/kernels/lstm_unit.py: LSTMUnit forward and backward
# in one call each (no NumPy calls, no temporary arrays, no Python per gate).
# Arguments are checked first, as the twin checks them (_contract.pxd). The
# maths and the checks are in _lstm_math.pxi, shared with the fused LSTM step
# (lstm_step.pyx).
include "_lstm_math.pxi"


def lstm_unit_forward(object h_prev, object c_prev, object gates, object seq_lengths,
                      object t, object forget_bias, object drop_states, object h_out,
                      object c_out):
    """One LSTM step into ``h_out``, ``c_out`` (see the Python twin)."""
    cdef Step s
    _check_forward((h_prev, c_prev, gates, seq_lengths, t, forget_bias, drop_states,
                    h_out, c_out), &s, "lstm_unit_forward")
    _run_forward(&s)


def lstm_unit_backward(object c_prev, object gates, object seq_lengths, object t,
                       object c, object dh, object dc, object forget_bias,
                       object drop_states, object dh_prev_out, object dc_prev_out,
                       object dgates_out):
    """Gradients of one LSTM step (see the Python twin)."""
    cdef Step s
    _check_backward((c_prev, gates, seq_lengths, t, c, dh, dc, forget_bias, drop_states,
                     dh_prev_out, dc_prev_out, dgates_out), &s, "lstm_unit_backward")
    _run_backward(&s)


cdef class BoundLSTMUnit:
    """``func(*args)`` with ``func`` lstm_unit_forward or lstm_unit_backward,
    its arguments checked when it was made. Looks like the partial it stands
    for (``func``, ``args``, ``keywords``) to the RNN executor."""

    cdef Step s
    cdef bint backward
    cdef tuple written  # the output arrays
    cdef readonly object func
    cdef readonly tuple args

    @property
    def keywords(self):
        return {}

    def __call__(self):
        cdef cnp.ndarray a
        if self.args is None:
            raise TypeError("a BoundLSTMUnit is made by bound_lstm_unit_forward/_backward")
        for a in self.written:
            if not cnp.PyArray_ISWRITEABLE(a):  # made read-only since: the full checks say so
                return self.func(*self.args)
        if self.backward:
            _run_backward(&self.s)
        else:
            _run_forward(&self.s)


def bound_lstm_unit_forward(*args):
    """lstm_unit_forward's arguments checked now; the call runs only the kernel."""
    cdef BoundLSTMUnit b = BoundLSTMUnit.__new__(BoundLSTMUnit)
    _check_forward(args, &b.s, "lstm_unit_forward")
    b.backward, b.func, b.args, b.written = False, lstm_unit_forward, args, args[7:]
    return b


def bound_lstm_unit_backward(*args):
    """lstm_unit_backward's arguments checked now; the call runs only the kernel."""
    cdef BoundLSTMUnit b = BoundLSTMUnit.__new__(BoundLSTMUnit)
    _check_backward(args, &b.s, "lstm_unit_backward")
    b.backward, b.func, b.args = True, lstm_unit_backward, args
    b.written = tuple(a for a in args[9:] if a is not None)
    return b
