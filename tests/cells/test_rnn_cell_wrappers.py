"""DropoutCell (train / inference), one-step ``apply``, InitFromLSTMParams via
``rnn_cell.LSTM(return_params=True)``, layered_LSTM, and the errors of bad input."""

import numpy as np
import numpy_cells as ref
import pytest
import rnn_cell_harness as h

from caffe2rnn import errors, rnn_cell, workspace
from caffe2rnn.model_helper import ModelHelper
from caffe2rnn.operators.rnn import read_recurrent_arguments

T, N, D, H = 3, 2, 2, 3
LENGTHS = np.array([3, 2], dtype=np.int32)


def feed_inputs(rng, dtype=np.float64):
    values = {
        "input": rng.uniform(-1, 1, (T, N, D)).astype(dtype),
        "h0": rng.uniform(-1, 1, (1, N, H)).astype(dtype),
        "c0": rng.uniform(-1, 1, (1, N, H)).astype(dtype),
    }
    h.feed(values)
    workspace.FeedBlob("seq_lengths", LENGTHS)
    return values


def lstm_reference(p, v, scope="drop"):
    g = lambda n: p[scope + "/" + n]  # noqa: E731
    return ref.lstm_forward(
        v["input"],
        v["h0"],
        v["c0"],
        g("i2h_w"),
        g("i2h_b"),
        g("gates_t_w"),
        g("gates_t_b"),
        LENGTHS,
    )


def dropout_lstm(model, forward_only, ratio=0.5):
    cell = rnn_cell.DropoutCell(
        rnn_cell.LSTMCell(
            input_size=D,
            hidden_size=H,
            forget_bias=0.0,
            memory_optimization=False,
            name="drop",
            forward_only=forward_only,
        ),
        dropout_ratio=ratio,
        name="drop",
        forward_only=forward_only,
    )
    return cell.apply_over_sequence(model, "input", "seq_lengths", ["h0", "c0"])


def test_dropout_cell_in_training_drops_the_output_not_the_recurrence():
    model = ModelHelper(name="dropout_train")
    output, states = dropout_lstm(model, forward_only=False, ratio=0.5)
    # Caffe2 names the Dropout outputs after the output, inside the cell's scope
    assert str(output) == "drop/drop/hidden_t_all_with_dropout_mask0"
    loss = model.net.SumElements(model.net.Mul([output, "given"], "prod"), "loss")
    grad_map = model.AddGradientOperators([loss])
    rng = np.random.default_rng(0)
    p = h.init_params(model, rng)
    v = feed_inputs(rng)
    given = rng.normal(size=(T, N, H))
    workspace.FeedBlob("given", given)
    workspace.RunNetOnce(model.net)

    fwd = lstm_reference(p, v)
    # the recurrent states are the plain LSTM's: dropout never enters the loop
    h.assert_close(workspace.FetchBlob(str(states[0])), fwd["h_all"], "hidden_all")
    mask = workspace.FetchBlob("drop/drop/hidden_t_all_dropout_mask0").astype(bool)
    assert mask.shape == (T, N, H) and 0 < mask.sum() < mask.size
    h.assert_close(workspace.FetchBlob(str(output)), fwd["h_all"] * mask / 0.5, "dropped output")
    # gradient of the LSTM's hidden states = given ⊙ mask / (1 - ratio)
    h.assert_close(
        workspace.FetchBlob(str(grad_map[str(states[0])])), given * mask / 0.5, "d/d hidden_all"
    )


def test_dropout_cell_in_inference_is_the_identity():
    model = ModelHelper(name="dropout_test")
    output, states = dropout_lstm(model, forward_only=True)
    assert "Dropout" not in {op.type for op in model.net.Proto().op}
    assert output == states[0]
    rng = np.random.default_rng(1)
    p = h.init_params(model, rng)
    v = feed_inputs(rng)
    workspace.RunNetOnce(model.net)
    h.assert_close(workspace.FetchBlob(str(output)), lstm_reference(p, v)["h_all"], "output")


def test_dropout_ratio_out_of_range_is_refused_when_the_net_runs():
    """As in Caffe2, the cell builds; its Dropout op refuses the ratio when it
    runs (caffe2/operators/dropout_op.h: CAFFE_ENFORCE_LT(ratio_, 1))."""
    model = ModelHelper(name="dropout_bad_ratio")
    output, _ = dropout_lstm(model, forward_only=False, ratio=1.5)
    rng = np.random.default_rng(0)
    h.init_params(model, rng)
    feed_inputs(rng)
    with pytest.raises(errors.ArgumentError, match="Dropout: argument ratio is 1.5"):
        workspace.RunNetOnce(model.net)


