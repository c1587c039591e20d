"""The RNN executor gives exactly the numbers of the op-by-op loop.

Each test builds one model, then runs it twice from the same inputs in fresh
workspaces: every ``RecurrentNetwork`` / ``RecurrentNetworkGradient`` op with
``enable_rnn_executor=0`` (the plain loop) and with ``=1`` (the plan). Every
tensor blob of the workspace — outputs, states, every gradient — must be
equal bit for bit, on both kernel paths, on the first run (which builds the
plan), on later runs (which run it), and after new arrays are fed (which
rebuilds it).
"""

import numpy as np
import pytest

from caffe2rnn import errors, kernels, workspace
from caffe2rnn.attention import AttentionType
from caffe2rnn.cnn import CNNModelHelper
from caffe2rnn.operators import fc_layout
from caffe2rnn.operators.bound_call import BoundCall
from caffe2rnn.operators.rnn import executor, schedule, steady
from caffe2rnn.operators.rnn.step_net import get_or_create_net
from caffe2rnn.recurrent import LSTM, MILSTM, LSTMWithAttention
from caffe2rnn.runtime.blob import Blob
from caffe2rnn.utils import MakeArgument

PATHS = ["python"] + (["cython"] if kernels.cython_available() else [])
RNN_OPS = ("RecurrentNetwork", "RecurrentNetworkGradient")


#: Threaded runs compared with the sequential ones (``rnn_executor.num_threads``).
THREADS = (2, 3)


def with_executor(netdef, on, threads=0):
    """A copy of ``netdef`` whose recurrent ops have ``enable_rnn_executor=on``
    (and ``rnn_executor.num_threads=threads`` when given)."""
    net = type(netdef)()
    net.CopyFrom(netdef)
    for op in net.op:
        if op.type in RNN_OPS:
            names = ("enable_rnn_executor", "rnn_executor.num_threads")
            kept = [a for a in op.arg if a.name not in names]
            del op.arg[:]
            op.arg.extend(kept + [MakeArgument("enable_rnn_executor", int(on))])
            if threads:
                op.arg.extend([MakeArgument("rnn_executor.num_threads", threads)])
    return net


@pytest.fixture(autouse=True)
def every_handoff_pays(monkeypatch):
    """Threaded runs in these tests spread calls over lanes wherever the data
    flow allows (a handoff costs nothing), so tiny nets cross lanes often."""
    monkeypatch.setattr(schedule, "HANDOFF_US", 0.0)
    monkeypatch.setattr(schedule, "MIN_SAVING", 0.0)


def recurrent_ops(net_name):
    net = workspace.C_Workspace().get_net(net_name)
    return [op for op in net.ops if op.op_type in RNN_OPS]


def tensors():
    """Every tensor blob of the current workspace, copied."""
    out = {}
    for name in workspace.Blobs():
        value = workspace.C_Workspace().get_blob(name).value
        if type(value) is np.ndarray:
            out[name] = value.copy()
    return out


def create_model_net(model, feeds, on, threads=0):
    """A fresh workspace with ``model``'s parameters initialised, ``feeds``
    fed and its net created with ``enable_rnn_executor=on``; the net's name."""
    workspace.ResetWorkspace()
    workspace.RunNetOnce(model.param_init_net)
    for name, value in feeds.items():
        workspace.FeedBlob(name, value)
    net = with_executor(model.net.Proto(), on, threads)
    workspace.CreateNet(net)
    return net


def run_model(model, feeds, on, path, refeed=None, runs=3, threads=0):
    """Run ``model`` (param init, then its net ``runs`` times) in a fresh
    workspace; ``refeed`` is fed before the last run. Returns the tensors after
    each run and the recurrent ops."""
    results = []
    with kernels.use(path):
        net = create_model_net(model, feeds, on, threads)
        for i in range(runs):
            if refeed and i == runs - 1:
                for name, value in refeed.items():
                    workspace.FeedBlob(name, value)
            workspace.RunNet(net.name)
            results.append(tensors())
    return results, recurrent_ops(net.name)


def assert_executor_exact(model, feeds, refeed=None):
    """Executor off vs on vs threaded: every tensor equal after every run, both
    kernel paths. Returns the sequential executor's ops."""
    for path in PATHS:
        off, _ = run_model(model, feeds, False, path, refeed)
        on, ops = run_model(model, feeds, True, path, refeed)
        assert all(op.executor is not None for op in ops)
        modes = [("on", on)]
        for threads in THREADS:
            threaded, threaded_ops = run_model(model, feeds, True, path, refeed, threads=threads)
            assert all(op.executor.num_threads == threads for op in threaded_ops)
            modes.append(("%d threads" % threads, threaded))
        for mode, results in modes:
            for i, (a, b) in enumerate(zip(off, results)):
                assert a.keys() == b.keys()
                for name in a:
                    assert a[name].dtype == b[name].dtype, name
                    np.testing.assert_array_equal(
                        a[name],
                        b[name],
                        err_msg="%s, %s kernels, run %d: %s" % (mode, path, i, name),
                    )
    return ops


