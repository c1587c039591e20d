"""Fuzzing the arguments of RecurrentNetwork and its gradient.

One small, valid op -- ``h_t = x_t * h_{t-1} * w`` with its hand-written
backward step net -- is mutated in two ways:

* **renamings** that must not change any number: a fresh timestep name, the
  links listed in another order, a link view renamed in both step nets and the
  link arguments, step nets as text or NetDef, the executor flag and its
  threads (the op then runs three more times, from its plan, bit for bit; the
  cell's ``Mul`` has no compiled form, so that plan runs in order), h0 as (D,),
  (N, D) or (1, N, D). The outputs and every gradient must equal a NumPy
  reference computed here;
* **damage**: an integer of an argument (state ids, ``param``,
  ``outputs_with_grads``, link/alias offsets and windows) replaced by a small
  int, a blob name (timestep, states, link/alias names) replaced by another
  name of the op or a fresh one, an entry of a list dropped, h0 given k rows.

Every case must end in a result or a :mod:`caffe2rnn.errors` error -- never a
crash, a hang, or another exception. A failing op leaves the workspace exactly
as it was. A run that succeeds leaves its inputs unchanged and reads no
uninitialised memory: ``np.empty`` is poisoned with NaN while the op runs, and
the inputs are finite, so a NaN in an output is a read of memory nothing wrote
(a state row no step wrote, an alias past the written rows...). Cases scale
with ``CAFFE2RNN_FUZZ_EXAMPLES`` (``make fuzz``).
"""

import contextlib

import numpy as np
from fuzz_harness import FUZZ, changes, fuzz_settings, in_family, snapshot
from hypothesis import given
from hypothesis import strategies as st

from caffe2rnn.operators.gradient_maker import get_gradient_for_op
from caffe2rnn.operators.rnn import schedule
from caffe2rnn.proto import caffe2_pb2
from caffe2rnn.runtime import Workspace
from caffe2rnn.runtime import blob as blob_module
from caffe2rnn.utils import MakeArgument

T, N, D = 3, 2, 2
INPUTS = ["input", "h0", "w"]
OUTPUTS = ["hidden_all", "hidden_last", "step_workspaces"]
INT_ARGS = {
    "initial_recurrent_state_ids": 1,
    "param": 1,
    "outputs_with_grads": 2,
    "link_offset": 3,
    "link_window": 3,
    "alias_offset": 2,
    "backward_link_offset": 3,
}
NAME_ARGS = {
    "recurrent_states": 1,
    "link_internal": 3,
    "link_external": 3,
    "alias_src": 2,
    "alias_dst": 2,
    "backward_link_internal": 3,
    "backward_link_external": 3,
}
LINK_ARGS = ["link_internal", "link_external", "link_offset", "link_window"]
BACKWARD_LINK_ARGS = ["backward_link_internal", "backward_link_external", "backward_link_offset"]
VALID_H0_SHAPES = [(N, D), (D,), (1, N, D)]
NAME_POOL = INPUTS + OUTPUTS + ["hidden", "timestep", "input_t", "hidden_t", "tmp", "fresh"]


def operator(o_type, inputs, outputs):
    o = caffe2_pb2.OperatorDef(type=o_type)
    o.input.extend(inputs)
    o.output.extend(outputs)
    return o


def step_nets():
    step = caffe2_pb2.NetDef(name="step")
    step.op.extend(
        [
            operator("Mul", ["input_t", "hidden_t_prev"], ["tmp"]),
            operator("Mul", ["tmp", "w"], ["hidden_t"]),
        ]
    )
    step.external_input.extend(["input_t", "hidden_t_prev", "w"])
    backward = caffe2_pb2.NetDef(name="step_backward")
    backward.op.extend(
        [
            operator("Mul", ["hidden_t_grad", "w"], ["tmp_grad"]),
            operator("Mul", ["hidden_t_grad", "tmp"], ["w_grad"]),
            operator("Mul", ["tmp_grad", "hidden_t_prev"], ["input_t_grad"]),
            operator("Mul", ["tmp_grad", "input_t"], ["hidden_t_prev_grad"]),
        ]
    )
    backward.external_input.extend(["hidden_t_grad", "w", "tmp", "hidden_t_prev", "input_t"])
    return step, backward


