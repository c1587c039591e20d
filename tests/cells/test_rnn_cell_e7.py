"""Era E7 cells (Caffe2 929c33cee, 2018-03-26): LSTM and GRU without sequence
lengths, the GRU's ``linear_before_reset``, ``BasicRNN`` and
``LayerNormMILSTM`` against the NumPy references and central differences; the
names the 2018 scoping gives (085ce4663, baf8cdb76); and what stays as it was
in the eras before."""

import dataclasses

import numpy as np
import numpy_cells as ref
import numpy_cells_e7 as e7
import pytest
import rnn_cell_harness as h

from caffe2rnn import core, eras, errors, gru_cell, rnn_cell, workspace
from caffe2rnn.model_helper import ModelHelper

T, N, D = 3, 2, 2
LENGTHS = np.array([3, 2], dtype=np.int32)
ALL_STEPS = np.array([T] * N, dtype=np.int32)


@pytest.fixture(autouse=True)
def era_e7():
    with eras.use("E7"):
        yield


def check_gradients(loss, values, grad_map, rtol=1e-6, atol=1e-9):
    for name, value in values.items():
        numeric = ref.numeric_gradient(loss, value)
        h.assert_close(workspace.FetchBlob(str(grad_map[name])), numeric, "d/d" + name, rtol, atol)


def step_net_ops(model):
    """The ops of the (first) RecurrentNetwork's step net."""
    (op,) = [op for op in model.net.Proto().op if op.type == "RecurrentNetwork"][:1]
    (step,) = [a.n for a in op.arg if a.name == "step_net"]
    return list(step.op)


def arg(op, name):
    return {a.name: a.i for a in op.arg}.get(name)


def run_layer(fn, outputs_with_grads, states, lengths, seed, hidden):
    """Build ``fn`` with the harness loss, feed random float64 values, run it.

    Returns ``(model, outputs, grad_map, params, inputs, given)``."""
    model, outputs, grad_map = h.build(fn, outputs_with_grads)
    rng = np.random.default_rng(seed)
    p = h.init_params(model, rng)
    inputs = {"input": rng.uniform(-1, 1, (T, N, D))}
    inputs.update({s: rng.uniform(-1, 1, (1, N, hidden)) for s in states})
    given = {j: rng.normal(size=workspace_shape(j, hidden)) for j in outputs_with_grads}
    h.feed(inputs)
    if lengths is not None:
        h.feed({"seq_lengths": lengths})
    h.feed({str(outputs[j]) + "_given_grad": g for j, g in given.items()})
    workspace.RunNetOnce(model.net)
    return model, outputs, grad_map, p, inputs, given


def workspace_shape(j, hidden):
    return (T, N, hidden) if j % 2 == 0 else (1, N, hidden)


# -- LSTM without sequence lengths (2bf8d0cd4) ------------------------------------


def test_lstm_without_lengths_runs_every_step_and_builds_lstm_unit_without_them():
    H = 3

    def fn(model):
        return rnn_cell.LSTM(
            model, "input", None, ["h0", "c0"], D, H, scope="lstm", outputs_with_grads=(0, 3)
        )

    model, outputs, grad_map, p, inputs, given = run_layer(fn, [0, 3], ["h0", "c0"], None, 1, H)
    (unit,) = [op for op in step_net_ops(model) if op.type == "LSTMUnit"]
    assert len(unit.input) == 4 and arg(unit, "sequence_lengths") == 0
    assert [str(o) for o in outputs] == [
        "lstm/hidden_state_all",
        "lstm/hidden_state_last",
        "lstm/cell_state_all",
        "lstm/cell_state_last",
    ]
    g = lambda n: p["lstm/" + n]  # noqa: E731

    def forward():
        return ref.lstm_forward(
            inputs["input"], inputs["h0"], inputs["c0"], g("i2h_w"), g("i2h_b"),
            g("gates_t_w"), g("gates_t_b"), ALL_STEPS,
        )  # fmt: skip

    fwd = forward()
    h.assert_close(workspace.FetchBlob(str(outputs[0])), fwd["h_all"], "h_all")
    h.assert_close(workspace.FetchBlob(str(outputs[3]))[0], fwd["c_all"][-1], "c_last")

    def loss():
        f = forward()
        return np.sum(f["h_all"] * given[0]) + np.sum(f["c_all"][-1] * given[3][0])

    check_gradients(loss, dict(p, **inputs), grad_map)