def init_random(model, rng):
    """Random values for everything param_init_net makes (fed after it runs)."""
    workspace.ResetWorkspace()
    workspace.RunNetOnce(model.param_init_net)
    feeds = {}
    for op in model.param_init_net.Proto().op:
        for name in op.output:
            shape = workspace.FetchBlob(name).shape
            feeds[name] = rng.uniform(-0.5, 0.5, shape).astype(np.float32)
    return feeds


def lstm_model(T, N, D, H, layers=1, forward_only=False, memory_optimization=False):
    model = CNNModelHelper(name="executor_test")
    x, dims = "x", D
    outputs = None
    for layer in range(layers):
        outputs = LSTM(
            model,
            x,
            "seq_lengths",
            ("h0_%d" % layer, "c0_%d" % layer),
            dims,
            H,
            scope="layer%d" % layer,
            forward_only=forward_only,
            memory_optimization=memory_optimization,
        )
        x, dims = outputs[0], H
    if not forward_only:
        model.net.AddExternalInput("dy")
        model.AddGradientOperators({outputs[0]: "dy"})
    return model, outputs


def lstm_feeds(model, rng, T, N, D, H, layers=1, lengths=None):
    feeds = init_random(model, rng)
    feeds["x"] = rng.standard_normal((T, N, D)).astype(np.float32)
    for layer in range(layers):
        feeds["h0_%d" % layer] = rng.standard_normal((1, N, H)).astype(np.float32)
        feeds["c0_%d" % layer] = rng.standard_normal((1, N, H)).astype(np.float32)
    feeds["seq_lengths"] = np.array(lengths or [T] * N, np.int32)
    feeds["dy"] = rng.standard_normal((T, N, H)).astype(np.float32)
    return feeds


@pytest.mark.parametrize("lengths", [None, [5, 2, 1]])
def test_lstm_exact_and_plan_reused(lengths):
    rng = np.random.default_rng(0)
    model, _ = lstm_model(5, 3, 4, 3)
    ops = assert_executor_exact(model, lstm_feeds(model, rng, 5, 3, 4, 3, lengths=lengths))
    # Three runs on the same arrays: one plan per op, built on the first run.
    assert [op.executor.builds for op in ops] == [1, 1]
    assert all(op.executor.plans for op in ops)


def test_new_arrays_fed_rebuild_the_plan_and_stay_exact():
    rng = np.random.default_rng(1)
    model, _ = lstm_model(4, 2, 3, 3)
    feeds = lstm_feeds(model, rng, 4, 2, 3, 3)
    refeed = {
        "x": rng.standard_normal((4, 2, 3)).astype(np.float32),
        "seq_lengths": np.array([2, 4], np.int32),
        "layer0/gates_t_w": rng.uniform(-1, 1, (12, 3)).astype(np.float32),
    }
    ops = assert_executor_exact(model, feeds, refeed)
    assert [op.executor.builds for op in ops] == [2, 2]


def test_longer_sequence_rebuilds():
    rng = np.random.default_rng(2)
    model, _ = lstm_model(3, 2, 3, 2)
    feeds = lstm_feeds(model, rng, 3, 2, 3, 2)
    refeed = {
        "x": rng.standard_normal((6, 2, 3)).astype(np.float32),
        "dy": rng.standard_normal((6, 2, 2)).astype(np.float32),
    }
    assert_executor_exact(model, feeds, refeed)


def test_stacked_lstms():
    rng = np.random.default_rng(3)
    model, _ = lstm_model(4, 2, 3, 3, layers=3)
    assert_executor_exact(model, lstm_feeds(model, rng, 4, 2, 3, 3, layers=3, lengths=[4, 3]))


def test_forward_only_cycles_workspaces():
    rng = np.random.default_rng(4)
    model, _ = lstm_model(7, 2, 3, 3, forward_only=True)
    ops = assert_executor_exact(model, lstm_feeds(model, rng, 7, 2, 3, 3, lengths=[7, 5]))
    assert len(ops) == 1 and ops[0].executor.builds == 1