def base_arguments():
    return {
        "recurrent_states": ["hidden"],
        "initial_recurrent_state_ids": [1],
        "param": [2],
        "link_internal": ["hidden_t_prev", "hidden_t", "input_t"],
        "link_external": ["hidden", "hidden", "input"],
        "link_offset": [0, 1, 0],
        "link_window": [1, 1, 1],
        "backward_link_internal": ["hidden_t_prev_grad", "hidden_t_grad", "input_t_grad"],
        "backward_link_external": ["hidden_grad", "hidden_grad", "input_grad"],
        "backward_link_offset": [0, 1, 0],
        "alias_src": ["hidden", "hidden"],
        "alias_dst": ["hidden_all", "hidden_last"],
        "alias_offset": [1, -1],
        "outputs_with_grads": [0, 1],
    }


def build(arguments, nets, as_text):
    o = operator("RecurrentNetwork", INPUTS, OUTPUTS)
    for name, net in zip(("step_net", "backward_step_net"), nets):
        arg = o.arg.add(name=name)
        if as_text:
            arg.s = str(net).encode()
        else:
            arg.n.CopyFrom(net)
    for key, value in arguments.items():
        o.arg.add().CopyFrom(MakeArgument(key, value))
    return o


def rename_everywhere(arguments, nets, old, new):
    arguments["link_internal"] = [new if v == old else v for v in arguments["link_internal"]]
    for net in nets:
        for o in net.op:
            o.input[:] = [new if n == old else n for n in o.input]
            o.output[:] = [new if n == old else n for n in o.output]
        net.external_input[:] = [new if n == old else n for n in net.external_input]


def reference(x, h0, w, g_all, g_last):
    """Outputs and gradients of h_t = x_t h_{t-1} w, in h0's own shape."""
    h = [np.broadcast_to(h0.reshape(-1, D), (N, D)) * np.ones((1, 1))]
    for t in range(T):
        h.append(x[t] * h[t] * w[0])
    g = [np.zeros((N, D)) for _ in range(T + 1)]
    g[T] += g_last[0]
    dx, dw = np.zeros_like(x), np.zeros_like(w)
    for t in range(T, 0, -1):
        g[t] = g[t] + g_all[t - 1]
        dx[t - 1] = g[t] * h[t - 1] * w[0]
        dw[0] += g[t] * x[t - 1] * h[t - 1]
        g[t - 1] += g[t] * x[t - 1] * w[0]
    dh0 = g[0].sum(axis=0) if h0.ndim == 1 else g[0].reshape(h0.shape)
    outputs = {"hidden_all": np.stack(h[1:]), "hidden_last": h[T][None]}
    return outputs, {"input": dx, "h0": dh0, "w": dw}


class _PoisonedNumpy:
    """``numpy`` for the blob module, whose ``empty`` is NaN (or a sentinel int)."""

    def __getattr__(self, name):
        return getattr(np, name)

    @staticmethod
    def empty(shape, dtype=float, **kwargs):
        dtype = np.dtype(dtype)
        fill = np.nan if dtype.kind in "fc" else np.iinfo(dtype).max if dtype.kind in "iu" else 0
        return np.full(shape, fill, dtype=dtype)


@contextlib.contextmanager
def poisoned_empty():
    original = blob_module.np
    blob_module.np = _PoisonedNumpy()
    try:
        yield
    finally:
        blob_module.np = original


