"""Small cells to run every historical ``recurrent_net`` on, with NumPy twins.

A :class:`Cell` builds its step net and calls whichever ``recurrent_net`` it
is given, so the same cell can be laid out by v1 … newest (:mod:`caffe2rnn.history.compare`)
or run under each era (:mod:`.bugs`). ``forward(values)`` is the NumPy
recurrence of the same cell (float64), the independent reference the
gradients are checked against by central differences.

* :func:`lstm` — the step net of seed 002's ``LSTM`` (``FC`` on the hidden
  state, in-place ``Sum`` with the input, ``LSTMUnit``), fed the projected
  input directly (the input FC lies outside the recurrence);
* :func:`sum_mul` (B3), :func:`pass_through_reference` (B4, B5) and
  :func:`two_states` (B7): the minimal cells of history.md §4.
"""

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from .. import core, workspace
from ..cnn import CNNModelHelper


@dataclass
class Cell:
    """One recurrent cell: how to build it, its inputs, and its NumPy twin."""

    name: str
    build: Callable  # build(recurrent_net, **kwargs) -> (net, outputs)
    values: Callable  # values(rng) -> {blob: array} (float64)
    forward: Callable  # forward(values) -> loss-relevant output (T x N x D)
    params: list[str] = field(default_factory=list)  # blobs with a gradient
    loss_output: int = 0  # which recurrent_net output the loss sums

    def run(self, recurrent_net, values, runs=1, **kwargs):
        """Build, then run forward + backward ``runs`` times in one workspace.

        Loss = sum of output ``loss_output``. Returns one ``{blob: gradient}``
        per run (copies), for the input sequence and :attr:`params`.
        """
        net, outputs = self.build(recurrent_net, **kwargs)
        net.AddGradientOperators([outputs[self.loss_output]])
        for name, value in values.items():
            workspace.FeedBlob(name, value)
        workspace.CreateNet(net)
        results = []
        for _ in range(runs):
            workspace.RunNet(net.Proto().name)
            results.append(
                {b: np.array(workspace.FetchBlob(b + "_grad")) for b in ["input"] + self.params}
            )
        return results

    def reference_gradients(self, values, step=1e-6):
        """d sum(forward) / d blob by central differences, for input and params."""
        grads = {}
        for name in ["input"] + self.params:
            x = values[name]
            g = np.zeros_like(x)
            for i in np.ndindex(*x.shape):
                old = x[i]
                x[i] = old + step
                plus = self.forward(values).sum()
                x[i] = old - step
                minus = self.forward(values).sum()
                x[i] = old
                g[i] = (plus - minus) / (2 * step)
            grads[name] = g
        return grads


def _mul_cell(name, ops, states, references=(), outputs_with_grads=(0,)):
    """A Net cell: external inputs ``input_t``, states, references; ``ops(net)``."""

    def build(recurrent_net, **kwargs):
        cell = core.Net(name)
        cell.AddExternalInputs(*(["input_t"] + [s + "_prev" for s, _ in states] + list(references)))
        ops(cell)
        cell.AddExternalOutputs(*[core.BlobReference(s) for s, _ in states])
        net = core.Net(name + "_main")
        outputs = recurrent_net(
            net,
            cell,
            [("input_t", "input")],
            [(s + "_prev", init) for s, init in states],
            {s + "_prev": s for s, _ in states},
            outputs_with_grads=outputs_with_grads,
            **kwargs,
        )
        return net, outputs

    return build


T, N, D = 3, 2, 2


def sum_mul():
    """B3's cell (``test_sum_mul``): ``s = x + h_prev; h = x * s``."""

    def ops(cell):
        cell.Sum(["input_t", "h_prev"], "s")
        cell.Mul(["input_t", "s"], "h")

    def forward(v):
        h, out = v["h0"][0], []
        for x in v["input"]:
            h = x * (x + h)
            out.append(h)
        return np.array(out)

    return Cell(
        "sum_mul",
        _mul_cell("sum_mul", ops, [("h", "h0")]),
        lambda rng: {
            "input": rng.uniform(0.5, 1.0, (T, N, D)),
            "h0": rng.uniform(0.5, 1.0, (1, N, D)),
        },
        forward,
    )