def test_recompute_blobs_on_backward():
    rng = np.random.default_rng(5)
    model, _ = lstm_model(4, 2, 3, 3, memory_optimization=True)
    ops = assert_executor_exact(model, lstm_feeds(model, rng, 4, 2, 3, 3, lengths=[4, 2]))
    assert ops[0].args.repeated("recompute_blobs_on_backward", kind=str)


def last_plan(op):
    """The plan ``op`` ran with last in :func:`assert_executor_exact` (its last
    kernel path), whatever path ``CAFFE2RNN_KERNELS`` selects outside it."""
    return op.executor.plans[PATHS[-1]]


def fallback_ops(op):
    """Op types the plan of ``op`` runs through their own ``run`` (no compiled form)."""
    plan = last_plan(op)
    types = set()
    for call, j in zip(plan.calls, plan.where_op):
        if isinstance(call, executor._Fallback):
            types.add(plan.netdef.op[j].type)
    return types


def milstm_model(name):
    """recurrent.MILSTM (D = 3, H = 4) with its gradient for a given ``dy``."""
    model = CNNModelHelper(name=name)
    outputs = MILSTM(model, "x", "seq_lengths", ("h0_0", "c0_0"), 3, 4, scope="milstm")
    model.net.AddExternalInput("dy")
    model.AddGradientOperators({outputs[0]: "dy"})
    return model


def test_milstm_runs_ops_without_compiled_form_inside_the_plan():
    rng = np.random.default_rng(6)
    model = milstm_model("executor_milstm")
    ops = assert_executor_exact(model, lstm_feeds(model, rng, 4, 2, 3, 4, lengths=[4, 3]))
    # Mul / Add have no bound form: they run as themselves inside the plan.
    assert "Mul" in fallback_ops(ops[0])
    assert all(op.executor.builds == 1 for op in ops)


def attention_model(name, attention_type, rng, T=3, S=4, N=2, D=2, H=3, E=2):
    """recurrent.LSTMWithAttention with its gradient for given ``g_h`` and
    ``g_ctx``, and random feeds (float32; ``seq_lengths`` [T, T - 1])."""
    model = CNNModelHelper(name=name)
    outputs = LSTMWithAttention(
        model,
        "decoder_inputs",
        "seq_lengths",
        "h0",
        "c0",
        "ctx0",
        encoder_output_dim=E,
        encoder_outputs="encoder_outputs",
        decoder_input_dim=D,
        decoder_state_dim=H,
        scope="att",
        attention_type=attention_type,
    )
    given = {outputs[0]: "g_h", outputs[4]: "g_ctx"}
    for blob in given.values():
        model.net.AddExternalInput(blob)
    model.AddGradientOperators(given)
    feeds = init_random(model, rng)
    feeds.update(
        decoder_inputs=rng.uniform(-1, 1, (T, N, D)).astype(np.float32),
        encoder_outputs=rng.uniform(-1, 1, (S, N, E)).astype(np.float32),
        h0=rng.uniform(-1, 1, (1, N, H)).astype(np.float32),
        c0=rng.uniform(-1, 1, (1, N, H)).astype(np.float32),
        ctx0=rng.uniform(-1, 1, (1, N, E)).astype(np.float32),
        seq_lengths=np.array([T, T - 1], np.int32),
        g_h=rng.normal(size=(T, N, H)).astype(np.float32),
        g_ctx=rng.normal(size=(T, N, E)).astype(np.float32),
    )
    return model, feeds


@pytest.mark.parametrize("attention_type", [AttentionType.Regular, AttentionType.Recurrent])
def test_attention_decoder(attention_type):
    rng = np.random.default_rng(7)
    assert_executor_exact(*attention_model("executor_attention", attention_type, rng))


def test_errors_name_the_timestep_and_op_like_the_plain_loop():
    """A bad input found while (re)building a plan raises what the loop raises."""
    rng = np.random.default_rng(8)
    model, _ = lstm_model(3, 2, 3, 2)
    feeds = lstm_feeds(model, rng, 3, 2, 3, 2)
    messages = []
    for on in (False, True):
        net = create_model_net(model, feeds, on)
        workspace.RunNet(net.name)
        workspace.FeedBlob("seq_lengths", np.array([3, 3], np.int64))
        with pytest.raises(Exception) as info:
            workspace.RunNet(net.name)
        messages.append((type(info.value), str(info.value)))
    assert messages[0] == messages[1]
    assert "timestep 0" in messages[1][1] and "LSTMUnit" in messages[1][1]
    assert "seq_lengths" in messages[1][1]


