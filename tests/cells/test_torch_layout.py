"""torch.nn.LSTM weights loaded into ``rnn_cell.LSTM`` (caffe2rnn.cells.torch_layout):
the same outputs as an independent NumPy LSTM written torch's way (gate order
i, f, g, o; b_ih + b_hh), and as torch itself when it is importable; the layout
round-trips; bad shapes and missing blobs are refused before anything is fed.
"""

import numpy as np
import pytest

from caffe2rnn import model_helper, rnn_cell, workspace
from caffe2rnn.cells import torch_layout
from caffe2rnn.errors import BlobNotFoundError, ShapeError

T, N, D, H = 4, 3, 5, 6


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def numpy_torch_lstm(x, h0, c0, w_ih, w_hh, b_ih, b_hh):
    """torch.nn.LSTM's documented equations, float64, gate rows i, f, g, o."""
    h, c, outputs = h0, c0, []
    for x_t in x:
        z = x_t @ w_ih.T + b_ih + h @ w_hh.T + b_hh
        i, f, g, o = np.split(z, 4, axis=-1)
        c = sigmoid(f) * c + sigmoid(i) * np.tanh(g)
        h = sigmoid(o) * np.tanh(c)
        outputs.append(h)
    return np.stack(outputs), h, c


def torch_weights(rng):
    scale = 1 / np.sqrt(H)
    return {
        "weight_ih": rng.uniform(-scale, scale, (4 * H, D)),
        "weight_hh": rng.uniform(-scale, scale, (4 * H, H)),
        "bias_ih": rng.uniform(-scale, scale, 4 * H),
        "bias_hh": rng.uniform(-scale, scale, 4 * H),
    }


def run_caffe2_lstm(x, h0, c0, weights):
    """rnn_cell.LSTM on the torch weights: (output, h_n, c_n) as torch names them."""
    model = model_helper.ModelHelper(name="torch_map")
    outputs = rnn_cell.LSTM(
        model, "x", "seq_lengths", ("h0", "c0"), dim_in=D, dim_out=H, scope="lstm"
    )
    hidden_all, hidden_last, _, cell_last = outputs
    workspace.RunNetOnce(model.param_init_net)
    fed = torch_layout.load_torch_lstm("lstm", **weights)
    assert fed == ["lstm/i2h_w", "lstm/i2h_b", "lstm/gates_t_w", "lstm/gates_t_b"]
    workspace.FeedBlob("x", x.astype(np.float32))
    workspace.FeedBlob("h0", h0[None].astype(np.float32))
    workspace.FeedBlob("c0", c0[None].astype(np.float32))
    workspace.FeedBlob("seq_lengths", np.full(N, T, np.int32))
    workspace.RunNetOnce(model.net)
    return tuple(workspace.FetchBlob(b) for b in (hidden_all, hidden_last, cell_last))


def inputs(rng):
    return rng.normal(size=(T, N, D)), rng.normal(size=(N, H)), rng.normal(size=(N, H))


def test_loaded_weights_give_the_numpy_torch_style_lstm(kernel_path):
    rng = np.random.default_rng(0)
    weights = torch_weights(rng)
    x, h0, c0 = inputs(rng)
    output, h_n, c_n = run_caffe2_lstm(x, h0, c0, weights)
    want_output, want_h, want_c = numpy_torch_lstm(x, h0, c0, **_short(weights))
    np.testing.assert_allclose(output, want_output, rtol=0, atol=2e-6)
    np.testing.assert_allclose(h_n[0], want_h, rtol=0, atol=2e-6)
    np.testing.assert_allclose(c_n[0], want_c, rtol=0, atol=2e-6)


def test_without_the_gate_reorder_the_outputs_differ(kernel_path):
    """The check above can fail: loading torch's rows as they are (i, f, g, o
    read as i, f, o, g) gives another LSTM."""
    rng = np.random.default_rng(1)
    weights = torch_weights(rng)
    x, h0, c0 = inputs(rng)
    swapped = {
        k: torch_layout.reorder_gates(v, torch_layout.CAFFE2_GATES, torch_layout.TORCH_GATES)
        for k, v in weights.items()
    }  # reordered once more by the loader: torch's rows land unchanged
    output, _, _ = run_caffe2_lstm(x, h0, c0, swapped)
    want_output, _, _ = numpy_torch_lstm(x, h0, c0, **_short(weights))
    assert np.abs(output - want_output).max() > 1e-2


