"""The numbers step 1 (docs/start-here.md) states in its first answer are the ones
its LSTM builds and runs.

The page's cell prints them at build time; the answer's prose repeats them in words
(51 ``FC`` runs for T = 50, ``lstm/i2h`` of 50 x 2 x 16, an unrolled net of 157
operators). These tests read the prose and build the same nets, so the two cannot
drift apart.
"""

import os
import re

import numpy as np
import pytest

from caffe2rnn import model_helper, rnn_cell, workspace
from caffe2rnn.viz.rnn_op import RecurrentOp

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PAGE = os.path.join(ROOT, "docs", "start-here.md")
D, H, N, T = 3, 4, 2, 50  # the page's LSTM and its longer sequence


@pytest.fixture(scope="module")
def answer():
    """The first "Check your prediction" fold of the page."""
    with open(PAGE, encoding="utf-8") as handle:
        text = handle.read()
    folds = re.findall(r'<details class="c2r-answer">(.*?)</details>', text, re.S)
    assert folds, "start-here.md: no answer fold"
    return folds[0]


def build(**kwargs):
    model = model_helper.ModelHelper(name="start_here")
    outputs = rnn_cell.LSTM(
        model, "x", "seq_lengths", ("h0", "c0"), dim_in=D, dim_out=H, scope="lstm", **kwargs
    )
    return model, outputs


def test_the_fc_runs_the_answer_states_are_the_built_net_s(answer):
    model, _ = build()
    ops = model.net.Proto().op
    step_net = RecurrentOp(ops[1]).step_net
    runs = [op.type for op in ops].count("FC") + T * [op.type for op in step_net.op].count("FC")
    stated = re.search(r"\(a\) \*\*(\d+)\*\*", answer)
    assert stated and int(stated.group(1)) == runs == 51, (stated, runs)
    assert "same %d `FC`s" % runs in answer


def test_the_unrolled_net_the_answer_counts_is_the_built_one(answer):
    model, _ = build(static_rnn_unroll_size=T)
    types = [op.type for op in model.net.Proto().op]
    assert types.count("FC") == 51  # the same FC runs, each an op of the graph
    stated = re.search(r"(\d+) operators for \$T = %d\$" % T, answer)
    assert stated and int(stated.group(1)) == len(types), (stated, len(types))


def test_the_i2h_shape_the_answer_states_is_the_run_s(answer):
    model, (hidden_all, hidden_last, _, _) = build()  # a clean workspace: tests/conftest.py
    workspace.RunNetOnce(model.param_init_net)
    workspace.FeedBlob("h0", np.zeros((1, N, H), np.float32))
    workspace.FeedBlob("c0", np.zeros((1, N, H), np.float32))
    workspace.FeedBlob("x", np.ones((T, N, D), np.float32))
    workspace.FeedBlob("seq_lengths", np.full(N, T, np.int32))
    workspace.RunNetOnce(model.net)
    shape = workspace.FetchBlob("lstm/i2h").shape
    assert workspace.FetchBlob(hidden_all).shape == (T, N, H)
    assert workspace.FetchBlob(hidden_last).shape == (1, N, H)
    stated = re.search(r"\(b\)\s+\*\*(\d+) × (\d+) × (\d+)\*\*", answer)
    assert stated and tuple(int(g) for g in stated.groups()) == shape, (stated, shape)


def test_listing_step_net_reads_the_step_net_the_op_runs():
    """The page's cell counts the step net's FCs with ``listing.step_net``: it gives the net
    the op's own reader gives, from the text in ``s`` (this era) or a NetDef in ``n``, and an
    op without a step net is an ArgumentError naming it."""
    from caffe2rnn import listing
    from caffe2rnn.errors import ArgumentError
    from caffe2rnn.proto import caffe2_pb2

    model, _ = build()
    fc_op, rnn_op = model.net.Proto().op
    expected = RecurrentOp(rnn_op).step_net
    assert [op.type for op in listing.step_net(rnn_op).op] == ["FC", "Sum", "LSTMUnit"]
    assert listing.step_net(rnn_op) == expected
    as_netdef = caffe2_pb2.OperatorDef()
    as_netdef.CopyFrom(rnn_op)
    (arg,) = [a for a in as_netdef.arg if a.name == "step_net"]
    arg.ClearField("s")
    arg.n.CopyFrom(expected)
    assert listing.step_net(as_netdef) == expected
    backward = listing.step_net(rnn_op, "backward_step_net")
    assert backward == RecurrentOp(rnn_op).backward_step_net
    with pytest.raises(ArgumentError, match="step_net"):
        listing.step_net(fc_op)
