"""Conv and ConvGradient: forward against a direct-sum formula, gradients
against finite differences, argument forms, layouts, and errors."""

import numpy as np
import pytest
from ops_testing import check_gradients, gradient_of, random, run1, run_op

from caffe2rnn.errors import ArgumentError, ShapeError


def reference_conv(x, w, b, stride, pads, dilation, group):
    """NCHW 2-D convolution by its definition: one output value at a time."""
    n, c, h, wd = x.shape
    m, cg, kh, kw = w.shape
    (st, sl), (dh, dw) = stride, dilation
    pt, pl, pb, pr = pads
    xp = np.zeros((n, c, h + pt + pb, wd + pl + pr), x.dtype)
    xp[:, :, pt : pt + h, pl : pl + wd] = x
    oh = (h + pt + pb - (dh * (kh - 1) + 1)) // st + 1
    ow = (wd + pl + pr - (dw * (kw - 1) + 1)) // sl + 1
    y = np.zeros((n, m, oh, ow))
    mg = m // group
    for i in range(n):
        for j in range(m):
            g = j // mg
            for p in range(oh):
                for q in range(ow):
                    total = 0.0 if b is None else b[j]
                    for ci in range(cg):
                        for a in range(kh):
                            for e in range(kw):
                                total += (
                                    w[j, ci, a, e]
                                    * xp[i, g * cg + ci, p * st + a * dh, q * sl + e * dw]
                                )
                    y[i, j, p, q] = total
    return y


CASES = [
    # (x shape, w shape, args, stride, pads, dilation, group)
    ((2, 3, 5, 4), (4, 3, 3, 2), {"kernel_h": 3, "kernel_w": 2}, (1, 1), (0, 0, 0, 0), (1, 1), 1),
    (
        (1, 2, 6, 6),
        (3, 2, 3, 3),
        {"kernel": 3, "stride": 2, "pad": 1},
        (2, 2),
        (1, 1, 1, 1),
        (1, 1),
        1,
    ),
    (
        (1, 2, 5, 6),
        (2, 2, 2, 2),
        {"kernels": [2, 2], "strides": [1, 2], "pads": [1, 0, 0, 2], "dilations": [2, 1]},
        (1, 2),
        (1, 0, 0, 2),
        (2, 1),
        1,
    ),
    ((2, 4, 4, 3), (6, 2, 2, 2), {"kernel": 2, "group": 2}, (1, 1), (0, 0, 0, 0), (1, 1), 2),
    (
        (1, 1, 4, 5),
        (2, 1, 1, 3),
        {"kernel_h": 1, "kernel_w": 3, "pad_t": 0, "pad_l": 2, "pad_b": 0, "pad_r": 0},
        (1, 1),
        (0, 2, 0, 0),
        (1, 1),
        1,
    ),
]


@pytest.mark.parametrize("x_shape, w_shape, args, stride, pads, dilation, group", CASES)
def test_forward_nchw_against_the_definition(x_shape, w_shape, args, stride, pads, dilation, group):
    x, w, b = (
        random(x_shape, 1, np.float64),
        random(w_shape, 2, np.float64),
        random((w_shape[0],), 3, np.float64),
    )
    y = run1("Conv", {"X": x, "W": w, "b": b}, **args)
    np.testing.assert_allclose(
        y, reference_conv(x, w, b, stride, pads, dilation, group), rtol=1e-12
    )
    no_bias = run1("Conv", {"X": x, "W": w}, **args)
    np.testing.assert_allclose(
        no_bias, reference_conv(x, w, None, stride, pads, dilation, group), rtol=1e-12
    )


def test_float32_in_float32_out():
    x, w = random((1, 2, 4, 4), 1), random((3, 2, 3, 3), 2)
    y = run1("Conv", {"X": x, "W": w}, kernel=3)
    assert y.dtype == np.float32
    np.testing.assert_allclose(
        y, reference_conv(x, w, None, (1, 1), (0,) * 4, (1, 1), 1), rtol=1e-5, atol=1e-6
    )


def test_nhwc_is_nchw_transposed():
    x, w, b = (
        random((2, 4, 5, 3), 1, np.float64),
        random((2, 1, 3, 3), 2, np.float64),
        random((2,), 3, np.float64),
    )
    y = run1(
        "Conv",
        {"X": x, "W": w, "b": b},
        kernel_h=1,
        kernel_w=3,
        pad_l=2,
        pad_t=0,
        pad_b=0,
        pad_r=0,
        order="NHWC",
    )
    expected = reference_conv(
        x.transpose(0, 3, 1, 2), w.transpose(0, 3, 1, 2), b, (1, 1), (0, 2, 0, 0), (1, 1), 1
    ).transpose(0, 2, 3, 1)
    np.testing.assert_allclose(y, expected, rtol=1e-12)