def test_apply_adds_one_step_equal_to_the_first_step_of_the_sequence():
    cell = rnn_cell.LSTMCell(D, H, 0.0, False, name="one")
    model = ModelHelper(name="one_step")
    workspace.FeedBlob("timestep", np.array([0], dtype=np.int32))
    output, states = cell.apply(model, "input_0", "seq_lengths", ["h0", "c0"], "timestep")
    rng = np.random.default_rng(2)
    p = h.init_params(model, rng)
    v = feed_inputs(rng)
    workspace.FeedBlob("input_0", v["input"][:1])
    workspace.RunNetOnce(model.net)
    fwd = lstm_reference(p, v, scope="one")
    h.assert_close(workspace.FetchBlob(str(output))[0], fwd["h_all"][0], "h_1")
    h.assert_close(workspace.FetchBlob(str(states[1]))[0], fwd["c_all"][0], "c_1")


def test_init_from_lstm_params_round_trip_through_rnn_cell():
    model = ModelHelper(name="params")
    outputs = rnn_cell.LSTM(
        model, "input", "seq_lengths", ("h0", "c0"), D, H, scope="rt", return_params=True
    )
    params = outputs[-1]
    assert params == {
        "input": {"weights": "rt/i2h_w", "biases": "rt/i2h_b"},
        "recurrent": {"weights": "rt/gates_t_w", "biases": "rt/gates_t_b"},
    }
    workspace.RunNetOnce(model.param_init_net)
    rng = np.random.default_rng(4)
    names = rnn_cell.GetLSTMParamNames()
    values = {
        kind: {
            **{w: rng.normal(size=(H, D if kind == "input" else H)) for w in names["weights"]},
            **{b: rng.normal(size=(H,)) for b in names["biases"]},
        }
        for kind in ("input", "recurrent")
    }
    rnn_cell.InitFromLSTMParams(params, values)
    for kind, blobs in params.items():
        w = np.split(workspace.FetchBlob(blobs["weights"]), 4)
        b = np.split(workspace.FetchBlob(blobs["biases"]), 4)
        for k, (wn, bn) in enumerate(zip(names["weights"], names["biases"])):
            np.testing.assert_array_equal(w[k], values[kind][wn].astype(np.float32))
            np.testing.assert_array_equal(b[k], values[kind][bn].astype(np.float32))
    # and the LSTM runs on them: hidden states of the NumPy LSTM with those weights
    v = feed_inputs(rng, np.float32)
    workspace.RunNetOnce(model.net)
    fwd = ref.lstm_forward(
        v["input"].astype(np.float64),
        v["h0"],
        v["c0"],
        np.concatenate([values["input"][w] for w in names["weights"]]),
        np.concatenate([values["input"][b] for b in names["biases"]]),
        np.concatenate([values["recurrent"][w] for w in names["weights"]]),
        np.concatenate([values["recurrent"][b] for b in names["biases"]]),
        LENGTHS,
    )
    np.testing.assert_allclose(workspace.FetchBlob(str(outputs[0])), fwd["h_all"], atol=2e-5)


def test_layered_lstm_runs_one_op_per_layer_and_matches_the_stack():
    model = ModelHelper(name="layered")
    out = rnn_cell.layered_LSTM(model, "input", "seq_lengths", ("h0", "c0"), D, [H, H], scope="lay")
    ops = [op for op in model.net.Proto().op if op.type == "RecurrentNetwork"]
    assert len(ops) == 2 and str(out[0]) == "lay_layer_1/hidden_t_all"
    rng = np.random.default_rng(6)
    p = h.init_params(model, rng)
    v = feed_inputs(rng)
    workspace.RunNetOnce(model.net)
    first = lstm_reference(p, v, scope="lay")
    g = lambda n: p["lay_layer_1/" + n]  # noqa: E731
    second = ref.lstm_forward(
        first["h_all"],
        first["h_all"][-1:],
        first["c_all"][-1:],
        g("i2h_w"),
        g("i2h_b"),
        g("gates_t_w"),
        g("gates_t_b"),
        LENGTHS,
    )
    h.assert_close(workspace.FetchBlob(str(out[0])), second["h_all"], "second layer")


