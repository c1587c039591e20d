"""The glossary's E7 paragraph of "Where blob names come from" against real builds:
step 1's LSTM at E5 and at E7 differs only in what LSTMUnit writes."""

import os
import re

from caffe2rnn import eras, rnn_cell
from caffe2rnn.model_helper import ModelHelper

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GLOSSARY = os.path.join(ROOT, "docs", "glossary.md")


def names(era):
    with eras.use(era):
        model = ModelHelper(name="names_" + era)
        outputs = rnn_cell.LSTM(model, "x", "seq_lengths", ("h0", "c0"), 3, 4, "lstm")
    (op,) = [o for o in model.net.Proto().op if o.type == "RecurrentNetwork"]
    args = {a.name: [s.decode() for s in a.strings] for a in op.arg if a.strings}
    return {
        "outputs": [str(o) for o in outputs],
        "params": [str(p) for p in model.params],
        "states": args["recurrent_states"],
        "internal": args["link_internal"],
    }


def test_e7_renames_only_what_lstm_unit_writes():
    with open(GLOSSARY, encoding="utf-8") as handle:
        text = handle.read()
    paragraph = re.search(r"Caffe2's last RNN code, era E7.*?\n\n", text, re.S).group(0)
    e5, e7 = names("E5"), names("E7")
    for name in e7["outputs"]:
        assert "`%s`" % name in paragraph, name
    assert e5["outputs"] == [n.replace("_state", "_t") for n in e7["outputs"]]
    # "The weights, the _prev blobs and the state tensors keep their names."
    assert e5["params"] == e7["params"] and e5["states"] == e7["states"]
    prev = [[n for n in b["internal"] if "_prev" in n] for b in (e5, e7)]
    assert prev[0] == prev[1] == ["lstm/hidden_t_prev", "lstm/cell_t_prev"]
    assert set(e7["internal"]) - set(e5["internal"]) == {"lstm/hidden_state", "lstm/cell_state"}
