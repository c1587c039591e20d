"""The bugs that need more than "run the cell under two eras" to show.

Each function builds in a private workspace (:mod:`.sandbox`) and returns
plain numbers and structures; :data:`caffe2rnn.history.bugs.BUGS` lists them
beside the others and docs/concepts/history.md prints what they give.

* :func:`b1_initial_state_gradient` — the scratch era's placeholder
  initial-state gradients, against v1's.
* :func:`b2_stale_links` — links applied only when a step workspace was made.
* :func:`b5_batch_sizes` — B5 with a smaller second batch (keep-on-shrink).
* :func:`b6_recompute_ignored` — what ``recompute_blobs_on_backward`` saves,
  i.e. what 5cf13df48 silently dropped.
* :func:`b8_unguarded_in_place` — the ``_accum`` rewrite without its in-place
  guard, applied to a cell with an in-place ``Relu``.
* :func:`b10_shared_step_workspaces` — an evaluation op sharing the training
  op's step workspaces, under E5 and E6.

Caffe2's one zeroed states-gradient row (``tail_rows``) is in :mod:`.tail_rows`.
"""

import numpy as np
from google.protobuf import text_format

from .. import core, eras, workspace
from ..errors import EnforceNotMet
from ..proto import caffe2_pb2
from ..runtime import Workspace, blob, registry
from . import VERSIONS, cells, era, scratch
from .operator_eras import StaleLinksForward
from .sandbox import sandbox


def _feed(values):
    for name, value in values.items():
        workspace.FeedBlob(name, value)


def _batch(values, n):
    """The first ``n`` batch rows of every (T or 1) x N x D value."""
    return {k: v[:, :n].copy() for k, v in values.items()}


def mul_cell():
    """``h = x * h_prev``, the Mul RNN of the scratch era's ``test_mul_rnn``."""

    def build(recurrent_net, **kwargs):
        step = core.Net("mul_cell")
        step.AddExternalInputs("input_t", "h_prev")
        step.Mul(["input_t", "h_prev"], "h")
        step.AddExternalOutputs(core.BlobReference("h"))
        net = core.Net("mul_cell_main")
        args = [net, step, [("input_t", "input")], [("h_prev", "h0")], {"h_prev": "h"}]
        return net, recurrent_net(*args, **kwargs)

    def forward(v):
        return v["h0"][0] * np.cumprod(v["input"], axis=0)

    T, N, D = cells.T, cells.N, cells.D
    return cells.Cell(
        "mul_cell",
        build,
        lambda rng: {
            "input": rng.uniform(0.5, 1.0, (T, N, D)),
            "h0": rng.uniform(0.5, 1.0, (1, N, D)),
        },
        forward,
        params=["h0"],
    )


def b1_initial_state_gradient(seed=0):
    """``h0_grad`` of :func:`mul_cell` under S1 (3b190c4df), S2 (3913181a4) and
    v1, beside the NumPy reference.

    Returns ``{"scratch"|"s2"|"v1": (h0_grad, input_grad), "reference":
    {"h0": ..., "input": ...}}``. S1 leaves a one-element placeholder, S2 one
    shaped like the input sequence (the op input before ``h0``), neither
    written; v1 copies the first row of the states gradient (66ad84303).
    """
    cell = mul_cell()
    values = cell.values(np.random.default_rng(seed))
    outcome = {"reference": cell.reference_gradients({k: v.copy() for k, v in values.items()})}
    size = values["h0"].shape[-1]
    calls = {
        "scratch": lambda net, c, i, init, links: scratch.recurrent_net(
            net, c, i, [x + (size,) for x in init], links, []
        ),
        "s2": lambda net, c, i, init, links: scratch.recurrent_net_s2(net, c, i, init, links, []),
        "v1": VERSIONS["v1"].recurrent_net,
    }
    for label, recurrent_net in calls.items():
        with sandbox():
            net, outputs = cell.build(recurrent_net)
            net.AddGradientOperators([outputs[0]])
            _feed(values)
            workspace.RunNetOnce(net)
            outcome[label] = (workspace.FetchBlob("h0_grad"), workspace.FetchBlob("input_grad"))
    return outcome


