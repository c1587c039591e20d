"""The example cells: one registry for the CLI, the drawings, the docs and the history.

A :class:`Cell` builds its step net and calls whichever ``recurrent_net`` it
is given, so the same cell can be drawn as today's ``recurrent_net`` lays it
out (:meth:`Cell.op`, ``python -m caffe2rnn render --cell NAME``), laid out by
each historical version (:mod:`caffe2rnn.history.compare`) or run under each
era (:mod:`caffe2rnn.history.bugs`). ``forward(values)`` is its NumPy twin
(float64), the independent reference gradients are checked against by
central differences (:meth:`Cell.reference_gradients`).

========================== ===================================================
``mul``                    ``h = x * h_prev``: no parameter, no scratch
``sum_mul``                ``s = x + h_prev; h = x * s``: ``Sum`` first, so the
                           gradient of ``h_prev`` is ``s_grad`` (the
                           pass-through fixed by Caffe2 96bafa3b2)
``pass_through_reference`` ``h = tanh(x * h_prev + w)``: the reference ``w``
                           meets a pass-through ``Sum`` (Caffe2 21e9049f6)
``two_states``             ``a = x * a_prev; b = a * b_prev``: ``a`` is linked
                           and read in the cell (the ``_accum`` rewrite)
``lstm``                   ``FC`` on ``h_prev`` + in-place ``Sum`` with the
                           projected input + ``LSTMUnit``
``lstm_recompute``         the same, ``gates_t`` recomputed on backward
                           (today's ``recurrent_net`` only)
``attention``              ``recurrent.LSTMWithAttention`` (regular attention,
                           three states, ~20 ops a step; today's only). Its
                           NumPy twin is not here yet: ``tests/cells`` checks it
========================== ===================================================

The layers of :mod:`caffe2rnn.rnn_cell` and :mod:`caffe2rnn.gru_cell` (2017-06
on) are cells too, built by today's ``recurrent_net`` in the era that has them;
their NumPy twins are in ``tests/cells`` (``numpy_cells*.py``):

=========================== =======================================================
``rnn_cell_lstm``           ``rnn_cell.LSTM``: one ``LSTMCell`` layer (E5), the
                            LSTM of the learner's path (docs/start-here.md)
``milstm_stack``            ``rnn_cell.MILSTM``, two layers in one step net (E5)
``attention_recurrent``     ``rnn_cell.LSTMWithAttention``, recurrent (E5)
``gru``                     ``gru_cell.GRU``: ``GRUUnit`` (E6)
``layer_norm_lstm``         ``rnn_cell.LayerNormLSTM``: ``LayerNorm`` on gates (E6)
``attention_dot``           ``LSTMWithAttention``, dot-product attention (E6)
``attention_soft_coverage`` ``LSTMWithAttention``, soft coverage with lengths (E6)
=========================== =======================================================

The cells are in ``docs/concepts/history.md`` and ``notebooks/12_history.ipynb``.
"""

import contextlib
import logging
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from . import core, workspace
from .cnn import CNNModelHelper
from .errors import BuildError
from .gradient_checker import numeric_gradient


@dataclass
class Cell:
    """One recurrent cell: how to build it, its inputs, and its NumPy twin."""

    name: str
    build: Callable  # build(recurrent_net, **kwargs) -> (net, outputs)
    values: Callable | None  # values(rng) -> {blob: array} (float64)
    forward: Callable | None  # the NumPy twin: forward(values) -> output (T x N x D)
    params: list[str] = field(default_factory=list)  # blobs with a gradient
    loss_output: int = 0  # which recurrent_net output the loss sums
    historical: bool = True  # every historical recurrent_net can build it

    def main_net(self, recurrent_net=None, **kwargs):
        """``(net, outputs)``: a main net holding this cell's ``RecurrentNetwork`` op as
        ``recurrent_net`` (default: today's, :func:`caffe2rnn.recurrent.recurrent_net`)
        builds it, with its backward arguments; ``outputs`` are the op's outputs but the
        step workspaces. ``kwargs`` go to ``recurrent_net`` (``scope``,
        ``outputs_with_grads``...)."""
        if recurrent_net is None:
            from .recurrent import recurrent_net
        return self.build(recurrent_net, **kwargs)

    def op(self, recurrent_net=None, **kwargs):
        """The ``RecurrentNetwork`` OperatorDef ``recurrent_net`` (default: today's,
        :func:`caffe2rnn.recurrent.recurrent_net`) builds for this cell."""
        net, _ = self.main_net(recurrent_net, **kwargs)
        return [op for op in net.Proto().op if op.type == "RecurrentNetwork"][-1]

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
        return {
            name: numeric_gradient(lambda _: self.forward(values).sum(), values[name], step)
            for name in ["input"] + self.params
        }


def _mul_cell(name, ops, states, references=(), outputs_with_grads=(0,)):
    """A Net cell: external inputs ``input_t``, states, references; ``ops(net)``.
    ``outputs_with_grads`` is the default; a build call may give its own."""

    def build(recurrent_net, **kwargs):
        kwargs.setdefault("outputs_with_grads", outputs_with_grads)
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
            **kwargs,
        )
        return net, outputs

    return build


T, N, D = 3, 2, 2


def mul():
    """``h = x * h_prev``: the smallest recurrence (Caffe2's Elman-style test cell)."""

    def ops(cell):
        cell.Mul(["input_t", "h_prev"], "h")

    def forward(v):
        return np.cumprod(v["input"], axis=0) * v["h0"]

    return Cell(
        "mul",
        _mul_cell("mul", ops, [("h", "h0")]),
        lambda rng: {
            "input": rng.uniform(0.5, 1.5, (T, N, D)),
            "h0": rng.uniform(0.5, 1.5, (1, N, D)),
        },
        forward,
    )


