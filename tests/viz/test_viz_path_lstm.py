"""The docs draw the LSTM the learner's path builds, with the names the pages print.

docs/start-here.md builds ``rnn_cell.LSTM(model, "x", "seq_lengths", ("h0", "c0"),
dim_in=D, dim_out=H, scope="lstm")`` on a ``ModelHelper``; the pages quote its
blobs (``lstm/hidden_t_prev``, ``lstm/lstm/hidden_t_prev_states``, ``lstm/i2h``).
Every generated drawing of the path (docs/make_diagrams.py) is drawn from that
op, so a figure and the sentence beside it name one tensor one way.
"""

import importlib.util
import os

import pytest

from caffe2rnn import model_helper, rnn_cell, viz
from caffe2rnn.viz import examples
from caffe2rnn.viz.gallery import VIEWS
from caffe2rnn.viz.rnn_op import RecurrentOp

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def make_diagrams():
    spec = importlib.util.spec_from_file_location(
        "make_diagrams", os.path.join(ROOT, "docs", "make_diagrams.py")
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def path_op():
    """The RecurrentNetwork op of docs/start-here.md's LSTM (D = 3, H = 4)."""
    model = model_helper.ModelHelper(name="lm")
    rnn_cell.LSTM(model, "x", "seq_lengths", ("h0", "c0"), dim_in=3, dim_out=4, scope="lstm")
    (op,) = [o for o in model.net.Proto().op if o.type == "RecurrentNetwork"]
    return op


def test_the_docs_draw_the_paths_lstm():
    assert make_diagrams().PATH_CELL == "rnn_cell_lstm"
    drawn, built = RecurrentOp(examples.rnn_cell_lstm()), RecurrentOp(path_op())
    assert drawn.op.input == built.op.input and drawn.op.output == built.op.output
    for part in ("links", "backward_links", "aliases", "states", "params", "param_grads"):
        assert getattr(drawn, part) == getattr(built, part), part
    # the step nets differ only in their names (lstm, lstm_1: a net name is unique)
    assert drawn.step_net.op == built.step_net.op
    assert drawn.backward_step_net.op == built.backward_step_net.op


#: Names the pages print, and the April recurrent.LSTM's names they must not meet.
PATH_NAMES = {
    "step net blob": "lstm/hidden_t_prev",
    "state tensor": "lstm/lstm/hidden_t_prev_states",
    "input sequence": "lstm/i2h",
}
#: Which names each page view draws (the step-net views draw no tensors).
DRAWS = {
    "net": ["step net blob"],
    "ssa": ["step net blob"],
    "scratches": ["step net blob"],
    "backward": ["step net blob", "state tensor"],
    "recurrent": ["step net blob", "state tensor", "input sequence"],
    "timeline": ["step net blob", "state tensor", "input sequence"],
    "unroll": ["step net blob", "input sequence"],
    "backward_timeline": ["step net blob", "state tensor"],
}


@pytest.mark.parametrize("view", sorted(VIEWS))
def test_every_view_of_the_path_carries_rnn_cells_names(view):
    source = viz.gallery.view(path_op(), view, 3, "page").source
    for kind in DRAWS[view]:
        assert PATH_NAMES[kind] in source, (view, kind)
    # the April cell's unscoped step-net blob and its input never appear
    assert '"hidden_t_prev' not in source and "label=hidden_t_prev" not in source
    assert "label=input\n" not in source and 'label="input"' not in source
