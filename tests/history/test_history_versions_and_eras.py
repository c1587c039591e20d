"""Every version trains seed 002's LSTM cell to the reference gradients (it has
no bug for that cell), on its own era by default; eras are chosen outside
the OperatorDef; the comparison utility lists what differs."""

import numpy as np
import pytest

from caffe2rnn import core, workspace
from caffe2rnn.history import VERSIONS, cells
from caffe2rnn.history.compare import compare


@pytest.fixture(scope="module")
def lstm_reference():
    cell = cells.lstm()
    values = cell.values(np.random.default_rng(1))
    return cell, values, cell.reference_gradients({k: v.copy() for k, v in values.items()})


@pytest.mark.parametrize("version", list(VERSIONS))
def test_lstm_gradients_equal_reference_on_own_era(version, lstm_reference):
    cell, values, reference = lstm_reference
    # No ``with era``: the version's recurrent_net binds its op to its era.
    runs = cell.run(
        VERSIONS[version].recurrent_net, {k: v.copy() for k, v in values.items()}, runs=2
    )
    for run in runs:
        for blob, expected in reference.items():
            np.testing.assert_allclose(run[blob], expected, rtol=1e-5, atol=1e-7)


def test_v1_initial_state_gradient_is_a_copy_v2_shares():
    cell = cells.sum_mul()
    values = cell.values(np.random.default_rng(2))
    shared = {}
    for version in ("v1", "v2"):
        workspace.ResetWorkspace()
        core.Net.reset_names()
        net, outputs = cell.build(VERSIONS[version].recurrent_net)
        net.AddGradientOperators([outputs[0]])
        for name, value in values.items():
            workspace.FeedBlob(name, value)
        workspace.RunNetOnce(net)
        ws = workspace.C_Workspace()
        h0_grad = ws.blob("h0_grad").value
        states_grad = ws.blob("sum_mul_main/recurrent/h_prev_states_grad").value
        np.testing.assert_allclose(h0_grad, states_grad[:1])
        shared[version] = np.shares_memory(h0_grad, states_grad)
    assert shared == {"v1": False, "v2": True}


def test_compare_rows_show_what_changed_between_versions():
    rows = {row.argument: row for row in compare(["v1", "v2", "v3", "newest"], "lstm")}
    assert rows["param_grads"].values == (
        None,
        None,
        ["lstm/gates_t_w_grad", "lstm/gates_t_b_grad"],
        ["lstm/gates_t_w_grad", "lstm/gates_t_b_grad"],
    )
    assert rows["param_grads"].differs
    assert rows["enable_rnn_executor"].values == (None, None, None, 1)
    assert rows["backward_link_offset"].values[0] == [0, 1, 0, 1, 0]  # v1's order
    assert rows["backward_link_offset"].values[1] == [1, 0, 1, 0, 0]
    assert rows["outputs"].values[0][-1] == "lstm/step_workspaces_%d" % (
        VERSIONS["v1"]._workspace_seq - 1
    )
    assert not rows["link_internal"].differs
    assert not rows["param"].differs