def sum_mul():
    """``s = x + h_prev; h = x * s`` (Caffe2's ``test_sum_mul``): the gradient of
    ``h_prev`` is a pass-through of ``s_grad``, lost before 96bafa3b2."""

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
    """``q = x * h_prev; u = q + w; h = tanh(u)``: the reference ``w`` first meets
    a pass-through ``Sum``, so its per-step gradient has another name (21e9049f6)."""

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
    """``a = x * a_prev; b = a * b_prev``; gradient on ``a_all`` only: ``a`` is
    linked and read in the cell, so its two gradients must add (the ``_accum``
    rewrite of recurrent_net, 2017-06)."""

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
    """``recurrent.LSTM``'s step net (Caffe2 2017-04) over a projected input (T x N x 4D)."""

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


def lstm_recompute():
    """:func:`lstm` with ``recompute_blobs_on_backward=["lstm/gates_t"]``: the
    backward step recomputes the gates instead of keeping them per step."""
    cell = lstm()
    build_lstm = cell.build

    def build(recurrent_net, **kwargs):
        kwargs.setdefault("recompute_blobs_on_backward", ["lstm/gates_t"])
        return build_lstm(recurrent_net, **kwargs)

    cell.name, cell.build, cell.historical = "lstm_recompute", build, False
    return cell


def attention():
    """``recurrent.LSTMWithAttention`` (regular attention): the largest cell to draw."""

    def build(recurrent_net, **kwargs):
        from . import recurrent

        if recurrent_net is not recurrent.recurrent_net:
            raise BuildError(
                "the attention cell is built by recurrent.LSTMWithAttention, with "
                "today's recurrent_net only"
            )
        model = CNNModelHelper(name="attention_model")
        with _quiet_cnn():
            outputs = recurrent.LSTMWithAttention(
                model,
                "input",
                "seq_lengths",
                "h0",
                "c0",
                "context0",
                encoder_output_dim=4,
                encoder_outputs="encoder_outputs",
                decoder_input_dim=3,
                decoder_state_dim=4,
                scope="att",
                **kwargs,
            )
        return model.net, outputs

    return Cell("attention", build, values=None, forward=None, historical=False)


def _layer(name, era, make):
    """A cell built by an ``rnn_cell``/``gru_cell`` function ``make(model)`` under
    ``era``, with today's ``recurrent_net`` only (the layers call it themselves)."""

    def build(recurrent_net, **kwargs):
        from . import eras, recurrent
        from .model_helper import ModelHelper

        if recurrent_net is not recurrent.recurrent_net:
            raise BuildError("the cell %r is built by today's recurrent_net only" % name)
        model = ModelHelper(name=name)
        with eras.use(era):
            outputs = make(model, **kwargs)
        return model.net, outputs

    return lambda: Cell(name, build, values=None, forward=None, historical=False)


def _rnn_cell_layers():
    """name → factory of the rnn_cell / gru_cell layers (small dims: D=3, H=4)."""
    from . import gru_cell, rnn_cell
    from .attention import AttentionType

    def attention(kind, *lengths):  # AttentionType's E6 members exist only under E6
        def make(model, **kwargs):
            return rnn_cell.LSTMWithAttention(
                model, "decoder_input", "seq_lengths", "h0", "c0", "context0", 2,
                "encoder_outputs", *lengths, 3, 4, scope="att",
                attention_type=getattr(AttentionType, kind), **kwargs,
            )  # fmt: skip

        return make

    layers = {
        "rnn_cell_lstm": (
            "E5",
            lambda m, **kw: rnn_cell.LSTM(
                m, "x", "seq_lengths", ("h0", "c0"), dim_in=3, dim_out=4, scope="lstm", **kw
            ),
        ),
        "milstm_stack": (
            "E5",
            lambda m, **kw: rnn_cell.MILSTM(
                m, "input", "seq_lengths", None, 3, [4, 4], scope="milstm", **kw
            ),
        ),
        "attention_recurrent": ("E5", attention("Recurrent")),
        "gru": (
            "E6",
            lambda m, **kw: gru_cell.GRU(
                m, "input", "seq_lengths", ["h0"], 3, 4, scope="gru", **kw
            ),
        ),
        "layer_norm_lstm": (
            "E6",
            lambda m, **kw: rnn_cell.LayerNormLSTM(
                m, "input", "seq_lengths", ("h0", "c0"), 3, 4, scope="ln", **kw
            ),
        ),
        "attention_dot": ("E6", attention("Dot", "encoder_lengths")),
        "attention_soft_coverage": ("E6", attention("SoftCoverage", "encoder_lengths")),
    }
    return {name: _layer(name, era, make) for name, (era, make) in layers.items()}


@contextlib.contextmanager
def _quiet_cnn():
    """The 2017-04 API on CNNModelHelper logs a deprecation banner per use."""
    logger = logging.getLogger("caffe2rnn.cnn")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(level)


#: name → factory: the CLI, :mod:`caffe2rnn.viz.examples` and :mod:`caffe2rnn.history`.
CELLS: dict[str, Callable[[], Cell]] = {
    "mul": mul,
    "sum_mul": sum_mul,
    "pass_through_reference": pass_through_reference,
    "two_states": two_states,
    "lstm": lstm,
    "lstm_recompute": lstm_recompute,
    "attention": attention,
    **_rnn_cell_layers(),
}