def test_lstm_e7_gives_e6_numbers_under_other_names():
    def build(era):
        with eras.use(era):
            model = ModelHelper(name="lstm_" + era)
            outputs = rnn_cell.LSTM(model, "input", "seq_lengths", ["h0", "c0"], D, 3, scope="l")
        return model, outputs

    (m6, out6), (m7, out7) = build("E6"), build("E7")
    assert [str(o) for o in out6][:2] == ["l/hidden_t_all", "l/hidden_t_last"]
    assert [str(o) for o in out7][:2] == ["l/hidden_state_all", "l/hidden_state_last"]
    (unit6,) = [op for op in step_net_ops(m6) if op.type == "LSTMUnit"]
    (unit7,) = [op for op in step_net_ops(m7) if op.type == "LSTMUnit"]
    assert arg(unit6, "sequence_lengths") is None and arg(unit7, "sequence_lengths") == 1
    assert list(unit7.output) == ["l/hidden_state", "l/cell_state"]
    rng = np.random.default_rng(2)
    h.feed(
        {
            "input": rng.uniform(-1, 1, (T, N, D)).astype(np.float32),
            "h0": rng.uniform(-1, 1, (1, N, 3)).astype(np.float32),
            "c0": rng.uniform(-1, 1, (1, N, 3)).astype(np.float32),
            "seq_lengths": LENGTHS,
        }
    )
    with eras.use("E6"):
        workspace.RunNetOnce(m6.param_init_net)
        workspace.RunNetOnce(m6.net)
    workspace.RunNetOnce(m7.net)  # the same parameter blobs
    for a, b in zip(out6, out7):
        np.testing.assert_array_equal(workspace.FetchBlob(str(a)), workspace.FetchBlob(str(b)))


# -- GRU: linear_before_reset (7d4c7690d, 3a981e1ac) and no lengths (55a489f6d) -------


@pytest.mark.parametrize("linear_before_reset", [False, True])
@pytest.mark.parametrize("lengths", [LENGTHS, None], ids=["lengths", "no_lengths"])
def test_gru_matches_numpy_and_finite_differences(linear_before_reset, lengths):
    H = 3

    def fn(model):
        return gru_cell.GRU(
            model,
            "input",
            None if lengths is None else "seq_lengths",
            ["h0"],
            D,
            H,
            scope="gru",
            outputs_with_grads=(0, 1),
            linear_before_reset=linear_before_reset,
        )

    model, outputs, grad_map, p, inputs, given = run_layer(fn, [0, 1], ["h0"], lengths, 3, H)
    ops = step_net_ops(model)
    (unit,) = [op for op in ops if op.type == "GRUUnit"]
    assert arg(unit, "sequence_lengths") == (lengths is not None)
    assert len(unit.input) == (4 if lengths is not None else 3)
    written = {o for op in ops for o in op.output}
    assert "gru/output_gate_t_summed" in written
    assert ("gru/output_gate_t_mul" in written) == linear_before_reset
    g = lambda n: p["gru/" + n]  # noqa: E731

    def forward():
        return e7.gru_forward(
            inputs["input"], inputs["h0"], g("i2h_w"), g("i2h_b"), g("reset_gate_t_w"),
            g("reset_gate_t_b"), g("update_gate_t_w"), g("update_gate_t_b"),
            g("output_gate_t_w"), g("output_gate_t_b"), lengths,
            linear_before_reset=linear_before_reset,
        )  # fmt: skip

    h_all = forward()
    h.assert_close(workspace.FetchBlob(str(outputs[0])), h_all, "h_all")
    h.assert_close(workspace.FetchBlob(str(outputs[1]))[0], h_all[-1], "h_last")

    def loss():
        f = forward()
        return np.sum(f * given[0]) + np.sum(f[-1] * given[1][0])

    check_gradients(loss, dict(p, **inputs), grad_map)


def test_gru_before_e7_has_no_linear_before_reset_and_sums_in_place():
    with eras.use("E6"):
        with pytest.raises(TypeError, match="linear_before_reset"):
            gru_cell.GRUCell(D, 3, 0.0, False, name="g", linear_before_reset=True)
        with pytest.raises(TypeError, match="linear_before_reset"):
            gru_cell.GRU(ModelHelper(name="g"), "x", "s", ["h0"], D, 3, "g", linear_before_reset=1)
        model = ModelHelper(name="gru6")
        gru_cell.GRU(model, "input", "seq_lengths", ["h0"], D, 3, scope="g")
        ops = step_net_ops(model)
        (unit,) = [op for op in ops if op.type == "GRUUnit"]
        assert arg(unit, "sequence_lengths") is None
        sums = [list(op.output) for op in ops if op.type == "Sum"]
        assert ["g/output_gate_t"] in sums


