"""GradientRegistry and IR rules (caffe2-core.md §4.1-§4.4, §4.9).

The toy op types (TestDirect, TestUseInput, ...) are registered by
gradient_test_ops; their gradient ops are named like Caffe2's test ops.
"""

import pytest
from gradient_test_ops import grad_op, texts

from caffe2rnn import core, eras
from caffe2rnn.core import CreateOperator, GradientRegistry, GradientSlice
from caffe2rnn.core.gradients import IR, GetIndexFromGradientList
from caffe2rnn.errors import GradientError, GradientUsageError
from caffe2rnn.operators.gradient_maker import GradientMaker
from caffe2rnn.runtime.registry import register_gradient

CUDA1 = core.DeviceOption(1, 1)


def backward(ops, ys):
    return GradientRegistry.GetBackwardPass(ops, ys)


def as_strings(grad_map):
    return {str(k): str(v) for k, v in grad_map.items()}


# --- Python-registered makers (the Caffe2 core_gradients_test style) ------------
@GradientRegistry.RegisterGradient("TestPyDirect")
def _py_direct(op, g_output):
    return (
        CreateOperator("PyDirectGradient", list(g_output), [s + "_grad" for s in op.input]),
        [s + "_grad" for s in op.input],
    )


@GradientRegistry.RegisterGradient("TestPyNothing")
def _py_nothing(op, g_output):
    return None, [None] * len(op.input)


@register_gradient("TestNativeAndPy")
class _NativeWins(GradientMaker):
    def get_gradient_defs(self):
        return [self.op_def("NativeGradient", [self.GO(0)], [self.GI(0)])]


@GradientRegistry.RegisterGradient("TestNativeAndPy")
def _python_loses(op, g_output):
    raise AssertionError("the native maker must be asked first")


@GradientRegistry.RegisterGradient("TestPyOddName")
def _py_odd_name(op, g_output):
    return ([CreateOperator("OddGradient", list(g_output), ["in_odd_grad"])], ["in_odd_grad"])


@GradientRegistry.RegisterGradient("TestPyOutOfScope")
def _py_out_of_scope(op, g_output):
    return [CreateOperator("G", ["mystery"], [op.input[0] + "_grad"])], [op.input[0] + "_grad"]


@GradientRegistry.RegisterGradient("TestPyShortList")
def _py_short(op, g_output):
    return [], []


@GradientRegistry.RegisterGradient("TestPySparse")
def _py_sparse(op, g_output):
    """Both halves of input 0's sparse gradient are made by one op."""
    indices, values = op.input[0] + "_grad_indices", op.input[0] + "_grad_values"
    return (
        [CreateOperator("SparseGradient", list(g_output), [indices, values])],
        [GradientSlice(indices, values)],
    )


@GradientRegistry.RegisterGradient("TestPyGather")
def _py_gather(op, g_output):
    """Caffe2's Gather: indices are the forward input, values the output
    gradient; no op at all."""
    return [], [GradientSlice(op.input[1], g_output[0]), None]


# --- GetGradientForOp -------------------------------------------------------------
def test_python_maker_ops_are_returned_as_built():
    op = CreateOperator("TestPyDirect", ["a", "b"], "c")
    grads, g_input = GradientRegistry.GetGradientForOp(op, ["c_grad"])
    assert texts(grads) == texts(
        [CreateOperator("PyDirectGradient", ["c_grad"], ["a_grad", "b_grad"])]
    )
    assert not grads[0].HasField("is_gradient_op")
    assert g_input == ["a_grad", "b_grad"]
    grads, g_input = GradientRegistry.GetGradientForOp(
        CreateOperator("TestPyNothing", "a", "b"), ["b_grad"]
    )
    assert grads == [] and g_input == [None]


def test_native_maker_comes_first_and_is_post_processed():
    op = CreateOperator("TestNativeAndPy", "a", "b", device_option=CUDA1, k=3)
    grads, g_input = GradientRegistry.GetGradientForOp(op, ["b_grad"])
    assert texts(grads) == texts([grad_op("NativeGradient", "b_grad", "a_grad", CUDA1, k=3)])
    assert g_input == ["a_grad"]


