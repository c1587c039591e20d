"""workspace's module API and workspace.C, Caffe2's binding object model.

The Caffe2-program tests exec code written with Caffe2's imports through
``caffe2rnn.compat``. One test runs Caffe2's own ``test_util.py`` when
``$CAFFE2_SOURCE`` points at a checkout of facebookarchive/caffe2.
"""

import os

import numpy as np
import pytest

from caffe2rnn import compat, core, errors, utils, workspace
from caffe2rnn.operators import rng
from caffe2rnn.proto import caffe2_pb2

CAFFE2_SOURCE = os.environ.get("CAFFE2_SOURCE", "")


def fill_net(name="fill", blob="testblob", value=1.0, shape=(1, 2, 3, 4)):
    net = core.Net(name)
    net.ConstantFill([], blob, shape=list(shape), value=value)
    return net


def run_caffe2_program(program, **names):
    """Exec ``program`` (Caffe2 imports) through compat; return its globals."""
    compat.install()
    try:
        namespace = compat.py2_namespace(**names)
        exec(compile(program, "<caffe2 program>", "exec"), namespace)
    finally:
        compat.uninstall()
    return namespace


# -- nets, operators and their bytes ------------------------------------------------


@pytest.mark.parametrize("form", ["Net", "NetDef", "bytes"])
def test_run_net_once_takes_a_net_its_netdef_or_its_bytes(form):
    net = fill_net(value=2.5)
    arg = {"Net": net, "NetDef": net.Proto(), "bytes": net.Proto().SerializeToString()}[form]
    assert workspace.RunNetOnce(arg) is True
    np.testing.assert_array_equal(workspace.FetchBlob("testblob"), np.full((1, 2, 3, 4), 2.5))
    assert workspace.Nets() == []  # run once: not kept


def test_run_operator_once_and_create_net_take_bytes():
    net = fill_net(value=3.0)
    assert workspace.RunOperatorOnce(net.Proto().op[0].SerializeToString()) is True
    assert workspace.Blobs() == ["testblob"]
    workspace.ResetWorkspace()
    assert workspace.CreateNet(net.Proto().SerializeToString()) is True
    assert workspace.Nets() == ["fill"]
    assert workspace.RunNet("fill") is True and workspace.RunNet(net, num_iter=2) is True
    assert workspace.FetchBlob("testblob").flat[0] == 3.0


def test_a_created_net_is_a_snapshot_of_the_net():
    net = fill_net(value=1.0)
    workspace.CreateNet(net)
    net.Scale("testblob", "scaled", scale=2.0)  # added after CreateNet
    workspace.RunNet(net)
    assert not workspace.HasBlob("scaled")


def test_stringify_proto():
    net = fill_net()
    expected = net.Proto().SerializeToString()
    assert workspace.StringifyProto(net) == expected
    assert workspace.StringifyProto(net.Proto()) == expected
    assert workspace.StringifyProto(b"raw") == b"raw" and workspace.StringifyProto("s") == "s"
    with pytest.raises(errors.WrongTypeError, match="StringifyProto of type int") as info:
        workspace.StringifyProto(3)
    assert isinstance(info.value, ValueError) and isinstance(info.value, TypeError)


@pytest.mark.parametrize(
    "call",
    [workspace.RunNetOnce, workspace.CreateNet, workspace.RunOperatorOnce, workspace.RunPlan],
)
def test_bytes_that_do_not_parse_are_a_clear_error_and_change_nothing(call):
    with pytest.raises(errors.ProtoParseError, match="do not parse as a caffe2") as info:
        call(b"\xff\xff\xff")
    assert isinstance(info.value, RuntimeError)  # Caffe2: a failed CAFFE_ENFORCE
    assert workspace.Blobs() == [] and workspace.Nets() == []


