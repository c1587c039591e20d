"""net() and ssa(): net_drawer's views and blob versions, read from the DOT."""

import pytest

from caffe2rnn import core, viz
from caffe2rnn.errors import DrawingError
from caffe2rnn.proto import caffe2_pb2


def _inplace_net(declare_inputs=True):
    """FC -> x, then an in-place Sum([x, y]) -> x, then Relu(x) -> out."""
    net = caffe2_pb2.NetDef(name="toy")
    net.op.extend(
        [
            core.CreateOperator("FC", ["data", "fc_w", "fc_b"], ["x"]),
            core.CreateOperator("Sum", ["x", "y"], ["x"]),
            core.CreateOperator("Relu", ["x"], ["out"]),
            core.CreateOperator("ReluGradient", ["out", "out_grad"], ["x_grad"]),
        ]
    )
    if declare_inputs:
        net.external_input.extend(["data", "fc_w", "fc_b", "out_grad"])
    net.external_output.extend(["out"])
    return net


def test_ssa_draws_every_version_of_an_inplace_op(parse_dot):
    dot = parse_dot(viz.ssa(_inplace_net()))
    assert {"x@1", "x@2", "out@1", "data@0", "y@0"} <= set(dot.nodes)
    assert dot.nodes["x@1"]["label"] == "x@1"
    dot.edge("x@1", "op#1")  # the in-place Sum reads version 1 ...
    dot.edge("op#1", "x@2")  # ... and writes version 2
    dot.edge("x@2", "op#2")  # later readers see version 2
    assert dot.with_class("inplace") == {"op#1"}
    assert [(e[0], e[1]) for e in dot.edges_of("inplace")] == [("x@1", "x@2")]


def test_ssa_nodes_are_exactly_what_get_ssa_computes(parse_dot):
    net = _inplace_net()
    ssa, _ = core.get_ssa(net)
    expected = {"%s@%d" % b for inputs, outputs in ssa for b in inputs + outputs}
    dot = parse_dot(viz.ssa(net))
    assert {n for n in dot.with_class("blob")} == expected


def test_ssa_marks_external_undefined_params_and_gradients(parse_dot):
    dot = parse_dot(viz.ssa(_inplace_net()))
    assert dot.with_class("external_input") == {"data@0", "fc_w@0", "fc_b@0", "out_grad@0"}
    assert dot.with_class("undefined") == {"y@0"}  # read, never declared
    assert dot.with_class("external_output") == {"out@1"}
    assert dot.with_class("param") == {"fc_w@0", "fc_b@0"}
    assert dot.with_class("gradient") == {"out_grad@0", "x_grad@1"}
    assert "gradient_op" in dot.nodes["op#3"]["class"]


def test_ssa_params_can_be_given(parse_dot):
    dot = parse_dot(viz.ssa(_inplace_net(), params=["y"]))
    assert dot.with_class("param") == {"y@0"}


def test_net_bipartite_makes_a_new_node_per_write(parse_dot):
    dot = parse_dot(viz.net(_inplace_net()))
    assert dot.nodes["op#1"]["label"] == "Sum (op#1)"
    dot.edge("x#0", "op#1")
    dot.edge("op#1", "x#1")  # net_drawer: a chain, not a cycle
    assert dot.nodes["x#0"]["label"] == dot.nodes["x#1"]["label"] == "x"
    assert dot.with_class("external_input") == {"data#0", "fc_w#0", "fc_b#0", "out_grad#0"}
    assert dot.with_class("external_output") == {"out#0"}
    assert dot.with_class("param") == {"fc_w#0", "fc_b#0"}


def test_net_minimal_keeps_ops_and_direct_dependencies(parse_dot):
    net = caffe2_pb2.NetDef(name="chain")
    net.op.extend(
        [
            core.CreateOperator("Relu", ["a"], ["b"]),
            core.CreateOperator("Relu", ["b"], ["c"]),
            core.CreateOperator("Add", ["b", "c"], ["d"]),
        ]
    )
    full = parse_dot(viz.net(net, minimal=True))
    assert not full.with_class("blob")
    assert {(e[0], e[1]) for e in full.edges} == {
        ("op#0", "op#1"),
        ("op#0", "op#2"),
        ("op#1", "op#2"),
    }
    assert full.edge("op#0", "op#1")["label"] == "b"
    reduced = parse_dot(viz.net(net, minimal=True, minimal_dependency=True))
    assert {(e[0], e[1]) for e in reduced.edges} == {("op#0", "op#1"), ("op#1", "op#2")}


def test_net_accepts_op_lists_and_names_ops_like_net_drawer(parse_dot):
    op = core.CreateOperator("Relu", ["a"], ["b"], name="act")
    dot = parse_dot(viz.net([op]))
    assert dot.nodes["op#0"]["label"] == "act/Relu (op#0)"


def test_bad_input_is_a_drawing_error():
    with pytest.raises(DrawingError, match="cannot draw 'int'"):
        viz.net(3)