def test_fallback_writing_new_arrays_turns_the_executor_off_for_that_op():
    rng = np.random.default_rng(9)
    model, _ = lstm_model(3, 2, 3, 2, forward_only=True)
    feeds = lstm_feeds(model, rng, 3, 2, 3, 2)
    results = {}
    for on in (False, True):
        net = create_model_net(model, feeds, on)
        (op,) = recurrent_ops(net.name)
        if on:
            # Make the step net's FC of every step a fallback that allocates
            # its output anew each run (what an op using set_output does).
            # (A loop this short runs op by op first, and builds on its
            # second run: executor.BUILD_ON_FIRST_RUN_FROM.)
            workspace.RunNet(net.name)
            workspace.RunNet(net.name)
            for _, ws in op.executor.plan.steps:
                step_net = get_or_create_net(ws, op.executor.netdef, op.executor.era)
                fc = next(o for o in step_net.ops if o.op_type == "FC")
                fc.bind = lambda: None
                original = fc.run

                def fresh_output(fc=fc, original=original):
                    fc.outputs[0].value = fc.outputs[0].value.copy()
                    original()

                fc.run = fresh_output
            op.executor.plans.clear()
        runs = []
        for _ in range(4):
            workspace.RunNet(net.name)
            runs.append(tensors())
        results[on] = runs
        if on:
            assert op.executor.disabled_reason and "FC" in op.executor.disabled_reason
    for a, b in zip(results[False], results[True]):
        for name in a:
            np.testing.assert_array_equal(a[name], b[name], err_msg=name)


def test_enabled_by_default_and_switchable():
    model, _ = lstm_model(2, 1, 2, 2)
    assert not any(a.name == "enable_rnn_executor" for op in model.net.Proto().op for a in op.arg)
    workspace.ResetWorkspace()
    workspace.RunNetOnce(model.param_init_net)
    for name, value in lstm_feeds(model, np.random.default_rng(0), 2, 1, 2, 2).items():
        workspace.FeedBlob(name, value)
    workspace.CreateNet(model.net)
    assert all(op.executor is not None for op in recurrent_ops(model.net.Proto().name))
    off = with_executor(model.net.Proto(), False)
    off.name = "executor_off"
    workspace.CreateNet(off)
    assert all(op.executor is None for op in recurrent_ops("executor_off"))


@pytest.mark.parametrize("layout", ["x.wT", "(w.xT)T", "x.WT"])
def test_every_fc_layout_inside_the_loop(monkeypatch, layout):
    """Whichever way FC forms X·Wᵀ in the loop (a rule of the shape), both
    modes make the same calls; the cached Wᵀ follows W updated in place."""
    rule = fc_layout.layout
    chosen = []

    def forced(m, k, n):
        chosen.append(layout if fc_layout.in_step_loop() else rule(m, k, n))
        return chosen[-1]

    monkeypatch.setattr(fc_layout, "layout", forced)
    rng = np.random.default_rng(10)
    model, _ = lstm_model(4, 3, 3, 5)
    feeds = lstm_feeds(model, rng, 4, 3, 3, 5, lengths=[4, 1, 3])
    results = {}
    for on in (False, True):
        net = create_model_net(model, feeds, on)
        runs = []
        for _ in range(3):
            workspace.RunNet(net.name)
            runs.append(tensors())
            # An optimizer's in-place update: the same array, new values.
            w = workspace.C_Workspace().get_blob("layer0/gates_t_w").value
            w *= 0.5
        results[on] = runs
        assert [op.executor is not None for op in recurrent_ops(net.name)] == [on, on]
    assert layout in chosen
    for i, (a, b) in enumerate(zip(results[False], results[True])):
        for name in a:
            np.testing.assert_array_equal(a[name], b[name], err_msg="run %d: %s" % (i, name))
    assert not np.array_equal(
        results[True][0]["layer0/hidden_t_all"], results[True][1]["layer0/hidden_t_all"]
    )


@pytest.mark.kernels
@pytest.mark.parametrize("path", PATHS)
def test_the_loop_kernels_on_both_paths(path):
    """run_step_plan calls in order from ``start`` and reports the failing index;
    first_stale_guard finds the first blob whose array changed; assign_values
    sets each blob's value."""
    impl = kernels.implementation(path)
    seen = []
    calls = [lambda i=i: seen.append(i) for i in range(5)]
    impl.run_step_plan(calls, 2, [])
    assert seen == [2, 3, 4]

    def boom():
        raise KeyError("boom")

    failed = []
    with pytest.raises(KeyError, match="boom"):
        impl.run_step_plan(calls[:3] + [boom] + calls[3:], 0, failed)
    assert failed == [3] and seen == [2, 3, 4, 0, 1, 2]

    blobs = [Blob("a%d" % i, np.zeros(2)) for i in range(3)]
    arrays = [b.value for b in blobs]
    assert impl.first_stale_guard(blobs, arrays) == -1
    blobs[1].value = arrays[1].copy()  # equal values, another array
    assert impl.first_stale_guard(blobs, arrays) == 1
    impl.assign_values(blobs, arrays)
    assert all(b.value is a for b, a in zip(blobs, arrays))
    assert impl.first_stale_guard([], []) == -1