def test_matches_torch_itself_when_installed(kernel_path):
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    lstm = torch.nn.LSTM(D, H)  # time-major by default, as Caffe2
    rng = np.random.default_rng(2)
    x, h0, c0 = inputs(rng)
    with torch.no_grad():
        want, (want_h, want_c) = lstm(
            torch.tensor(x, dtype=torch.float32),
            (
                torch.tensor(h0[None], dtype=torch.float32),
                torch.tensor(c0[None], dtype=torch.float32),
            ),
        )
    weights = {
        "weight_ih": lstm.weight_ih_l0.detach().numpy(),
        "weight_hh": lstm.weight_hh_l0.detach().numpy(),
        "bias_ih": lstm.bias_ih_l0.detach().numpy(),
        "bias_hh": lstm.bias_hh_l0.detach().numpy(),
    }
    output, h_n, c_n = run_caffe2_lstm(x, h0, c0, weights)
    np.testing.assert_allclose(output, want.numpy(), rtol=0, atol=2e-6)
    np.testing.assert_allclose(h_n, want_h.numpy(), rtol=0, atol=2e-6)
    np.testing.assert_allclose(c_n, want_c.numpy(), rtol=0, atol=2e-6)


def test_the_layout_round_trips_and_moves_only_the_g_and_o_blocks():
    rng = np.random.default_rng(3)
    weights = torch_weights(rng)
    i2h_w, i2h_b, gates_t_w, gates_t_b = torch_layout.lstm_params_from_torch(**weights)
    assert i2h_w.dtype == np.float32 and i2h_w.shape == (4 * H, D)
    assert gates_t_w.shape == (4 * H, H) and i2h_b.shape == gates_t_b.shape == (4 * H,)
    rows = np.arange(4 * H).reshape(4, H)  # torch's blocks i, f, g, o
    moved = torch_layout.reorder_gates(rows, torch_layout.TORCH_GATES, torch_layout.CAFFE2_GATES)
    np.testing.assert_array_equal(moved, rows[[0, 1, 3, 2]])  # i, f, o, g
    back = torch_layout.lstm_params_to_torch(i2h_w, i2h_b, gates_t_w, gates_t_b)
    for got, name in zip(back, ("weight_ih", "weight_hh", "bias_ih", "bias_hh")):
        np.testing.assert_array_equal(got, weights[name].astype(np.float32))


def test_missing_biases_are_zeros():
    rng = np.random.default_rng(4)
    weights = torch_weights(rng)
    _, i2h_b, _, gates_t_b = torch_layout.lstm_params_from_torch(
        weights["weight_ih"], weights["weight_hh"]
    )
    assert not i2h_b.any() and not gates_t_b.any()


@pytest.mark.parametrize(
    "change, message",
    [
        ({"weight_hh": np.zeros((4 * H, H + 1))}, "weight_hh has shape"),
        ({"weight_ih": np.zeros((4 * H + 4, D))}, "weight_ih has shape"),
        ({"weight_ih": np.zeros(4 * H)}, "weight_ih has shape"),
        ({"bias_ih": np.zeros(4 * H - 1)}, "bias_ih has shape"),
        ({"bias_hh": np.zeros((4 * H, 1))}, "bias_hh has shape"),
    ],
)
def test_shapes_that_are_not_one_lstm_layer_are_refused(change, message):
    weights = dict(torch_weights(np.random.default_rng(5)), **change)
    with pytest.raises(ShapeError, match=message):
        torch_layout.lstm_params_from_torch(**weights)


def test_loading_checks_every_blob_before_feeding_any():
    model = model_helper.ModelHelper(name="wrong_size")
    rnn_cell.LSTM(model, "x", "seq_lengths", ("h0", "c0"), dim_in=D + 1, dim_out=H, scope="lstm")
    weights = torch_weights(np.random.default_rng(6))
    with pytest.raises(BlobNotFoundError, match="lstm/i2h_w is not in the workspace"):
        torch_layout.load_torch_lstm("lstm", **weights)
    workspace.RunNetOnce(model.param_init_net)
    before = {b: workspace.FetchBlob(b).copy() for b in ("lstm/i2h_w", "lstm/gates_t_w")}
    with pytest.raises(ShapeError, match=r"lstm/i2h_w has shape \(24, 6\)"):
        torch_layout.load_torch_lstm("lstm", **weights)
    for name, value in before.items():  # nothing fed: gates_t_w would have fit
        np.testing.assert_array_equal(workspace.FetchBlob(name), value)


def _short(weights):
    return {
        "w_ih": weights["weight_ih"],
        "w_hh": weights["weight_hh"],
        "b_ih": weights["bias_ih"],
        "b_hh": weights["bias_hh"],
    }