# -- BasicRNN, the Elman RNN (a3d2ebeaf, 4fc28dbfc) -------------------------------------


@pytest.mark.parametrize("activation", ["tanh", "relu"])
@pytest.mark.parametrize("drop_states", [False, True])
@pytest.mark.parametrize("lengths", [LENGTHS, None], ids=["lengths", "no_lengths"])
def test_basic_rnn_forward_matches_numpy(activation, drop_states, lengths):
    H = 3
    model = ModelHelper(name="elman")
    h_all, h_last = rnn_cell.BasicRNN(
        model,
        "input",
        None if lengths is None else "seq_lengths",
        ["h0"],
        D,
        H,
        "rnn",
        activation=activation,
        forward_only=True,
        drop_states=drop_states,
    )
    rng = np.random.default_rng(5)
    # float32: the masks are Cast to float (float32), as in Caffe2, and Mul
    # takes one type
    p = {k: v.astype(np.float32) for k, v in h.init_params(model, rng, scale=0.8).items()}
    inputs = {
        "input": rng.uniform(-1, 1, (T, N, D)).astype(np.float32),
        "h0": rng.uniform(-1, 1, (N, H)).astype(np.float32),
    }
    h.feed(dict(p, **inputs))
    if lengths is not None:
        h.feed({"seq_lengths": lengths})
    workspace.RunNetOnce(model.net)
    g = lambda n: p["rnn/" + n].astype(np.float64)  # noqa: E731
    expected = e7.elman_forward(
        inputs["input"].astype(np.float64), inputs["h0"].astype(np.float64), g("i2h_w"),
        g("i2h_b"), g("gates_t_w"), g("gates_t_b"), lengths, activation, drop_states,
    )  # fmt: skip
    h.assert_close(workspace.FetchBlob(str(h_all)), expected, "h_all", 1e-5, 1e-6)
    h.assert_close(workspace.FetchBlob(str(h_last))[0], expected[-1], "h_last", 1e-5, 1e-6)
    written = {o for op in step_net_ops(model) for o in op.output}
    assert ("rnn/valid" in written) == (lengths is not None)


def test_basic_rnn_gradients_without_lengths():
    H = 2

    def fn(model):
        return rnn_cell.BasicRNN(
            model, "input", None, ["h0"], D, H, "rnn", outputs_with_grads=(0, 1), activation="tanh"
        )

    model, outputs, grad_map, p, inputs, given = run_layer(fn, [0, 1], ["h0"], None, 6, H)
    g = lambda n: p["rnn/" + n]  # noqa: E731

    def loss():
        f = e7.elman_forward(
            inputs["input"], inputs["h0"], g("i2h_w"), g("i2h_b"), g("gates_t_w"), g("gates_t_b")
        )
        return np.sum(f * given[0]) + np.sum(f[-1] * given[1][0])

    check_gradients(loss, dict(p, **inputs), grad_map)


@pytest.mark.parametrize(
    "drop_states,error,match",
    [
        # the Add writes hidden_t again, whose first version the Mul's gradient needs
        (False, errors.GradientError, 'needs input "rnn/hidden_t" at version 0'),
        # the masks are Casts without from_type: Caffe2's GetCastGradient enforced it
        (True, errors.GradientError, "from_type"),
    ],
)
def test_basic_rnn_with_lengths_has_no_backward_pass(drop_states, error, match):
    with pytest.raises(error, match=match):
        rnn_cell.BasicRNN(
            ModelHelper(name="b"),
            "input",
            "seq_lengths",
            ["h0"],
            D,
            2,
            "rnn",
            activation="relu",
            drop_states=drop_states,
        )


def test_basic_rnn_refusals():
    with pytest.raises(errors.ArgumentError, match="unknown activation function \\(sigmoid\\)"):
        rnn_cell.BasicRNNCell(D, 2, 0.0, False, activation="sigmoid")
    with pytest.raises(errors.ArgumentError, match="initializer"):  # it has none
        rnn_cell.BasicRNN(ModelHelper(name="b"), "input", None, None, D, 2, "r", activation="tanh")
    with eras.use("E6"), pytest.raises(AttributeError, match="a3d2ebeaf.*era E7"):
        rnn_cell.BasicRNN  # noqa: B018


# -- LayerNormMILSTM (d37199548) -----------------------------------------------------