def test_no_maker_error_names_the_op_type():
    with pytest.raises(GradientError) as err:
        GradientRegistry.GetGradientForOp(CreateOperator("TestHasNoMaker", "a", "b"), ["b_grad"])
    assert isinstance(err.value, RuntimeError)
    assert str(err.value) == (
        "Exception when creating the gradient for [TestHasNoMaker]: "
        "Gradient maker for operator TestHasNoMaker not implemented."
    )


def test_schema_failure_is_reported():
    """Caffe2's testIncorrectOperator: the maker checks the op's schema."""
    with pytest.raises(
        GradientError,
        match=r"\[Sum\]: \(GradientMaker\) Operator "
        r"def did not pass schema checking: .*2",
    ):
        backward([CreateOperator("Sum", ["a", "b"], ["c", "d"])], ["c", "d"])


def test_native_maker_failure_is_wrapped():
    """TestDirect needs every output gradient (Caffe2's NeedAll)."""
    with pytest.raises(
        GradientError,
        match=r"^Exception when creating the "
        r"gradient for \[TestDirect\]: .*'c'",
    ):
        GradientRegistry.GetGradientForOp(
            CreateOperator("TestDirect", "a", ["b", "c"]), ["b_grad", None]
        )


def test_python_maker_must_give_one_gradient_per_input():
    with pytest.raises(GradientError, match="TestPyShortList.*0 input gradients for 1"):
        backward([CreateOperator("TestPyShortList", "a", "b")], {"b": "b_grad"})


def test_get_index_from_gradient_list():
    g_list = [None, "a_grad", GradientSlice("i", "v"), "a_grad"]
    assert GetIndexFromGradientList(g_list, "a_grad") == 1
    assert GetIndexFromGradientList(g_list, "v") == 2
    assert GetIndexFromGradientList(g_list, "x") is None


# --- the forward play ---------------------------------------------------------------
def test_play_numbers_first_writes_zero_and_rewrites_up():
    ir = IR(
        [
            CreateOperator("TestDirect", "in", "hidden"),
            CreateOperator("TestDirect", "hidden", "hidden"),
            CreateOperator("TestDirect", ["in", "hidden"], "in"),
        ]
    )
    assert [(s.in_versions, s.out_versions) for s in ir.ssa] == [
        ({"in": 0}, {"hidden": 0}),
        ({"hidden": 0}, {"hidden": 1}),
        ({"in": 0, "hidden": 1}, {"in": 1}),
    ]
    assert dict(ir.frontier) == {"in": 1, "hidden": 1}
    assert ir.input_usages["in"][0] == [0, 2]
    assert ir.input_usages["hidden"][1] == [2]


# --- ys ------------------------------------------------------------------------------
def test_ys_list_gets_autogenerated_fills():
    ops = [
        CreateOperator("TestDirect", "in", "hidden"),
        CreateOperator("TestDirect", "hidden", "out"),
    ]
    grads, grad_map = backward(ops, ["out"])
    assert texts(grads) == texts(
        [
            CreateOperator("ConstantFill", "out", "out_autogen_grad", value=1.0),
            grad_op("DirectGradient", "out_autogen_grad", "hidden_grad"),
            grad_op("DirectGradient", "hidden_grad", "in_grad"),
        ]
    )
    assert as_strings(grad_map) == {
        "out": "out_autogen_grad",
        "hidden": "hidden_grad",
        "in": "in_grad",
    }


def test_ys_dict_none_means_autogen_and_keys_may_be_references():
    ops = [CreateOperator("TestDirect", "in", "out")]
    grads, grad_map = backward(ops, {core.BlobReference("out"): None})
    assert grads[0].type == "ConstantFill"
    assert list(grads[0].output) == ["out_autogen_grad"]
    assert grad_map[core.BlobReference("out")] == "out_autogen_grad"


def test_autogen_fill_of_a_string_y_is_name_scoped_like_caffe2():
    """Caffe2 passed y and str(y) + "_autogen_grad" to CreateOperator, so
    under a name scope the fill's string names pick up the scope (a
    BlobReference y keeps its own name as the fill's input)."""
    ops = [CreateOperator("TestDirect", "s/in", "s/out")]
    with core.NameScope("s"):
        grads, grad_map = backward(ops, [core.BlobReference("s/out")])
    assert (list(grads[0].input), list(grads[0].output)) == (["s/out"], ["s/s/out_autogen_grad"])
    with core.NameScope("s"):
        grads, grad_map = backward([CreateOperator("TestDirect", "in", "out")], ["out"])
    assert (list(grads[0].input), list(grads[0].output)) == (["s/out"], ["s/out_autogen_grad"])
    assert grad_map["out"] == "s/out_autogen_grad"


