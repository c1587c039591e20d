"""Every rnn_cell / gru_cell layer draws in every ``viz`` view (DOT text only,
no Graphviz needed): the views read the RecurrentNetwork op, whoever built it."""

import pytest

from caffe2rnn import eras, gru_cell, rnn_cell, viz
from caffe2rnn.attention import AttentionType
from caffe2rnn.model_helper import ModelHelper


def lstm(m):
    rnn_cell.LSTM(m, "i", "s", ("h", "c"), 3, 4, scope="lstm")


def milstm_stack(m):
    rnn_cell.MILSTM(m, "i", "s", None, 3, [4, 4], scope="mi")


def attention(m):
    rnn_cell.LSTMWithAttention(
        m, "d", "s", "h", "c", "x", 2, "enc", 3, 4, scope="att",
        attention_type=AttentionType.Recurrent,
    )  # fmt: skip


def gru(m):
    gru_cell.GRU(m, "i", "s", ["h"], 3, 4, scope="gru")


def layer_norm_lstm(m):
    rnn_cell.LayerNormLSTM(m, "i", "s", ("h", "c"), 3, 4, scope="ln")


def coverage(m):
    rnn_cell.LSTMWithAttention(
        m, "d", "s", "h", "c", "x", 2, "enc", "lengths", 3, 4, scope="att",
        attention_type=AttentionType.SoftCoverage,
    )  # fmt: skip


CASES = [
    ("E5", lstm, "LSTMUnit"),
    ("E5", milstm_stack, "ElementwiseLinear"),
    ("E5", attention, "BatchMatMul"),
    ("E6", gru, "GRUUnit"),
    ("E6", layer_norm_lstm, "LayerNorm"),
    ("E6", coverage, "SequenceMask"),
]


@pytest.mark.parametrize("era,build,step_op", CASES, ids=[c[1].__name__ for c in CASES])
def test_every_view_draws_the_cell(era, build, step_op):
    with eras.use(era):
        model = ModelHelper(name=build.__name__)
        build(model)
        model.AddGradientOperators([model.net.Proto().op[-1].output[0]])
    (op,) = [o for o in model.net.Proto().op if o.type == "RecurrentNetwork"]
    drawn = viz.recurrent(op).source
    assert step_op in drawn and "RecurrentBackwardStep" in drawn
    for view in (viz.backward, viz.timeline, viz.unroll, viz.scratches_of):
        assert view(op).source.count("->") > 3, view.__name__
    assert "RecurrentNetwork" in viz.net(model.net.Proto()).source
    assert "RecurrentNetwork" in viz.ssa(model.net.Proto()).source
