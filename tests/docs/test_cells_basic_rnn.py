"""Step 17's BasicRNN section (docs/concepts/cells.md) against a real E7 build.

The page is plain text: its table of names, its answer (three step-net ops, the
``Tanh`` writes ``rnn/hidden_t``, eight more ops with sequence lengths) and its
claim that torch.nn.RNN's four tensors copy over unchanged are checked here by
building ``rnn_cell.BasicRNN`` at era E7 and running it against torch's
documented formula in NumPy.
"""

import os
import re

import numpy as np
import pytest

from caffe2rnn import eras, rnn_cell, workspace
from caffe2rnn.model_helper import ModelHelper

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PAGE = os.path.join(ROOT, "docs", "concepts", "cells.md")
T, N, D, H = 5, 2, 3, 4


@pytest.fixture(scope="module")
def section():
    with open(PAGE, encoding="utf-8") as handle:
        text = handle.read()
    match = re.search(r"#{2,3} BasicRNN: `torch\.nn\.RNN`[^\n]*\n(.*?)\n#{2,3} ", text, re.S)
    assert match, "cells.md: no BasicRNN section"
    return match.group(1)


def build(seq_lengths=None, name="basic_rnn", **kwargs):
    kwargs.setdefault("activation", "tanh")
    with eras.use("E7"):
        model = ModelHelper(name=name)
        outputs = rnn_cell.BasicRNN(model, "x", seq_lengths, ["h0"], D, H, "rnn", **kwargs)
    (op,) = [o for o in model.net.Proto().op if o.type == "RecurrentNetwork"]
    (step,) = [a.n for a in op.arg if a.name == "step_net"]
    return model, outputs, step


def test_the_table_names_the_blobs_a_build_makes(section):
    model, outputs, _ = build()
    params = [str(p) for p in model.params]
    assert params == ["rnn/i2h_w", "rnn/i2h_b", "rnn/gates_t_w", "rnn/gates_t_b"]
    for name in params + [str(o) for o in outputs]:
        assert "`%s`" % name in section, name
    assert [str(o) for o in outputs] == ["rnn/hidden_t_all", "rnn/hidden_t_last"]


def test_the_answer_three_ops_and_the_tanh_writes_the_state(section):
    _, _, step = build()
    assert [o.type for o in step.op] == ["FC", "Sum", "Tanh"]
    assert list(step.op[0].input)[0] == "rnn/hidden_t_prev"
    assert "input_t" in step.op[1].input
    assert list(step.op[2].output) == ["rnn/hidden_t"]
    answer = section.split('<details class="c2r-answer">')[1]
    assert "**Three**" in answer and "`Tanh`, which writes `rnn/hidden_t`" in answer


def test_sequence_lengths_add_eight_ops(section):
    _, _, plain = build()
    _, _, masked = build("seq_lengths", name="masked", forward_only=True)
    assert len(masked.op) - len(plain.op) == 8
    assert "grows by eight ops" in section


@pytest.mark.parametrize("activation", [None, "sigmoid"])
def test_an_activation_other_than_tanh_or_relu_raises(activation, section):
    assert "no default, anything else raises" in section
    with pytest.raises(RuntimeError, match="unknown activation"):
        build(activation=activation, name="bad")


@pytest.mark.parametrize("activation", ["tanh", "relu"])
def test_torch_weights_copy_over_as_they_are(activation):
    """torch.nn.RNN's formula with its own four tensors, computed in NumPy, equals
    the operator's output when the tensors are fed into the table's blobs."""
    rng = np.random.RandomState(7)
    w_ih, w_hh = rng.randn(H, D).astype(np.float32), rng.randn(H, H).astype(np.float32)
    b_ih, b_hh = rng.randn(H).astype(np.float32), rng.randn(H).astype(np.float32)
    x = rng.randn(T, N, D).astype(np.float32)
    h0 = rng.randn(1, N, H).astype(np.float32)
    model, outputs, _ = build(activation=activation, name="torch_" + activation)
    workspace.ResetWorkspace()
    try:
        with eras.use("E7"):
            workspace.RunNetOnce(model.param_init_net)
            blobs = {"x": x, "h0": h0, "rnn/i2h_w": w_ih, "rnn/i2h_b": b_ih}
            blobs.update({"rnn/gates_t_w": w_hh, "rnn/gates_t_b": b_hh})
            for name, value in blobs.items():
                workspace.FeedBlob(name, value)
            workspace.RunNetOnce(model.net)
            got = workspace.FetchBlob(str(outputs[0]))
            last = workspace.FetchBlob(str(outputs[1]))
    finally:
        workspace.ResetWorkspace()
    act = np.tanh if activation == "tanh" else (lambda v: np.maximum(v, 0))
    h, expected = h0[0].astype(np.float64), []
    for t in range(T):
        h = act(x[t] @ w_ih.T.astype(np.float64) + b_ih + h @ w_hh.T.astype(np.float64) + b_hh)
        expected.append(h)
    np.testing.assert_allclose(got, np.array(expected), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(last[0], expected[-1], rtol=1e-5, atol=1e-5)
