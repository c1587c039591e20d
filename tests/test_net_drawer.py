"""``caffe2.python.net_drawer`` answered by caffe2rnn: Caffe2's functions,
signatures and pydot graphs (929c33cee / 0cdd09da6 net_drawer.py), drawn in
caffe2rnn's palette."""

import inspect
import json

import pytest

from caffe2rnn import core, model_helper, net_drawer
from caffe2rnn.viz.style import BLOB_KINDS, OP_FAMILIES

pydot = pytest.importorskip("pydot")

#: Caffe2's public names and signatures (parameter names, defaults).
CAFFE2_API = {
    "GetOpNodeProducer": "(append_output, **kwargs)",
    "GetPydotGraph": "(operators_or_net, name=None, rankdir='LR', node_producer=None)",
    "GetPydotGraphMinimal": (
        "(operators_or_net, name=None, rankdir='LR', minimal_dependency=False, node_producer=None)"
    ),
    "GetOperatorMapForPlan": "(plan_def)",
    "GetPlanGraph": "(plan_def, name=None, rankdir='TB')",
    "GetGraphInJson": "(operators_or_net, output_filepath)",
    "GetGraphPngSafe": "(func, *args, **kwargs)",
}


def toy_net():
    """A net with an in-place op (Iter), a gradient and a Sum of gradients."""
    net = core.Net("toy")
    x = net.GaussianFill([], "X", shape=[4, 2], mean=0.0, std=1.0)
    y = x.FC(["W", "B"], "Y")
    h = net.Relu(y, "H")
    loss = net.SumElements([net.Add([h, y], "S")], "loss")
    net.AddGradientOperators([loss])
    net.Iter("ITER", "ITER")
    return net


def test_module_has_caffe2s_public_names_and_signatures():
    for name, signature in CAFFE2_API.items():
        assert str(inspect.signature(getattr(net_drawer, name))) == signature, name
    assert set(net_drawer.OP_STYLE) >= {"shape", "color", "style", "fontcolor"}
    assert net_drawer.OP_STYLE["color"] == OP_FAMILIES["compute"][0] == "#0F9D58"
    assert BLOB_KINDS["blob"][0] == net_drawer.BLOB_STYLE
    assert callable(net_drawer.main)


def test_get_pydot_graph_has_caffe2s_nodes_and_edges():
    net = toy_net()
    graph = net_drawer.GetPydotGraph(net.Proto().op, "train", rankdir="LR")
    assert isinstance(graph, pydot.Dot) and graph.get_name() == "train"
    assert graph.get_rankdir() == "LR"
    names = {n.get_name().strip('"') for n in graph.get_nodes()}
    ops = net.Proto().op
    for i, op in enumerate(ops):
        assert "%s (op#%d)" % (op.type, i) in names
    # Blob nodes are the JSON-quoted name plus the number of overwrites:
    # ITER is read (ITER0) and written in place (ITER1).
    assert {"ITER0", "ITER1", "X0", "Y0", "W0"} <= names
    edges = {(e.get_source().strip('"'), e.get_destination().strip('"')) for e in graph.get_edges()}
    iter_op = "Iter (op#%d)" % (len(ops) - 1)
    assert ("ITER0", iter_op) in edges and (iter_op, "ITER1") in edges


def test_looks_are_caffe2rnns_and_the_legend_names_them():
    graph = net_drawer.GetPydotGraph(toy_net())
    nodes = {n.get_name().strip('"'): n for n in graph.get_nodes()}
    relu = nodes["Relu (op#2)"]
    assert relu.get("fillcolor").strip('"') == OP_FAMILIES["activation"][0]
    fc_gradient = next(n for k, n in nodes.items() if k.startswith("FCGradient"))
    assert "rounded" in fc_gradient.get("style")
    assert "dashed" in nodes["W_grad0"].get("style")  # a gradient blob
    assert nodes["W0"].get("shape") == "box"  # read before written: a net input
    legend = graph.get_subgraph("cluster_legend")[0]
    texts = {n.get("label").strip('"') for n in legend.get_nodes()}
    assert {"operator: compute", "operator: activation", "gradient blob"} <= texts


def test_parameters_of_a_model_helper_are_blue():
    model = model_helper.ModelHelper(name="m")
    model.net.FC(["X", "w", "b"], "Y")
    model.params.extend([core.BlobReference("w"), core.BlobReference("b")])
    nodes = {n.get_name().strip('"'): n for n in net_drawer.GetPydotGraph(model).get_nodes()}
    assert nodes["w0"].get("fillcolor").strip('"') == BLOB_KINDS["param"][0]["fillcolor"]
    assert nodes["X0"].get("fillcolor").strip('"') != BLOB_KINDS["param"][0]["fillcolor"]


def test_node_producer_styles_every_op_as_given():
    producer = net_drawer.GetOpNodeProducer(True, shape="box", color="red")
    graph = net_drawer.GetPydotGraph(toy_net(), node_producer=producer)
    fc = next(n for n in graph.get_nodes() if n.get_name().strip('"').startswith("FC (op#1)"))
    assert fc.get_name().strip('"') == "FC (op#1)\nY" and fc.get("color") == "red"


