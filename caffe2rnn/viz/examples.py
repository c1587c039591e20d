"""Cells to draw, each built by the real ``recurrent_net`` (v3 + B9 fix).

Each builder returns the ``RecurrentNetwork`` ``OperatorDef`` that
:mod:`caffe2rnn.recurrent` makes; the CLI, the docs and the tests draw them.

* ``mul``: ``hidden_t = input_t * hidden_t_prev``; no parameters, no scratch.
* ``sum_mul``: ``hidden_t = (hidden_t_prev + input_t) * w``. ``Sum``'s
  gradient is a pass-through, so the backward link of ``hidden_t_prev`` reads
  ``sum_t_grad`` (the B3 fix); ``w`` is a parameter and ``sum_t`` a scratch.
* ``two_states``: ``a_t = input_t * a_prev``, ``b_t = a_t * b_prev`` (history.md
  B7): ``a_t`` is linked *and* read inside the cell, so its internal gradient
  is renamed ``_accum`` and summed into the linked one.
* ``lstm``: ``recurrent.LSTM`` (FC, in-place Sum, LSTMUnit; scratch
  ``lstm/gates_t``, caffe2-core.md §4.5).
* ``lstm_recompute``: the same with ``memory_optimization``: ``gates_t`` is
  recomputed in the backward step instead of kept per step.
* ``attention``: ``recurrent.LSTMWithAttention`` (regular attention, three
  recurrent states, ~20 ops per step) — the largest cell to draw.
"""

import contextlib
import logging

from .. import core
from ..cnn import CNNModelHelper
from ..recurrent import LSTM, LSTMWithAttention, recurrent_net


def _recurrent_op(net):
    return [op for op in net.Proto().op if op.type == "RecurrentNetwork"][-1]


@contextlib.contextmanager
def _quiet_cnn():
    """recurrent.LSTM is the 2017-04 API on CNNModelHelper, which logs a
    deprecation banner per use; drawings don't need it."""
    logger = logging.getLogger("caffe2rnn.cnn")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(level)


def _one_state_cell(name, build_step):
    net, cell = core.Net(name), core.Net(name + "_cell")
    input_t, hidden_t_prev = cell.AddScopedExternalInputs("input_t", "hidden_t_prev")
    hidden_t = build_step(cell, input_t, hidden_t_prev)
    cell.AddExternalOutputs(hidden_t)
    recurrent_net(
        net,
        cell,
        [(input_t, "x")],
        [(hidden_t_prev, "hidden_init")],
        {hidden_t_prev: hidden_t},
        scope=name,
    )
    return _recurrent_op(net)


def mul():
    return _one_state_cell("mul", lambda cell, x, h: cell.Mul([x, h], "hidden_t"))


def sum_mul():
    def step(cell, x, h):
        summed = cell.Sum([h, x], "sum_t")
        return cell.Mul([summed, "w"], "hidden_t")  # 'w' becomes a reference

    return _one_state_cell("sum_mul", step)


def two_states():
    net, cell = core.Net("two_states"), core.Net("two_state_cell")
    input_t, a_prev, b_prev = cell.AddScopedExternalInputs("input_t", "a_prev", "b_prev")
    a_t = cell.Mul([input_t, a_prev], "a_t")
    b_t = cell.Mul([a_t, b_prev], "b_t")
    cell.AddExternalOutputs(a_t, b_t)
    recurrent_net(
        net,
        cell,
        [(input_t, "x")],
        [(a_prev, "a_init"), (b_prev, "b_init")],
        {a_prev: a_t, b_prev: b_t},
        scope="two_states",
    )
    return _recurrent_op(net)


def _lstm(memory_optimization):
    with _quiet_cnn():
        model = CNNModelHelper(name="lstm_model")
        LSTM(
            model,
            "input",
            "seq_lengths",
            ("hidden_init", "cell_init"),
            dim_in=3,
            dim_out=4,
            scope="lstm",
            memory_optimization=memory_optimization,
        )
    return _recurrent_op(model.net)


def lstm():
    return _lstm(False)


def lstm_recompute():
    return _lstm(True)


def attention():
    with _quiet_cnn():
        model = CNNModelHelper(name="attention_model")
        LSTMWithAttention(
            model,
            "decoder_inputs",
            "seq_lengths",
            "hidden_init",
            "cell_init",
            "context_init",
            encoder_output_dim=4,
            encoder_outputs="encoder_outputs",
            decoder_input_dim=3,
            decoder_state_dim=4,
            scope="att",
        )
    return _recurrent_op(model.net)


CELLS = {
    "mul": mul,
    "sum_mul": sum_mul,
    "two_states": two_states,
    "lstm": lstm,
    "lstm_recompute": lstm_recompute,
    "attention": attention,
}
