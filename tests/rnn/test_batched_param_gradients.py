"""Parameter gradients batched over time (``caffe2rnn_batch_param_gradients``).

With the option, an FC of the backward cell computes only dX per step, and
after the loop its dW and db are one GEMM and one GEMV over the rows of all T
steps. Against Caffe2's step-by-step sums (the option off): the batched
parameter gradients agree to float rounding, and every other tensor of the
workspace — outputs, the input and initial-state gradients, the parameter
gradients of FCs that cannot be batched — is equal bit for bit, with the RNN
executor off, on and threaded.
"""

import numpy as np
import pytest
from test_executor import (
    RNN_OPS,
    attention_model,
    lstm_feeds,
    lstm_model,
    milstm_model,
    run_model,
)

from caffe2rnn import errors, recurrent, workspace
from caffe2rnn.attention import AttentionType
from caffe2rnn.core import CreateOperator
from caffe2rnn.operators.rnn.param_gradients import BatchedOverTime


class Batched:
    """``model``'s net with the option on, for ``run_model``'s ``with_executor``."""

    def __init__(self, model):
        self.model = model
        self.param_init_net = model.param_init_net
        self.net = self

    def Proto(self):
        netdef = type(self.model.net.Proto())()
        netdef.CopyFrom(self.model.net.Proto())
        for op in netdef.op:
            if op.type in RNN_OPS:
                recurrent.set_batch_param_gradients(op)
        return netdef


def gradient_ops(ops):
    return [op for op in ops if op.op_type == "RecurrentNetworkGradient"]


def compare(model, feeds, rtol, expect_batched=True):
    """Run ``model`` step by step and batched (executor off, on, 2 threads):
    batched parameter gradients within ``rtol``, every other tensor equal.
    Returns the gradient ops of the batched run."""
    ops = None
    for on, threads in ((False, 0), (True, 0), (True, 2)):
        step, _ = run_model(model, feeds, on, "python", threads=threads)
        batched, ops = run_model(Batched(model), feeds, on, "python", threads=threads)
        names = {
            name
            for op in gradient_ops(ops)
            for entry in op.param_gradients.batched
            for name in (entry.weight.grad, entry.bias.grad)
        }
        assert bool(names) == expect_batched
        for a, b in zip(step, batched):
            assert a.keys() == b.keys()
            for name in a:
                if name in names:
                    scale = np.abs(a[name]).max()
                    np.testing.assert_allclose(b[name], a[name], rtol=0, atol=rtol * scale)
                else:
                    np.testing.assert_array_equal(a[name], b[name], err_msg=name)
    return gradient_ops(ops)


def float64(feeds):
    return {k: v.astype(np.float64) if v.dtype == np.float32 else v for k, v in feeds.items()}


@pytest.mark.parametrize("lengths", [None, [6, 3, 1]])
def test_lstm_weight_and_bias_gradients_batched(lengths):
    rng = np.random.default_rng(21)
    model, _ = lstm_model(6, 3, 4, 5)
    feeds = float64(lstm_feeds(model, rng, 6, 3, 4, 5, lengths=lengths))
    (op,) = compare(model, feeds, rtol=1e-13)
    (entry,) = op.param_gradients.batched
    assert (entry.weight.param, entry.bias.param) == ("layer0/gates_t_w", "layer0/gates_t_b")
    assert (entry.x.internal, entry.x.offset) == ("hidden_t_prev", 0)
    types = [o.type for o in op.step_net.op]
    assert "FCGradient" not in types and "rnn_internal_fc_input_gradient" in types
    assert "_tmpstep" not in " ".join(name for o in op.step_net.op for name in o.output)


def test_float32_within_rounding():
    rng = np.random.default_rng(22)
    model, _ = lstm_model(20, 4, 3, 6, layers=2)
    compare(model, lstm_feeds(model, rng, 20, 4, 3, 6, layers=2, lengths=[20, 9, 3, 1]), 1e-5)


def test_milstm_fc_reads_a_step_intermediate_so_nothing_changes():
    """MILSTM's FC gradient reads dY = ``prev_t_grad``, computed inside the
    step from the gates' gradient: not a link, so it stays step by step and
    the option changes nothing at all."""
    rng = np.random.default_rng(23)
    model = milstm_model("batched_milstm")
    feeds = float64(lstm_feeds(model, rng, 5, 2, 3, 4, lengths=[5, 3]))
    compare(model, feeds, 0.0, expect_batched=False)


@pytest.mark.parametrize("attention_type", [AttentionType.Regular, AttentionType.Recurrent])
def test_attention_fcs_read_step_intermediates_so_nothing_changes(attention_type):
    """Every FC of the attention decoder reads a blob computed inside the step
    (the gate FC the concatenation of the hidden state and the context): they
    all keep the exact step-by-step sums."""
    rng = np.random.default_rng(24)
    model, feeds = attention_model("batched_attention", attention_type, rng, T=4, S=3)
    compare(model, float64(feeds), 0.0, expect_batched=False)


def test_the_option_reaches_the_gradient_op_and_is_off_by_default():
    model, _ = lstm_model(3, 2, 2, 2)
    for netdef, expected in ((model.net.Proto(), False), (Batched(model).Proto(), True)):
        for op in netdef.op:
            if op.type in RNN_OPS:
                value = [a.i for a in op.arg if a.name == "caffe2rnn_batch_param_gradients"]
                assert bool(value and value[0]) == expected
    rng = np.random.default_rng(25)
    _, ops = run_model(model, lstm_feeds(model, rng, 3, 2, 2, 2), True, "python", runs=1)
    assert not isinstance(gradient_ops(ops)[0].param_gradients, BatchedOverTime)


def test_set_batch_param_gradients_refuses_other_ops():
    with pytest.raises(errors.ArgumentError, match="expected a RecurrentNetwork"):
        recurrent.set_batch_param_gradients(CreateOperator("FC", ["x", "w", "b"], ["y"]))
    op = CreateOperator("RecurrentNetwork", [], [])
    recurrent.set_batch_param_gradients(op)
    recurrent.set_batch_param_gradients(op, on=False)
    assert [(a.name, a.i) for a in op.arg] == [("caffe2rnn_batch_param_gradients", 0)]


def test_the_plan_describes_the_input_gradient_only():
    rng = np.random.default_rng(26)
    model, _ = lstm_model(3, 2, 2, 2)
    _, ops = run_model(Batched(model), lstm_feeds(model, rng, 3, 2, 2, 2), True, "python")
    text = gradient_ops(ops)[0].executor.plans["python"].describe()
    assert "rnn_internal_fc_input_gradient" in text
    assert text.count("matmul(") == 1  # dX only: no per-step dW
    assert workspace.HasBlob("layer0/gates_t_w_grad")
