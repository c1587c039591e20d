"""Fuzzing serialized protos: random, truncated and bit-flipped NetDef /
OperatorDef / TensorProto bytes, and deep or odd text protos.

Each input must parse into a message or raise
:class:`~caffe2rnn.errors.ProtoParseError`; a NetDef that parses must then run
(or fail with a caffe2rnn error) leaving the workspace exactly as it was when
it fails; a TensorProto that parses must feed (or fail the same way).
"""

import numpy as np
from fuzz_harness import FUZZ, changes, fuzz_settings, in_family, run_isolated, snapshot
from hypothesis import given
from hypothesis import strategies as st

from caffe2rnn import core, utils, workspace
from caffe2rnn.errors import ProtoNestingError, ProtoParseError
from caffe2rnn.proto import caffe2_pb2, parse, parse_text
from caffe2rnn.runtime import Workspace

MESSAGES = [
    caffe2_pb2.NetDef,
    caffe2_pb2.OperatorDef,
    caffe2_pb2.TensorProto,
    caffe2_pb2.BlobProto,
    caffe2_pb2.PlanDef,
    caffe2_pb2.Argument,
]
BLOBS = ["x", "y", "z", "w"]


def seeded_workspace():
    ws = Workspace()
    ws.feed("x", np.arange(6, dtype=np.float32).reshape(2, 3))
    ws.feed("y", np.ones((2, 3), np.float32))
    ws.feed("i", np.array([1, 0], np.int32))
    return ws


@st.composite
def operator_defs(draw):
    op_type = draw(st.sampled_from(["ConstantFill", "Add", "Relu", "Copy", "Scale", "Sum", "FC"]))
    n_in = draw(st.integers(0, 3))
    args = {}
    if draw(st.booleans()):
        args["shape"] = draw(st.lists(st.integers(0, 4), max_size=3))
    if draw(st.booleans()):
        args["value"] = draw(st.floats(-10, 10, allow_nan=False))
    if draw(st.booleans()):
        args["broadcast"] = draw(st.integers(0, 1))
    return core.CreateOperator(
        op_type,
        draw(st.lists(st.sampled_from(BLOBS + ["i"]), min_size=n_in, max_size=n_in)),
        draw(st.lists(st.sampled_from(BLOBS), min_size=1, max_size=2)),
        **args,
    )


@st.composite
def netdef_bytes(draw):
    net = caffe2_pb2.NetDef(name=draw(st.text(max_size=5)))
    net.op.extend(draw(st.lists(operator_defs(), max_size=4)))
    return net.SerializeToString()


@st.composite
def mutated(draw, source):
    data = bytearray(draw(source))
    for _ in range(draw(st.integers(0, 4))):
        kind = draw(st.sampled_from(["flip", "truncate", "insert", "delete"]))
        if kind == "flip" and data:
            i = draw(st.integers(0, len(data) - 1))
            data[i] ^= 1 << draw(st.integers(0, 7))
        elif kind == "truncate":
            data = data[: draw(st.integers(0, len(data)))]
        elif kind == "insert":
            i = draw(st.integers(0, len(data)))
            data[i:i] = draw(st.binary(min_size=1, max_size=4))
        elif kind == "delete" and data:
            i = draw(st.integers(0, len(data) - 1))
            del data[i]
    return bytes(data)


def check_net_bytes(data):
    """Parse ``data`` as a NetDef and run it: a result, or a family error
    with the workspace untouched. Returns "ok", "unparsed", "failed" or "ran"."""
    outcome, net = in_family(parse, caffe2_pb2.NetDef, data)
    if outcome == "error":
        FUZZ.check(isinstance(net, ProtoParseError), "out-of-family errors", repr(net))
        return "unparsed"
    ws = seeded_workspace()
    before = snapshot(ws)
    outcome, _ = in_family(ws.run_net_once, net)
    if outcome == "error":
        diff = changes(ws, before)
        FUZZ.check(not diff, "mismatches", "failed net changed the workspace: %s\n%s" % (diff, net))
        return "failed"
    return "ran"


@fuzz_settings(weight=4)
@given(data=st.one_of(netdef_bytes(), mutated(netdef_bytes()), st.binary(max_size=64)))
def test_netdef_bytes_parse_and_run_or_fail_cleanly(data):
    FUZZ.case()
    check_net_bytes(data)


@fuzz_settings(weight=2)
@given(cls=st.sampled_from(MESSAGES), data=st.binary(max_size=96))
def test_random_bytes_parse_or_raise_proto_parse_error(cls, data):
    FUZZ.case()
    outcome, result = in_family(parse, cls, data)
    FUZZ.check(
        outcome == "ok" or isinstance(result, ProtoParseError),
        "out-of-family errors",
        repr(result),
    )


@st.composite
def tensor_bytes(draw):
    dtype = draw(st.sampled_from([np.float32, np.float64, np.int32, np.int64, np.int8, np.bool_]))
    shape = draw(st.lists(st.integers(0, 3), max_size=3))
    array = np.arange(int(np.prod(shape)), dtype=np.int64).astype(dtype).reshape(shape)
    return utils.NumpyArrayToCaffe2Tensor(array, "t").SerializeToString()