def test_the_loop_copies_are_fresh_per_loop_and_do_not_keep_parameters_alive():
    w = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.arange(3, dtype=np.float32)
    for _ in range(2):
        with fc_layout.step_loop():
            wt, rows = fc_layout.transposed(w, w), fc_layout.tiled(b, 4)
            np.testing.assert_array_equal(wt.value, w.T)
            np.testing.assert_array_equal(rows.value, np.tile(b, (4, 1)))
            assert fc_layout.transposed(w, w) is wt  # one copy per loop
            assert fc_layout.tiled(b, 4) is rows
        w += 1  # parameters change between loops: the next loop copies again
        b += 1
    keys = [("W^T", id(w)), ("rows", id(b), 4)]
    assert all(key in fc_layout._copies for key in keys)
    del w, b
    assert not any(key in fc_layout._copies for key in keys)


def test_stacked_rnn_cell_lstms_in_one_step_net():
    """``rnn_cell.LSTM`` with two layers: one step net holding both cells, so
    layer 2 reads layer 1's output of the same step through the plan."""
    from caffe2rnn import rnn_cell

    rng = np.random.default_rng(11)
    T, N, D, H = 4, 2, 3, [4, 3]
    model = CNNModelHelper(name="executor_rnn_cell")
    outputs = rnn_cell.LSTM(
        model, "x", "seq_lengths", ("h0_0", "c0_0", "h0_1", "c0_1"), D, H, scope="stack"
    )
    model.net.AddExternalInput("dy")
    model.AddGradientOperators({outputs[0]: "dy"})
    ops = [op for op in model.net.Proto().op if op.type in RNN_OPS]
    assert len(ops) == 2  # one forward op and its gradient for both layers
    feeds = init_random(model, rng)
    feeds.update(
        x=rng.standard_normal((T, N, D)).astype(np.float32),
        seq_lengths=np.array([4, 2], np.int32),
        dy=rng.standard_normal((T, N, H[-1])).astype(np.float32),
    )
    for layer, dim in enumerate(H):
        for state in ("h0_%d", "c0_%d"):
            feeds[state % layer] = rng.standard_normal((1, N, dim)).astype(np.float32)
    ops = assert_executor_exact(model, feeds)
    assert sum(t == "LSTMUnit" for t in step_op_types(ops[0])) == 2


def step_op_types(op):
    """The types of the step net's ops the plan stands for (fused calls: each part's)."""
    plan = last_plan(op)
    ops = {k for call in plan.calls for k in call.part_ops or ()}
    ops |= {j for j in plan.where_op if j >= 0}
    return [plan.netdef.op[j].type for j in ops]


def test_threaded_plans_really_use_several_lanes():
    """With ``rnn_executor.num_threads=2`` the gradient's plan is dealt to two
    lanes that hand off to each other, and runs on the executor's own thread
    too; its results are the sequential ones (assert_executor_exact)."""
    rng = np.random.default_rng(11)
    model, _ = lstm_model(4, 3, 3, 5, layers=2)
    feeds = lstm_feeds(model, rng, 4, 3, 3, 5, layers=2)
    _, ops = run_model(model, feeds, True, kernels.active(), threads=2)
    gradient = [op for op in ops if op.op_type == "RecurrentNetworkGradient"]
    for op in gradient:
        sched = op.executor.plan.schedule
        assert not sched.sequential and all(sched.lanes) and sched.handoffs > 0
        assert op.executor._pool is not None


def test_a_plan_with_a_fallback_runs_in_order_even_when_threaded():
    rng = np.random.default_rng(12)
    model = milstm_model("executor_milstm_threads")
    _, ops = run_model(model, lstm_feeds(model, rng, 4, 2, 3, 4), True, "python", threads=2)
    plans = [op.executor.plans["python"] for op in ops]
    assert all(plan.fallbacks and plan.schedule is None for plan in plans)