@st.composite
def cases(draw):
    arguments = base_arguments()
    nets = list(step_nets())
    as_text = draw(st.booleans())
    renames = []
    if draw(st.booleans()):
        arguments["timestep"] = "ts_" + draw(st.sampled_from("abc"))
        renames.append("timestep")
    for keys in (LINK_ARGS, BACKWARD_LINK_ARGS):
        order = draw(st.permutations(range(3)))
        for k in keys:
            arguments[k] = [arguments[k][i] for i in order]
        renames.append("%s order %s" % (keys[0], order))
    if draw(st.booleans()):
        rename_everywhere(arguments, nets, "input_t", "x_view")
        renames.append("input_t -> x_view")
    if draw(st.booleans()):
        arguments["enable_rnn_executor"] = 1
        threads = draw(st.sampled_from([0, 2, 3]))
        if threads:
            arguments["rnn_executor.num_threads"] = threads
            renames.append("%d executor threads" % threads)
    h0_shape = draw(st.sampled_from(VALID_H0_SHAPES))

    damage = []
    for _ in range(draw(st.integers(0, 2))):
        kind = draw(st.sampled_from(["int", "name", "drop", "rows"]))
        if kind == "int":
            key = draw(st.sampled_from(sorted(INT_ARGS)))
            if arguments[key]:
                i = draw(st.integers(0, len(arguments[key]) - 1))
                arguments[key][i] = draw(st.integers(-3, 8))
        elif kind == "name":
            key = draw(st.sampled_from(sorted(NAME_ARGS) + ["timestep"]))
            new = draw(st.sampled_from(NAME_POOL))
            if key == "timestep":
                arguments[key] = new
            elif arguments[key]:
                arguments[key][draw(st.integers(0, len(arguments[key]) - 1))] = new
        elif kind == "drop":
            key = draw(st.sampled_from(sorted(INT_ARGS) + sorted(NAME_ARGS)))
            if arguments[key]:
                del arguments[key][draw(st.integers(0, len(arguments[key]) - 1))]
        else:
            h0_shape = (draw(st.integers(0, 3)), N, D)
        damage.append(kind)
    return arguments, nets, as_text, h0_shape, renames, damage


def check_unchanged_inputs(ws, feeds, what, written):
    """Inputs keep their values, except those the op writes through as Caffe2
    did: an alias ``dst`` or a ``timestep`` that names an input is that blob."""
    for name, value in feeds.items():
        if name in written:
            continue
        FUZZ.check(
            np.array_equal(ws.fetch(name), value),
            "mismatches",
            "%s changed input '%s'" % (what, name),
        )


def check_plan_reruns(ws, op, outputs, what):
    """With the executor on, runs after the first of one operator instance run
    its plan (on lanes, when it has threads; handoffs made free so this small
    op spreads over them): the outputs must not move by a bit."""
    net = caffe2_pb2.NetDef(name="rerun")
    net.op.add().CopyFrom(op)
    net.external_input.extend(INPUTS)
    saved = schedule.HANDOFF_US, schedule.MIN_SAVING
    schedule.HANDOFF_US, schedule.MIN_SAVING = 0.0, 0.0
    try:
        ws.create_net(net, overwrite=True)
        for run in range(3):
            outcome = in_family(ws.run_net, "rerun")
            if outcome is None or outcome[0] != "ok":
                FUZZ.check(False, "mismatches", "%s: run %d from the plan failed" % (what, run))
                return
            for name, value in outputs.items():
                FUZZ.check(
                    np.array_equal(ws.fetch(name), value),
                    "mismatches",
                    "%s: run %d (plan) changed '%s'" % (what, run, name),
                )
    finally:
        schedule.HANDOFF_US, schedule.MIN_SAVING = saved


