"""recurrent(), backward(), scratches() for hand-built RecurrentNetwork ops."""

import pytest

from caffe2rnn import eras, viz
from caffe2rnn.errors import DrawingError, ProtoParseError
from caffe2rnn.proto import caffe2_pb2
from caffe2rnn.utils import MakeArgument
from caffe2rnn.viz import examples


def _blob_names(ids, prefix=""):
    """'fwd/lstm/gates_t@2' -> 'lstm/gates_t'."""
    return {i[len(prefix) :].rsplit("@", 1)[0] for i in ids if i.startswith(prefix)}


def test_scratches_of_the_lstm_cell_are_exactly_gates_t(parse_dot):
    dot = parse_dot(viz.scratches_of(examples.lstm()))
    # spec caffe2-core 4.5: recurrent_net's scratches = ['lstm/gates_t'];
    # it is the final version (2) that the backward step reads.
    assert dot.with_class("scratch") == {"lstm/gates_t@2"}
    assert not dot.with_class("recompute")


def test_scratches_of_the_attention_cell(parse_dot):
    dot = parse_dot(viz.scratches_of(examples.attention()))
    assert _blob_names(dot.with_class("scratch")) == {
        "att/gates_concatenated_input_t",
        "att/_gates_concatenated_input_t_concat_dims",
        "att/gates_t",
        "hidden_t_intermediate",
        "att/weighted_decoder_hidden_state",
        "att/decoder_hidden_encoder_outputs_sum",
        "att/attention_weights",
        "att/attention_weights_3d",
        "att/attention_weighted_encoder_context_old_shape",
    }
    assert not dot.with_class("recompute")
    # cell inputs and outputs reach the backward step through links
    assert {"hidden_t_prev", "att/cell_t"} <= _blob_names(dot.with_class("read_by_backward"))


def test_scratches_marks_recompute_blobs_instead(parse_dot):
    dot = parse_dot(viz.scratches_of(examples.lstm_recompute()))
    assert dot.with_class("recompute") == {"lstm/gates_t@2"}
    assert not dot.with_class("scratch")


def test_scratches_title_lists_them(parse_dot):
    graph = viz.scratches_of(examples.sum_mul())
    assert "scratches kept per step =\n[s]" in graph.source


def test_recurrent_view_has_both_clusters_states_links_and_aliases(parse_dot):
    graph = viz.recurrent(examples.lstm())
    assert "subgraph cluster_step" in graph.source
    assert "subgraph cluster_backward" in graph.source
    dot = parse_dot(graph)
    state = "state/lstm/hidden_t_prev_states"
    assert {
        state,
        "state/lstm/cell_t_prev_states",
        "state/lstm/hidden_t_prev_states_grad",
    } <= dot.with_class("state")
    links = {(e[0], e[1]): e[2]["label"] for e in dot.edges_of("link")}
    assert links[(state, "fwd/hidden_t_prev@0")] == "link t+0"  # read row t
    assert links[("fwd/lstm/hidden_t@1", state)] == "link t+1"  # write row t+1
    assert links[("io/input", "fwd/input_t@0")] == "link t+0"
    assert links[("bwd/hidden_t_prev_grad@2", state + "_grad")] == "backward link t+0"
    assert links[(state + "_grad", "bwd/lstm/hidden_t_grad@0")] == "backward link t+1"
    aliases = {(e[0], e[1]): e[2]["label"] for e in dot.edges_of("alias")}
    assert aliases[(state, "io/lstm/hidden_t_all")] == "alias +1 (rows 1..T)"
    assert aliases[(state, "io/lstm/hidden_t_last")] == "alias -1 (last row)"
    assert dot.edge("io/h0", state)["label"] == "copied to row 0"
    refs = {(e[0], e[1]) for e in dot.edges_of("reference")}
    assert ("io/lstm/gates_t_w", "fwd/lstm/gates_t_w@0") in refs
    assert {"io/lstm/gates_t_w", "io/lstm/gates_t_b"} <= dot.with_class("param")