def b2_stale_links(seed=0):
    """v1's forward op run twice with the C++ of 2017-03-14 .. 18 and of E2.

    The second run has the same T and one batch row fewer, then T + 1.
    Returns ``{("stale"|"E2", "smaller"|"longer"): (h_all, reference)}``. With
    links applied only when a step workspace is created, the second run's
    steps still read and write the first run's views: the old input and the
    old layout of the states buffer. A longer sequence recreated every step
    workspace, so it was right.
    """
    cell = mul_cell()
    rng = np.random.default_rng(seed)
    first = cell.values(rng)
    second = {
        "smaller": _batch(cell.values(rng), first["input"].shape[1] - 1),
        "longer": {
            "input": rng.uniform(
                0.5, 1.0, (first["input"].shape[0] + 1,) + first["input"].shape[1:]
            ),
            "h0": rng.uniform(0.5, 1.0, first["h0"].shape),
        },
    }
    with sandbox(), era("v1"):
        net, _ = cell.build(VERSIONS["v1"].recurrent_net)
    op_def = next(o for o in net.Proto().op if o.type == "RecurrentNetwork")
    outcome = {}
    e2 = eras.get("E2")
    classes = {"stale": StaleLinksForward, "E2": registry.operator_class("RecurrentNetwork", e2)}
    for label, cls in classes.items():
        for case, values in second.items():
            ws = Workspace(name="b2")
            for name, value in first.items():
                ws.feed(name, value)
            op = cls(op_def, ws, e2)
            op.run()
            for name, value in values.items():
                ws.feed(name, value)
            op.run()
            outcome[(label, case)] = (ws.fetch(op_def.output[0]), cell.forward(values))
    return outcome


def b5_batch_sizes(seed=0):
    """v2's ``w`` gradient when run 2 has a smaller or a larger batch.

    Returns ``{(keep_on_shrink, "smaller"|"larger"): (second run's w_grad,
    reference)}``. Caffe2 8e01e4c8b: a batch no larger than before keeps the
    shared buffer and doubles it (2 x timestep 0); a larger one reallocates
    it and the result is right ("OPTION B").
    """
    cell = cells.pass_through_reference()
    values = cell.values(np.random.default_rng(seed))
    n = values["input"].shape[1]
    wide = {k: np.concatenate([v, v[:, :1]], axis=1) for k, v in values.items()}
    outcome = {}
    saved = blob.keep_on_shrink
    try:
        for keep in (True, False):
            blob.keep_on_shrink = keep
            for label, first, second in (
                ("smaller", values, _batch(values, n - 1)),
                ("larger", values, wide),
            ):
                with sandbox(), era("v2"):
                    net, outputs = cell.build(VERSIONS["v2"].recurrent_net)
                    net.AddGradientOperators([outputs[0]])
                    _feed(first)
                    workspace.CreateNet(net)
                    workspace.RunNet(net.Name())
                    _feed(second)
                    workspace.RunNet(net.Name())
                    got = workspace.FetchBlob("w_grad")
                reference = cell.reference_gradients({k: v.copy() for k, v in second.items()})
                outcome[(keep, label)] = (got, reference["w"])
    finally:
        blob.keep_on_shrink = saved
    return outcome


def b6_recompute_ignored(seed=0):
    """v3's LSTM with ``recompute_blobs_on_backward=["lstm/gates_t"]``, and the
    op 5cf13df48 built for *any* such list (the one ``None`` builds).

    Returns ``{"asked"|"dropped": dict}`` with the op's argument, the first
    backward op types, how many step workspaces hold their own ``gates_t``,
    whether the shared workspace holds it, and the gradients. The gradients
    agree; only the per-step copies differ (the lost memory saving).
    """
    cell = cells.lstm()
    values = cell.values(np.random.default_rng(seed))
    outcome = {}
    for label, recompute in (("asked", ["lstm/gates_t"]), ("dropped", None)):
        with sandbox() as ws, era("v3"):
            net, outputs = cell.build(
                VERSIONS["v3"].recurrent_net, recompute_blobs_on_backward=recompute
            )
            net.AddGradientOperators([outputs[0]])
            op = next(o for o in net.Proto().op if o.type == "RecurrentNetwork")
            arg = next(a for a in op.arg if a.name == "recompute_blobs_on_backward")
            backward = caffe2_pb2.NetDef()
            text_format.Parse(next(a for a in op.arg if a.name == "backward_step_net").s, backward)
            _feed(values)
            workspace.RunNetOnce(net)
            scratch = ws._ws.blob(op.output[-1]).value
            outcome[label] = {
                "argument": [s.decode() for s in arg.strings],
                "backward_ops": [o.type for o in backward.op[:2]],
                "per_step_copies": sum(
                    w.has_local_blob("lstm/gates_t") for w in scratch.step_workspaces
                ),
                "shared_copy": scratch.shared_blobs_ws.has_local_blob("lstm/gates_t"),
                "gradients": {b: workspace.FetchBlob(b + "_grad") for b in ["input"] + cell.params},
            }
    return outcome


