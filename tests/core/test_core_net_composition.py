"""Net.AppendNet, Net.ClonePartial, PopulateProtoWithFileName, _CheckLookupTables."""

import sys

import numpy as np
import pytest

from caffe2rnn import compat, core, eras, errors, workspace
from caffe2rnn.proto import caffe2_pb2

# -- ClonePartial ---------------------------------------------------------------------


def diamond():
    """a1, a2 → Concat → b1, b2 → c1 = b1 + p1, c2 = b2 → d = c1 + c2 → (gradients)
    → k = p1, e = d, e += k, e = e → f = e. ``p1`` is a parameter from another net."""
    params = core.Net("params")
    p1 = params.ConstantFill([], ["p1"], shape=[2], value=10.0)
    n = core.Net("original")
    a1, a2 = n.AddExternalInput("a1", "a2")
    b1, b2 = n.Concat([a1, a2], ["b1", "b2"], axis=0)
    c1 = n.Sum([b1, p1], ["c1"])
    c2 = n.Sum([b2], ["c2"])
    d = n.Sum([c1, c2], ["d"])
    n.AddGradientOperators([d])  # gradient ops are never on a forward path
    k = n.Sum([p1], ["k"])
    e = n.Sum([d], ["e"])
    e = n.Sum([e, k], [e])
    e = n.Sum([e], [e])
    f = n.Sum(e, ["f"])
    return params, n, dict(a1=a1, a2=a2, b1=b1, b2=b2, c1=c1, c2=c2, d=d, e=e, f=f)


def blobs_of(net):
    proto = net.Proto()
    names = set(proto.external_input) | set(proto.external_output)
    for op in proto.op:
        names |= set(op.input) | set(op.output)
    return names


@pytest.mark.parametrize(
    "name, inputs, outputs, n_ops, ext_in, ext_out, internal",
    [
        (
            "f1",
            {"a1": "a11", "a2": "a22"},
            ["d"],
            4,
            ["a11", "a22", "p1"],
            ["f1/d"],
            {"f1/b1", "f1/b2", "f1/c1", "f1/c2"},
        ),
        ("f2", ["b1", "b2"], ["d"], 3, ["b1", "b2", "p1"], ["f2/d"], {"f2/c1", "f2/c2"}),
        ("f3", ["b1"], ["c1"], 1, ["b1", "p1"], ["f3/c1"], set()),
        (
            "f4",
            [("b1", "x1"), ("b2", "x2")],
            ["c1", "c2"],
            2,
            ["x1", "x2", "p1"],
            ["f4/c1", "f4/c2"],
            set(),
        ),
        ("f5", ["d"], ["e"], 4, ["d", "p1"], ["f5/e"], {"f5/k"}),
        ("f7", ["d"], ["e", "f"], 5, ["d", "p1"], ["f7/e", "f7/f"], {"f7/k"}),
    ],
)
def test_clone_partial_keeps_the_path_and_renames_internal_blobs(
    name, inputs, outputs, n_ops, ext_in, ext_out, internal
):
    params, n, refs = diamond()
    if isinstance(inputs, dict):
        inputs = {refs[k]: v for k, v in inputs.items()}
    new, new_outputs = n.ClonePartial(name, inputs, [refs[o] for o in outputs])
    proto = new.Proto()
    assert len(proto.op) == n_ops and not any(op.is_gradient_op for op in proto.op)
    assert list(proto.external_input) == ext_in  # inputs in order, then the others read
    assert list(proto.external_output) == ext_out
    assert blobs_of(new) == set(ext_in) | set(ext_out) | internal
    assert [str(o) for o in new_outputs] == ext_out
    assert all(o.Net() is new for o in new_outputs)
    new._CheckLookupTables()
    n._CheckLookupTables()


def test_a_partial_clone_computes_what_the_original_did():
    n = core.Net("chain")
    b = n.Scale("a", "b", scale=2.0)
    c = n.Sum([b, "p"], "c")
    d = n.Relu(c, "d")
    a, p = np.array([-3.0, 1.0, 4.0], np.float32), np.array([1.0, 1.0, -20.0], np.float32)
    workspace.FeedBlob("a", a)
    workspace.FeedBlob("p", p)
    workspace.RunNetOnce(n)
    clone, (d2,) = n.ClonePartial("part", {b: "b_in"}, [d])
    assert [op.type for op in clone.Proto().op] == ["Sum", "Relu"]
    workspace.FeedBlob("b_in", workspace.FetchBlob("b"))
    workspace.RunNetOnce(clone)
    np.testing.assert_array_equal(workspace.FetchBlob(d2), workspace.FetchBlob(d))
    np.testing.assert_array_equal(workspace.FetchBlob(d2), np.maximum(2 * a + p, 0))


