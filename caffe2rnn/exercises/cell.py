"""The end-of-path exercise: a cell of your own (step 19, notebook 09)."""

import numpy as np

from .verdicts import NOT_RUN, _code_exercise, _verdict, run_learners_code

# --- The end-of-path exercise: a cell of your own (step 19, notebook 09) -------------------
#
# The learner writes a gated cell with recurrent_net (steps 7, 15 and 16) and the check runs it
# as step 5 checked an op: the forward pass against the cell's equations in NumPy, every
# gradient against finite differences (caffe2rnn.gradient_checker.numeric_gradient).

#: The weights the check reads, made by brew.fc(cell, ..., "gru/z") and (..., "gru/c").
CELL_PARAMS = ("gru/z_w", "gru/z_b", "gru/c_w", "gru/c_b")


def _gru_like_states(values):
    """h_(t+1) = z ⊙ h_t + (1 − z) ⊙ c, z = σ(h_t W_z^T + b_z + x_t),
    c = tanh(h_t W_c^T + b_c + x_t): the hidden states h_1 … h_T (rows 1 … T)."""
    h, rows = values["h0"][0], []
    for x_t in values["x"]:
        z = 1 / (1 + np.exp(-(h @ values["gru/z_w"].T + values["gru/z_b"] + x_t)))
        c = np.tanh(h @ values["gru/c_w"].T + values["gru/c_b"] + x_t)
        h = z * h + (1 - z) * c
        rows.append(h)
    return np.stack(rows)


