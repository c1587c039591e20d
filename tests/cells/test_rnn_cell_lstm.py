"""``rnn_cell.LSTM`` / ``MILSTM``: 1-3 stacked layers, residual stacks, static
unrolls, against ``recurrent.LSTM``/``MILSTM`` and the NumPy reference, forward
and every gradient (float64; finite differences of the independent reference).
"""

import numpy as np
import pytest
import rnn_cell_harness as h

from caffe2rnn import recurrent, rnn_cell, workspace
from caffe2rnn.cnn import CNNModelHelper

T, N, D = 3, 2, 2
LENGTHS = np.array([3, 2], dtype=np.int32)


def layer_fn(kind):
    return rnn_cell.LSTM if kind == "lstm" else rnn_cell.MILSTM


def initial_names(num_layers):
    return ["init_%d" % j for j in range(2 * num_layers)]


def feed_inputs(rng, dims, seed_grads=True):
    values = {"input": rng.uniform(-1, 1, size=(T, N, D))}
    for j, name in enumerate(initial_names(len(dims))):
        values[name] = rng.uniform(-1, 1, size=(1, N, dims[j // 2]))
    h.feed(values)
    workspace.FeedBlob("seq_lengths", LENGTHS)
    return values


def build_rnn_cell(kind, dims, **kw):
    L = len(dims)
    owg = (0, 3)

    def fn(model):
        return layer_fn(kind)(
            model,
            "input",
            "seq_lengths",
            initial_names(L),
            D,
            dims if L > 1 else dims[0],
            scope="rc",
            outputs_with_grads=owg,
            return_last_layer_only=False,
            forget_bias=0.5,
            **kw,
        )

    return h.build(fn, [4 * (L - 1) + j for j in owg])


def seed_grads(rng, outputs, dims):
    L = len(dims)
    given = {
        "h": rng.normal(size=(T, N, dims[-1])),
        "c": rng.normal(size=(1, N, dims[-1])),
    }
    h.feed(
        {
            str(outputs[4 * (L - 1)]) + "_given_grad": given["h"],
            str(outputs[4 * (L - 1) + 3]) + "_given_grad": given["c"],
        }
    )
    return given


STACKS = [
    ("lstm", [3]),
    ("lstm", [3, 2]),
    ("lstm", [2, 3, 2]),
    ("milstm", [2]),
    ("milstm", [3, 2]),
    ("milstm", [2, 2, 2]),
]


@pytest.mark.parametrize("kind,dims", STACKS)
def test_stacked_layers_match_numpy_forward_and_finite_differences(kind, dims):
    rng = np.random.default_rng(len(dims))
    model, outputs, grad_map = build_rnn_cell(kind, dims)
    p = h.init_params(model, rng)
    inputs = feed_inputs(rng, dims)
    given = seed_grads(rng, outputs, dims)
    workspace.RunNetOnce(model.net)

    names = h.layer_names("rc", len(dims))
    initial = [inputs[n] for n in initial_names(len(dims))]
    results, _ = h.stacked_forward(
        p, names, inputs["input"], initial, LENGTHS, kind=kind, forget_bias=0.5
    )
    for i, fwd in enumerate(results):
        got = [workspace.FetchBlob(str(outputs[4 * i + j])) for j in range(4)]
        h.assert_close(got[0], fwd["h_all"], "layer %d hidden_all" % i)
        h.assert_close(got[1][0], fwd["h_all"][-1], "layer %d hidden_last" % i)
        h.assert_close(got[2], fwd["c_all"], "layer %d cell_all" % i)
        h.assert_close(got[3][0], fwd["c_all"][-1], "layer %d cell_last" % i)

    def loss():
        x = inputs["input"]
        init = [inputs[n] for n in initial_names(len(dims))]
        last = h.stacked_forward(p, names, x, init, LENGTHS, kind=kind, forget_bias=0.5)[0][-1]
        return np.sum(last["h_all"] * given["h"]) + np.sum(last["c_all"][-1] * given["c"][0])

    values = dict(p, **inputs)
    assert sorted(map(str, model.params)) == sorted(p)
    for name in values:
        numeric = h.numeric_gradients(loss, values, [name])[name]
        h.assert_close(workspace.FetchBlob(str(grad_map[name])), numeric, "d/d" + name)


def build_recurrent_chain(kind, dims):
    """The same stack as separate 2017-04 ``recurrent.LSTM``/``MILSTM`` layers."""
    model = CNNModelHelper(name="chain")
    layer_input, dim_in = "input", D
    names = h.layer_names("rc", len(dims))
    init = initial_names(len(dims))
    outputs = []
    for i, (name, dim) in enumerate(zip(names, dims)):
        last = i == len(dims) - 1
        fn = recurrent.LSTM if kind == "lstm" else recurrent.MILSTM
        outs = fn(
            model,
            layer_input,
            "seq_lengths",
            (init[2 * i], init[2 * i + 1]),
            dim_in,
            dim,
            scope=name,
            outputs_with_grads=(0, 3) if last else (0,),
            forget_bias=0.5,
        )
        outputs.extend(outs)
        layer_input, dim_in = outs[0], dim
    L = len(dims)
    ys = {outputs[4 * (L - 1) + j]: str(outputs[4 * (L - 1) + j]) + "_given_grad" for j in (0, 3)}
    for given in ys.values():
        model.net.AddExternalInput(given)
    return model, outputs, model.AddGradientOperators(ys)


def run_and_collect(model, outputs, grad_map, params, seed, dims):
    rng = np.random.default_rng(seed)
    workspace.RunNetOnce(model.param_init_net)
    h.feed(params)
    feed_inputs(rng, dims)
    seed_grads(rng, outputs, dims)
    workspace.RunNetOnce(model.net)
    names = list(params) + ["input"] + initial_names(len(dims))
    got = {str(o): np.array(workspace.FetchBlob(str(o))) for o in outputs}
    grads = {n: np.array(workspace.FetchBlob(str(grad_map[n]))) for n in names}
    return got, grads


@pytest.mark.parametrize("kind,dims", STACKS)
def test_stacked_layers_equal_recurrent_lstm(kind, dims):
    """``rnn_cell`` (one RecurrentNetwork op, MultiRNNCell steps) and a chain of
    2017-04 ``recurrent`` layers: same parameter names, same numbers."""
    model, outputs, grad_map = build_rnn_cell(kind, dims)
    p = h.init_params(model, np.random.default_rng(7))
    got, grads = run_and_collect(model, outputs, grad_map, p, 11, dims)

    workspace.ResetWorkspace()
    chain, chain_outputs, chain_grads_map = build_recurrent_chain(kind, dims)
    assert sorted(map(str, chain.params)) == sorted(map(str, model.params)) or kind == "milstm"
    chain_got, chain_grads = run_and_collect(chain, chain_outputs, chain_grads_map, p, 11, dims)

    for j, (a, b) in enumerate(zip(outputs, chain_outputs)):
        h.assert_close(got[str(a)], chain_got[str(b)], "output %d (%s)" % (j, a), rtol=1e-12)
    for name in grads:
        h.assert_close(grads[name], chain_grads[name], "d/d" + name, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("residual", [[1], [2], [1, 2]])
def test_residual_multi_rnn_cell_matches_numpy(residual):
    H = 2
    cells = [
        rnn_cell.LSTMCell(
            input_size=D if i == 0 else H,
            hidden_size=H,
            forget_bias=0.0,
            memory_optimization=False,
            name="rc/layer_%d" % i,
        )
        for i in range(3)
    ]
    multi = rnn_cell.MultiRNNCell(cells, residual_output_layers=residual, name="rc")

    def fn(model):
        output, _ = multi.apply_over_sequence(
            model,
            "input",
            "seq_lengths",
            initial_names(3),
            outputs_with_grads=[2 * i for i in multi.output_indices],
        )
        return [output]

    model, outputs, grad_map = h.build(fn, [0])
    rng = np.random.default_rng(3)
    p = h.init_params(model, rng)
    inputs = feed_inputs(rng, [H] * 3)
    g = rng.normal(size=(T, N, H))
    h.feed({str(outputs[0]) + "_given_grad": g})
    workspace.RunNetOnce(model.net)

    names = h.layer_names("rc", 3)

    def forward():
        init = [inputs[n] for n in initial_names(3)]
        return h.stacked_forward(p, names, inputs["input"], init, LENGTHS, residual=residual)[1]

    h.assert_close(workspace.FetchBlob(str(outputs[0])), forward(), "residual output")
    values = dict(p, **inputs)
    for name in values:
        numeric = h.numeric_gradients(lambda: np.sum(forward() * g), values, [name])[name]
        h.assert_close(workspace.FetchBlob(str(grad_map[name])), numeric, "d/d" + name)


@pytest.mark.parametrize("kind,dims", [("lstm", [2]), ("lstm", [3, 2]), ("milstm", [2, 2])])
def test_static_unroll_equals_recurrent_network(kind, dims):
    """``static_rnn_unroll_size=T``: plain ops, one shared set of parameters
    (ParameterSharing), the outputs and gradients of the RecurrentNetwork op."""
    model, outputs, grad_map = build_rnn_cell(kind, dims)
    p = h.init_params(model, np.random.default_rng(5))
    got, grads = run_and_collect(model, outputs, grad_map, p, 13, dims)

    workspace.ResetWorkspace()
    unrolled, u_outputs, u_grad_map = build_rnn_cell(kind, dims, static_rnn_unroll_size=T)
    types = {op.type for op in unrolled.net.Proto().op}
    assert "RecurrentNetwork" not in types and "Split" in types
    assert sorted(map(str, unrolled.params)) == sorted(map(str, model.params))
    u_got, u_grads = run_and_collect(unrolled, u_outputs, u_grad_map, p, 13, dims)

    for j, (a, b) in enumerate(zip(outputs, u_outputs)):
        h.assert_close(u_got[str(b)], got[str(a)], "output %d" % j, rtol=1e-12)
    for name in grads:
        h.assert_close(u_grads[name], grads[name], "d/d" + name, rtol=1e-10, atol=1e-12)


def test_memory_optimization_in_a_stack_keeps_gradients_and_recomputes_every_layer():
    dims = [2, 2]
    model, outputs, grad_map = build_rnn_cell("lstm", dims)
    p = h.init_params(model, np.random.default_rng(9))
    _, grads = run_and_collect(model, outputs, grad_map, p, 17, dims)
    workspace.ResetWorkspace()
    opt, o_outputs, o_grad_map = build_rnn_cell("lstm", dims, memory_optimization=True)
    rnn_op = [op for op in opt.net.Proto().op if op.type == "RecurrentNetwork"][0]
    recompute = [a for a in rnn_op.arg if a.name == "recompute_blobs_on_backward"]
    assert recompute and {s.decode() for s in recompute[0].strings} == {
        "rc/layer_0/gates_t",
        "rc/layer_1/gates_t",
    }
    _, o_grads = run_and_collect(opt, o_outputs, o_grad_map, p, 17, dims)
    for name in grads:
        h.assert_close(o_grads[name], grads[name], "d/d" + name, rtol=1e-12, atol=1e-14)


def test_initial_states_none_become_learned_zero_parameters():
    model = CNNModelHelper(name="learned_init")
    outputs = rnn_cell.LSTM(model, "input", "seq_lengths", None, D, [2, 3], scope="rc")
    names = [str(p) for p in model.params if "initial" in str(p)]
    assert names == [
        "rc/initial_hidden_state_0",
        "rc/initial_cell_state_0",
        "rc/initial_hidden_state_1",
        "rc/initial_cell_state_1",
    ]
    grad_map = model.AddGradientOperators([outputs[0]])
    workspace.RunNetOnce(model.param_init_net)
    x = np.random.default_rng(0).uniform(size=(T, N, D)).astype(np.float32)
    workspace.FeedBlob("input", x)
    workspace.FeedBlob("seq_lengths", LENGTHS)
    workspace.RunNetOnce(model.net)
    assert workspace.FetchBlob(str(grad_map["rc/initial_hidden_state_1"])).shape == (3,)
    assert len(outputs) == 4 and str(outputs[0]) == "rc/layer_1/hidden_t_all"