def test_only_ops_on_the_path_get_gradients():
    ops = [
        CreateOperator("TestDirect", "in", "hidden"),
        CreateOperator("TestDirect", "hidden", "out"),
    ]
    grads, _ = backward(ops, {"hidden": "hidden_grad"})
    assert texts(grads) == texts([grad_op("DirectGradient", "hidden_grad", "in_grad")])
    assert backward(ops, {}) == ([], {})


@pytest.mark.parametrize("ys", [("out",), "out", None])
def test_ys_must_be_a_list_or_a_dict(ys):
    with pytest.raises(TypeError, match=r"^ys should either be a list or a dict\.$"):
        backward([CreateOperator("TestDirect", "in", "out")], ys)


def test_supplied_gradient_slice_is_kept_as_references():
    grads, grad_map = backward(
        [CreateOperator("TestPyNothing", "w", "y")], {"y": GradientSlice("y_i", "y_v")}
    )
    assert grads == []
    assert grad_map == {"y": GradientSlice("y_i", "y_v")}
    assert all(type(h) is core.BlobReference for h in grad_map["y"])


# --- §4.4 in place and version checks ------------------------------------------------
def test_in_place_ops_share_gradient_names():
    ops = [CreateOperator("TestDirect", "in", "in"), CreateOperator("TestDirect", "in", "out")]
    grads, _ = backward(ops, {"out": "out_grad"})
    assert texts(grads) == texts(
        [
            grad_op("DirectGradient", "out_grad", "in_grad"),
            grad_op("DirectGradient", "in_grad", "in_grad"),
        ]
    )
    ops = [
        CreateOperator("TestUseOutput", "in", "in"),
        CreateOperator("TestUseOutput", "in", "out"),
        CreateOperator("TestDirect", "out", "sink"),
    ]
    grads, _ = backward(ops, {"sink": "sink_grad"})
    assert texts(grads) == texts(
        [
            grad_op("DirectGradient", "sink_grad", "out_grad"),
            grad_op("UseOutputGradient", ["out", "out_grad"], "in_grad"),
            grad_op("UseOutputGradient", ["in", "in_grad"], "in_grad"),
        ]
    )


def test_use_input_reads_the_input():
    ops = [
        CreateOperator("TestDirect", "in", "hidden"),
        CreateOperator("TestUseInput", "hidden", "out"),
        CreateOperator("TestDirect", "out", "sink"),
    ]
    grads, _ = backward(ops, {"sink": "sink_grad"})
    assert texts(grads) == texts(
        [
            grad_op("DirectGradient", "sink_grad", "out_grad"),
            grad_op("UseInputGradient", ["hidden", "out_grad"], "hidden_grad"),
            grad_op("DirectGradient", "hidden_grad", "in_grad"),
        ]
    )


def test_overwritten_input_is_an_error():
    ops = [CreateOperator("TestUseInput", "in", "out"), CreateOperator("TestDirect", "in", "in")]
    with pytest.raises(
        GradientError,
        match=r'^Gradient operator needs input "in" '
        r"at version 0, but currently we have version 1\.$",
    ):
        backward(ops, {"out": "out_grad"})


def test_overwritten_output_is_an_error():
    ops = [
        CreateOperator("TestUseOutput", "in", "hidden"),
        CreateOperator("TestDirect", "hidden", "hidden"),
        CreateOperator("TestUseOutput", "hidden", "out"),
        CreateOperator("TestDirect", "out", "sink"),
    ]
    with pytest.raises(
        GradientError,
        match=r"^Gradient operator needs output "
        r'"hidden" at version 0, but currently we have version 1\.$',
    ):
        backward(ops, {"sink": "sink_grad"})