def test_text_or_other_objects_where_a_net_is_expected():
    with pytest.raises(errors.WrongTypeError, match="text format"):
        workspace.RunNetOnce('name: "n"')
    with pytest.raises(errors.WrongTypeError, match="expected a OperatorDef"):
        workspace.RunOperatorOnce(fill_net().Proto())
    with pytest.raises(errors.WrongTypeError, match="Not a Net object"):
        workspace.GetNetName(3)


def test_unknown_net_name():
    workspace.CreateNet(fill_net("known"))
    with pytest.raises(errors.WorkspaceError, match=r"Can't find net nope \(.*: known\)"):
        workspace.RunNet("nope")
    assert workspace.RunNet("nope", allow_fail=True) is False


def test_a_failed_run_leaves_the_workspace_as_it_was():
    net = core.Net("n")
    net.ConstantFill([], "a", shape=[2], value=1.0)
    net.ConstantFill([], "b", shape=[3], value=1.0)
    net.Add(["a", "b"], "c")
    with pytest.raises(errors.ShapeError):
        workspace.RunNetOnce(net)
    assert workspace.Blobs() == []
    with pytest.raises(errors.BlobNotFoundError):
        workspace.RunOperatorOnce(core.CreateOperator("Relu", ["nothing"], ["out"]))
    assert workspace.Blobs() == []


def test_dag_net_type_and_num_workers_run_in_order():
    net = core.Net("dag")
    net.Proto().type = "dag"
    net.Proto().num_workers = 4
    net.ConstantFill([], "x", shape=[2], value=1.0)
    net.Scale("x", "x", scale=3.0)
    net.Add(["x", "x"], "y")
    workspace.RunNetOnce(net)
    np.testing.assert_array_equal(workspace.FetchBlob("y"), [6.0, 6.0])


def test_creation_site_is_printed_when_an_op_fails(capsys):
    net = core.Net("traced")
    a, b = net.AddExternalInput("a", "b")
    net.Mul([a, b], "c")
    line = test_creation_site_is_printed_when_an_op_fails.__code__.co_firstlineno + 3
    with pytest.raises(errors.BlobNotFoundError):
        workspace.RunNetOnce(net)
    err = capsys.readouterr().err
    assert err.splitlines()[:2] == [
        "Operator 0 of network traced was created at:",
        "%s:%d" % (__file__, line),
    ]
    assert "_pytest" not in err and "pluggy" not in err  # the test runner's frames
    with pytest.raises(errors.BlobNotFoundError):
        workspace.CreateNet(net)
    assert "%s:%d" % (__file__, line) in capsys.readouterr().err
    with pytest.raises(errors.WorkspaceError):
        workspace.RunNet("nope")  # not an op failure: nothing printed
    assert capsys.readouterr().err == ""


# -- workspaces, root folders, feeding ------------------------------------------------


def test_switch_workspace_returns_none_and_names_may_be_bytes():
    workspace.RunNetOnce(fill_net())
    assert workspace.SwitchWorkspace(b"temp_ws", True) is None
    assert workspace.CurrentWorkspace() == "temp_ws"
    assert not workspace.HasBlob("testblob")
    assert workspace.SwitchWorkspace("default") is None
    assert workspace.HasBlob("testblob")
    with pytest.raises(errors.WorkspaceError, match="non-existing does not exist") as info:
        workspace.SwitchWorkspace("non-existing")
    assert isinstance(info.value, RuntimeError)
    assert {"default", "temp_ws"} <= set(workspace.Workspaces())


@pytest.fixture
def default_root_afterwards():
    yield
    workspace.SwitchWorkspace("default")
    workspace.ResetWorkspace(".")  # ResetWorkspace() alone would keep a test's root


def test_root_folder(tmp_path, default_root_afterwards):
    workspace.SwitchWorkspace("fresh", True)
    assert workspace.RootFolder() == "."  # a new workspace's root
    workspace.SwitchWorkspace("default")
    root = str(tmp_path / "made" / "here")
    assert workspace.ResetWorkspace(root) is True
    assert workspace.RootFolder() == root and os.path.isdir(root)
    workspace.RunNetOnce(fill_net())
    assert workspace.ResetWorkspace() is True  # keeps the root folder
    assert workspace.RootFolder() == root and workspace.Blobs() == []