def relu_cell():
    """B8's cell: ``h = Mul(x, h_prev)`` then an in-place ``Relu(h) -> h``."""

    def build(recurrent_net, **kwargs):
        step = core.Net("relu_cell")
        step.AddExternalInputs("input_t", "h_prev")
        step.Mul(["input_t", "h_prev"], "h")
        step.Relu("h", "h")
        step.AddExternalOutputs(core.BlobReference("h"))
        net = core.Net("relu_cell_main")
        outputs = recurrent_net(
            net, step, [("input_t", "input")], [("h_prev", "h0")], {"h_prev": "h"}, **kwargs
        )
        return net, outputs

    def forward(v):
        h, out = v["h0"][0], []
        for x in v["input"]:
            h = np.maximum(x * h, 0)
            out.append(h)
        return np.array(out)

    T, N, D = cells.T, cells.N, cells.D
    return cells.Cell(
        "relu_cell",
        build,
        lambda rng: {
            "input": rng.uniform(-1.0, 1.5, (T, N, D)),
            "h0": rng.uniform(0.5, 1.0, (1, N, D)),
        },
        forward,
    )


def _unguard(op):
    """Apply the ``_accum`` rewrite to the backward step net of ``op`` once
    more, *without* the in-place guard of f49200962: every op output that is a
    backward-net external input is renamed ``<blob>_accum`` and summed back."""
    arg = next(a for a in op.arg if a.name == "backward_step_net")
    backward = caffe2_pb2.NetDef()
    text_format.Parse(arg.s, backward)
    rewritten = []
    for original in backward.op:
        o = caffe2_pb2.OperatorDef()
        o.CopyFrom(original)
        rewritten.append(o)
        for j, name in enumerate(o.output):
            if name in backward.external_input and name in o.input:
                o.output[j] = name + "_accum"
                add = caffe2_pb2.OperatorDef(
                    type="Sum", input=[name, name + "_accum"], output=[name]
                )
                rewritten.append(add)
    del backward.op[:]
    backward.op.extend(rewritten)
    arg.s = text_format.MessageToString(backward).encode()


def b8_unguarded_in_place(seed=0):
    """The in-place ``ReluGradient`` of :func:`relu_cell` with and without the
    guard. Returns ``{"guarded"|"unguarded": input gradient, "reference": ...,
    "active": where the ReLU passed x * h_prev}``: without the guard the
    gradient arriving at ``h`` is added to itself where the ReLU is active."""
    cell = relu_cell()
    values = cell.values(np.random.default_rng(seed))
    outcome = {
        "reference": cell.reference_gradients({k: v.copy() for k, v in values.items()})["input"]
    }
    for label in ("guarded", "unguarded"):
        with sandbox(), era("v3"):
            net, outputs = cell.build(VERSIONS["v3"].recurrent_net)
            net.AddGradientOperators([outputs[0]])
            if label == "unguarded":  # the forward op and its gradient carry the net
                for op in net.Proto().op:
                    if op.type.startswith("RecurrentNetwork"):
                        _unguard(op)
            _feed(values)
            workspace.RunNetOnce(net)
            outcome[label] = workspace.FetchBlob("input_grad")
    outcome["active"] = cell.forward(values) > 0
    return outcome


def _evaluation_op(forward):
    """``forward`` without its backward step net (forward-only), writing its
    outputs under ``_eval`` names but sharing the step-workspaces blob."""
    evaluation = caffe2_pb2.OperatorDef()
    evaluation.CopyFrom(forward)
    kept = [a for a in evaluation.arg if a.name != "backward_step_net"]
    del evaluation.arg[:]
    evaluation.arg.extend(kept)
    for i in range(len(evaluation.output) - 1):
        evaluation.output[i] += "_eval"
    for arg in evaluation.arg:
        if arg.name == "alias_dst":
            arg.strings[:] = [name + b"_eval" for name in arg.strings]
    return evaluation


def b10_shared_step_workspaces(seed=0):
    """Training op, then an evaluation op sharing its step workspaces, then the
    gradient. Returns ``{"v3": the exception, "newest": (input_grad,
    reference)}``: v3's C++ (0c2c95309) resized the shared vector to exactly 2,
    so the gradient finds 2 workspaces for T steps; 359776004 only grows it."""
    cell = cells.sum_mul()
    values = cell.values(np.random.default_rng(seed))
    outcome = {}
    for version in ("v3", "newest"):
        with sandbox(), era(version):
            net, outputs = cell.build(VERSIONS[version].recurrent_net)
            net.AddGradientOperators([outputs[0]])
            ops = net.Proto().op
            i = next(k for k, o in enumerate(ops) if o.type == "RecurrentNetwork")
            ops.insert(i + 1, _evaluation_op(ops[i]))
            _feed(values)
            try:
                workspace.RunNetOnce(net)
            except EnforceNotMet as exc:
                outcome[version] = exc
                continue
            reference = cell.reference_gradients({k: v.copy() for k, v in values.items()})
            outcome[version] = (workspace.FetchBlob("input_grad"), reference["input"])
    return outcome