def test_layer_norm_milstm_matches_numpy_and_finite_differences():
    H = 3

    def fn(model):
        return rnn_cell.LayerNormMILSTM(
            model, "input", "seq_lengths", ["h0", "c0"], D, H, "ln", outputs_with_grads=(0, 3)
        )

    model, outputs, grad_map, p, inputs, given = run_layer(fn, [0, 3], ["h0", "c0"], LENGTHS, 7, H)
    g = lambda n: p["ln/" + n]  # noqa: E731
    eps = float(np.float32(1e-4))  # brew.layer_norm's epsilon, a float32 argument

    def forward():
        return e7.layer_norm_milstm_forward(
            inputs["input"], inputs["h0"], inputs["c0"], g("i2h_w"), g("i2h_b"), g("prev_t_w"),
            g("prev_t_b"), g("alpha"), g("beta1"), g("beta2"), g("b"), g("gates_t_norm_scale"),
            g("gates_t_norm_bias"), LENGTHS, eps,
        )  # fmt: skip

    fwd = forward()
    h.assert_close(workspace.FetchBlob(str(outputs[0])), fwd["h_all"], "h_all")
    h.assert_close(workspace.FetchBlob(str(outputs[3]))[0], fwd["c_all"][-1], "c_last")

    def loss():
        f = forward()
        return np.sum(f["h_all"] * given[0]) + np.sum(f["c_all"][-1] * given[3][0])

    check_gradients(loss, dict(p, **inputs), grad_map)
    with eras.use("E6"), pytest.raises(AttributeError, match="d37199548.*era E7"):
        rnn_cell.LayerNormMILSTMCell  # noqa: B018


# -- scoping (085ce4663, baf8cdb76) ----------------------------------------------------


@pytest.mark.parametrize("scope", ["rc", None])
def test_stacked_lstm_scopes_its_layers(scope):
    model = ModelHelper(name="stack")
    outputs = rnn_cell.LSTM(
        model, "input", "seq_lengths", None, D, [2, 3], scope=scope, return_last_layer_only=False
    )
    prefix = "" if scope is None else scope + "/"
    assert [str(p) for p in model.params] == [
        prefix + name
        for name in (
            "layer_0/initial_hidden_state",
            "layer_0/initial_cell_state",
            "layer_1/initial_hidden_state",
            "layer_1/initial_cell_state",
            "i2h_w",  # the first layer's projection: outside the layers' scopes
            "i2h_b",
            "layer_0/gates_t_w",
            "layer_0/gates_t_b",
            "layer_1/i2h_w",
            "layer_1/i2h_b",
            "layer_1/gates_t_w",
            "layer_1/gates_t_b",
        )
    ]
    assert str(outputs[4]) == prefix + "layer_1/hidden_state_all"
    states = [i for op in step_net_ops(model) if op.type == "LSTMUnit" for i in op.input[:2]]
    # the states: "<name>/layer_<i>/..." — a nameless stack's name prints as None
    assert states[:2] == ["%s/layer_0/hidden_t_prev" % scope, "%s/layer_0/cell_t_prev" % scope]
    # the numbers: the NumPy stack with those names
    rng = np.random.default_rng(8)
    p = h.init_params(model, rng)
    x = rng.uniform(-1, 1, (T, N, D))
    h.feed({"input": x, "seq_lengths": LENGTHS})
    workspace.RunNetOnce(model.net)
    p0 = {"i2h_" + k: p[prefix + "i2h_" + k] for k in "wb"}
    p0.update({"gates_t_" + k: p[prefix + "layer_0/gates_t_" + k] for k in "wb"})
    p1 = {n: p[prefix + "layer_1/" + n] for n in ("i2h_w", "i2h_b", "gates_t_w", "gates_t_b")}
    layer_params = {"L0/" + k: v for k, v in p0.items()}
    layer_params.update({"L1/" + k: v for k, v in p1.items()})
    initial = [
        p[prefix + "layer_%d/initial_%s_state" % (i, s)] for i in (0, 1) for s in ("hidden", "cell")
    ]
    _, expected = h.stacked_forward(layer_params, ["L0", "L1"], x, initial, LENGTHS)
    h.assert_close(workspace.FetchBlob(str(outputs[4])), expected, "h_all of layer 1")


def test_before_baf8cdb76_the_stacks_layers_share_the_scope_name():
    # 085ce4663 without baf8cdb76: each layer is named scope, its states are
    # "layer_<i>/<scope>/...", and its ops are scoped three times
    partial = dataclasses.replace(eras.get("E7"), multi_rnn_scoped_by_name=False)
    with eras.use(partial):
        model = ModelHelper(name="mid")
        rnn_cell.LSTM(model, "input", "seq_lengths", ["a", "b", "c", "d"], D, [2, 2], scope="rc")
    units = [op for op in step_net_ops(model) if op.type == "LSTMUnit"]
    assert [op.input[0] for op in units] == [
        "layer_0/rc/hidden_t_prev",
        "layer_1/rc/hidden_t_prev",
    ]
    assert [op.output[0] for op in units] == [
        "rc/layer_0/rc/hidden_state",
        "rc/layer_1/rc/hidden_state",
    ]