def test_names_come_from_the_netdef_or_default_to_unnamed():
    net = toy_net()
    assert net_drawer.GetPydotGraph(net).get_name() == "toy"
    assert net_drawer.GetPydotGraph(net.Proto()).get_name() == "toy"
    assert net_drawer.GetPydotGraph(list(net.Proto().op)).get_name() == "unnamed"


def test_minimal_graph_keeps_only_ops_and_labels_edges_with_blobs():
    net = toy_net()
    graph = net_drawer.GetPydotGraphMinimal(net, minimal_dependency=True)
    names = {n.get_name().strip('"') for n in graph.get_nodes()}
    assert not any(n.endswith("0") and "(" not in n for n in names)  # no blob nodes
    edges = {
        (e.get_source().strip('"'), e.get_destination().strip('"')): e.get("label").strip('"')
        for e in graph.get_edges()
    }
    # Add reads H (Relu's) and Y (FC's); FC is an ancestor of Relu, so with
    # minimal_dependency only Relu -> Add is drawn.
    assert edges[("Relu (op#2)", "Add (op#3)")] == "H"
    assert ("FC (op#1)", "Add (op#3)") not in edges
    full = net_drawer.GetPydotGraphMinimal(net)
    assert any(
        e.get_source().strip('"') == "FC (op#1)" and e.get_destination().strip('"') == "Add (op#3)"
        for e in full.get_edges()
    )


def test_graph_in_json_is_caffe2s_format(tmp_path):
    net = core.Net("j")
    net.Relu("X", "X")
    path = tmp_path / "g.json"
    net_drawer.GetGraphInJson(net, str(path))
    data = json.loads(path.read_text())
    assert data["nodes"] == [
        {"id": 0, "label": "Relu", "op_id": 0, "type": "op"},
        {"id": 1, "label": "X", "type": "blob"},
        {"id": 2, "label": "X", "type": "blob"},
    ]
    assert data["edges"] == [{"source": 1, "target": 0}, {"source": 0, "target": 2}]


def test_plan_graph_and_operator_map():
    init, train = core.Net("init"), core.Net("train")
    init.ConstantFill([], "x", shape=[1], value=0.0)
    train.Relu("x", "x")
    plan = core.Plan("fit")
    plan.AddStep(core.execution_step("init", init))
    plan.AddStep(core.execution_step("loop", train, num_iter=3))
    operators = net_drawer.GetOperatorMapForPlan(plan.Proto())
    assert sorted(operators) == ["fit_init", "fit_train"]
    graph = net_drawer.GetPlanGraph(plan.Proto(), name="fit")
    labels = {n.get_name().strip('"').split("\\n")[0] for n in graph.get_nodes()}
    assert {"init", "loop", "train"} <= labels


@pytest.mark.needs_dot
def test_renders_png_and_the_safe_variant_never_raises(caplog):
    png = net_drawer.GetPydotGraph(toy_net()).create_png()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 1000
    assert net_drawer.GetGraphPngSafe(net_drawer.GetPydotGraph, toy_net())[:8] == png[:8]

    def broken(*args):
        raise ValueError("no such net")

    assert net_drawer.GetGraphPngSafe(broken) == net_drawer._DummyPngImage
    assert "Failed to draw graph: no such net" in caplog.text


def test_nested_nets_are_named_in_the_op_label():
    then_net = core.Net("then")
    then_net.Copy("a", "b")
    op = core.CreateOperator("If", ["c"], ["b"])
    op.arg.add(name="then_net").n.CopyFrom(then_net.Proto())
    graph = net_drawer.GetPydotGraph([op])
    node = next(n for n in graph.get_nodes() if n.get_name().strip('"') == "If (op#0)")
    assert "\u25b8 then_net: 1 op" in json.loads(node.get("label"))
    assert "\\u" not in node.get("label")  # Graphviz would print the escape as text


@pytest.mark.needs_dot
def test_main_writes_dot_and_pdf(tmp_path, monkeypatch):
    net = toy_net()
    path = tmp_path / "net.pbtxt"
    path.write_text(str(net.Proto()))
    monkeypatch.chdir(tmp_path)
    net_drawer.main(["--input", str(path), "--output_prefix", "out_", "--minimal"])
    assert (tmp_path / "out_toy.dot").read_text().startswith("digraph toy")
    assert (tmp_path / "out_toy.pdf").read_bytes()[:4] == b"%PDF"


def test_without_pydot_drawing_says_what_to_install(monkeypatch):
    from caffe2rnn.errors import PydotNotFoundError

    monkeypatch.setattr(net_drawer, "pydot", None)
    with pytest.raises(PydotNotFoundError, match="pip install pydot"):
        net_drawer.GetPydotGraph(toy_net())
    assert isinstance(PydotNotFoundError("x"), ImportError)


def test_runs_through_the_compat_hook():
    import caffe2rnn.compat as compat

    compat.install()
    try:
        from caffe2.python import net_drawer as caffe2_net_drawer

        assert caffe2_net_drawer is net_drawer
    finally:
        compat.uninstall()