def test_legacy_padding_valid_and_same():
    x, w = random((1, 1, 5, 5), 1, np.float64), random((1, 1, 3, 3), 2, np.float64)
    valid = run1("Conv", {"X": x, "W": w}, kernel=3, stride=2, legacy_pad=1)
    np.testing.assert_allclose(valid, reference_conv(x, w, None, (2, 2), (0,) * 4, (1, 1), 1))
    same = run1("Conv", {"X": x, "W": w}, kernel=3, stride=2, legacy_pad=2)
    assert same.shape == (1, 1, 3, 3)  # ceil(5 / 2)
    np.testing.assert_allclose(same, reference_conv(x, w, None, (2, 2), (1, 1, 1, 1), (1, 1), 1))
    # SAME with an even padding need: the extra pixel goes to the tail
    x4 = random((1, 1, 4, 4), 3, np.float64)
    same4 = run1("Conv", {"X": x4, "W": w}, kernel=3, stride=1, legacy_pad=2)
    np.testing.assert_allclose(same4, reference_conv(x4, w, None, (1, 1), (1, 1, 1, 1), (1, 1), 1))
    w2 = random((1, 1, 2, 2), 4, np.float64)
    same_even = run1("Conv", {"X": x4, "W": w2}, kernel=2, legacy_pad=2)
    np.testing.assert_allclose(
        same_even, reference_conv(x4, w2, None, (1, 1), (0, 0, 1, 1), (1, 1), 1)
    )


@pytest.mark.parametrize("x_shape, w_shape, args, stride, pads, dilation, group", CASES)
def test_gradients(x_shape, w_shape, args, stride, pads, dilation, group):
    inputs = {"X": random(x_shape, 1), "W": random(w_shape, 2), "b": random((w_shape[0],), 3)}
    check_gradients("Conv", inputs, ["Y"], **args)
    check_gradients("Conv", {"X": inputs["X"], "W": inputs["W"]}, ["Y"], **args)


def test_gradients_nhwc_and_legacy_same():
    check_gradients(
        "Conv",
        {"X": random((2, 3, 4, 2), 1), "W": random((3, 2, 2, 2), 2), "b": random((3,), 3)},
        ["Y"],
        kernel=2,
        stride=2,
        order="NHWC",
        legacy_pad=2,
    )


def test_gradient_maker():
    ops, g_input = gradient_of("Conv", ["X", "W", "b"], ["Y"], kernel=3)
    assert ops == [
        (
            "ConvGradient",
            "",
            ["X", "W", "Y_grad"],
            ["W_grad", "b_grad", "X_grad"],
            [("kernel", 3)],
            True,
        )
    ]
    assert g_input == ["X_grad", "W_grad", "b_grad"]
    ops, g_input = gradient_of("Conv", ["X", "W"], ["Y"], kernel=3)
    assert ops == [
        (
            "ConvGradient",
            "",
            ["X", "W", "Y_grad"],
            ["W_grad", "X_grad"],
            [("no_bias", 1), ("kernel", 3)],
            True,
        )
    ]
    assert g_input == ["X_grad", "W_grad"]
    ops, g_input = gradient_of("Conv", ["X", "W", "b"], ["Y"], kernel=3, no_gradient_to_input=1)
    assert ops[0][3] == ["W_grad", "b_grad"] and g_input == [None, "W_grad", "b_grad"]


def test_conv_gradient_output_forms():
    x, w, dy = random((1, 2, 3, 3), 1), random((2, 2, 2, 2), 2), random((1, 2, 2, 2), 3)
    ws = run_op("ConvGradient", {"X": x, "W": w, "dY": dy}, ["dW"], kernel=2, no_bias=1)
    full = run_op("ConvGradient", {"X": x, "W": w, "dY": dy}, ["dW2", "db", "dX"], kernel=2)
    np.testing.assert_allclose(ws.fetch("dW"), full.fetch("dW2"))
    np.testing.assert_allclose(full.fetch("db"), dy.sum(axis=(0, 2, 3)), rtol=1e-6)
    with pytest.raises(ArgumentError, match="3 grad output"):
        run_op("ConvGradient", {"X": x, "W": w, "dY": dy}, ["a", "b", "c"], kernel=2, no_bias=1)
    with pytest.raises(
        ShapeError, match=r"input 2 \('dY'\) has shape \(1, 2, 3, 3\); expected \(1, 2, 2, 2\)"
    ):
        run_op("ConvGradient", {"X": x, "W": w, "dY": random((1, 2, 3, 3))}, ["dW", "db"], kernel=2)


