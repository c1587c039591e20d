"""Sum, Copy, CopyOnDeviceLike, Alias, StopGradient, ZeroGradient, Print, Shape."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ops_testing import check_gradients, gradient_of, random, run1, run_op

from caffe2rnn import core
from caffe2rnn.errors import DTypeError, EnforceNotMet, FileAccessError, GradientError, ShapeError
from caffe2rnn.runtime import Workspace
from caffe2rnn.runtime import settings as runtime_settings


# --- Sum ------------------------------------------------------------------------
@settings(max_examples=10, deadline=None)
@given(
    n=st.integers(1, 5),
    shape=st.lists(st.integers(0, 3), max_size=3),
    dtype=st.sampled_from([np.float32, np.float64, np.int32]),
)
def test_sum_adds_all_inputs(n, shape, dtype):
    xs = {"x%d" % i: np.asarray(random(tuple(shape), i) * 100, dtype) for i in range(n)}
    out = run1("Sum", xs)
    assert out.dtype == dtype and out.shape == tuple(shape)
    expected = xs["x0"].copy()
    for i in range(1, n):
        expected = expected + xs["x%d" % i]
    np.testing.assert_allclose(out, expected, rtol=1e-6)


def test_sum_of_one_input_is_a_copy():
    ws = run_op("Sum", {"x": random((2, 3))}, ["y"])
    assert not np.shares_memory(ws.blob("y").value, ws.blob("x").value)
    np.testing.assert_array_equal(ws.fetch("y"), ws.fetch("x"))


def test_sum_in_place_accumulates_into_input_zero_memory():
    ws = Workspace()
    a, b, c = random((2, 3), 1), random((2, 3), 2), random((2, 3), 3)
    for name, value in zip("abc", (a, b, c)):
        ws.feed(name, value)
    memory = ws.blob("a").value
    ws.run_operator_once(core.CreateOperator("Sum", ["a", "b", "c"], ["a"]))
    assert ws.blob("a").value is memory
    np.testing.assert_allclose(ws.fetch("a"), a + b + c, rtol=1e-6)


def test_sum_follows_caffe2s_addition_order():
    # out = in0 + in1, then out += in2: an input >= 2 sharing out's memory is
    # overwritten before it is read, so the result is 2 * (in0 + in1).
    ws = Workspace()
    a, b = random((4,), 1), random((4,), 2)
    ws.feed("a", a)
    ws.feed("b", b)
    ws.feed("out", np.zeros(4, np.float32))
    ws.run_operator_once(core.CreateOperator("Alias", ["out"], ["c"]))
    ws.run_operator_once(core.CreateOperator("Sum", ["a", "b", "c"], ["out"]))
    np.testing.assert_allclose(ws.fetch("out"), 2 * (a + b), rtol=1e-6)


def test_sum_schema_allows_in_place_only_on_input_zero():
    with pytest.raises(EnforceNotMet, match="does not allow input 1 \\('b'\\)"):
        run_op("Sum", {"a": random((2,)), "b": random((2,))}, ["b"])


@pytest.mark.parametrize(
    "inputs, error, pattern",
    [
        (
            {"a": random((2, 3)), "b": random((3, 2))},
            ShapeError,
            r"input 1 \('b'\) has shape \(3, 2\); expected \(2, 3\) like input 0 \('a'\)",
        ),
        (
            {"a": random((2,)), "b": random((2,)), "c": random((2,), dtype=np.float64)},
            DTypeError,
            r"input 2 \('c'\) has type float64; expected float32",
        ),
        ({"a": np.ones(2, np.int64)}, DTypeError, r"input 0 \('a'\) has type int64"),
    ],
)
def test_sum_errors_name_the_blob_and_write_nothing(inputs, error, pattern):
    ws = Workspace()
    with pytest.raises(error, match=pattern):
        run_op("Sum", inputs, ["out"], ws=ws)
    assert not ws.has_blob("out")


def test_sum_gradients_including_in_place():
    inputs = {"a": random((2, 3), 1), "b": random((2, 3), 2), "c": random((2, 3), 3)}
    check_gradients("Sum", inputs, ["s"])
    check_gradients("Sum", inputs, ["a"])
    ops, g_input = gradient_of("Sum", ["a", "b", "c"], ["s"])
    assert ops == [] and g_input == ["s_grad"] * 3


# --- Copy, CopyOnDeviceLike, Alias ----------------------------------------------------
@pytest.mark.parametrize(
    "value", [random((2, 3)), np.arange(5, dtype=np.int64), np.array(3.5), np.array([True, False])]
)
def test_copy_is_deep(value):
    ws = run_op("Copy", {"x": value}, ["y"])
    y = ws.blob("y").value
    assert y.dtype == value.dtype and not np.shares_memory(y, ws.blob("x").value)
    np.testing.assert_array_equal(y, value)


def test_copy_writes_into_existing_output_memory():
    ws = Workspace()
    ws.feed("y", np.zeros((3, 2), np.float32))
    memory = ws.blob("y").value
    run_op("Copy", {"x": random((2, 3))}, ["y"], ws=ws)
    assert np.shares_memory(ws.blob("y").value, memory)
    np.testing.assert_array_equal(ws.fetch("y"), ws.fetch("x"))


def test_copy_gradient_is_copy_on_device_like():
    ops, g_input = gradient_of("Copy", ["x"], ["y"], some_arg=2)
    assert ops == [("CopyOnDeviceLike", "", ["y_grad", "x"], ["x_grad"], [("some_arg", 2)], True)]
    assert g_input == ["x_grad"]
    check_gradients("Copy", {"x": random((2, 3))}, ["y"])
    out = run1("CopyOnDeviceLike", {"x": random((2,)), "like": random((5,))})
    np.testing.assert_array_equal(out, random((2,)))


def test_copy_of_a_non_tensor_names_the_blob():
    ws = Workspace()
    ws.feed("x", "text")
    with pytest.raises(DTypeError, match=r"input 0 \('x'\) is a str, not a tensor"):
        ws.run_operator_once(core.CreateOperator("Copy", ["x"], ["y"]))


def test_alias_shares_storage():
    ws = run_op("Alias", {"x": random((2, 3))}, ["y"])
    ws.blob("x").value[0, 0] = 42.0
    assert ws.fetch("y")[0, 0] == 42.0
    ops, g_input = gradient_of("Alias", ["x"], ["y"])
    assert ops == [] and g_input == ["y_grad"]


# --- StopGradient, ZeroGradient ------------------------------------------------------
def test_stop_gradient():
    x = random((2, 3))
    ws = run_op("StopGradient", {"x": x}, ["y"])
    assert not np.shares_memory(ws.blob("y").value, ws.blob("x").value)
    np.testing.assert_array_equal(ws.fetch("y"), x)
    ws = run_op("StopGradient", {"x": x}, ["x"])
    np.testing.assert_array_equal(ws.fetch("x"), x)
    assert gradient_of("StopGradient", ["x"], ["y"]) == ([], [None])


def test_zero_gradient():
    ws = run_op("ZeroGradient", {"x": random((2,))}, [])
    assert ws.local_blobs() == ["x"]
    ops, g_input = gradient_of("ZeroGradient", ["x"], [], g_output=[])
    assert ops == [("ConstantFill", "", ["x"], ["x_grad"], [("value", 0.0)], True)]
    assert g_input == ["x_grad"]


# --- Print, Shape -------------------------------------------------------------------
def test_print_writes_name_dims_and_values(capsys):
    run_op("Print", {"blob/x": np.arange(6, dtype=np.int32).reshape(2, 3)}, [])
    out = capsys.readouterr().out
    assert "blob/x" in out and "(2,3)" in out and "0,1,2,3,4,5" in out


def test_print_limit_and_to_file_in_the_log_folder_under_the_root(tmp_path, monkeypatch):
    cwd, root = tmp_path / "cwd", tmp_path / "root"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    ws = Workspace(root_folder=str(root))
    run_op("Print", {"x": np.arange(10.0)}, [], ws=ws, to_file=1, limit=3)
    text = (root / "logs" / "x.log").read_text()
    assert "0.0,1.0,2.0\n" in text and "3.0" not in text
    run_op("Print", {"scope/y": np.zeros(1)}, [], ws=ws, to_file=1)
    assert (root / "logs" / "scope_y.log").exists()
    assert list(cwd.iterdir()) == []  # never the current directory


def test_print_to_file_follows_the_log_dir_setting(tmp_path):
    old = runtime_settings.set_log_dir(tmp_path / "elsewhere")
    try:
        run_op("Print", {"x": np.ones(2)}, [], to_file=1)
    finally:
        runtime_settings.set_log_dir(old)
    assert "1.0,1.0" in (tmp_path / "elsewhere" / "x.log").read_text()


def test_print_to_an_unwritable_log_folder_is_a_file_access_error(tmp_path):
    (tmp_path / "logs").write_text("a file where the folder should be")
    with pytest.raises(FileAccessError, match=r"cannot append blob 'x' to .*x\.log") as info:
        run_op("Print", {"x": np.ones(2)}, [], ws=Workspace(root_folder=str(tmp_path)), to_file=1)
    assert isinstance(info.value, OSError)


@pytest.mark.parametrize("op_type, outputs", [("Print", []), ("Shape", ["s"])])
def test_should_not_do_gradient(op_type, outputs):
    with pytest.raises(
        GradientError, match="One should not call gradient for operator %s" % op_type
    ):
        gradient_of(op_type, ["x"], outputs)


@pytest.mark.parametrize("shape", [(2, 3, 4), (5,), (), (0, 2)])
def test_shape(shape):
    s = run1("Shape", {"x": np.zeros(shape, np.float32)})
    assert s.dtype == np.int64
    np.testing.assert_array_equal(s, np.array(shape, np.int64))


@pytest.mark.parametrize(
    "op_type",
    [
        "RecurrentNetwork",
        "RecurrentNetworkGradient",
        "rnn_internal_accumulate_gradient_input",
        "rnn_internal_apply_link",
    ],
)
def test_recurrent_op_names_are_registered(op_type):
    # spec §7.19: Net.__getattr__ refuses op types that are not registered.
    assert core.IsOperator(op_type)


# --- Free -------------------------------------------------------------------------------
def test_free_empties_its_blobs_in_place():
    ws = run_op("Free", {"a": random((2,)), "b": random((3,))}, ["a", "b"])
    assert ws.has_blob("a") and ws.blob("a").value is None and ws.blob("b").value is None
    with pytest.raises(GradientError, match="should not call gradient"):
        gradient_of("Free", ["a"], ["a"])


@pytest.mark.parametrize("outputs", [["b", "a"], ["a"], ["c", "d"]])
def test_free_outputs_must_be_its_inputs(outputs):
    """free_op.cc: ``SameNumberOfOutput().EnforceOneToOneInplace()``."""
    with pytest.raises(EnforceNotMet, match="did not pass schema checking: Free "):
        run_op("Free", {"a": random((2,)), "b": random((3,))}, outputs)


# --- Size, NanCheck ----------------------------------------------------------------------
def test_size_counts_elements():
    out = run1("Size", {"x": np.zeros((2, 3, 4), np.float32)})
    assert out.shape == () and out.dtype == np.int64 and int(out) == 24


def test_nan_check_copies_finite_values_and_fails_naming_the_blob_otherwise():
    x = random((2, 3), 1)
    np.testing.assert_array_equal(run1("NanCheck", {"x": x}), x)
    bad = x.copy()
    bad[1, 2] = np.inf
    ws = Workspace()
    ws.feed("bad", bad)
    with pytest.raises(EnforceNotMet, match=r"NaN or inf: \[bad\].*'bad' at \[5\]"):
        ws.run_operator_once(core.CreateOperator("NanCheck", ["bad"], ["y"]))
    ops, _ = gradient_of("NanCheck", ["x"], ["y"])
    assert ops == [("NanCheck", "", ["y_grad"], ["x_grad"], [], True)]


@pytest.mark.parametrize("shape", [(0,), (2, 0), (3,), ()])
def test_has_elements_and_is_empty(shape):
    x = np.zeros(shape, np.float32)
    assert bool(run1("HasElements", {"x": x})) == (x.size > 0)
    assert bool(run1("IsEmpty", {"x": x})) == (x.size == 0)


def _print_oracle(runs, every_n):
    """PrintOp::RunOnDevice (utility_ops.h at 042e8ede4): ``if (++occurrences_mod_n_ >
    every_n_) occurrences_mod_n_ -= every_n_; if (occurrences_mod_n_ != 1) return true;``"""
    printed, occurrences = [], 0
    for run in range(runs):
        occurrences += 1
        if occurrences > every_n:
            occurrences -= every_n
        if occurrences == 1:
            printed.append(run)
    return printed


@pytest.mark.parametrize("every_n", [1, 2, 3])
def test_print_every_n_from_e6(capsys, every_n):
    ws = Workspace()
    ws.feed("x", np.arange(3, dtype=np.int32))
    net = core.Net("p")
    net.Proto().op.extend([core.CreateOperator("Print", ["x"], [], every_n=every_n)])
    ws.create_net(net.Proto(), era="E6")
    printed = []
    for run in range(7):
        ws.run_net("p")
        if capsys.readouterr().out:
            printed.append(run)
    assert printed == _print_oracle(7, every_n)


def test_print_every_n_is_not_read_before_e6(capsys):
    ws = Workspace()
    ws.feed("x", np.arange(3, dtype=np.int32))
    op = core.CreateOperator("Print", ["x"], [], every_n=0)
    ws.run_operator_once(op, era="E5")  # 0cdd09da6's PrintOp did not read every_n
    assert "0,1,2" in capsys.readouterr().out
    with pytest.raises(EnforceNotMet, match="every_n must be >= 1"):
        ws.run_operator_once(op, era="E6")


def test_print_limit_zero_is_the_default_thousand(capsys):
    """TensorPrinter(name, file, limit): ``limit_(limit ? limit : k_limit_default_)``, 1000."""
    run_op("Print", {"x": np.arange(1200, dtype=np.int32)}, [], limit=0)
    values = capsys.readouterr().out.strip().split(": ")[-1].split(",")
    assert len(values) == 1000
    run_op("Print", {"x": np.arange(5, dtype=np.int32)}, [], limit=2)
    assert capsys.readouterr().out.strip().endswith(": 0,1")