class ScaleCell(rnn_cell.RNNCell):
    """A cell written the E7 way: ``h_t = input_t ⊙ h_{t-1}``, unscoped names."""

    def apply_override(self, model, input_t, seq_lengths, states, timestep, extra_inputs=None):
        return (model.net.Mul([input_t, states[0]], "scaled"),)

    def get_state_names_override(self):
        return ["state"]

    def get_output_dim(self):
        return D


def test_a_cell_with_apply_override_is_scoped_by_its_name():
    model = ModelHelper(name="scale")
    with core.NameScope("outer"):
        x_blob, h0 = model.net.AddScopedExternalInputs("input", "h0")
        output, _ = ScaleCell(name="cell").apply_over_sequence(
            model, x_blob, None, [h0], outputs_with_grads=[0]
        )
    (mul,) = step_net_ops(model)
    # the inputs keep the scope they were named in; the product is in the cell's
    assert list(mul.input) == ["outer/input_t", "outer/cell/state_prev"]
    assert list(mul.output) == ["outer/cell/scaled"]
    assert str(output) == "outer/cell/scaled_all"
    x = np.random.default_rng(9).uniform(-1, 1, (T, N, D))
    h.feed({"outer/input": x, "outer/h0": np.ones((1, N, D))})
    workspace.RunNetOnce(model.net)
    np.testing.assert_allclose(workspace.FetchBlob(str(output)), np.cumprod(x, axis=0))
    with eras.use("E6"), pytest.raises(NotImplementedError, match="_apply|get_state_names"):
        ScaleCell(name="cell").apply_over_sequence(ModelHelper(name="s6"), "x", None, ["h0"])


def test_initial_states_must_match_the_states():
    cell = rnn_cell.LSTMCell(D, 2, 0.0, False, name="c")
    with pytest.raises(errors.ArgumentError, match="doesn't match the number of states. 3 != 2"):
        cell.apply_over_sequence(ModelHelper(name="m"), "x", None, ["h0", "c0", "extra"])
    with eras.use("E6"):  # zip: the extra blob was ignored
        cell6 = rnn_cell.LSTMCell(D, 2, 0.0, False, name="c")
        cell6.apply_over_sequence(ModelHelper(name="m6"), "x", "s", ["h0", "c0", "extra"])


def test_scope_and_cell_keywords_before_e7():
    assert rnn_cell.LSTM(ModelHelper(name="a"), "x", None, ["h", "c"], D, 2)  # scope left out
    with eras.use("E6"):
        with pytest.raises(TypeError, match="'scope'"):
            rnn_cell.LSTM(ModelHelper(name="b"), "x", "s", ["h", "c"], D, 2)
        with pytest.raises(TypeError, match="unexpected keyword argument 'activation'"):
            rnn_cell.LSTM(ModelHelper(name="c"), "x", "s", ["h", "c"], D, 2, "l", activation="x")


def test_the_history_pages_table_of_names():
    """docs/concepts/history-e7.md, "Scoping": the same stack's names in E6 and E7."""
    table = {  # (all hidden states, step-net state, first i2h_w, layer 1 gates_t_w, h0 of layer 1)
        "E6": (
            "rc/layer_0/hidden_t_all",
            "rc/layer_0/hidden_t_prev",
            "rc/layer_0/i2h_w",
            "rc/layer_1/gates_t_w",
            "rc/rc/layer_1/initial_hidden_state",
        ),
        "E7": (
            "rc/layer_0/hidden_state_all",
            "rc/layer_0/hidden_t_prev",
            "rc/i2h_w",
            "rc/layer_1/gates_t_w",
            "rc/layer_1/initial_hidden_state",
        ),
    }
    for era, (h_all, state, i2h_w, gates_w, h0) in table.items():
        with eras.use(era):
            model = ModelHelper(name="names_" + era)
            outputs = rnn_cell.LSTM(
                model, "input", "seq_lengths", None, D, [2, 3], "rc", return_last_layer_only=False
            )
        unit = [op for op in step_net_ops(model) if op.type == "LSTMUnit"][0]
        params = [str(p) for p in model.params]
        assert (str(outputs[0]), unit.input[0]) == (h_all, state)
        assert params.index(i2h_w) == 4 and {gates_w, h0} <= set(params)  # 4: after 4 states
