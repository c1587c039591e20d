"""Later steps of a plan derived from the first ones (operators/rnn/derive.py).

The executor builds steps 1-3 of a loop op by op, learns from steps 1 and 2
how a step's calls follow from its timestep and step workspace, checks that
on step 3, and writes out (and runs) the later steps from that template. The
derived calls must be the very calls binding op by op would have made, the
step workspaces must hold what the loop leaves in them, and every number —
of the first run too — must be the loop's.
"""

import numpy as np
import pytest
from test_executor import (
    PATHS,
    assert_executor_exact,
    create_model_net,
    lstm_feeds,
    lstm_model,
    milstm_model,
    recurrent_ops,
)

from caffe2rnn import kernels, workspace
from caffe2rnn.operators.rnn import derive, executor

T, N, D, H = 9, 3, 4, 5


@pytest.fixture
def derived(monkeypatch):
    """Counts the steps built from a template, per recurrent op kind."""
    counts = {}
    run_derived = executor.StepNetExecutor._run_derived

    def counting(self, plan, *args):
        done = run_derived(self, plan, *args)
        key = "forward" if self.timestep is not None else "backward"
        counts[key] = counts.get(key, 0) + done
        return done

    monkeypatch.setattr(executor.StepNetExecutor, "_run_derived", counting)
    return counts


@pytest.mark.parametrize(
    "kind", ["lstm", "lengths", "forward-only", "two layers", "memory optimization"]
)
def test_later_steps_are_derived_and_every_number_is_the_loops(derived, kind):
    rng = np.random.default_rng(1)
    layers = 2 if kind == "two layers" else 1
    model, _ = lstm_model(
        T,
        N,
        D,
        H,
        layers=layers,
        forward_only=kind == "forward-only",
        memory_optimization=kind == "memory optimization",
    )
    lengths = [T, 4, 1] if kind == "lengths" else None
    assert_executor_exact(model, lstm_feeds(model, rng, T, N, D, H, layers, lengths))
    steps = T - 1 - executor.LEARN_STEPS[-1]  # after the steps built op by op
    assert derived.get("forward", 0) >= steps
    if kind != "forward-only":
        assert derived.get("backward", 0) >= steps


def test_a_plan_with_ops_without_compiled_form_is_built_op_by_op(derived):
    rng = np.random.default_rng(2)
    model = milstm_model("derive_milstm")
    assert_executor_exact(model, lstm_feeds(model, rng, 7, 2, 3, 4))
    assert derived == {}


def plan_calls(model, feeds, path, learn=True, monkeypatch=None):
    if not learn:
        monkeypatch.setattr(derive.Template, "learn", classmethod(lambda cls, *a: None))
    with kernels.use(path):
        net = create_model_net(model, feeds, True)
        workspace.RunNet(net.name)
        workspace.RunNet(net.name)
        plans = [op.executor.plan for op in recurrent_ops(net.name)]
    if not learn:
        monkeypatch.undo()
    return plans


@pytest.mark.parametrize("path", PATHS)
def test_derived_calls_are_the_calls_binding_makes(monkeypatch, path):
    """Same functions, arguments over the same memory, same ops, same steady
    calls, as when every step is bound op by op."""
    rng = np.random.default_rng(3)
    model, _ = lstm_model(T, N, D, H)
    feeds = lstm_feeds(model, rng, T, N, D, H)
    derived_plans = plan_calls(model, feeds, path)
    bound_plans = plan_calls(model, feeds, path, learn=False, monkeypatch=monkeypatch)
    for a, b in zip(derived_plans, bound_plans):
        assert len(a.calls) == len(b.calls)
        assert list(a.where_step) == list(b.where_step)
        assert list(a.where_op) == list(b.where_op)
        assert list(a.steady) == list(b.steady)
        assert len(a.guard_blobs) == len(b.guard_blobs)
        first = executor.LEARN_STEPS[-1] + 1
        for x, y, s in zip(a.calls, b.calls, a.where_step):
            if s >= first and x.name != "timestep":
                # different model instances: compare shapes and kinds, not addresses
                assert (x.func, x.name, x.part_ops) == (y.func, y.name, y.part_ops)
                assert [getattr(v, "shape", v) for v in _flat(x.args)] == [
                    getattr(v, "shape", v) for v in _flat(y.args)
                ]
        assert a.describe(steps=T) == b.describe(steps=T)