def test_gradient_of_a_later_version_is_an_error():
    ops = [
        CreateOperator("TestDirect", "x", "x"),
        CreateOperator("TestDirect", "y", "x"),
        CreateOperator("TestDirect", "x", "y"),
    ]
    with pytest.raises(
        GradientError,
        match=r'^Gradient name "x_grad" is expected to '
        r'correspond to version 1 of "x", but currently we have '
        r"version 2\.$",
    ):
        backward(ops, {"y": "y_grad"})


def test_gradient_op_reading_an_unknown_blob_is_an_error():
    with pytest.raises(
        GradientError,
        match=r'^Blob name "mystery" not in the scope '
        r"of operator: (.|\n)*TestPyOutOfScope(.|\n)*local gradient",
    ):
        backward([CreateOperator("TestPyOutOfScope", "a", "b")], {"b": "b_grad"})


def test_in_place_stop_gradient_erases_the_gradient():
    ops = [
        CreateOperator("TestDirect", "in", "hidden"),
        CreateOperator("TestStopGradient", "hidden", "hidden"),
        CreateOperator("TestDirect", "hidden", "out"),
    ]
    for era in ("E5", "E3"):
        with eras.use(era):
            grads, grad_map = backward(ops, {"out": "out_grad"})
        assert texts(grads) == texts([grad_op("DirectGradient", "out_grad", "hidden_grad")])
        assert as_strings(grad_map) == {"out": "out_grad"}


def test_an_orphan_stop_gradient_is_refused_from_9dacee826():
    # StopGradient's output 'auto_blobx' is read by no op: it stops nothing.
    ops = [
        CreateOperator("TestDirect", "in", "hidden"),
        CreateOperator("StopGradient", "hidden", "auto_blobx"),
        CreateOperator("TestDirect", "hidden", "out"),
    ]
    for era in ("E6", "E7"):
        with eras.use(era):
            with pytest.raises(GradientUsageError, match=r"output 'auto_blobx' is orphan.*op #1"):
                backward(ops, {"out": "out_grad"})
            with pytest.raises(ValueError):  # Caffe2's class
                IR(ops)
    for era in ("E5", "E4"):  # before 9dacee826 it was accepted and stopped nothing
        with eras.use(era):
            grads, grad_map = backward(ops, {"out": "out_grad"})
        assert [op.type for op in grads] == ["DirectGradient"] * 2
        assert as_strings(grad_map)["in"] == "in_grad"


def test_a_stop_gradient_read_later_or_in_place_passes_the_sanity_check():
    read_later = [
        CreateOperator("TestDirect", "in", "hidden"),
        CreateOperator("StopGradient", "hidden", "stopped"),
        CreateOperator("TestDirect", ["hidden", "stopped"], "out"),
    ]
    in_place = [
        CreateOperator("TestDirect", "in", "hidden"),
        CreateOperator("StopGradient", "hidden", "hidden"),
        CreateOperator("TestDirect", "hidden", "out"),
    ]
    with eras.use("E7"):
        grads, grad_map = backward(read_later, {"out": "out_grad"})
        assert as_strings(grad_map)["in"] == "in_grad"
        grads, grad_map = backward(in_place, {"out": "out_grad"})
        assert as_strings(grad_map) == {"out": "out_grad"}
        # Caffe2 checked before the ys count as reads: a StopGradient whose output
        # is only a y is an orphan too.
        with pytest.raises(GradientUsageError, match="'out' is orphan"):
            backward([CreateOperator("StopGradient", "in", "out")], ["out"])


def test_none_overwrites_a_gradient_only_before_53fd031b6():
    ops = [
        CreateOperator("TestDirect", "in", "hidden"),
        CreateOperator("TestStopGradient", "hidden", "hidden3"),
        CreateOperator("TestDirect", "hidden", "hidden2"),
        CreateOperator("TestDirect", ["hidden2", "hidden3"], "out"),
    ]
    grads, grad_map = backward(ops, {"out": "out_grad"})
    assert [op.type for op in grads] == ["DirectGradient"] * 3
    assert as_strings(grad_map)["in"] == "in_grad"
    with eras.use("E3"):
        grads, grad_map = backward(ops, {"out": "out_grad"})
    assert [op.type for op in grads] == ["DirectGradient"] * 2
    assert "hidden" not in grad_map and "in" not in grad_map