def pass_through_reference():
    """B4/B5's cell: ``q = x * h_prev; u = q + w; h = tanh(u)``, ``w`` a reference."""

    def ops(cell):
        cell.Mul(["input_t", "h_prev"], "q")
        cell.Sum(["q", "w"], "u")
        cell.Tanh("u", "h")

    def forward(v):
        h, out = v["h0"][0], []
        for x in v["input"]:
            h = np.tanh(x * h + v["w"][0])
            out.append(h)
        return np.array(out)

    return Cell(
        "pass_through_reference",
        _mul_cell("pass_through_reference", ops, [("h", "h0")], ["w"]),
        lambda rng: {
            "input": rng.uniform(0.5, 1.0, (T, N, D)),
            "h0": rng.uniform(0.5, 1.0, (1, N, D)),
            "w": rng.uniform(-0.5, 0.5, (1, N, D)),
        },
        forward,
        params=["w"],
    )


def two_states():
    """B7's cell: ``a = x * a_prev; b = a * b_prev``; gradient on ``a_all`` only."""

    def ops(cell):
        cell.Mul(["input_t", "a_prev"], "a")
        cell.Mul(["a", "b_prev"], "b")

    def forward(v):
        a, out = v["a0"][0], []
        for x in v["input"]:
            a = x * a
            out.append(a)
        return np.array(out)

    return Cell(
        "two_states",
        _mul_cell("two_states", ops, [("a", "a0"), ("b", "b0")]),
        lambda rng: {
            "input": rng.uniform(0.5, 1.5, (T, N, D)),
            "a0": rng.uniform(0.5, 1.5, (1, N, D)),
            "b0": rng.uniform(0.5, 1.5, (1, N, D)),
        },
        forward,
    )


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def lstm():
    """Seed 002's LSTM step net over a projected input (T x N x 4D)."""

    def build(recurrent_net, **kwargs):
        model = CNNModelHelper(name="lstm_model")
        step = CNNModelHelper(name="lstm_cell", param_model=model)
        input_t, timestep, cell_t_prev, hidden_t_prev = step.net.AddScopedExternalInputs(
            "input_t", "timestep", "cell_t_prev", "hidden_t_prev"
        )
        gates_t = step.FC(hidden_t_prev, "lstm/gates_t", dim_in=D, dim_out=4 * D, axis=2)
        step.net.Sum([gates_t, input_t], gates_t)
        hidden_t, cell_t = step.net.LSTMUnit(
            [hidden_t_prev, cell_t_prev, gates_t, "seq_lengths", timestep],
            ["lstm/hidden_t", "lstm/cell_t"],
        )
        step.net.AddExternalOutputs(cell_t, hidden_t)
        outputs = recurrent_net(
            net=model.net,
            cell_net=step.net,
            inputs=[(input_t, "input")],
            initial_cell_inputs=[(hidden_t_prev, "h0"), (cell_t_prev, "c0")],
            links={hidden_t_prev: hidden_t, cell_t_prev: cell_t},
            timestep=timestep,
            scope="lstm",
            **kwargs,
        )
        return model.net, outputs

    def forward(v):
        h, c, out = v["h0"][0], v["c0"][0], []
        for x in v["input"]:
            gates = h @ v["lstm/gates_t_w"].T + v["lstm/gates_t_b"] + x
            i, f, o, g = np.split(gates, 4, axis=-1)
            c = _sigmoid(f) * c + _sigmoid(i) * np.tanh(g)
            h = _sigmoid(o) * np.tanh(c)
            out.append(h)
        return np.array(out)

    def values(rng):
        return {
            "input": rng.uniform(-1, 1, (T, N, 4 * D)),
            "h0": rng.uniform(-1, 1, (1, N, D)),
            "c0": rng.uniform(-1, 1, (1, N, D)),
            "lstm/gates_t_w": rng.uniform(-1, 1, (4 * D, D)),
            "lstm/gates_t_b": rng.uniform(-1, 1, (4 * D,)),
            "seq_lengths": np.full((N,), T, dtype=np.int32),
        }

    return Cell("lstm", build, values, forward, params=["lstm/gates_t_w", "lstm/gates_t_b"])


#: name → factory, for :mod:`caffe2rnn.history.compare` and the CLI.
CELLS: dict[str, Callable[[], Cell]] = {
    "lstm": lstm,
    "sum_mul": sum_mul,
    "pass_through_reference": pass_through_reference,
    "two_states": two_states,
}