def _check_cell(build, T=4, N=2, D=3):
    """What :func:`check_cell` checks, with no counting of tries."""
    from .. import workspace
    from ..gradient_checker import numeric_gradient
    from ..model_helper import ModelHelper

    workspace.ResetWorkspace()
    try:
        model = ModelHelper(name="cell_check")
        output = run_learners_code(
            lambda: build(model, "x", "h0", D),
            "write the cell's ops and its recurrent_net in the function (in place of the raise)",
            "building the op",
            why="the cell is a net of its own (a ModelHelper with param_model=model, "
            "step 16); recurrent_net(model.net, cell.net, inputs, initial_cell_inputs, "
            "links, timestep=...) adds the op and returns (hidden_all, hidden_last). "
            "It also builds the backward step net from the gradient registry (step 16, "
            "stage 2): every op of the cell needs a gradient maker, Mul's refuses an "
            "output written in place over an input, and a blob a gradient op reads may "
            "not be written again in the step (the versions of step 15): give z_t, c_t, "
            "h_prev - c_t and z_t * (h_prev - c_t) names of their own.",
        )
        if output is NOT_RUN:
            return False
        names = [str(p) for p in model.params]
        missing = [p for p in CELL_PARAMS if p not in names]
        if missing:
            return _verdict(
                False,
                "model.params is %s; it has no %s." % (names, ", ".join(missing)),
                why="the check reads the weights by name: make the two FCs with "
                'brew.fc(cell, hidden_t_prev, "gru/z", ...) and (..., "gru/c", ...), which '
                "create gru/z_w, gru/z_b, gru/c_w, gru/c_b in the outer model.",
            )
        model.net.AddExternalInput("hidden_all_grad")
        try:
            model.AddGradientOperators({output: "hidden_all_grad"})
        except Exception as error:  # the learner's graph
            return _verdict(
                False,
                "AddGradientOperators raised %s: %s" % (type(error).__name__, error),
                why="return the op's _all output, the first of recurrent_net's outputs: "
                "its outputs_with_grads=(0,) lets only that one take a gradient (step 10). "
                "And use only ops with a gradient maker in the cell (step 16, stage 2).",
            )
        rng = np.random.default_rng(11)
        values = {
            "x": rng.standard_normal((T, N, D)),
            "h0": rng.standard_normal((1, N, D)),
            "hidden_all_grad": rng.standard_normal((T, N, D)),
        }
        for p in CELL_PARAMS:
            values[p] = 0.5 * rng.standard_normal((D, D) if p.endswith("_w") else (D,))
        workspace.RunNetOnce(model.param_init_net)
        for name, value in values.items():
            workspace.FeedBlob(name, value)

        def loss(name=None, value=None):
            """L = sum(hidden_all ⊙ R), with ``name`` fed ``value`` first if given."""
            if name is not None:
                workspace.FeedBlob(name, value)
            workspace.RunNetOnce(model.net)
            return float(np.sum(workspace.FetchBlob(str(output)) * values["hidden_all_grad"]))

        try:
            loss()
        except Exception as error:  # the learner's op
            return _verdict(
                False,
                "running the net raised %s: %s" % (type(error).__name__, error),
                why="the cell's ops run on 1 × N × D views (FC with axis=2, as in step 9); "
                "every blob a step reads must be an input of the cell, a weight, or "
                "written by an earlier op of the cell.",
            )
        got, want = workspace.FetchBlob(str(output)), _gru_like_states(values)
        if got.shape != want.shape:
            return _verdict(
                False,
                "the output you returned is %s; hidden_all is T × N × D = %s."
                % (got.shape, want.shape),
                why="recurrent_net returns the _all output of each state first.",
            )
        off = np.abs(got - want).max(axis=(1, 2))
        if off.max() > 1e-9:
            return _verdict(
                False,
                "row %d of hidden_all differs from the cell's equations by %.2g."
                % (int(np.argmax(off > 1e-9)), off.max()),
                why="z = sigmoid(FC_z(h_prev) + x_t) and c = tanh(FC_c(h_prev) + x_t); the "
                "new state keeps z of the old one and takes 1 − z of the candidate: "
                "h_(t+1) = c + z ⊙ (h_prev − c).",
            )
        worst = 0.0
        for name in ("x", "h0") + CELL_PARAMS:
            loss()
            analytic = workspace.FetchBlob(name + "_grad")
            numeric = numeric_gradient(lambda v, name=name: loss(name, v), values[name])
            workspace.FeedBlob(name, values[name])
            if not np.allclose(analytic, numeric, rtol=1e-5, atol=1e-8):
                return _verdict(
                    False,
                    "the forward pass is right, but %s_grad differs from finite differences "
                    "by %.2g." % (name, np.abs(analytic - numeric).max()),
                    why="the numbers are right but a path of the gradient is not: every "
                    "op the state or the input flows through must pass its gradient on, and "
                    "the backward step net has only the gradient ops the registry gives "
                    "(step 16, stage 2); StopGradient, for one, passes none.",
                )
            worst = max(worst, float(np.abs(analytic - numeric).max()))
        return _verdict(
            True,
            "hidden_all matches the cell's equations row by row, and the gradients of x, "
            "h0 and the four weights match central differences (largest difference %.1g): "
            "your cell, its step net, its backward step net and the op's links all agree." % worst,
        )
    finally:
        workspace.ResetWorkspace()


#: The hint a first wrong try of check_cell gets: where to look, not the answer.
CELL_HINT = (
    "Look at step 16: the cell is a net of its own; every op in it needs a gradient "
    "maker, and no output may be written over an input or over a blob a gradient op "
    "reads. The weights are read by the names brew.fc gives them, and the op's first "
    "output is the one with a gradient."
)


def check_cell(build, T=4, N=2, D=3, reveal=False):
    """Self-check of step 19's closing exercise, ``build(model, x, h0, D)``.

    ``build`` adds a gated cell's ``RecurrentNetwork`` op to ``model.net`` with
    ``recurrent_net`` and returns its ``_all`` output. The check gives it a gradient
    (``L = sum(hidden_all ⊙ R)``), runs it in float64 in a fresh workspace, compares the
    forward pass with :func:`_gru_like_states` and the gradients of ``x``, ``h0`` and the four
    weights with central differences. Returns whether it was right; resets the workspace.

    A first wrong try is told what is wrong and given :data:`CELL_HINT`; the second wrong
    try, ``reveal=True`` or ``caffe2rnn.exercises.reveal("cell")`` gives the answer and the
    why as well."""
    with _code_exercise("cell", CELL_HINT, "your cell", reveal):
        return _check_cell(build, T, N, D)