@pytest.mark.parametrize(
    "steps", [executor.BUILD_ON_FIRST_RUN_FROM - 1, executor.BUILD_ON_FIRST_RUN_FROM]
)
def test_a_short_loop_builds_its_plan_on_its_second_run(steps):
    """A loop too short to derive steps from others runs op by op on the
    executor's first run (building would cost twice the loop, for an op that
    may run once: a gradient check's probe) and builds on the second; a
    longer loop builds on the first. The numbers are the loop's either way."""
    rng = np.random.default_rng(18)
    model, _ = lstm_model(steps, 2, 3, 3)
    feeds = lstm_feeds(model, rng, steps, 2, 3, 3)
    expected, _ = run_model(model, feeds, False, kernels.active(), runs=2)
    short = steps < executor.BUILD_ON_FIRST_RUN_FROM
    net = create_model_net(model, feeds, True)
    ops = recurrent_ops(net.name)
    for run in range(2):
        workspace.RunNet(net.name)
        built = [op.executor.builds for op in ops]
        assert built == [0 if short and run == 0 else 1] * len(ops)
        got = tensors()
        for name in expected[run]:
            np.testing.assert_array_equal(got[name], expected[run][name], err_msg=name)


def test_a_built_plan_lets_the_step_workspaces_forget_their_step_nets():
    """The plan holds arrays, not operators: after the first builds (two
    plans are kept: RunNet's journal alternates a swapped input between two
    arrays) the step nets' instances are dropped (memory); a further rebuild
    makes and keeps them."""
    rng = np.random.default_rng(13)
    model, _ = lstm_model(4, 2, 3, 3)
    feeds = lstm_feeds(model, rng, 4, 2, 3, 3)
    # (the first run of a loop this short is op by op; the second builds)
    _, ops = run_model(model, feeds, True, kernels.active(), runs=2)
    for op in ops:
        assert op.executor.builds == 1
        assert all(ws.get_net(op.executor.netdef.name) is None for _, ws in op.executor.plan.steps)
    for builds, kept in ((2, False), (3, True)):
        # both plans read it: rebuilt
        workspace.FeedBlob("seq_lengths", np.array([4, 3], np.int32))
        workspace.RunNet(model.net.Proto().name)
        for op in ops:
            assert op.executor.builds == builds
            nets = [ws.get_net(op.executor.netdef.name) for _, ws in op.executor.plan.steps]
            assert all(nets) if kept else not any(nets)


def step_blobs(model, feeds, on, path):
    """Every step workspace's blobs after three runs (retrieve_step_blobs), and
    the recurrent ops."""
    from caffe2rnn.recurrent import retrieve_step_blobs

    _, ops = run_model(model, feeds, on, path)
    names = retrieve_step_blobs(with_executor(model.net.Proto(), on), prefix="steps")
    return {name: workspace.FetchBlob(name) for name in names}, ops


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("kind", ["lstm", "forward-only", "milstm"])
def test_later_runs_set_link_views_and_timesteps_only_where_needed(path, kind):
    """The build leaves each link view and timestep in place: later runs skip
    what one call alone sets (a step workspace per timestep) and set what
    several set (a blob shared by every step, forward-only workspaces cycled
    over) from its last setter only; a plan with an op that reads blobs at
    run time (MILSTM's fallbacks) keeps every call. The step workspaces hold
    exactly what the op-by-op loop leaves there."""
    rng = np.random.default_rng(14)
    if kind == "milstm":
        model, (D, H) = milstm_model("executor_milstm_steady"), (3, 4)
    else:
        D, H = 3, 3
        model = lstm_model(7, 2, D, H, forward_only=kind == "forward-only")[0]
        for op in model.net.Proto().op:  # as many cycled workspaces off as on
            if op.type == "RecurrentNetwork" and kind == "forward-only":
                op.arg.extend([MakeArgument("num_workspaces", 3)])
    feeds = lstm_feeds(model, rng, 7, 2, D, H, lengths=[7, 4])
    off, _ = step_blobs(model, feeds, False, path)
    on, ops = step_blobs(model, feeds, True, path)
    assert off.keys() == on.keys() and len(on) > 0
    for name in off:
        np.testing.assert_array_equal(off[name], on[name], err_msg=name)
    for op in ops:
        plan = op.executor.plans[path]
        if kind == "milstm":
            assert list(plan.steady) == list(range(len(plan)))
            continue
        skipped = set(range(len(plan))) - set(plan.steady)
        assert skipped and all(plan.calls[i].sets for i in skipped)
        assert "(first run only" in plan.describe()
        if kind == "lstm" and op.op_type == "RecurrentNetwork":
            assert not any(call.sets for call in plan.steady_bound)


