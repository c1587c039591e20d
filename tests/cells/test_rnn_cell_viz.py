"""Every rnn_cell / gru_cell layer is an example cell: it draws in every ``viz``
view (DOT text only, no Graphviz needed) and the CLI lists it."""

import subprocess
import sys

import pytest

from caffe2rnn import eras, viz
from caffe2rnn.example_cells import CELLS
from caffe2rnn.recurrent import recurrent_net

#: registry name → an op only that cell's step net has.
LAYERS = {
    "rnn_cell_lstm": "LSTMUnit",
    "milstm_stack": "ElementwiseLinear",
    "attention_recurrent": "BatchMatMul",
    "gru": "GRUUnit",
    "layer_norm_lstm": "LayerNorm",
    "attention_dot": "BatchMatMul",
    "attention_soft_coverage": "SequenceMask",
}


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_every_view_draws_the_cell(name):
    net, _ = CELLS[name]().build(recurrent_net)
    net.AddGradientOperators([net.Proto().op[-1].output[0]])
    (op,) = [o for o in net.Proto().op if o.type == "RecurrentNetwork"]
    drawn = viz.recurrent(op).source
    assert LAYERS[name] in drawn and "RecurrentBackwardStep" in drawn
    for view in (viz.backward, viz.timeline, viz.unroll, viz.scratches_of, viz.backward_timeline):
        assert view(op).source.count("->") > 3, view.__name__
    assert "RecurrentNetwork" in viz.net(net.Proto()).source
    assert "RecurrentNetwork" in viz.ssa(net.Proto()).source


def test_the_cli_lists_the_layers_and_refuses_them_for_old_versions():
    run = [sys.executable, "-m", "caffe2rnn", "render"]
    listed = subprocess.run(run + ["--cell", "nosuch"], capture_output=True, text=True)
    assert listed.returncode == 2
    for name in LAYERS:
        assert name in listed.stderr
    old = subprocess.run(run + ["--cell", "gru", "--version", "v1"], capture_output=True, text=True)
    assert old.returncode == 2 and len(old.stderr.strip().splitlines()) == 1
    dot = subprocess.run(
        run + ["--cell", "gru", "--view", "unroll"], capture_output=True, text=True
    )
    assert dot.returncode == 0 and "GRUUnit" in dot.stdout


def test_building_a_layer_leaves_the_default_era():
    before = eras.current()
    CELLS["gru"]().op()
    assert eras.current() == before