@pytest.mark.parametrize(
    "inputs, args, error, match",
    [
        (
            {"X": random((1, 2, 4, 4)), "W": random((3, 2, 3, 3))},
            {},
            ArgumentError,
            "every kernel dim must be > 0",
        ),
        (
            {"X": random((1, 2, 4, 4)), "W": random((3, 3, 3, 3))},
            {"kernel": 3},
            ShapeError,
            r"input 1 \('W'\)",
        ),
        (
            {"X": random((1, 2, 4, 4)), "W": random((3, 2, 2, 2))},
            {"kernel": 3},
            ShapeError,
            r"kernel dims \[3, 3\]",
        ),
        (
            {"X": random((1, 2, 2, 2)), "W": random((3, 2, 3, 3))},
            {"kernel": 3},
            ShapeError,
            r"input 0 \('X'\).*at least 3",
        ),
        (
            {"X": random((2, 4, 4)), "W": random((3, 2, 3, 3))},
            {"kernel": 3},
            ShapeError,
            r"input 0 \('X'\).*4 dims",
        ),
        (
            {"X": random((1, 2, 4, 4)), "W": random((3, 2, 3, 3)), "b": random((2,))},
            {"kernel": 3},
            ShapeError,
            r"input 2 \('b'\).*\(3,\)",
        ),
        (
            {"X": random((1, 4, 4, 4)), "W": random((3, 2, 3, 3))},
            {"kernel": 3, "group": 2},
            ShapeError,
            "divisible by group=2",
        ),
        (
            {"X": random((1, 2, 4, 4)), "W": random((3, 2, 3, 3))},
            {"kernel": 3, "stride": 0},
            ArgumentError,
            "strides",
        ),
        (
            {"X": random((1, 2, 4, 4)), "W": random((3, 2, 3, 3))},
            {"kernel": 3, "pad": -1, "name": "Conv_1"},  # checked for ops named Conv...
            ArgumentError,
            "pads",
        ),
        (
            {"X": random((1, 2, 4, 4)), "W": random((3, 2, 3, 3))},
            {"kernel": 3, "order": "CHWN"},
            ArgumentError,
            "order",
        ),
        (
            {"X": random((1, 2, 4, 4)), "W": random((3, 2, 3, 3))},
            {"kernel": 3, "legacy_pad": 2, "pad": 1},
            ArgumentError,
            "legacy padding",
        ),
        (
            {"X": random((1, 2, 4, 4)), "W": random((3, 2, 3, 3))},
            {"kernel": 3, "legacy_pad": 3},
            ArgumentError,
            "legacy_pad",
        ),
        (
            {"X": random((1, 4, 4, 4)), "W": random((4, 2, 3, 3))},
            {"kernel": 3, "group": 2, "dilation": 2},
            ArgumentError,
            "When group is used, dilation should not be set",
        ),
    ],
)
def test_errors_name_the_blob_or_argument(inputs, args, error, match):
    with pytest.raises(error, match=match):
        run_op("Conv", inputs, ["Y"], **args)


# --- a Conv inside a step net ----------------------------------------------------------
def _convolution_1d(model, inputs, conv_window, conv_filter, conv_bias, output_name, left_pad):
    """Caffe2's recurrent_network_test helper: a 1-D convolution over time as a 2-D
    NHWC Conv (kernel 1 x window) between Transposes."""
    transposed = model.net.Transpose(inputs, output_name + "_in_t", axes=[1, 0, 2])
    four_d = model.net.ExpandDims(transposed, output_name + "_in_4d", dims=[1])
    conv = model.net.Conv(
        [four_d, conv_filter, conv_bias],
        output_name + "_transposed_4d",
        kernel_h=1,
        kernel_w=conv_window,
        order="NHWC",
        pad_t=0,
        pad_l=conv_window - 1 if left_pad else 0,
        pad_b=0,
        pad_r=0,
    )
    squeezed = model.net.Squeeze(conv, output_name + "_transposed", dims=[1])
    return model.net.Transpose(squeezed, output_name, axes=[1, 0, 2])