@pytest.mark.skipif("cython" not in PATHS, reason="the compiled kernels are not built")
@pytest.mark.parametrize("layout", ["x.wT", "(w.xT)T", "x.WT"])
def test_the_compiled_path_runs_every_numpy_call_of_an_lstm_through_its_loop(monkeypatch, layout):
    """On the compiled path a plan's NumPy calls become LoopCalls and the fused
    LSTM steps are bound once (compile_calls); for an LSTM every call of both
    plans is one of them, the bound accumulate kernel, a link assignment or
    the timestep, in every FC layout, and the numbers stay the loop's
    (test_every_fc_layout_inside_the_loop compares them)."""
    from caffe2rnn._ext.accumulate_input_gradient import BoundAccumulate
    from caffe2rnn._ext.lstm_step import BoundLSTMStep
    from caffe2rnn._ext.rnn_executor import LoopCall

    monkeypatch.setattr(fc_layout, "layout", lambda m, k, n: layout)
    rng = np.random.default_rng(15)
    model, _ = lstm_model(5, 3, 4, 6)
    _, ops = run_model(model, lstm_feeds(model, rng, 5, 3, 4, 6), True, "cython")
    for op in ops:
        plan = op.executor.plans["cython"]
        assert any(isinstance(call, BoundLSTMStep) for call in plan.steady_calls)
        compiled = (LoopCall, BoundLSTMStep, BoundAccumulate)
        left = [c for c in plan.steady_calls if not isinstance(c, compiled)]
        allowed = ("assign", "timestep")
        assert all(c.name in allowed for c in left), [c.name for c in left]
        assert "matmul(" in plan.describe() and "dot(" not in plan.describe()
    _, ops = run_model(model, lstm_feeds(model, rng, 5, 3, 4, 6), True, "python")
    for op in ops:
        assert not any(
            isinstance(c, (LoopCall, BoundLSTMStep))
            for c in op.executor.plans["python"].steady_calls
        )


@pytest.mark.parametrize("reader", [None, 0, 3, 6])
def test_later_runs_keep_timestep_writes_only_when_a_call_reads_a_timestep(reader):
    """steady_calls drops the timestep writes the build left in place, unless a
    bound call reads the memory of one of them (then every call stays): for
    each array a call reads, a binary search over the sorted timestep
    addresses (T of them) finds whether one lies inside it."""
    timesteps = [np.zeros(1, np.int32) for _ in range(7)]
    other = np.zeros(4, np.int32)
    plan = executor.StepPlan(key=None, workspaces=[])
    plan.calls = [BoundCall.timestep(ts, t) for t, ts in enumerate(timesteps)]
    read = other if reader is None else timesteps[reader]
    plan.calls.append(BoundCall.elementwise(np.add, read, read, np.zeros_like(read)))
    plan.calls.append(BoundCall.elementwise(np.add, other[1:], other[1:], np.zeros(3, np.int32)))
    indices, calls = steady.steady_calls(plan)
    if reader is None:
        assert list(indices) == [7, 8] and calls == plan.calls[7:]
    else:
        assert list(indices) == list(range(9)) and calls == plan.calls


@pytest.mark.parametrize("path", PATHS)
def test_an_output_made_read_only_after_the_build_fails_that_run_only(path):
    """A state view the plan writes, made read-only between runs: the run
    fails like the op-by-op loop (naming the timestep and the op) whether the
    plan's calls are compiled then or already were, and once the flag is
    restored the plan runs again."""
    rng = np.random.default_rng(16)
    model, _ = lstm_model(4, 2, 3, 3)
    feeds = lstm_feeds(model, rng, 4, 2, 3, 3)
    expected, _ = run_model(model, feeds, True, path, runs=2)
    for compiled_before in (False, True):
        with kernels.use(path):
            net = create_model_net(model, feeds, True)
            workspace.RunNet(net.name)  # op by op (a short loop's first run)
            workspace.RunNet(net.name)  # the build
            if compiled_before:
                workspace.RunNet(net.name)
            (forward,) = [op for op in recurrent_ops(net.name) if op.op_type == "RecurrentNetwork"]
            plan = forward.executor.plans[path]
            lstm = [c for c in plan.calls if c.name == "lstm_step_forward"]  # fused
            h_out = lstm[1].args[6][7]  # the LSTM unit's h_out
            h_out.flags.writeable = False
            with pytest.raises(Exception, match=r"timestep 1.*LSTMUnit"):
                workspace.RunNet(net.name)
            h_out.flags.writeable = True
            workspace.RunNet(net.name)
            got = tensors()
        for name in expected[-1]:
            np.testing.assert_array_equal(got[name], expected[-1][name], err_msg=name)