def test_zero_gradient_supplies_a_missing_output_gradient():
    ops = [CreateOperator("TestDirect", "x", ["hidden_t", "cell_t"])]
    with pytest.raises(GradientError, match=r"\[TestDirect\]"):
        backward(ops, ["hidden_t"])
    ops.append(CreateOperator("ZeroGradient", "cell_t", []))
    grads, _ = backward(ops, ["hidden_t"])
    assert [op.type for op in grads] == ["ConstantFill", "ConstantFill", "DirectGradient"]
    assert list(grads[1].output) == ["cell_t_grad"]
    with eras.use("E4"):  # before 9e5515810 ZeroGradient was skipped
        with pytest.raises(GradientError, match=r"\[TestDirect\]"):
            backward(ops, ["hidden_t"])


# --- accumulation rules ---------------------------------------------------------------
def test_every_generator_renamed_before_b80ac2b2a():
    ops = [
        CreateOperator("TestDirect", "in", "hidden1"),
        CreateOperator("TestDirect", "in", "hidden2"),
        CreateOperator("TestDirect", ["hidden1", "hidden2"], "out"),
    ]
    with eras.use("E4"):
        grads, _ = backward(ops, {"out": "out_grad"})
    assert texts(grads[1:]) == texts(
        [
            grad_op("DirectGradient", "hidden2_grad", "_in_grad_autosplit_0"),
            grad_op("DirectGradient", "hidden1_grad", "_in_grad_autosplit_1"),
            CreateOperator("Sum", ["_in_grad_autosplit_0", "_in_grad_autosplit_1"], "in_grad"),
        ]
    )


def test_no_swap_before_b80ac2b2a():
    ops = [
        CreateOperator("TestRelu", "x1", "x2"),
        CreateOperator("TestSoftmax", "x2", "x3"),
        CreateOperator("TestAdd", ["x2", "x3"], "x4"),
    ]
    with eras.use("E4"):
        grads, _ = backward(ops, {"x4": "x4_grad"})
    assert list(grads[0].output) == ["_x2_grad_autosplit_0"]
    assert list(grads[1].input) == ["x4_grad", "_x2_grad_autosplit_0"]
    assert list(grads[1].output) == ["x2_grad"]


def test_sum_renames_the_emitted_op_objects():
    ops = [CreateOperator("TestDirect", "in", "a"), CreateOperator("TestDirect", "in", "b")]
    ir = IR(ops)
    grads, _ = ir.GetBackwardPass({"a": "a_grad", "b": "b_grad"})
    generators = ir.gradient_generators["in"][0]
    assert [g.grad_op for g in generators] == [grads[0], grads[1]]
    assert generators[1].grad_op is grads[1]
    assert grads[1].output[0] == "_in_grad_autosplit_0"


def test_different_generator_names_are_an_error_before_caf92c215():
    ops = [
        CreateOperator("TestDirect", "in", "h1"),
        CreateOperator("TestPyOddName", "in", "h2"),
        CreateOperator("TestDirect", ["h1", "h2"], "out"),
    ]
    grads, _ = backward(ops, {"out": "out_grad"})
    assert list(grads[-1].input) == ["in_odd_grad", "_in_grad_autosplit_0"]
    assert list(grads[-1].output) == ["in_odd_grad"]
    with (
        eras.use("E4"),
        pytest.raises(GradientError, match="not all grad output names are the same.*'in'"),
    ):
        backward(ops, {"out": "out_grad"})


def test_one_op_triggering_two_sums_follows_its_input_order():
    """Caffe2 iterated set(op.input) here (hash order); we use input order."""
    ops = [
        CreateOperator("TestDirect", ["b", "a"], "h0"),
        CreateOperator("TestDirect", "a", "h1"),
        CreateOperator("TestDirect", "b", "h2"),
    ]
    grads, _ = backward(ops, {"h0": "h0_grad", "h1": "h1_grad", "h2": "h2_grad"})
    assert [(op.type, op.output[0]) for op in grads] == [
        ("DirectGradient", "b_grad"),
        ("DirectGradient", "a_grad"),
        ("DirectGradient", "_b_grad_autosplit_0"),
        ("Sum", "b_grad"),
        ("Sum", "a_grad"),
    ]
    assert list(grads[2].output) == ["_b_grad_autosplit_0", "_a_grad_autosplit_0"]