@fuzz_settings(weight=2)
@given(data=mutated(tensor_bytes()))
def test_tensor_protos_feed_or_fail_cleanly(data):
    FUZZ.case()
    outcome, tensor = in_family(parse, caffe2_pb2.TensorProto, data)
    if outcome == "error":
        return
    workspace.FeedBlob("kept", np.ones(2, np.float32))
    outcome, _ = in_family(workspace.FeedBlob, "kept", tensor)
    if outcome == "error":
        FUZZ.check(
            np.array_equal(workspace.FetchBlob("kept"), np.ones(2)),
            "mismatches",
            "a failed FeedBlob changed the blob",
        )
    else:
        value = workspace.FetchBlob("kept")
        FUZZ.check(list(value.shape) == list(tensor.dims), "mismatches", "dims lost")


TOKENS = [
    "name:", "op", "{", "}", "<", ">", "arg", "n:", "i:", "f:", "s:", "ints:", "type:",
    '"x"', '"\\377"', "'\\x41'", "1", "-1", "1e999", "0x7f", "nan", "inf", "f", "#", "\n",
    ":", ";", ",", "[", "]", "input:", "output:", "external_input:", "device_option",
]  # fmt: skip


@st.composite
def odd_texts(draw):
    choice = draw(st.integers(0, 2))
    if choice == 0:
        return " ".join(draw(st.lists(st.sampled_from(TOKENS), max_size=30)))
    if choice == 1:
        depth = draw(st.integers(1, 3000))
        open_ = draw(st.sampled_from(["op { arg { n { ", "op < ", "arg { n { op { "]))
        return open_ * depth + "}" * (depth * open_.count("{")) + ">" * (depth * open_.count("<"))
    return draw(st.text(max_size=40))


@fuzz_settings(weight=2)
@given(text=odd_texts(), as_bytes=st.booleans())
def test_odd_text_protos_parse_or_raise_proto_parse_error(text, as_bytes):
    FUZZ.case()
    data = text.encode("utf-8", "surrogatepass") if as_bytes else text
    outcome, result = in_family(parse_text, caffe2_pb2.NetDef, data)
    if outcome == "error":
        FUZZ.check(isinstance(result, ProtoParseError), "out-of-family errors", repr(result))


def isolated_net_case(seed):
    """One crash-prone case for the subprocess runner: seeded mutated bytes."""
    rng = np.random.default_rng(seed)
    net = caffe2_pb2.NetDef(name="n")
    for _ in range(rng.integers(0, 4)):
        net.op.append(
            core.CreateOperator(
                str(rng.choice(["ConstantFill", "Add", "Relu", "Sum"])),
                list(rng.choice(BLOBS, rng.integers(0, 3))),
                list(rng.choice(BLOBS, 1)),
                shape=[int(d) for d in rng.integers(0, 4, rng.integers(0, 3))],
            )
        )
    data = bytearray(net.SerializeToString())
    for _ in range(rng.integers(0, 5)):
        if data:
            data[rng.integers(len(data))] ^= 1 << int(rng.integers(8))
    try:
        return check_net_bytes(bytes(data))
    except AssertionError as exc:
        return {"failure": str(exc)[:500]}


def test_mutated_nets_in_a_subprocess_never_crash_or_hang():
    from fuzz_harness import examples

    seeds = list(range(examples(weight=4)))
    results = run_isolated("test_proto_fuzz:isolated_net_case", seeds)
    FUZZ.case(len(seeds))
    bad = [(s, r) for s, r in zip(seeds, results) if not isinstance(r, str)]
    for _, result in bad:
        if "failure" in result:
            kind = result["failure"].partition(":")[0]
            FUZZ.note(kind if kind in FUZZ.counts else "mismatches", result["failure"])
    assert not bad, bad[:3]


def nested_netdef(depth, arg_name="step_net"):
    """A NetDef whose op holds a NetDef whose op holds ... ``depth`` levels."""
    inner = caffe2_pb2.NetDef(name="level0")
    for level in range(1, depth + 1):
        outer = caffe2_pb2.NetDef(name="level%d" % level)
        op = outer.op.add(type="Alias", input=["x"], output=["nested_out"])
        op.arg.add(name=arg_name).n.CopyFrom(inner)
        inner = outer
    return inner


@fuzz_settings(weight=1)
@given(depth=st.integers(1, 120), as_text=st.booleans())
def test_deeply_nested_nets_parse_or_raise_the_proto_error(depth, as_text):
    """Step nets inside step nets: deep enough, protobuf's parser gives up
    (upb at ~60 levels raises DecodeError) — the caller sees
    :class:`~caffe2rnn.errors.ProtoNestingError`, never the backend's error."""
    FUZZ.case()
    net = nested_netdef(depth)
    data = str(net) if as_text else net.SerializeToString()
    outcome, result = in_family(parse_text if as_text else parse, caffe2_pb2.NetDef, data)
    FUZZ.check(
        outcome == "ok" or isinstance(result, ProtoNestingError),
        "out-of-family errors",
        "depth %d: %r" % (depth, result),
    )
    if outcome == "ok":
        FUZZ.check(result == net, "mismatches", "depth %d parsed into another net" % depth)
    if not as_text:
        check_net_bytes(data)  # runs (an Alias of a missing blob fails) or fails cleanly


def test_a_net_nested_sixty_deep_is_a_proto_nesting_error():
    data = nested_netdef(60).SerializeToString()
    try:
        parse(caffe2_pb2.NetDef, data)
    except ProtoNestingError as exc:
        assert "nested too deeply" in str(exc)
    else:  # a backend with a deeper limit parses it: also fine
        assert parse(caffe2_pb2.NetDef, data) == nested_netdef(60)
