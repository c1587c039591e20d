"""Save, Load, DBExists, Checkpoint, CreateDB and TensorProtosDBInput: minidb
files in Caffe2's layout, written and read here by an independent reader and
writer (struct + protobuf), across processes, all-or-nothing loads, and the
errors that name the file and the blob."""

import os
import struct
import subprocess
import sys

import numpy as np
import pytest

from caffe2rnn import core
from caffe2rnn.errors import ArgumentError, DatabaseError, EnforceNotMet
from caffe2rnn.proto import caffe2_pb2
from caffe2rnn.runtime import Workspace, serialization


def read_minidb(path):
    """The (key, BlobProto) records of a minidb file, read with struct alone."""
    out = []
    with open(path, "rb") as f:
        data = f.read()
    pos = 0
    while pos < len(data):
        key_len, value_len = struct.unpack_from("<ii", data, pos)
        pos += 8
        key = data[pos : pos + key_len].decode()
        proto = caffe2_pb2.BlobProto()
        proto.ParseFromString(data[pos + key_len : pos + key_len + value_len])
        pos += key_len + value_len
        out.append((key, proto))
    return out


def write_minidb(path, records):
    with open(path, "wb") as f:
        for key, value in records:
            f.write(struct.pack("<ii", len(key), len(value)) + key.encode() + value)


def save(ws, names, path, **args):
    ws.run_operator_once(
        core.CreateOperator(
            "Save", names, [], db=str(path), db_type="minidb", absolute_path=1, **args
        )
    )


def load(ws, outputs, path, db_type="minidb", **args):
    ws.run_operator_once(
        core.CreateOperator(
            "Load", [], outputs, db=str(path), db_type=db_type, absolute_path=1, **args
        )
    )


DTYPES = [
    np.float16,
    np.float32,
    np.float64,
    np.bool_,
    np.int8,
    np.int16,
    np.int32,
    np.int64,
    np.uint8,
    np.uint16,
]


def test_save_writes_caffe2s_records(tmp_path):
    ws = Workspace()
    ws.feed("w", np.arange(6, dtype=np.float32).reshape(2, 3))
    ws.feed("s", b"hello")
    save(ws, ["w", "s"], tmp_path / "db")
    (key_w, w), (key_s, s) = read_minidb(tmp_path / "db")
    assert key_w == "w#%0" and w.type == "Tensor" and w.name == "w"
    assert list(w.tensor.dims) == [2, 3] and w.tensor.data_type == caffe2_pb2.TensorProto.FLOAT
    assert list(w.tensor.float_data) == list(range(6))
    assert (w.tensor.segment.begin, w.tensor.segment.end) == (0, 6)
    assert w.tensor.device_detail.device_type == caffe2_pb2.CPU
    assert key_s == "s" and s.type == "std::string" and s.content == b"hello"


def test_round_trip_of_every_type_and_an_empty_tensor(tmp_path):
    ws = Workspace()
    arrays = {
        "t%d" % i: np.random.permutation(6).reshape(2, 3).astype(t) for i, t in enumerate(DTYPES)
    }
    arrays["empty"] = np.zeros((0, 4), np.float32)
    arrays["text"] = np.array([b"a", b"bc"], dtype=object)
    for name, value in arrays.items():
        ws.feed(name, value)
    save(ws, list(arrays), tmp_path / "db")
    fresh = Workspace()
    load(fresh, [], tmp_path / "db", load_all=1)
    for name, value in arrays.items():
        got = fresh.fetch(name)
        assert got.dtype == value.dtype and got.shape == value.shape, name
        np.testing.assert_array_equal(got, value)


def test_a_large_tensor_is_saved_in_chunks_and_reassembled(tmp_path, monkeypatch):
    monkeypatch.setattr(serialization, "CHUNK_SIZE", 4)
    ws = Workspace()
    value = np.arange(10, dtype=np.int64).reshape(5, 2)
    ws.feed("big", value)
    save(ws, ["big"], tmp_path / "db")
    keys = [k for k, _ in read_minidb(tmp_path / "db")]
    assert keys == ["big#%0", "big#%1", "big#%2"]
    fresh = Workspace()
    load(fresh, ["big"], tmp_path / "db")
    np.testing.assert_array_equal(fresh.fetch("big"), value)