def test_feed_and_fetch():
    assert workspace.FeedBlob("f", np.arange(3, dtype=np.int32)) is True
    assert workspace.FeedBlob(core.BlobReference("s"), b"bytes") is True
    tensor = utils.NumpyArrayToCaffe2Tensor(np.array([[1, 2]], np.int64))
    assert workspace.FeedBlob("t", tensor) is True
    f, s, t = workspace.FetchBlobs(["f", "s", "t"])
    assert f.dtype == np.int32 and s == b"bytes" and t.dtype == np.int64 and t.shape == (1, 2)
    assert workspace.HasBlob(core.BlobReference("f"))
    with pytest.raises(KeyError):
        workspace.blobs["absent"]
    assert workspace.GetNameScope() == ""


def test_bad_feeds_are_refused_before_a_blob_is_made():
    with pytest.raises(errors.WrongTypeError, match="blob 'x' got list"):
        workspace.FeedBlob("x", [1, 2])
    cuda = core.DeviceOption(caffe2_pb2.CUDA, 0)
    with pytest.raises(errors.EnforceNotMet, match="runs on the CPU"):
        workspace.FeedBlob("y", np.zeros(2), device_option=cuda)
    with pytest.raises(errors.WrongTypeError, match="blob name"):
        workspace.FeedBlob(3, np.zeros(2))
    assert workspace.Blobs() == []


def test_gpu_stand_ins():
    assert workspace.has_gpu_support is False and workspace.C.has_gpu_support is False
    assert workspace.NumCudaDevices() == 0 and workspace.C.has_mkldnn is False
    assert workspace.GetCudaPeerAccessPattern().shape == (0,)
    assert workspace.is_asan is False and workspace.GetDefaultGPUID() == 0


# -- workspace.C -----------------------------------------------------------------------


def test_c_workspace_current_is_a_view_of_the_current_workspace():
    current = workspace.C.Workspace.current
    assert current is workspace.C.Workspace.current
    assert "testblob" not in current.blobs
    workspace.RunNetOnce(fill_net())
    assert "testblob" in current.blobs
    np.testing.assert_array_equal(current.blobs["testblob"].fetch(), np.ones((1, 2, 3, 4)))
    current.create_blob("fed").feed(np.array([7.0]))
    assert workspace.FetchBlob("fed")[0] == 7.0
    workspace.ResetWorkspace()
    assert "testblob" not in workspace.C.Workspace.current.blobs


def test_c_workspace_nets_run_and_create_net():
    ws = workspace.C.Workspace()
    assert ws.nets == {} and ws.blobs == {}
    net = fill_net("c-net", value=0.5)
    created = ws.create_net(net)
    with pytest.raises(errors.WorkspaceError, match="refuse to overwrite"):
        ws.create_net(net)
    ws.create_net(net, True)
    ws.create_net(net, overwrite=True)
    assert "testblob" in ws.blobs and list(ws.nets) == ["c-net"]
    created.run()
    ws.nets["c-net"].run()
    np.testing.assert_array_equal(ws.blobs["testblob"].fetch(), np.full((1, 2, 3, 4), 0.5))
    assert not workspace.HasBlob("testblob")  # a C.Workspace() is outside the table
    other = fill_net("once", blob="b2", value=2.0, shape=[1])
    ws.run(other)
    assert "once" not in ws.nets and ws.blobs["b2"].fetch()[0] == 2.0
    ws.run(core.CreateOperator("ConstantFill", [], ["名前"], shape=[1], value=0.25))
    assert ws.blobs["名前"].fetch()[0] == 0.25
    with pytest.raises(errors.WrongTypeError):
        ws.create_net("...")
    with pytest.raises(errors.WrongTypeError, match="Workspace.run"):
        ws.run(42)