def test_an_input_read_twice_by_one_op_is_summed():
    grads, grad_map = backward([CreateOperator("TestMul", ["x", "x"], "y")], {"y": "y_grad"})
    assert texts(grads) == texts(
        [
            grad_op("Mul", ["y_grad", "x"], "x_grad"),
            grad_op("Mul", ["y_grad", "x"], "_x_grad_autosplit_0"),
            CreateOperator("Sum", ["x_grad", "_x_grad_autosplit_0"], "x_grad"),
        ]
    )
    assert as_strings(grad_map) == {"y": "y_grad", "x": "x_grad"}


def test_generators_on_different_devices_are_an_error():
    ops = [
        CreateOperator("TestDirect", "in", "h1", device_option=CUDA1),
        CreateOperator("TestDirect", "in", "h2"),
        CreateOperator("TestDirect", ["h1", "h2"], "out"),
    ]
    with pytest.raises(GradientError, match="same device option.*'in'"):
        backward(ops, {"out": "out_grad"})


def test_sum_runs_on_the_device_of_the_generators():
    ops = [CreateOperator("TestDirect", "in", "h1"), CreateOperator("TestDirect", "in", "h2")]
    for op in ops:
        op.device_option.CopyFrom(CUDA1)
    with core.DeviceScope(core.DeviceOption(1, 3)):
        grads, _ = backward(ops, {"h1": "h1_grad", "h2": "h2_grad"})
    assert grads[-1].type == "Sum" and grads[-1].device_option == CUDA1


def test_pass_through_named_like_the_sum_output_is_an_error():
    ops = [CreateOperator("TestDirect", "in", "h1"), CreateOperator("TestAdd", ["in", "z"], "h2")]
    with pytest.raises(GradientError, match="empty gradient op"):
        backward(ops, {"h1": "h1_grad", "h2": "in_grad"})


# --- sparse gradients ------------------------------------------------------------------
def test_sparse_gradients_are_concatenated():
    ops = [
        CreateOperator("TestPySparse", "x4", "x8"),
        CreateOperator("TestPySparse", "x4", "x9"),
        CreateOperator("TestDirect", ["x8", "x9"], "x10"),
    ]
    grads, grad_map = backward(ops, {"x10": "x10_grad"})
    assert [list(op.output) for op in grads[1:3]] == [
        ["_x4_grad_indices_autosplit_0", "_x4_grad_values_autosplit_0"],
        ["_x4_grad_indices_autosplit_1", "_x4_grad_values_autosplit_1"],
    ]
    assert texts(grads[3:]) == texts(
        [
            CreateOperator(
                "Concat",
                ["_x4_grad_indices_autosplit_0", "_x4_grad_indices_autosplit_1"],
                ["x4_grad_indices_concat", "x4_grad_indices_concat_split"],
                axis=0,
            ),
            CreateOperator(
                "Concat",
                ["_x4_grad_values_autosplit_0", "_x4_grad_values_autosplit_1"],
                ["x4_grad_values_concat", "x4_grad_values_concat_split"],
                axis=0,
            ),
        ]
    )
    assert grad_map["x4"] == GradientSlice("x4_grad_indices_concat", "x4_grad_values_concat")


def test_sparse_pass_through_gradients_are_concatenated():
    ops = [
        CreateOperator("TestPyGather", ["x2", "x1"], "x4"),
        CreateOperator("TestPyGather", ["x2", "x3"], "x5"),
        CreateOperator("TestDotProduct", ["x4", "x5"], "x6"),
    ]
    grads, _ = backward(ops, ["x6"])
    assert [(list(op.input), list(op.output)) for op in grads[-2:]] == [
        (["x3", "x1"], ["x2_grad_indices_concat", "x2_grad_indices_concat_split"]),
        (["x5_grad", "x4_grad"], ["x2_grad_values_concat", "x2_grad_values_concat_split"]),
    ]


def test_mixing_dense_and_sparse_gradients_is_an_error():
    ops = [CreateOperator("TestPySparse", "w", "a"), CreateOperator("TestDirect", "w", "b")]
    with pytest.raises(GradientError, match="mix of sparse and dense.*'w'"):
        backward(ops, {"a": "a_grad", "b": "b_grad"})