def test_clone_partial_refuses_inputs_computed_by_the_kept_ops():
    _, n, refs = diamond()
    with pytest.raises(errors.BuildError, match="also generate the given inputs") as info:
        n.ClonePartial("bad", [refs["a1"], refs["a2"], refs["c2"]], [refs["d"]])
    assert isinstance(info.value, AssertionError)
    with pytest.raises(errors.BuildError, match="output nowhere is not defined"):
        n.ClonePartial("bad", [refs["a1"]], [core.BlobReference("nowhere")])


# -- AppendNet ---------------------------------------------------------------------------


def test_append_net_merges_external_inputs_the_appended_net_computes():
    net_a = core.Net("A")
    net_a.Sum(["in1", "in2"], ["sum1"])
    net_b = core.Net("B")
    net_b.Sum(["in3", "in4"], ["in1"])
    assert net_b.AppendNet(net_a) is net_b
    assert "in1" not in net_b.external_inputs
    assert list(net_b.Proto().external_input) == ["in3", "in4", "in2"]
    net_b._CheckLookupTables()

    net_c = core.Net("C")
    net_c.Sum(["in1", "in2"], ["sum1"])
    net_d = core.Net("D")
    net_d.Sum(["in3", "in4"], ["in1"])
    net_c.AppendNet(net_d)  # the other order: in1 is read before it is written
    assert "in1" in net_c.external_inputs


def test_append_net_copies_ops_and_runs_in_order():
    first = core.Net("first")
    first.Scale("x", "y", scale=2.0)
    out = first.AddExternalOutput(first.GetBlobRef("y"))
    second = core.Net("second")
    z = second.Scale("y", "z", scale=3.0)
    second.AddExternalOutput(z)
    first.AppendNet(second)
    first.AppendNet(second)  # the external output is listed once
    assert out is None and list(first.Proto().external_output) == ["y", "z"]
    second.Proto().op[0].type = "Relu"
    assert first.Proto().op[1].type == "Scale"  # appended as copies
    workspace.FeedBlob("x", np.array([1.0], np.float32))
    workspace.RunNetOnce(first)
    assert workspace.FetchBlob("z")[0] == 6.0
    with pytest.raises(errors.BuildError, match="AppendNet takes a core.Net"):
        first.AppendNet(second.Proto())


# -- lookup tables, attributes, helpers ------------------------------------------------------


def test_check_lookup_tables_sees_stale_tables_until_a_lookup_rebuilds_them():
    net = core.Net("n")
    net.Relu("x", "y")
    net._CheckLookupTables()
    net.Proto().op.add(type="Relu", input=["y"], output=["z"])  # edited behind its back
    with pytest.raises(errors.BuildError, match=r"op outputs \['z'\]") as info:
        net._CheckLookupTables()
    assert isinstance(info.value, AssertionError)
    assert net.BlobIsDefined("z")  # rebuilds the tables
    net._CheckLookupTables()


def test_add_attribute_output_to_list_and_global_init():
    net = core.Net("n")
    net.add_attribute("note", 1)
    net.AddAttribute("note", 2)
    assert net.get_attributes("note") == [1, 2]
    assert net.Clone("copy").get_attributes("note") == [1, 2]
    ref = core.BlobReference("a")
    assert core.output_to_list(ref) == [ref] and core.output_to_list((ref, ref)) == [ref, ref]
    with pytest.raises(errors.WrongTypeError):
        core.output_to_list("a")
    core.GlobalInit(["caffe2", "--caffe2_log_level=0"])
    assert core.GetGlobalInitArgs() == ["caffe2", "--caffe2_log_level=0"]


# -- where ops were created ----------------------------------------------------------------------


def test_populate_proto_with_file_name_names_ops_after_their_creation_line():
    net = core.Net("traced")
    a, b = net.AddExternalInput("a", "b")
    line = test_populate_proto_with_file_name_names_ops_after_their_creation_line.__code__
    net.Mul([a, b], "c")
    created_at = "%s:%d" % (__file__, line.co_firstlineno + 4)
    with pytest.raises(errors.BlobNotFoundError):
        workspace.RunNetOnce(net)
    with pytest.raises(errors.BlobNotFoundError):
        workspace.CreateNet(net)
    net.Proto().op.add().CopyFrom(core.CreateOperator("Relu", "c", "d", name="kept"))
    clone = net.Clone("clone")
    net.PopulateProtoWithFileName()
    assert [op.name for op in net.Proto().op] == [created_at, "kept"]
    frames = workspace.operator_tracebacks["traced"][0]
    assert frames[0] == (__file__, line.co_firstlineno + 4)
    assert not any("caffe2rnn/core/" in f for f, _ in frames)
    clone.PopulateProtoWithFileName()  # a clone has no record of its own
    assert [op.name for op in clone.Proto().op] == ["", "kept"]