def test_a_file_written_by_hand_in_caffe2s_layout_loads(tmp_path):
    """Two chunks out of order, as Caffe2's serializer threads could write them."""
    chunks = []
    for begin, end in ((3, 6), (0, 3)):
        proto = caffe2_pb2.BlobProto(name="x", type="Tensor")
        proto.tensor.dims.extend([2, 3])
        proto.tensor.data_type = caffe2_pb2.TensorProto.DOUBLE
        proto.tensor.double_data.extend([float(v) for v in range(begin, end)])
        proto.tensor.segment.begin, proto.tensor.segment.end = begin, end
        chunks.append(("x#%%%d" % (begin // 3), proto.SerializeToString()))
    write_minidb(tmp_path / "db", chunks)
    ws = Workspace()
    load(ws, ["x"], tmp_path / "db")
    np.testing.assert_array_equal(ws.fetch("x"), np.arange(6.0).reshape(2, 3))


def test_prefixes_overrides_and_source_names(tmp_path):
    ws = Workspace()
    ws.feed("gpu_0/w", np.ones(2, np.float32))
    ws.feed("gpu_0/b", np.zeros(2, np.float32))
    save(ws, ["gpu_0/w", "gpu_0/b"], tmp_path / "a", strip_prefix="gpu_0/")
    assert [k for k, _ in read_minidb(tmp_path / "a")] == ["w#%0", "b#%0"]
    save(ws, ["gpu_0/w"], tmp_path / "b", blob_name_overrides=["renamed"])
    fresh = Workspace()
    load(fresh, ["model/w", "model/b"], tmp_path / "a", add_prefix="model/")
    load(fresh, ["mine"], tmp_path / "b", source_blob_names=["renamed"])
    np.testing.assert_array_equal(fresh.fetch("model/w"), np.ones(2))
    np.testing.assert_array_equal(fresh.fetch("mine"), np.ones(2))


def test_a_checkpoint_loads_in_a_fresh_process(tmp_path):
    ws = Workspace()
    ws.feed("w", np.arange(4, dtype=np.float32))
    ws.feed("it", np.array([7], np.int64))
    save(ws, ["w", "it"], tmp_path / "ckpt")
    code = (
        "import numpy as np\n"
        "from caffe2rnn import core, workspace\n"
        "workspace.RunOperatorOnce(core.CreateOperator('Load', [], ['w', 'it'], "
        "db=%r, db_type='minidb', absolute_path=1))\n"
        "print(workspace.FetchBlob('w').tolist(), workspace.FetchBlob('it').tolist())\n"
    ) % str(tmp_path / "ckpt")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[0.0, 1.0, 2.0, 3.0] [7]"


def test_relative_paths_use_the_root_folder(tmp_path):
    ws = Workspace(root_folder=str(tmp_path))
    ws.feed("w", np.ones(3, np.float32))
    ws.run_operator_once(core.CreateOperator("Save", ["w"], [], db="rel.minidb", db_type="minidb"))
    assert (tmp_path / "rel.minidb").exists()
    exists = core.CreateOperator("DBExists", [], ["e"], db_name="rel.minidb", db_type="minidb")
    ws.run_operator_once(exists)
    assert ws.fetch("e") == np.bool_(True) and ws.fetch("e").shape == ()
    ws.run_operator_once(
        core.CreateOperator("DBExists", [], ["e"], db_name="nope", db_type="minidb")
    )
    assert not ws.fetch("e")


@pytest.mark.parametrize(
    "corrupt, match",
    [
        (lambda d: d[:-3], r"blob 'b'|record 1.*truncated"),
        (lambda d: d[:5], r"record 0.*header"),
        (lambda d: struct.pack("<ii", 0, 4) + d[8:], r"record 0.*must both be > 0"),
        (lambda d: struct.pack("<ii", 1, 1 << 30) + d[8:], r"record 0.*truncated"),
        (lambda d: d[:8] + d[8:11] + b"\xff" * (len(d) - 11), r"'a'|record|Proto"),
    ],
)
def test_a_bad_file_is_an_error_naming_it_and_the_workspace_is_untouched(tmp_path, corrupt, match):
    ws = Workspace()
    ws.feed("a", np.arange(3, dtype=np.float32))
    ws.feed("b", np.arange(4, dtype=np.float32))
    save(ws, ["a", "b"], tmp_path / "db")
    data = (tmp_path / "db").read_bytes()
    (tmp_path / "db").write_bytes(corrupt(data))
    target = Workspace()
    target.feed("a", np.full(3, -1.0, np.float32))
    before = target.fetch("a").copy()
    with pytest.raises(DatabaseError, match=match) as info:
        load(target, ["a", "b"], tmp_path / "db")
    assert str(tmp_path / "db") in str(info.value)
    assert isinstance(info.value, RuntimeError)
    np.testing.assert_array_equal(target.fetch("a"), before)
    assert not target.has_blob("b")


def test_missing_blobs_fail_before_anything_is_written(tmp_path):
    ws = Workspace()
    ws.feed("a", np.ones(2, np.float32))
    save(ws, ["a"], tmp_path / "db")
    target = Workspace()
    with pytest.raises(EnforceNotMet, match=r"Expected to load 2 blobs, got 1 only; missing: b"):
        load(target, ["a", "b"], tmp_path / "db")
    assert not target.has_blob("a")
    load(target, ["a", "b"], tmp_path / "db", allow_incomplete=True)
    np.testing.assert_array_equal(target.fetch("a"), np.ones(2))


@pytest.mark.parametrize(
    "op_type, outputs, args, match",
    [  # Caffe2's constructor enforces (load_save_op.h, 0cdd09da6)
        ("Save", [], {"db_type": "minidb"}, "Must specify a db name"),
        ("Save", [], {"db": "x"}, "Must specify a db type"),
        (
            "Save",
            [],
            {"db": "x", "db_type": "minidb", "blob_name_overrides": ["a", "b"]},
            "mismatch",
        ),
        ("Load", ["a", "a"], {"db": "x", "db_type": "minidb"}, "Duplicated source blob name: a"),
        (
            "Load",
            ["a"],
            {"db": "x", "db_type": "minidb", "load_all": 1, "source_blob_names": ["a"]},
            "load_all",
        ),
    ],
)
def test_argument_errors(op_type, outputs, args, match):
    ws = Workspace()
    ws.feed("a", np.ones(1, np.float32))
    inputs = ["a"] if op_type == "Save" else []
    with pytest.raises(ArgumentError, match=match):
        ws.run_operator_once(core.CreateOperator(op_type, inputs, outputs, **args))


def test_key_value_db_types_use_the_minidb_layout_and_others_are_refused(tmp_path):
    ws = Workspace()
    ws.feed("a", np.ones(1, np.float32))
    for db_type in ("leveldb", "lmdb"):
        path = str(tmp_path / db_type)
        ws.run_operator_once(
            core.CreateOperator("Save", ["a"], [], db=path, db_type=db_type, absolute_path=1)
        )
        assert [k for k, _ in read_minidb(path)] == ["a#%0"]
    op = core.CreateOperator(
        "Save", ["a"], [], db=str(tmp_path / "x"), db_type="zmqdb", absolute_path=1
    )
    with pytest.raises(DatabaseError, match="db_type 'zmqdb' is not available"):
        ws.run_operator_once(op)
    (tmp_path / "real_leveldb").mkdir()  # what Caffe2's leveldb wrote: a folder
    with pytest.raises(DatabaseError, match="Cannot open file: .*real_leveldb"):
        load(ws, ["a"], tmp_path / "real_leveldb", db_type="leveldb")


def test_checkpoint_saves_every_n_iterations(tmp_path):
    ws = Workspace()
    ws.feed("w", np.ones(2, np.float32))
    pattern = str(tmp_path / "ckpt_%03d.minidb")
    op = core.CreateOperator(
        "Checkpoint", ["it", "w"], [], db=pattern, db_type="minidb", every=2, absolute_path=1
    )
    for it in range(1, 5):
        ws.feed("it", np.array([it], np.int64))
        ws.run_operator_once(op)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ckpt_002.minidb", "ckpt_004.minidb"]
    assert [k for k, _ in read_minidb(tmp_path / "ckpt_004.minidb")] == ["it#%0", "w#%0"]


def tensor_protos(*arrays):
    from caffe2rnn.proto import tensors

    protos = caffe2_pb2.TensorProtos()
    protos.protos.extend(tensors.NumpyArrayToCaffe2Tensor(a) for a in arrays)
    return protos.SerializeToString()


def test_tensor_protos_db_input_batches_and_wraps_around(tmp_path):
    items = [(np.full((2,), i, np.float32), np.array(i, np.int32)) for i in range(5)]
    write_minidb(
        tmp_path / "data", [("%04d" % i, tensor_protos(*item)) for i, item in enumerate(items)]
    )
    ws = Workspace()
    ws.run_operator_once(
        core.CreateOperator("CreateDB", [], ["reader"], db=str(tmp_path / "data"), db_type="minidb")
    )
    op = core.CreateOperator("TensorProtosDBInput", ["reader"], ["data", "label"], batch_size=3)
    ws.run_operator_once(op)
    np.testing.assert_array_equal(ws.fetch("label"), [0, 1, 2])
    assert ws.fetch("data").shape == (3, 2)
    ws.run_operator_once(op)
    np.testing.assert_array_equal(ws.fetch("label"), [3, 4, 0])  # back to the first record


def test_tensor_protos_db_input_shards(tmp_path):
    write_minidb(
        tmp_path / "data", [("%d" % i, tensor_protos(np.array([i], np.int64))) for i in range(6)]
    )
    ws = Workspace()
    create = core.CreateOperator(
        "CreateDB", [], ["r"], db=str(tmp_path / "data"), db_type="minidb", num_shards=3, shard_id=1
    )
    ws.run_operator_once(create)
    ws.run_operator_once(core.CreateOperator("TensorProtosDBInput", ["r"], ["x"], batch_size=3))
    np.testing.assert_array_equal(ws.fetch("x").ravel(), [1, 4, 1])


def test_tensor_protos_db_input_refuses_a_record_with_the_wrong_count(tmp_path):
    write_minidb(tmp_path / "data", [("0", tensor_protos(np.zeros(2), np.zeros(1)))])
    ws = Workspace()
    ws.run_operator_once(
        core.CreateOperator("CreateDB", [], ["r"], db=str(tmp_path / "data"), db_type="minidb")
    )
    with pytest.raises(EnforceNotMet, match=r"record '0' holds 2 tensors; the op has 1 outputs"):
        ws.run_operator_once(core.CreateOperator("TensorProtosDBInput", ["r"], ["x"]))


def test_load_from_a_db_reader_input(tmp_path):
    ws = Workspace()
    ws.feed("w", np.arange(3, dtype=np.int32))
    save(ws, ["w"], tmp_path / "db")
    fresh = Workspace()
    fresh.run_operator_once(
        core.CreateOperator("CreateDB", [], ["r"], db=str(tmp_path / "db"), db_type="minidb")
    )
    fresh.run_operator_once(core.CreateOperator("Load", ["r"], ["w"]))
    np.testing.assert_array_equal(fresh.fetch("w"), [0, 1, 2])


def test_save_refuses_a_blob_without_serializer_before_writing(tmp_path):
    ws = Workspace()
    ws.feed("a", np.ones(1, np.float32))
    ws.run_operator_once(core.CreateOperator("CreateMutex", [], ["m"]))
    op = core.CreateOperator(
        "Save", ["a", "m"], [], db=str(tmp_path / "db"), db_type="minidb", absolute_path=1
    )
    with pytest.raises(EnforceNotMet, match="No known serializer for blob 'm'"):
        ws.run_operator_once(op)
    assert not os.path.exists(tmp_path / "db")


def test_model_helper_tensor_protos_db_input(tmp_path):
    """Caffe2's examples/lmdb_create_example.py flow, on a minidb."""
    from caffe2rnn import workspace
    from caffe2rnn.model_helper import ModelHelper

    path = str(tmp_path / "train.minidb")
    rows = [(np.full((3,), i, np.float32), np.array(i % 2, np.int32)) for i in range(4)]
    write_minidb(path, [("%08d" % i, tensor_protos(*row)) for i, row in enumerate(rows)])
    model = ModelHelper(name="reader")
    data, label = model.TensorProtosDBInput(
        [], ["data", "label"], batch_size=2, db=path, db_type="minidb"
    )
    assert [op.type for op in model.param_init_net.Proto().op] == ["CreateDB"]
    assert model.param_init_net.Proto().op[0].output[0] == "dbreader_" + path
    workspace.ResetWorkspace()
    workspace.RunNetOnce(model.param_init_net)
    workspace.CreateNet(model.net)
    workspace.RunNet(model.net.Proto().name)
    workspace.RunNet(model.net.Proto().name)
    np.testing.assert_array_equal(workspace.FetchBlob("data"), [[2, 2, 2], [3, 3, 3]])
    np.testing.assert_array_equal(workspace.FetchBlob("label"), [0, 1])
    workspace.ResetWorkspace()


def test_seq2seq_translate_loads_a_train_checkpoint(tmp_path):
    """The calls of Caffe2's models/seq2seq: train.py saves GetAllParams(),
    translate.py reads them through a DBReader with load_all, add_prefix and
    strip_prefix (a 'gpu_0/' that is absent leaves the name as it is)."""
    train = Workspace()
    params = {
        "encoder/w": np.arange(4, dtype=np.float32),
        "gpu_0/decoder/b": np.ones(2, np.float32),
    }
    for name, value in params.items():
        train.feed(name, value)
    path = str(tmp_path / "model-0")
    train.run_operator_once(
        core.CreateOperator("Save", list(params), [], absolute_path=True, db=path, db_type="minidb")
    )
    translate = Workspace()
    translate.run_operator_once(
        core.CreateOperator("CreateDB", [], ["reader"], db=path, db_type="minidb")
    )
    translate.run_operator_once(
        core.CreateOperator(
            "Load",
            ["reader"],
            ["model0/encoder/w"],
            load_all=1,
            add_prefix="model0/",
            strip_prefix="gpu_0/",
        )
    )
    np.testing.assert_array_equal(translate.fetch("model0/encoder/w"), params["encoder/w"])
    np.testing.assert_array_equal(translate.fetch("model0/decoder/b"), params["gpu_0/decoder/b"])


def c_sprintf(pattern, value):
    """The C library's snprintf, which Caffe2's FormatString (load_save_op.h) called as
    ``sprintf(buffer, pattern.c_str(), iter)`` with an int64_t ``iter``."""
    import ctypes

    libc = ctypes.CDLL(None)
    buf = ctypes.create_string_buffer(2048)
    libc.snprintf(buf, 2048, pattern.encode(), ctypes.c_longlong(value))
    return buf.value.decode()


@pytest.mark.parametrize(
    "pattern",
    ["ckpt_%05d.minidb", "ckpt.minidb", "c_%d_%%.db", "c_%lld", "c_%ld", "c_%x", "c_%8d|"],
)
@pytest.mark.parametrize("value", [0, 7, 123456, 2**33 + 5])
def test_checkpoint_names_are_cs_sprintf(pattern, value):
    from caffe2rnn.operators.load_save import format_db_pattern

    assert format_db_pattern(pattern, value) == c_sprintf(pattern, value)


def test_checkpoint_refuses_what_made_sprintf_read_garbage():
    from caffe2rnn.operators.load_save import format_db_pattern

    for pattern in ("c_%s", "c_%d_%d", "c_%f"):
        with pytest.raises(ArgumentError, match="argument db"):
            format_db_pattern(pattern, 3)
    with pytest.raises(ArgumentError, match="1024"):
        format_db_pattern("x" * 1030, 3)


def test_checkpoint_checks_db_type_only_when_it_saves(tmp_path):
    ws = Workspace(root_folder=str(tmp_path))
    ws.feed("iter", np.array([3], np.int64))
    ws.feed("w", np.ones(2, np.float32))
    op = core.CreateOperator("Checkpoint", ["iter", "w"], [], db="ck_%d.minidb", every=2)
    ws.run_operator_once(op)  # 3 % 2: no checkpoint, and no db_type needed
    ws.feed("iter", np.array([4], np.int64))
    with pytest.raises(ArgumentError, match="Must specify a db type"):
        ws.run_operator_once(op)
    op = core.CreateOperator(
        "Checkpoint", ["iter", "w"], [], db="/ck.minidb", db_type="minidb", every=2
    )
    ws.run_operator_once(op)  # no %d: the pattern itself; under the root folder, as Caffe2
    assert (tmp_path / "ck.minidb").exists()