@pytest.mark.parametrize(
    "sequence_length, conv_window, batch_size, state_size", [(5, 3, 2, 3), (3, 1, 1, 2)]
)
@pytest.mark.kernels  # runs once per kernel path (tests/conftest.py)
def test_stateful_convolution_in_a_step_net(sequence_length, conv_window, batch_size, state_size):
    """Caffe2's test_stateful_convolution_forward_only (recurrent_network_test.py,
    0cdd09da6): convolving step by step inside a RecurrentNetwork (a window of the
    last ``conv_window`` inputs linked in) equals one Conv over the whole sequence."""
    from caffe2rnn import workspace
    from caffe2rnn.model_helper import ModelHelper

    model = ModelHelper(name="model")
    fake_inputs = model.param_init_net.UniformFill(
        [], "fake_inputs", min=-1.0, max=1.0, shape=[sequence_length, batch_size, state_size]
    )
    initial_input_state = model.param_init_net.ConstantFill(
        [], "initial_input_state", value=0.0, shape=[conv_window - 1, batch_size, state_size]
    )
    initial_output_state = model.param_init_net.ConstantFill(
        [], "initial_output_state", value=0.0, shape=[1, batch_size, state_size]
    )
    step_model = ModelHelper(name="step_model", param_model=model)
    _, timestep, input_state_t_prev = step_model.net.AddExternalInputs(
        "fake_input_t", "timestep", "input_state_t_prev"
    )
    conv_filter = step_model.param_init_net.XavierFill(
        [], "conv_filter", shape=[state_size, 1, conv_window, state_size]
    )
    conv_bias = step_model.param_init_net.ConstantFill(
        [], "conv_bias", shape=[state_size], value=0.5
    )
    step_model.params.extend([conv_filter, conv_bias])
    input_state_t = step_model.net.UniformFill(
        [], "input_state_t", min=-1.0, max=1.0, shape=[1, batch_size, state_size]
    )
    output_state_t = _convolution_1d(
        step_model, input_state_t_prev, conv_window, conv_filter, conv_bias, "output_state_t", False
    )
    initial_states = [initial_input_state, initial_output_state]
    all_inputs = [fake_inputs] + step_model.params + initial_states
    input_state_all, output_state_all, _ = model.net.RecurrentNetwork(
        all_inputs,
        ["input_state_all", "output_state_all", "step_workspaces"],
        param=[all_inputs.index(p) for p in step_model.params],
        alias_src=["input_state", "output_state"],
        alias_dst=["input_state_all", "output_state_all"],
        alias_offset=[conv_window - 1, 1],
        recurrent_states=["input_state", "output_state"],
        initial_recurrent_state_ids=[all_inputs.index(s) for s in initial_states],
        link_internal=[str(input_state_t_prev), str(input_state_t), str(output_state_t)],
        link_external=["input_state", "input_state", "output_state"],
        link_offset=[0, conv_window - 1, 1],
        link_window=[conv_window, 1, 1],
        backward_link_internal=[],
        backward_link_external=[],
        backward_link_offset=[],
        step_net=str(step_model.net.Proto()),
        backward_step_net="",
        timestep=str(timestep),
        outputs_with_grads=[],
    )
    output_states_2 = _convolution_1d(
        model, input_state_all, conv_window, conv_filter, conv_bias, "output_states_2", True
    )
    workspace.RunNetOnce(model.param_init_net)
    workspace.RunNetOnce(model.net)
    np.testing.assert_allclose(
        workspace.FetchBlob(output_state_all), workspace.FetchBlob(output_states_2), atol=1e-6
    )


def test_one_dimensional_kernels_list():
    """``kernels=[k]``: a 1-D convolution, the 2-D one with a height-1 image."""
    x, w, b = (
        random((2, 3, 7), 1, np.float64),
        random((4, 3, 3), 2, np.float64),
        random((4,), 3, np.float64),
    )
    args = {"kernels": [3], "strides": [2], "pads": [1, 0]}
    y = run1("Conv", {"X": x, "W": w, "b": b}, **args)
    expected = reference_conv(x[:, :, None], w[:, :, None], b, (1, 2), (0, 1, 0, 0), (1, 1), 1)
    np.testing.assert_allclose(y, expected[:, :, 0], rtol=1e-12)
    check_gradients(
        "Conv",
        {"X": random((2, 3, 7), 4), "W": random((4, 3, 3), 5), "b": random((4,), 6)},
        ["Y"],
        **args,
    )
    with pytest.raises(ArgumentError, match=r"2 strides for a 1-D kernel \[3\]"):
        run1("Conv", {"X": x, "W": w}, kernels=[3], stride=2)


@pytest.mark.parametrize("name, shape", [("Conv1D", (1, 2, 5)), ("Conv2D", (1, 2, 4, 5))])
def test_e6_conv_aliases_compute_conv_and_name_their_gradient(name, shape):
    x = random(shape, 1, np.float64)
    w = random((3, 2) + (2,) * (len(shape) - 2), 2, np.float64)
    kernel = {"kernels": [2] * (len(shape) - 2)}
    np.testing.assert_array_equal(
        run1(name, {"X": x, "W": w}, **kernel), run1("Conv", {"X": x, "W": w}, **kernel)
    )
    ops, _ = gradient_of(name, ["X", "W"], ["Y"], **kernel)
    assert ops[0][0] == name + "Gradient"
