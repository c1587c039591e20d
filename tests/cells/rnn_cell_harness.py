"""Build ``rnn_cell`` layers on a ``ModelHelper``, run them in float64, and
the NumPy stacked-LSTM reference they are compared with.

The reference is :mod:`numpy_cells` (written from the papers' equations)
applied layer by layer: within one timestep layer i's new hidden state is
layer i + 1's input, which over a whole sequence is the same as running the
layers one after the other.
"""

import numpy as np
import numpy_cells as ref

from caffe2rnn import workspace
from caffe2rnn.model_helper import ModelHelper


def build(layer_fn, outputs_with_grads, **kwargs):
    """``layer_fn(model, **kwargs)`` → outputs, with the loss
    ``Σ_j sum(output_j ⊙ <output_j>_given_grad)`` over ``outputs_with_grads``.

    The gradient of output j is then the fed ``<output_j>_given_grad``. (A
    loss, not ``AddGradientOperators({output: given})``: an explicitly given
    gradient is not summed with other gradients of the same blob, as in
    Caffe2, which matters when an output is also read by later ops.)
    """
    model = ModelHelper(name="rnn_cell_test")
    outputs = layer_fn(model, **kwargs)
    losses = []
    for j in outputs_with_grads:
        given = model.net.AddExternalInput(str(outputs[j]) + "_given_grad")
        product = model.net.Mul([outputs[j], given], "loss_product_%d" % j)
        losses.append(model.net.SumElements(product, "loss_%d" % j))
    grad_map = model.AddGradientOperators(losses)
    return model, outputs, grad_map


def init_params(model, rng, scale=0.5):
    """Run param_init_net, then replace every blob it made with float64 values."""
    workspace.RunNetOnce(model.param_init_net)
    values = {}
    for op in model.param_init_net.Proto().op:
        for name in op.output:
            value = workspace.FetchBlob(name)
            if value.dtype.kind != "f":
                continue  # e.g. an unrolled cell's int32 timestep constants
            values[name] = rng.uniform(-scale, scale, size=value.shape)
            workspace.FeedBlob(name, values[name])
    return values


def feed(blobs):
    for name, value in blobs.items():
        workspace.FeedBlob(str(name), value)


def layer_names(scope, num_layers):
    return [scope] if num_layers == 1 else ["%s/layer_%d" % (scope, i) for i in range(num_layers)]


def stacked_forward(p, names, x, initial, lengths, kind="lstm", residual=(), forget_bias=0.0):
    """Every layer's h_all/c_all, and the cell output (with residual sums).

    ``p`` maps blob names to values; ``names`` are the layers' scopes;
    ``initial`` is ``[h0_0, c0_0, h0_1, ...]``.
    """
    layer_input = x
    results = []
    outputs = []
    for i, name in enumerate(names):
        g = lambda n: p[name + "/" + n]  # noqa: E731
        h0, c0 = initial[2 * i], initial[2 * i + 1]
        if kind == "lstm":
            fwd = ref.lstm_forward(
                layer_input,
                h0,
                c0,
                g("i2h_w"),
                g("i2h_b"),
                g("gates_t_w"),
                g("gates_t_b"),
                lengths,
                forget_bias=forget_bias,
            )
        else:
            fwd = ref.milstm_forward(
                layer_input,
                h0,
                c0,
                g("i2h_w"),
                g("i2h_b"),
                g("prev_t_w"),
                g("prev_t_b"),
                g("alpha"),
                g("beta1"),
                g("beta2"),
                g("b"),
                lengths,
                forget_bias=forget_bias,
            )
        results.append(fwd)
        out = fwd["h_all"]
        outputs.append(out)
        if i > 0 and i in residual:
            out = out + layer_input
        layer_input = out
    # the final output sums the last layer and the residual run just below it
    connected = [len(names) - 1]
    for i in range(len(names) - 2, -1, -1):
        if i + 1 in residual:
            connected.insert(0, i)
        else:
            break
    output = sum(outputs[i] for i in connected)
    return results, output


def numeric_gradients(loss, values, names):
    return {n: ref.numeric_gradient(loss, values[n]) for n in names}


def assert_close(actual, expected, what, rtol=1e-6, atol=1e-9):
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol, err_msg=what)
