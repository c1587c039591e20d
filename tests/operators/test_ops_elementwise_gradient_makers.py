"""The Add/Sub/Mul gradient makers, variant by variant (spec §7.2).

E2 selects variant A, E3 variant B, E4-E6 (and the default E5) variant C.
Each test writes out the gradient ops Caffe2 emitted as
``(type, name, inputs, outputs, [(arg, value)...], is_gradient_op)``.
"""

import pytest
from ops_testing import check_gradients, gradient_of, random

from caffe2rnn import eras
from caffe2rnn.errors import GradientError, ShapeError

AB = ["A", "B"]
AXIS_DEFAULTS = [("axis", -1), ("axis_str", ""), ("order", "NCHW")]


@pytest.mark.parametrize("era", ["E2", "E3", "E4", "E5", "E6"])
def test_add_without_broadcast_is_a_pass_through(era):
    with eras.use(era):
        ops, g_input = gradient_of("Add", AB, ["C"])
    assert ops == [] and g_input == ["C_grad", "C_grad"]


@pytest.mark.parametrize("era", ["E3", "E5"])
def test_add_broadcast_b_and_c_copy_every_forward_argument(era):
    with eras.use(era):
        ops, g_input = gradient_of("Add", AB, ["C"], broadcast=1, axis=1, use_grad_hack=1)
    assert ops == [
        (
            "SumReduceLike",
            "",
            ["C_grad", "B"],
            ["B_grad"],
            [("broadcast", 1), ("axis", 1), ("use_grad_hack", 1)],
            True,
        )
    ]
    assert g_input == ["C_grad", "B_grad"]


def test_add_broadcast_variant_a():
    with eras.use("E2"):
        hack, g_input = gradient_of("Add", AB, ["C"], broadcast=1, use_grad_hack=1)
        plain, _ = gradient_of("Add", AB, ["C"], broadcast=1, axis=1)
    assert hack == [("ReduceFrontSum", "add_grad", ["C_grad"], ["B_grad"], [], True)]
    assert plain == [("SumReduceLike", "", ["C_grad", "B"], ["B_grad"], [], True)]
    assert g_input == ["C_grad", "B_grad"]


@pytest.mark.parametrize("era", ["E2", "E3", "E5"])
def test_sub_without_broadcast(era):
    with eras.use(era):
        ops, g_input = gradient_of("Sub", AB, ["C"], stray=3)
    assert ops == [("Negative", "", ["C_grad"], ["B_grad"], [], True)]
    assert g_input == ["C_grad", "B_grad"]


@pytest.mark.parametrize(
    "era, reduce_args",
    [
        ("E2", []),
        ("E3", [("broadcast", 1)] + AXIS_DEFAULTS),
        ("E5", AXIS_DEFAULTS),
    ],
)
def test_sub_with_broadcast(era, reduce_args):
    with eras.use(era):
        ops, g_input = gradient_of("Sub", AB, ["C"], broadcast=1, use_grad_hack=1)
    assert ops == [
        ("Negative", "", ["C_grad"], ["B_grad_autogen_pre_red"], [], True),
        ("SumReduceLike", "", ["B_grad_autogen_pre_red", "B"], ["B_grad"], reduce_args, True),
    ]
    assert g_input == ["C_grad", "B_grad"]


def test_sub_broadcast_keeps_given_axis_arguments():
    ops, _ = gradient_of("Sub", AB, ["C"], broadcast=1, axis_str="C", order="NHWC")
    assert ops[1][4] == [("axis", -1), ("axis_str", "C"), ("order", "NHWC")]


@pytest.mark.parametrize("era", ["E2", "E3", "E5"])
def test_mul_without_broadcast_copies_no_arguments(era):
    with eras.use(era):
        ops, g_input = gradient_of("Mul", AB, ["C"], stray=3)
    assert ops == [
        ("Mul", "", ["C_grad", "B"], ["A_grad"], [], True),
        ("Mul", "", ["C_grad", "A"], ["B_grad"], [], True),
    ]
    assert g_input == ["A_grad", "B_grad"]