# -- bad input ------------------------------------------------------------------


def test_building_never_reads_the_workspace_and_a_wrong_dim_in_fails_when_run():
    """Caffe2 built the model from its arguments alone; a blob of the input's
    name already in the workspace changes nothing. The FC refuses the
    mismatch when the net runs (Caffe2: CAFFE_ENFORCE_EQ in fc_op.h)."""
    workspace.FeedBlob("input", np.zeros((T, N, D + 1), np.float32))
    model = ModelHelper(name="built")
    rnn_cell.LSTM(model, "input", "seq_lengths", ("h0", "c0"), D, H, scope="built")
    rng = np.random.default_rng(0)
    h.init_params(model, rng)
    feed_inputs(rng)
    workspace.FeedBlob("input", np.zeros((T, N, D + 1)))
    with pytest.raises(errors.ShapeError, match="FC"):
        workspace.RunNetOnce(model.net)


def test_initial_states_are_paired_with_the_states_as_by_zip():
    """Caffe2 paired states and given blobs with ``zip``: a blob too many is
    ignored; a state left without one reads a blob nobody writes when the net
    runs."""
    rng = np.random.default_rng(1)
    model = ModelHelper(name="extra_states")
    cell = rnn_cell.LSTMCell(D, H, 0.0, False, name="extra")
    output, _ = cell.apply_over_sequence(model, "input", "seq_lengths", ["h0", "c0", "unused"])
    p = h.init_params(model, rng)
    v = feed_inputs(rng)
    workspace.RunNetOnce(model.net)
    h.assert_close(workspace.FetchBlob(str(output)), lstm_reference(p, v, "extra")["h_all"], "h")
    assert "unused" not in model.net.Proto().op[-1].input

    model = ModelHelper(name="missing_state")
    cell = rnn_cell.LSTMCell(D, H, 0.0, False, name="few")
    cell.apply_over_sequence(model, "input", "seq_lengths", ["h0"])
    h.init_params(model, rng)
    feed_inputs(rng)
    with pytest.raises(errors.BlobNotFoundError, match="few/cell_t_prev"):
        workspace.RunNetOnce(model.net)
    # Without a blob for the output state (the last layer's hidden state), Caffe2
    # failed to build the output (an IndexError); here a clear error.
    model = ModelHelper(name="missing_output_state")
    with pytest.raises(errors.ArgumentError, match="output state 'few/layer_1/hidden_t'"):
        rnn_cell.LSTM(model, "input", "seq_lengths", ("h0", "c0"), D, [H, H], scope="few")


def test_duplicate_layer_names_are_refused_and_residual_layer_0_or_past_the_end_ignored():
    cells = [rnn_cell.LSTMCell(D, H, 0.0, False, name="same") for _ in range(2)]
    with pytest.raises(errors.ArgumentError, match="Duplicate state names"):
        rnn_cell.MultiRNNCell(cells, name="m")  # Caffe2: RuntimeError
    built = []
    for residual in ([], [0], [2]):
        cells = [
            rnn_cell.LSTMCell(D if i == 0 else H, H, 0.0, False, name="l%d" % i) for i in (0, 1)
        ]
        model = ModelHelper(name="m")
        rnn_cell.MultiRNNCell(cells, residual_output_layers=residual, name="m").apply_over_sequence(
            model, "input", "seq_lengths", ["h0", "c0", "h1", "c1"]
        )
        rnn = [op for op in model.net.Proto().op if op.type == "RecurrentNetwork"]
        step_net = read_recurrent_arguments(rnn[0]).step_net
        built.append([(op.type, list(op.input), list(op.output)) for op in step_net.op])
    assert built[0] == built[1] == built[2]


def test_return_params_with_layers_and_bad_unroll_size_are_refused():
    model = ModelHelper(name="bad_opts")
    with pytest.raises(errors.ArgumentError, match="return_params"):
        rnn_cell.LSTM(model, "x", "s", None, D, [H, H], scope="a", return_params=True)
    with pytest.raises(errors.ArgumentError, match="static_rnn_unroll_size"):
        rnn_cell.LSTM(model, "x", "s", None, D, H, scope="a", static_rnn_unroll_size=0)
    with pytest.raises(NotImplementedError, match="CPU-only"):
        rnn_cell.cudnn_LSTM(model, "x", ("h", "c"), D, H, scope="a")