def _flat(x):
    if isinstance(x, (tuple, list)):
        return [v for item in x for v in _flat(item)]
    return [type(x).__name__ if type(x).__name__ == "Blob" else x]


def test_a_template_derives_the_step_it_was_checked_against():
    """Within one build, the derived step 3 is step 3 bound op by op: the
    same arrays (memory, shape, strides), the same blobs, the same values."""
    rng = np.random.default_rng(4)
    model, _ = lstm_model(T, N, D, H)
    feeds = lstm_feeds(model, rng, T, N, D, H)
    templates = []
    learn = derive.Template.learn.__func__

    def keep(cls, first, second, outputs):
        template = learn(cls, first, second, outputs)
        templates.append(template)
        return template

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(derive.Template, "learn", classmethod(keep))
        net = create_model_net(model, feeds, True)
        workspace.RunNet(net.name)
    assert len(templates) == 2 and all(templates)
    for template, op in zip(templates, recurrent_ops(net.name)):
        plan = op.executor.plan
        s = executor.LEARN_STEPS[-1]
        t, ws = plan.steps[s]
        bound = [(c, j) for c, i, j in zip(plan.calls, plan.where_step, plan.where_op) if i == s]
        bound = [(c, j) for c, j in bound if c.name != "timestep"]
        assert template.matches(t, ws, bound)
        t_other, ws_other = plan.steps[s - 1]
        assert not template.matches(t_other, ws_other, bound)  # another step's memory


@pytest.mark.parametrize("path", PATHS)
def test_step_workspaces_hold_what_the_loop_leaves(path):
    """After the first run, each step workspace of a derived step holds the
    blobs the op-by-op loop leaves there, with the same values."""
    rng = np.random.default_rng(5)
    model, _ = lstm_model(T, N, D, H)
    feeds = lstm_feeds(model, rng, T, N, D, H)
    contents = []
    for on in (False, True):
        with kernels.use(path):
            net = create_model_net(model, feeds, on)
            workspace.RunNet(net.name)
            op = recurrent_ops(net.name)[0]  # the forward op: its step workspaces
            scratch = op.outputs[-1].value
            steps = []
            for i in range(T):
                ws = scratch.step(i)
                steps.append(
                    {
                        name: (lambda v: v.copy() if type(v) is np.ndarray else v)(
                            ws.get_blob(name).value
                        )
                        for name in ws.local_blob_names()
                    }
                )
            contents.append(steps)
    for off, on in zip(*contents):
        assert off.keys() == on.keys()
        for name in off:
            if type(off[name]) is np.ndarray:
                np.testing.assert_array_equal(off[name], on[name], err_msg=name)
            else:
                assert off[name] is None and on[name] is None, name


def test_a_step_that_does_not_fit_the_template_is_built_op_by_op(monkeypatch, derived):
    """A step workspace the template cannot fill (CannotDerive) ends the
    derivation: that step and the rest are bound op by op, still exact."""
    prepare = derive.Template.prepare
    calls = {"n": 0}

    def sometimes(self, ws):
        calls["n"] += 1
        if calls["n"] == 3:
            raise derive.CannotDerive("test")
        return prepare(self, ws)

    monkeypatch.setattr(derive.Template, "prepare", sometimes)
    rng = np.random.default_rng(6)
    model, _ = lstm_model(T, N, D, H)
    assert_executor_exact(model, lstm_feeds(model, rng, T, N, D, H))
    assert derived.get("forward", 0) > 0


def test_an_error_in_a_derived_step_reads_as_the_loops():
    """A floating-point error at a late timestep (under np.errstate raise)
    names the same timestep and op as the op-by-op loop."""
    rng = np.random.default_rng(7)
    model, _ = lstm_model(T, N, D, H)
    feeds = lstm_feeds(model, rng, T, N, D, H)
    # The recurrent bias near float32's largest number: adding the input
    # projection overflows inside the loop at timestep 7 only, where it is big.
    feeds["layer0/gates_t_b"][:] = 3.39e38
    feeds["x"][7] = 5e37
    messages = []
    for on in (False, True):
        net = create_model_net(model, feeds, on)
        with np.errstate(over="raise"), pytest.raises(Exception) as info:
            workspace.RunNet(net.name)
        messages.append((type(info.value), str(info.value)))
    assert messages[0] == messages[1]
    assert "timestep 7" in messages[0][1] and "overflow encountered in add" in messages[0][1]