def run_case(ws, op, what, intact):
    """Run ``op``: a result, or a family error leaving ``ws`` exactly as it was."""
    before = snapshot(ws)
    with poisoned_empty():
        outcome = in_family(ws.run_operator_once, op)
    if outcome[0] == "error":
        FUZZ.check(
            not intact,
            "mismatches",
            "%s of a valid op failed: %s" % (what, outcome[1]),
        )
        FUZZ.check(
            not changes(ws, before),
            "mismatches",
            "failed %s changed the workspace: %s (%s)" % (what, changes(ws, before), outcome[1]),
        )
    return outcome[0] == "ok"


@fuzz_settings(weight=8)
@given(case=cases(), seed=st.integers(0, 2**16))
def test_recurrent_network_arguments(case, seed):
    arguments, nets, as_text, h0_shape, renames, damage = case
    FUZZ.case()
    # Only an h0 of k = 1 rows drawn as "damage" leaves the op as valid as it was.
    intact = all(kind == "rows" for kind in damage) and h0_shape in VALID_H0_SHAPES
    rng = np.random.RandomState(seed)
    feeds = {
        "input": rng.uniform(0.5, 1.5, (T, N, D)),
        "h0": rng.uniform(0.5, 1.5, h0_shape),
        "w": rng.uniform(0.5, 1.5, (1, N, D)),
    }
    ws = Workspace(name="rnn_args_fuzz")
    for name, value in feeds.items():
        ws.feed(name, value)
    op = build(arguments, nets, as_text)
    what = "RecurrentNetwork (%s; damage %s)" % (", ".join(renames), damage)
    if not run_case(ws, op, what, intact):
        return
    written = set(arguments["alias_dst"]) | {arguments.get("timestep", "timestep")}
    check_unchanged_inputs(ws, feeds, what, written)
    outputs = {name: ws.fetch(name) for name in arguments["alias_dst"] if ws.has_blob(name)}
    for name, value in outputs.items():
        FUZZ.check(
            not np.isnan(value).any(),
            "mismatches",
            "%s: '%s' holds unwritten memory" % (what, name),
        )
    # An op that writes into one of its own inputs (as Caffe2's did) reads
    # other numbers when run again: its reruns are not comparable.
    if arguments.get("enable_rnn_executor") and not written & set(INPUTS):
        check_plan_reruns(ws, op, outputs, what)

    go = {
        "hidden_all": rng.standard_normal((T, N, D)),
        "hidden_last": rng.standard_normal((1, N, D)),
    }
    # The reference holds for the intact op only (a damaged one may, validly,
    # read another blob as its initial state, h0 then being any shape).
    expected, expected_grads = {}, {}
    if intact:
        expected, expected_grads = reference(
            feeds["input"], feeds["h0"], feeds["w"], go["hidden_all"], go["hidden_last"]
        )
        for name, value in expected.items():
            FUZZ.check(np.allclose(outputs[name], value), "mismatches", "%s: %s" % (what, name))

    g_output = [name + "_grad" if name in go else None for name in OUTPUTS]
    made = in_family(get_gradient_for_op, op, g_output)
    if made[0] == "error":
        FUZZ.check(not intact, "mismatches", "%s: no gradient: %s" % (what, made[1]))
        return
    grad_ops, g_input = made[1]
    for name, value in go.items():
        ws.feed(name + "_grad", value)
    for grad_op in grad_ops:
        if not run_case(ws, grad_op, "gradient of " + what, intact):
            return
    check_unchanged_inputs(ws, feeds, "gradient of " + what, written)
    for name, grad in zip(INPUTS, g_input):
        if grad is None:  # not listed in param: no gradient asked for
            continue
        value = ws.fetch(grad)
        FUZZ.check(
            not np.isnan(value).any(),
            "mismatches",
            "gradient of %s: '%s' holds unwritten memory" % (what, grad),
        )
        if intact:
            FUZZ.check(
                value.shape == expected_grads[name].shape
                and np.allclose(value, expected_grads[name]),
                "mismatches",
                "gradient of %s: d/d%s %s vs %s" % (what, name, value, expected_grads[name]),
            )