def test_c_workspace_parent_and_tensor_views():
    parent = workspace.C.Workspace()
    parent.create_blob("p").feed(np.array([1.5, 2.5]))
    child = workspace.C.Workspace(parent)
    assert child.has_blob("p") and "p" in child.blobs
    tensor = child.blobs["p"].tensor()
    tensor.data[0] = 9.0  # a view: writes reach the blob
    np.testing.assert_array_equal(parent.blobs["p"].fetch(), [9.0, 2.5])
    assert tensor.shape == (2,)
    tensor.init([2, 3], core.DataType.INT32)
    np.testing.assert_array_equal(tensor.data, np.zeros((2, 3), np.int32))
    with pytest.raises(errors.DTypeError, match="Use `feed`"):
        tensor.init([1], core.DataType.STRING)
    strings = np.array([b"ab", b"cd"], dtype=object)
    tensor.feed(strings)
    assert tensor.data[1] == b"cd" and tensor.data is not tensor.data  # strings: copies
    tensor.feed(np.arange(6.0))
    tensor.reshape((2, 3))
    np.testing.assert_array_equal(tensor.fetch(), np.arange(6.0).reshape(2, 3))


@pytest.mark.parametrize(
    "value",
    [
        np.arange(6, dtype=np.float32).reshape(2, 3),
        np.array([1.5, -2.0]),
        np.array([[True, False]]),
        np.array([-3, 4], np.int8),
        np.array([60000], np.uint16),
        np.array([2**40], np.int64),
        np.array([0.5, -1.25], np.float16),
        np.array([b"x", b"yz"], dtype=object),
        np.zeros((2, 0), np.int32),
    ],
)
def test_blob_serialization_round_trip(value):
    workspace.FeedBlob("v", value)
    data = workspace.SerializeBlob("v")
    proto = caffe2_pb2.BlobProto()
    proto.ParseFromString(data)
    assert proto.name == "v" and proto.type == "Tensor"
    assert list(proto.tensor.dims) == list(value.shape)
    workspace.DeserializeBlob("w", data)
    back = workspace.FetchBlob("w")
    assert back.dtype == value.dtype and back.shape == value.shape
    np.testing.assert_array_equal(back, value)


def test_string_blob_serialization_and_bad_blobs():
    workspace.FeedBlob("s", b"hello \x00 world")
    workspace.DeserializeBlob("t", workspace.SerializeBlob("s"))
    assert workspace.FetchBlob("t") == b"hello \x00 world"
    workspace.CreateBlob("empty")
    with pytest.raises(errors.DTypeError, match="'empty'.*no serializer"):
        workspace.SerializeBlob("empty")
    with pytest.raises(errors.ProtoParseError):
        workspace.DeserializeBlob("t", b"\xff\xff")


def test_predictor_runs_init_once_and_feeds_inputs_in_order():
    init = core.Net("init")
    init.ConstantFill([], "W", shape=[2, 4], value=1.0)
    init.ConstantFill([], "b", shape=[2], value=0.5)
    predict = core.Net("predict")
    y = predict.FC(["data", "W", "b"], "y", axis=0)
    predict.AddExternalOutput(y)
    workspace.FeedBlob("data", np.zeros(4, np.float32))
    predictor = workspace.Predictor(
        workspace.StringifyProto(init.Proto()), workspace.StringifyProto(predict.Proto())
    )
    x = np.array([1, 3, 256, 256], np.float32)
    outputs = predictor.run([x])  # axis=0: the 4 values are one row; y has shape (2,)
    np.testing.assert_array_equal(outputs, [[x.sum() + 0.5, x.sum() + 0.5]])
    assert not workspace.HasBlob("W")  # parameters live in the predictor's workspace
    with pytest.raises(errors.WrongTypeError, match="numpy array"):
        predictor.run([x * 0, [1, 2, 3, 4]])
    np.testing.assert_array_equal(workspace.FetchBlob("data"), x)  # nothing written
    with pytest.raises(errors.EnforceNotMet, match="4 inputs"):
        predictor.run([x, x, x, x])