@pytest.mark.parametrize("width", [None, "page"])
@pytest.mark.parametrize("make", [examples.lstm, examples.mul, examples.rnn_cell_lstm])
def test_every_output_of_the_op_hangs_off_it(parse_dot, make, width):
    """No output node floats: the aliases come from their state tensor, the op's own
    last output (step_workspaces) from the op's box (a dotted edge leaving its border)."""
    op = make()
    graph = viz.recurrent(op, width=width)
    dot = parse_dot(graph)
    drawn = [e for e in dot.edges if e[2].get("style") != "invis"]
    for name in op.output:
        assert "io/" + name in dot.nodes and "io/" + name in {e[1] for e in drawn}, name
    (edge,) = [e for e in drawn if e[1] == "io/" + op.output[-1]]
    assert edge[2]["class"] == "workspaces" and edge[2]["ltail"] == "cluster_rnn"
    assert edge[0].startswith("state")  # a node inside the op's box
    assert "op output: its step workspaces" in graph.source


def test_recurrent_view_reads_a_netdef_argument_too(parse_dot):
    op = examples.mul()
    text = [a for a in op.arg if a.name == "step_net"][0]
    step = caffe2_pb2.NetDef()
    from google.protobuf import text_format

    text_format.Parse(text.s.decode(), step)
    text.ClearField("s")
    text.n.CopyFrom(step)
    dot = parse_dot(viz.recurrent(op))
    assert "fwd/h@1" in dot.nodes


def test_backward_view_shows_tmpstep_renames_and_accumulate_ops(parse_dot):
    dot = parse_dot(viz.backward(examples.attention()))
    by_class = {
        cls: dot.with_class(cls)
        for cls in ("accumulate_input", "accum_sum", "param_sum", "renamed")
    }
    assert len(by_class["accumulate_input"]) == 2  # GO of hidden_t_all, context_all
    assert not by_class["accum_sum"]  # hidden_t is a Copy: nothing to add
    assert len(by_class["param_sum"]) == 8  # one Sum per parameter
    renamed = _blob_names(by_class["renamed"], "bwd/")
    assert "att/gates_t_w_grad_tmpstep" in renamed
    # weighted_encoder_outputs' gradient is the pass-through name of the Add
    assert "att/decoder_hidden_encoder_outputs_sum_grad_tmpstep" in renamed
    rename = dot.edge("renamed/att/gates_t_w_grad", "bwd/att/gates_t_w_grad_tmpstep@1")
    assert rename["label"] == "C++: rename to _tmpstep"
    first = dot.nodes["bwd/op#0"]
    assert first["label"].startswith("rnn_internal_accumulate_gradient_input")
    links = {(e[0], e[1]): e[2]["label"] for e in dot.edges_of("link")}
    states_grad = "state/att/hidden_t_prev_states_grad"
    assert links[("bwd/hidden_t_prev_grad@2", states_grad)] == "backward link t+0"
    assert links[(states_grad, "bwd/att/hidden_t_grad@0")] == "backward link t+1"
    # the prepended accumulate op writes into the states gradient tensor
    assert dot.edge("bwd/att/hidden_t_prev_states_grad@1", states_grad)


def test_backward_view_shows_accum_sums(parse_dot):
    dot = parse_dot(viz.backward(examples.two_states()))
    assert _blob_names(dot.with_class("accum"), "bwd/") == {"a_grad_accum"}
    assert len(dot.with_class("accum_sum")) == 1


def test_backward_view_of_sum_mul_links_the_pass_through_gradient(parse_dot):
    dot = parse_dot(viz.backward(examples.sum_mul()))
    links = {(e[0], e[1]): e[2]["label"] for e in dot.edges_of("link")}
    # Sum as first op: nobody writes h_prev_grad, s_grad is linked
    assert (
        links[("bwd/s_grad@1", "state/sum_mul_main/recurrent/h_prev_states_grad")]
        == "backward link t+0"
    )
    # A reference behind a pass-through Sum: the blob holding its per-step
    # gradient (u_grad, named in param_grads) is renamed _tmpstep
    dot = parse_dot(viz.backward(examples.pass_through_reference()))
    assert any(n.startswith("bwd/u_grad_tmpstep@") for n in dot.with_class("renamed"))