def test_preparing_a_built_plan_takes_no_byte_range_search_per_array(monkeypatch):
    """The run after the build works out which calls later runs make
    (steady_calls): whether a call reads a timestep is a set lookup per array for
    timesteps that own their memory, not a byte-range search (at T = 10,000
    that search took seconds; benchmarks/bench_executor_build.py times it)."""
    searched = []
    byte_range = schedule.byte_range
    monkeypatch.setattr(schedule, "byte_range", lambda a: searched.append(a) or byte_range(a))
    rng = np.random.default_rng(17)
    model, _ = lstm_model(6, 2, 3, 3)
    _, ops = run_model(model, lstm_feeds(model, rng, 6, 2, 3, 3), True, kernels.active(), runs=2)
    assert all(op.executor.plan.steady is not None for op in ops)
    assert searched == []


def fused_names(op, path):
    return [call.name for call in op.executor.plans[path].calls if call.part_ops]


@pytest.mark.parametrize("path", PATHS)
def test_an_lstm_step_runs_as_one_fused_call_each_way(path):
    """Each step of an LSTM's plan is one lstm_step_forward call forward and
    one lstm_step_backward call backward, whose parts are the calls of the
    step's FC, Sum, LSTMUnit (LSTMUnitGradient, FCGradient, Sums); what the
    fused call declares to read and write covers every part's."""
    rng = np.random.default_rng(18)
    model, _ = lstm_model(4, 2, 3, 3)
    _, ops = run_model(model, lstm_feeds(model, rng, 4, 2, 3, 3), True, path, runs=2)
    forward, backward = ops
    assert fused_names(forward, path) == ["lstm_step_forward"] * 4
    assert fused_names(backward, path) == ["lstm_step_backward"] * 4
    for op in ops:
        plan = op.executor.plans[path]
        for call in (c for c in plan.calls if c.part_ops):
            spans = [schedule.byte_range(a) for a in call.writes]
            for part, j in call.parts:
                for low, high in map(schedule.byte_range, part.writes):
                    assert any(lo <= low and high <= hi for lo, hi in spans)
                assert plan.netdef.op[j].type in (
                    "FC",
                    "Sum",
                    "LSTMUnit",
                    "LSTMUnitGradient",
                    "FCGradient",
                )


@pytest.mark.parametrize("path", PATHS)
def test_forward_only_nets_run_the_fused_forward(path):
    rng = np.random.default_rng(19)
    model, _ = lstm_model(5, 2, 3, 3, forward_only=True)
    _, (op,) = run_model(model, lstm_feeds(model, rng, 5, 2, 3, 3, lengths=[5, 2]), True, path)
    assert fused_names(op, path) == ["lstm_step_forward"] * 5


def test_on_several_threads_the_backward_step_stays_apart_to_overlap():
    """One fused backward call would leave the lanes nothing to overlap (the
    step's dW product beside the recurrence): threaded plans fuse forward only."""
    rng = np.random.default_rng(20)
    model, _ = lstm_model(4, 3, 3, 5)
    _, ops = run_model(model, lstm_feeds(model, rng, 4, 3, 3, 5), True, kernels.active(), threads=2)
    forward, backward = ops
    assert fused_names(forward, kernels.active()) == ["lstm_step_forward"] * 4
    assert fused_names(backward, kernels.active()) == []


def test_arrays_the_fused_kernel_refuses_keep_their_calls(monkeypatch):
    """A run the twin fused kernel would refuse is not fused: its calls stay,
    and the numbers are the loop's (assert_executor_exact; on the compiled
    path the check runs when the calls are compiled:
    tests/kernels/test_compiled_calls.py)."""
    from caffe2rnn.kernels import lstm_step
    from caffe2rnn.operators.rnn import fusion

    def refuse(*args):
        raise errors.MemoryLayoutError("refused")

    monkeypatch.setattr(lstm_step, "check_forward", refuse)
    monkeypatch.setattr(fusion.lstm_step, "check_forward", refuse)
    rng = np.random.default_rng(21)
    model, _ = lstm_model(3, 2, 3, 3)
    ops = assert_executor_exact(model, lstm_feeds(model, rng, 3, 2, 3, 3))
    _, ops = run_model(model, lstm_feeds(model, rng, 3, 2, 3, 3), True, "python")
    assert fused_names(ops[0], "python") == []
    assert fused_names(ops[1], "python") == ["lstm_step_backward"] * 3