def test_benchmark_net():
    net = core.Net("bench")
    net.ConstantFill([], "x", shape=[3], value=1.0)
    net.Scale("x", "y", scale=2.0)
    workspace.CreateNet(net)
    stats = workspace.BenchmarkNet("bench", 1, 3, True)
    assert len(stats) == 3 and all(s >= 0 for s in stats)
    assert len(workspace.BenchmarkNet("bench", 0, 1, False)) == 1
    with pytest.raises(errors.WorkspaceError, match="Didn't find net: nope"):
        workspace.BenchmarkNet("nope", 0, 1, False)


def test_infer_shapes_and_types_runs_on_copies():
    net = core.Net("shapes")
    net.GaussianFill([], "noise", shape=[2, 3])
    net.FC(["x", "w", "b"], "y")
    net.Shape("y", "y_shape")
    workspace.FeedBlob("x", np.ones((4, 5), np.float32))
    workspace.FeedBlob("w", np.ones((3, 5), np.float32))
    workspace.FeedBlob("b", np.ones(3, np.float32))
    rng.seed(0)
    expected_draw = rng._module_generator.standard_normal()
    rng.seed(0)
    shapes, types = workspace.InferShapesAndTypes([net])
    assert rng._module_generator.standard_normal() == expected_draw
    assert shapes == {
        "b": [3],
        "noise": [2, 3],
        "w": [3, 5],
        "x": [4, 5],
        "y": [4, 3],
        "y_shape": [2],
    }
    assert types["y"] == caffe2_pb2.TensorProto.FLOAT
    assert types["y_shape"] in (caffe2_pb2.TensorProto.INT32, caffe2_pb2.TensorProto.INT64)
    assert workspace.Blobs() == ["b", "w", "x"]
    shapes, _ = workspace.InferShapesAndTypes([net], {"x": [2, 5], "w": [3, 5]})
    assert shapes["x"] == [2, 5] and "y" not in shapes  # no b: FC could not run


# -- programs written for Caffe2 ---------------------------------------------------------


def test_workspace_program_written_for_caffe2_runs_unchanged(tmp_path, default_root_afterwards):
    program = """
import numpy as np
from caffe2.python import core, workspace
from caffe2.proto import caffe2_pb2

net = core.Net("test-net")
net.ConstantFill([], "testblob", shape=[2, 2], value=1.5)
assert workspace.RunNetOnce(net.Proto().SerializeToString())
assert workspace.RunOperatorOnce(net.Proto().op[0].SerializeToString())
assert workspace.CreateNet(workspace.StringifyProto(net))
assert workspace.RunNet(net.Proto().name)
assert workspace.SwitchWorkspace("other", True) is None
assert workspace.ResetWorkspace(ROOT)
root = workspace.RootFolder()
workspace.FeedBlob("x", np.ones(2, dtype=np.float32))
other_blobs = workspace.Blobs()
workspace.SwitchWorkspace("default")
first, = workspace.FetchBlobs(["testblob"])
ws = workspace.C.Workspace()
ws.create_blob("y").feed(np.arange(3.0))
fetched = ws.blobs["y"].fetch()
current_has = "testblob" in workspace.C.Workspace.current.blobs
import caffe2.python._import_c_extension as C
same_c = C is workspace.C and C.Workspace.current == workspace.C.Workspace.current
"""
    ns = run_caffe2_program(program, ROOT=str(tmp_path / "root"))
    assert ns["root"] == str(tmp_path / "root") and ns["other_blobs"] == ["x"]
    np.testing.assert_array_equal(ns["first"], np.full((2, 2), 1.5, np.float32))
    np.testing.assert_array_equal(ns["fetched"], np.arange(3.0))
    assert ns["current_has"] is True and ns["same_c"] is True