def test_forward_only_op_has_no_backward_view():
    op = examples.mul()
    for arg in op.arg:
        if arg.name == "backward_step_net":
            arg.s = b""
    with pytest.raises(DrawingError, match="forward-only"):
        viz.backward(op)
    assert "cluster_backward" not in viz.recurrent(op).source


def test_bad_rnn_ops_are_named_in_the_error():
    with pytest.raises(DrawingError, match="op Relu 'r'.*not a RecurrentNetwork"):
        viz.recurrent(caffe2_pb2.OperatorDef(type="Relu", name="r"))
    op = examples.mul()
    op.arg.extend([MakeArgument("link_window", [1])])
    with pytest.raises(
        DrawingError,
        match="link_internal, link_external, link_offset, link_window must have equal lengths",
    ):
        viz.recurrent(op)
    op = examples.mul()
    for arg in op.arg:
        if arg.name == "step_net":
            arg.s = b"op { type: "
    with pytest.raises(ProtoParseError, match="argument 'step_net'"):
        viz.recurrent(op)


def test_backward_view_draws_the_net_the_gradient_op_runs():
    """The drawn net is the gradient op's own (apply-link ops become edges)."""
    from caffe2rnn.__main__ import build_cell
    from caffe2rnn.viz.rnn_op import RecurrentOp

    current = RecurrentOp(examples.lstm()).cpp_backward_step_net()
    assert [op.type for op in current.net.op] == [
        "rnn_internal_accumulate_gradient_input",
        "LSTMUnitGradient",
        "FCGradient",
        "Sum",
        "Sum",
        "Sum",
    ]
    assert current.renamed == {
        "lstm/gates_t_w_grad": "lstm/gates_t_w_grad_tmpstep",
        "lstm/gates_t_b_grad": "lstm/gates_t_b_grad_tmpstep",
    }
    # April 2017 (v2's era): accumulate-and-swap into _acc, no _tmpstep rename
    with eras.use("v2"):
        v2 = RecurrentOp(build_cell("lstm", "v2")).cpp_backward_step_net()
    assert [op.type for op in v2.net.op][-2:] == ["rnn_history_accumulate_param_gradient"] * 2
    assert v2.renamed == {}


def test_big_step_nets_collapse_to_one_box_keeping_their_links(parse_dot):
    from caffe2rnn.viz.recurrent import AUTO_EXPAND_OPS
    from caffe2rnn.viz.rnn_op import RecurrentOp
    from caffe2rnn.viz.rnn_parts import AUTO_EXPAND_BACKWARD_OPS

    op = examples.attention()
    step = RecurrentOp(op).step_net
    # auto: the attention step net (16 ops) is drawn op by op, its backward
    # step net (18) is one box
    assert len(step.op) <= AUTO_EXPAND_OPS
    assert len(RecurrentOp(op).backward_step_net.op) > AUTO_EXPAND_BACKWARD_OPS
    for width in (None, "page"):
        auto = parse_dot(viz.recurrent(op, width=width))
        assert auto.with_class("collapsed") == {"bwd/ops"}, width
        assert "fwd/op#13" in auto.nodes
    folded = parse_dot(viz.recurrent(op, nested="collapse"))
    expanded = parse_dot(viz.recurrent(op, nested="expand"))
    assert folded.with_class("collapsed") == {"fwd/ops", "bwd/ops"}
    assert not expanded.with_class("collapsed")
    assert len(folded.nodes) < len(expanded.nodes) / 2
    # the box is a readable list, not an op's filled colour
    assert folded.nodes["fwd/ops"]["fillcolor"] == "#FFFFFF"
    label = folded.nodes["fwd/ops"]["label"]
    assert label.startswith("\u25b8 %d ops (collapsed" % len(step.op)) and "LSTMUnit" in label
    # every forward link still ends on its step-net blob
    links = {(e[0], e[1]) for e in folded.edges_of("link")}
    assert links == {(e[0], e[1]) for e in expanded.edges_of("link")}
    small = parse_dot(viz.recurrent(examples.lstm()))
    assert not small.with_class("collapsed")
    assert parse_dot(viz.recurrent(examples.lstm(), nested="collapse")).with_class("collapsed")
    with pytest.raises(DrawingError, match="nested='half'"):
        viz.recurrent(op, nested="half")