@pytest.mark.parametrize(
    "era, first_args, reduce_args",
    [
        (
            "E3",
            [("broadcast", 1), ("axis", 1)] + AXIS_DEFAULTS[1:],
            [("broadcast", 1), ("axis", 1)] + AXIS_DEFAULTS[1:],
        ),
        (
            "E5",
            [("broadcast", 1), ("axis", 1)] + AXIS_DEFAULTS[1:],
            [("axis", 1)] + AXIS_DEFAULTS[1:],
        ),
        (
            "E6",
            [("broadcast", 1), ("axis", 1)] + AXIS_DEFAULTS[1:],
            [("axis", 1)] + AXIS_DEFAULTS[1:],
        ),
    ],
)
def test_mul_with_broadcast_b_and_c(era, first_args, reduce_args):
    with eras.use(era):
        ops, g_input = gradient_of("Mul", AB, ["C"], broadcast=1, axis=1, use_grad_hack=1)
    assert ops == [
        ("Mul", "mul_grad_1st_op", ["C_grad", "B"], ["A_grad"], first_args, True),
        ("Mul", "mul_gradient_2nd_op", ["C_grad", "A"], ["B_grad_autogen_pre_red"], [], True),
        (
            "SumReduceLike",
            "mul_with_broadcast_grad_3",
            ["B_grad_autogen_pre_red", "B"],
            ["B_grad"],
            reduce_args,
            True,
        ),
    ]
    assert g_input == ["A_grad", "B_grad"]


def test_mul_with_broadcast_variant_a():
    with eras.use("E2"):
        hack, _ = gradient_of("Mul", AB, ["C"], broadcast=1, axis=0, use_grad_hack=1)
        plain, _ = gradient_of("Mul", AB, ["C"], broadcast=1, axis=0)
    first = ("Mul", "mul_grad_1st_op", ["C_grad", "B"], ["A_grad"], [("broadcast", 1)], True)
    second = ("Mul", "mul_gradient_2nd_op", ["C_grad", "A"], ["B_grad_autogen_pre_red"], [], True)
    assert hack == [
        first,
        second,
        ("ReduceFrontSum", "mul_grad_3rd_op", ["B_grad_autogen_pre_red"], ["B_grad"], [], True),
    ]
    assert plain == [
        first,
        second,
        (
            "SumReduceLike",
            "mul_with_broadcast_grad_3",
            ["B_grad_autogen_pre_red", "B"],
            ["B_grad"],
            [],
            True,
        ),
    ]


def test_broadcast_zero_still_counts_as_broadcasting():
    ops, _ = gradient_of("Mul", AB, ["C"], broadcast=0)
    assert [op[1] for op in ops] == [
        "mul_grad_1st_op",
        "mul_gradient_2nd_op",
        "mul_with_broadcast_grad_3",
    ]


@pytest.mark.parametrize("era", ["E2", "E3", "E5"])
@pytest.mark.parametrize("output", ["A", "B"])
def test_mul_in_place_has_no_gradient(era, output):
    with (
        eras.use(era),
        pytest.raises(
            GradientError,
            match="(?s)Gradient computation cannot be carried out if Mul "
            "uses in-place computation: .*Mul",
        ),
    ):
        gradient_of("Mul", AB, [output])


def test_schema_is_checked_before_the_maker():
    with pytest.raises(GradientError, match="did not pass schema checking"):
        gradient_of("Mul", AB, ["C", "D"])


@pytest.mark.parametrize("era", ["E2", "E3"])
@pytest.mark.parametrize("op_type", ["Add", "Sub", "Mul"])
def test_old_variants_give_true_gradients_for_suffix_broadcast(era, op_type):
    # Variant A's hack reduces over dim 0 only: right when B = A.shape[1:].
    inputs = {"A": random((3, 4), 1), "B": random((4,), 2) + 1}
    with eras.use(era):
        check_gradients(op_type, inputs, ["C"], broadcast=1)
        check_gradients(op_type, inputs, ["C"], broadcast=1, use_grad_hack=1)


def test_variant_a_mul_gradient_loses_the_axis():
    # Its first gradient op carries broadcast=1 but not axis=0, so it suffix-
    # matches B against dC and fails: Caffe2's behaviour in that era.
    inputs = {"A": random((2, 3), 1), "B": random((2,), 2)}
    with eras.use("E2"), pytest.raises(ShapeError, match=r"input 1 \('B'\)"):
        check_gradients("Mul", inputs, ["C"], broadcast=1, axis=0)
    check_gradients("Mul", inputs, ["C"], broadcast=1, axis=0)


def test_default_era_uses_variant_c():
    assert eras.current().elementwise_gradient == "C"
    inputs = {"A": random((2, 3, 4), 1), "B": random((3,), 2)}
    check_gradients("Sub", inputs, ["C"], broadcast=1, axis=1)
    assert eras.get("E4").elementwise_gradient == "C"