def test_e7_records_the_function_and_names_ops_file_line_function():
    def build():
        net = core.Net("traced_e7")
        net.Relu("a", "b")
        return net, build.__code__.co_firstlineno + 2

    with eras.use("E7"):  # 929c33cee's _extract_stacktrace: (file, line, function)
        net, line = build()
    frames = workspace.operator_tracebacks["traced_e7"][0]
    assert frames[0] == (__file__, line, "build")
    net.PopulateProtoWithFileName()
    assert net.Proto().op[0].name == "%s:%d:build" % (__file__, line)
    from caffe2rnn.runtime import tracebacks

    report = tracebacks.creation_report("traced_e7", 0).splitlines()
    assert report[1] == "%s:%d" % (__file__, line)
    with eras.use("E6"):  # 042e8ede4: (file, line)
        net, line = build()
    assert workspace.operator_tracebacks[net.Name()][0][0] == (__file__, line)


def test_populate_file_name_inside_a_caffe2_program_and_c_workspace():
    program = """
import numpy as np
from caffe2.python import core, workspace

net = core.Net("prog")
a = net.AddExternalInput("a")
net.Relu(a, "b")
net.Scale("missing", "c")
ws = workspace.C.Workspace()
ws.create_blob("a").feed(np.ones(2, dtype=np.float32))
try:
    ws.create_net(net)
except RuntimeError:
    failed = True
net.PopulateProtoWithFileName()
names = [op.name for op in net.Proto().op]
other = core.Net("other")
other.Relu("a", "b")
net.AppendNet(other)
clone, (b,) = net.ClonePartial("part", ["a"], [core.BlobReference("b", net)])
"""
    compat.install()
    try:
        ns = compat.py2_namespace()
        exec(compile(program, "caffe2_program.py", "exec"), ns)
    finally:
        compat.uninstall()
    assert ns["failed"] and ns["names"] == ["caffe2_program.py:7", "caffe2_program.py:8"]
    # b's latest version comes from the appended Relu alone
    assert len(ns["clone"].Proto().op) == 1 and str(ns["b"]) == "part/b"


def test_net_proto_type_and_num_workers_are_kept():
    proto = caffe2_pb2.NetDef(name="d", type="dag", num_workers=2)
    net = core.Net(proto)
    assert net.Proto().type == "dag" and net.Proto().num_workers == 2


def test_creation_report_leaves_out_the_interpreters_frames():
    import os
    import sysconfig

    from caffe2rnn.runtime import tracebacks

    stdlib = os.path.join(sysconfig.get_paths()["stdlib"], "runpy.py")
    brew = os.path.join(tracebacks._PACKAGE_DIR, "brew.py")
    frames = [(brew, 52), ("/home/me/train.py", 31), (stdlib, 88), ("<frozen runpy>", 198)]
    workspace.operator_tracebacks["reported"][1] = frames
    assert tracebacks.creation_report("reported", 1).splitlines() == [
        "Operator 1 of network reported was created at:",
        brew + ":52",
        "/home/me/train.py:31",
    ]
    assert tracebacks.creation_report("reported", 0) == ""
    workspace.operator_tracebacks["deep"][0] = [("/x.py", i) for i in range(10)]
    lines = tracebacks.creation_report("deep", 0).splitlines()
    assert len(lines) == 1 + tracebacks.REPORT_FRAMES + 1 and lines[-1] == "... and 2 outer frames"


def test_creation_report_names_a_notebook_cells_line_as_ipython_does(monkeypatch):
    """In a notebook, code of a cell runs from a temporary file named after the cell's hash;
    the report names it as IPython's tracebacks do ("Cell In[7], line 3")."""
    import types

    from caffe2rnn.runtime import tracebacks

    cell = "/tmp/ipykernel_4242/2729249041.py"
    known = {cell: 7}
    compiler = types.SimpleNamespace(
        format_code_name=lambda name: ("Cell", "In[%d]" % known[name]) if name in known else None
    )
    shell = types.SimpleNamespace(compile=compiler)
    monkeypatch.setitem(sys.modules, "IPython", types.SimpleNamespace(get_ipython=lambda: shell))
    workspace.operator_tracebacks["in_a_notebook"][0] = [(cell, 3), ("/home/me/lib.py", 9)]
    assert tracebacks.creation_report("in_a_notebook", 0).splitlines() == [
        "Operator 0 of network in_a_notebook was created at:",
        "Cell In[7], line 3",
        "/home/me/lib.py:9",
    ]
    # outside a notebook (no shell), file and line as before
    monkeypatch.setitem(sys.modules, "IPython", types.SimpleNamespace(get_ipython=lambda: None))
    assert tracebacks.creation_report("in_a_notebook", 0).splitlines()[1] == cell + ":3"
