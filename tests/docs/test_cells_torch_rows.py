"""The rows step 17 (docs/concepts/cells.md, "More of torch.nn.LSTM in Caffe2") states
about ``rnn_cell.LSTM`` are what the library builds and runs.

The section moved there from step 1's fold (issue 31). These tests read the table's
rows and check them against an ``rnn_cell.LSTM`` and the ops, so the page and the
code cannot drift apart: the initialisation (``XavierFill`` weights, zero biases), the
learned initial states, ``forget_bias``'s default, and ``ReversePackedSegs``'s example.
"""

import os
import re

import numpy as np
import pytest

from caffe2rnn import core, model_helper, rnn_cell, workspace

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PAGE = os.path.join(ROOT, "docs", "concepts", "cells.md")
D, H = 3, 4


@pytest.fixture(scope="module")
def rows():
    """The section's table: its first column's text -> the Caffe2 column's text."""
    with open(PAGE, encoding="utf-8") as handle:
        text = handle.read()
    section = text.split("## More of torch.nn.LSTM in Caffe2", 1)[1].split("\n## ", 1)[0]
    table = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("|") and len(cells) == 3 and not set(cells[0]) <= set("-"):
            table[cells[0]] = cells[2]
    assert {"initialisation", "initial state", "forget bias", "`bidirectional=True`"} <= set(
        table
    ), sorted(table)
    return table


def _init_ops(**kwargs):
    model = model_helper.ModelHelper(name="rows")
    rnn_cell.LSTM(
        model, "x", "seq_lengths", kwargs.pop("initial_states", ("h0", "c0")),
        dim_in=D, dim_out=H, scope="lstm", **kwargs,
    )  # fmt: skip
    return model, {op.output[0]: op for op in model.param_init_net.Proto().op}


def test_the_initialisation_row_is_what_param_init_net_runs(rows):
    row = rows["initialisation"]
    assert "weights `XavierFill`" in row and "biases 0" in row, row
    _, ops = _init_ops()
    for weight in ("lstm/i2h_w", "lstm/gates_t_w"):
        assert ops[weight].type == "XavierFill", (weight, ops[weight].type)
    for bias in ("lstm/i2h_b", "lstm/gates_t_b"):
        assert ops[bias].type == "ConstantFill", (bias, ops[bias].type)
        values = [a.f for a in ops[bias].arg if a.name == "value"]
        assert values in ([], [0.0]), (bias, values)  # ConstantFill's default value is 0
    # U(±sqrt(3/n)), n = inputs per row: D for i2h_w, H for gates_t_w
    model, _ = _init_ops()
    workspace.RunNetOnce(model.param_init_net)
    for weight, n in (("lstm/i2h_w", D), ("lstm/gates_t_w", H)):
        value = workspace.FetchBlob(weight)
        assert value.shape == (4 * H, n)
        assert np.abs(value).max() <= np.sqrt(3.0 / n) + 1e-6, weight


def test_the_initial_state_row_learned_states_are_h_zeros_each(rows):
    row = rows["initial state"]
    assert "`initial_states=None`" in row and "**learned** parameters, $H$ values each" in row
    model, ops = _init_ops(initial_states=None)
    params = {str(p) for p in model.params}
    for name in ("lstm/initial_hidden_state", "lstm/initial_cell_state"):
        assert name in params and ops[name].type == "ConstantFill", name
    workspace.RunNetOnce(model.param_init_net)
    for name in ("lstm/initial_hidden_state", "lstm/initial_cell_state"):
        np.testing.assert_array_equal(workspace.FetchBlob(name), np.zeros(H, np.float32))


def test_the_forget_bias_row_default_is_0(rows):
    assert "`forget_bias=` (default 0)" in rows["forget bias"]
    model, _ = _init_ops()
    (rnn,) = [op for op in model.net.Proto().op if op.type == "RecurrentNetwork"]
    (step_net,) = [a.s.decode() for a in rnn.arg if a.name == "step_net"]
    unit = step_net[step_net.index('type: "LSTMUnit"') :]
    found = re.search(r'name: "forget_bias"\s*f: ([-0-9.e]+)', unit)
    assert found and float(found.group(1)) == 0.0, unit[:300]


def test_the_bidirectional_row_s_reverse_packed_segs_example_runs_so(rows):
    found = re.search(
        r"lengths (\d+) and (\d+): rows ([\d ]+) → ([\d ]+) and ([\d ]+) → ([\d ]+)\)",
        rows["`bidirectional=True`"],
    )
    assert found, rows["`bidirectional=True`"]
    lengths = [int(found.group(1)), int(found.group(2))]
    before = [[int(v) for v in found.group(i).split()] for i in (3, 5)]
    after = [[int(v) for v in found.group(i).split()] for i in (4, 6)]
    data = np.array(before, np.float32).T[:, :, None]  # T x N x 1, column n = batch row n
    workspace.FeedBlob("d", data)
    workspace.FeedBlob("l", np.array(lengths, np.int32))
    workspace.RunOperatorOnce(core.CreateOperator("ReversePackedSegs", ["d", "l"], ["r"]))
    got = workspace.FetchBlob("r")[:, :, 0].T.astype(int).tolist()
    assert got == after, (got, after)