def test_c_workspace_as_caffe2s_test_util_uses_it():
    """test_util.TestCase: GlobalInit in setUpClass, a fresh C.Workspace and
    ResetWorkspace in setUp; hypothesis_test_util's temp_workspace(b"temp_ws")."""
    program = """
import contextlib
import unittest
import numpy as np
from caffe2.python import core, workspace

@contextlib.contextmanager
def temp_workspace(name=b"temp_ws"):
    old_ws_name = workspace.CurrentWorkspace()
    workspace.SwitchWorkspace(name, True)
    yield
    workspace.ResetWorkspace()
    workspace.SwitchWorkspace(old_ws_name)

class Case(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        workspace.GlobalInit(['caffe2', '--caffe2_log_level=0'])

    def setUp(self):
        self.ws = workspace.C.Workspace()
        workspace.ResetWorkspace()

    def test_ws(self):
        self.ws.create_blob("a").feed(np.array([1.0, 2.0], dtype=np.float32))
        self.ws.run(core.CreateOperator("Scale", ["a"], ["b"], scale=2.0))
        np.testing.assert_array_equal(self.ws.blobs["b"].fetch(), [2.0, 4.0])
        self.assertNotIn("b", workspace.blobs)
        with temp_workspace():
            workspace.FeedBlob("t", np.zeros(1))
            self.assertEqual(workspace.CurrentWorkspace(), "temp_ws")
        self.assertEqual(workspace.CurrentWorkspace(), "default")

    def tearDown(self):
        workspace.ResetWorkspace()

result = unittest.TextTestRunner(stream=open("/dev/null", "w")).run(
    unittest.defaultTestLoader.loadTestsFromTestCase(Case))
"""
    ns = run_caffe2_program(program)
    assert ns["result"].wasSuccessful(), ns["result"].failures + ns["result"].errors


def needs_caffe2_file(path, to):
    """Skip unless ``$CAFFE2_SOURCE`` holds Caffe2's ``path`` (read where it lies)."""
    return pytest.mark.skipif(
        not os.path.isfile(os.path.join(CAFFE2_SOURCE, path)),
        reason="set $CAFFE2_SOURCE to a checkout of facebookarchive/caffe2 to %s" % to,
    )


def caffe2_file(path):
    with open(os.path.join(CAFFE2_SOURCE, path), encoding="utf-8") as handle:
        return handle.read()


@needs_caffe2_file("caffe2/python/test_util.py", "run its test_util.py")
def test_caffe2s_own_test_util_runs_unchanged():
    ns = run_caffe2_program(caffe2_file("caffe2/python/test_util.py"))
    case_class = type("Probe", (ns["TestCase"],), {"runTest": lambda self: None})
    case_class.setUpClass()
    case = case_class()
    case.setUp()
    case.ws.create_blob("x").feed(ns["rand_array"](2, 3))
    assert case.ws.blobs["x"].fetch().shape == (2, 3)
    case.tearDown()


@needs_caffe2_file("caffe2/core/workspace.cc", "read workspace.cc")
def test_create_net_refusal_is_caffe2s_message():
    """The refusal to overwrite a net says what Workspace::CreateNet says, word for word."""
    import re

    source = caffe2_file("caffe2/core/workspace.cc")
    throw = source[source.index("I respectfully refuse") - 1 :]
    throw = throw[: throw.index(");")]
    # The C++ pieces in order: string literals, and net_def.name() where the name goes.
    pieces = re.findall(r'"((?:[^"\\]|\\.)*)"|(net_def\.name\(\))', throw)
    expected = "".join("c-net" if name else text.replace('\\"', '"') for text, name in pieces)
    assert "overwrite=" in expected, expected
    ws = workspace.C.Workspace()
    net = fill_net("c-net", value=0.5)  # core.Net keeps the name unique per process
    ws.create_net(net)
    with pytest.raises(errors.WorkspaceError) as info:
        ws.create_net(net)
    assert expected.replace("c-net", net.Proto().name) in str(info.value)
