"""compat follows the era: Caffe2 code importing ``caffe2.python.recurrent`` gets
the ``recurrent_net`` of the era it builds under (E5 by default, E6 with
``eras.use("E6")``), and E6's ``retrieve_step_blobs`` hands back ``bytes`` names
as Caffe2 042e8ede4 did under Python 3."""

import numpy as np
import pytest

from caffe2rnn import compat, eras, workspace
from caffe2rnn.model_helper import ModelHelper

T, N, D, H = 3, 2, 3, 4


@pytest.fixture
def caffe2():
    compat.install()
    from caffe2.python import recurrent, rnn_cell

    yield recurrent, rnn_cell
    compat.uninstall()


def arguments(op):
    return {a.name: a for a in op.arg}


def build(rnn_cell, name):
    model = ModelHelper(name=name)
    outputs = rnn_cell.LSTM(model, "input", "seq_lengths", ("h0", "c0"), D, H, scope="lstm")
    (op,) = [o for o in model.net.Proto().op if o.type == "RecurrentNetwork"]
    return model, outputs, op


def feed_and_run(model):
    rng = np.random.default_rng(0)
    workspace.FeedBlob("input", rng.uniform(-1, 1, (T, N, D)).astype(np.float32))
    workspace.FeedBlob("seq_lengths", np.full(N, T, np.int32))
    workspace.FeedBlob("h0", rng.uniform(-1, 1, (1, N, H)).astype(np.float32))
    workspace.FeedBlob("c0", rng.uniform(-1, 1, (1, N, H)).astype(np.float32))
    workspace.RunNetOnce(model.param_init_net)
    for param in model.params:  # the same weights in every era (the fillers draw anew)
        shape = workspace.FetchBlob(str(param)).shape
        workspace.FeedBlob(str(param), rng.uniform(-1, 1, shape).astype(np.float32))
    workspace.RunNetOnce(model.net)


def test_recurrent_net_is_the_one_of_the_era_in_force(caffe2):
    recurrent, rnn_cell = caffe2
    assert recurrent.recurrent_net.__module__ == "caffe2rnn.recurrent"
    _, _, e5 = build(rnn_cell, "e5")
    with eras.use("E6"):
        model, _, e6 = build(rnn_cell, "e6")
    a5, a6 = arguments(e5), arguments(e6)
    # E5 (0cdd09da6): step nets as text; E6 (042e8ede4): as NetDef, executor on
    assert a5["step_net"].HasField("s") and not a5["step_net"].HasField("n")
    assert a6["step_net"].HasField("n") and a6["step_net"].n.op
    assert "enable_rnn_executor" not in a5 and a6["enable_rnn_executor"].i == 1
    assert eras.of(model.net) is eras.get("E6")


def test_both_eras_compute_the_same_lstm(caffe2):
    _, rnn_cell = caffe2
    results = {}
    for era in ("E5", "E6"):
        workspace.ResetWorkspace()
        with eras.use(era):
            model, outputs, _ = build(rnn_cell, "lstm_" + era)
            feed_and_run(model)
            results[era] = workspace.FetchBlob(str(outputs[0]))
    np.testing.assert_array_equal(results["E5"], results["E6"])


def test_retrieve_step_blobs_gives_bytes_names_under_e6_only(caffe2):
    recurrent, rnn_cell = caffe2
    names = {}
    for era in ("E5", "E6"):
        workspace.ResetWorkspace()
        with eras.use(era):
            model, _, _ = build(rnn_cell, "fetch_" + era)
            feed_and_run(model)
            names[era] = recurrent.retrieve_step_blobs(model.net, "rnn")
    assert names["E5"] and all(type(n) is str for n in names["E5"])
    assert all(type(n) is bytes for n in names["E6"])
    assert sorted(n.decode() for n in names["E6"]) == sorted(names["E5"])
    # the fetched copies are where the names say
    assert workspace.HasBlob(names["E5"][0])


def test_set_rnn_executor_config_records_caffe2s_arguments(caffe2):
    recurrent, rnn_cell = caffe2
    with eras.use("E6"):
        model, outputs, op = build(rnn_cell, "threads")
    recurrent.set_rnn_executor_config(op, num_threads=4)
    assert arguments(op)["rnn_executor.num_threads"].i == 4
    assert "rnn_executor.max_cuda_streams" not in arguments(op)
    with pytest.raises(ValueError, match="RecurrentNetwork"):
        recurrent.set_rnn_executor_config(model.param_init_net.Proto().op[0], num_threads=2)
