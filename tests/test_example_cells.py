"""The example-cell registry: one home, each cell's op against its NumPy twin."""

import numpy as np
import pytest

from caffe2rnn import example_cells
from caffe2rnn.history import cells as history_cells
from caffe2rnn.operators.rnn import read_recurrent_arguments
from caffe2rnn.recurrent import recurrent_net
from caffe2rnn.viz import examples

TWINNED = [name for name, factory in example_cells.CELLS.items() if factory().forward]


def test_one_registry_under_the_names_users_see():
    assert {"mul", "sum_mul", "two_states", "lstm", "lstm_recompute", "attention"} <= set(
        example_cells.CELLS
    )
    assert set(examples.OPS) == set(example_cells.CELLS)
    assert set(history_cells.HISTORICAL) <= set(example_cells.CELLS)
    assert "lstm_recompute" not in history_cells.HISTORICAL  # today's recurrent_net only
    # sum_mul is the documented cell (notebooks/12_history): h = x * (x + h_prev)
    step = read_recurrent_arguments(examples.sum_mul()).step_net
    assert [(op.type, list(op.input)) for op in step.op] == [
        ("Sum", ["input_t", "h_prev"]),
        ("Mul", ["input_t", "s"]),
    ]
    assert history_cells.sum_mul is example_cells.sum_mul


@pytest.mark.parametrize("name", TWINNED)
def test_cell_gradients_match_central_differences_of_its_twin(name):
    cell = example_cells.CELLS[name]()
    values = cell.values(np.random.default_rng(0))
    grads = cell.run(recurrent_net, {k: v.copy() for k, v in values.items()})[0]
    expected = cell.reference_gradients(values)
    for blob, value in expected.items():
        np.testing.assert_allclose(grads[blob], value, rtol=1e-5, atol=1e-7, err_msg=blob)


@pytest.mark.parametrize("name", TWINNED)
def test_cell_output_matches_its_twin(name):
    from caffe2rnn import workspace

    cell = example_cells.CELLS[name]()
    values = cell.values(np.random.default_rng(1))
    net, outputs = cell.build(recurrent_net)
    for blob, value in values.items():
        workspace.FeedBlob(blob, value)
    workspace.RunNetOnce(net)
    np.testing.assert_allclose(
        workspace.FetchBlob(str(outputs[cell.loss_output])), cell.forward(values), rtol=1e-10
    )
