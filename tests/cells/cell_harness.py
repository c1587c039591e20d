"""Build a cell with caffe2rnn's API, run it in float64, collect everything.

Shared by the cell tests: the model is built exactly as a Caffe2 user would
(CNNModelHelper + recurrent.LSTM/...), then every parameter and input is fed
as float64 so results can be compared with the NumPy references tightly.
"""

import numpy as np

from caffe2rnn import workspace
from caffe2rnn.cnn import CNNModelHelper


def build(cell_fn, outputs_with_grads, **kwargs):
    """``cell_fn(model, outputs_with_grads=..., **kwargs)`` → (model, outputs, grad_map).

    The external gradient of each output in ``outputs_with_grads`` is an
    explicit blob ``<output>_given_grad`` the test feeds.
    """
    model = CNNModelHelper(name="cell_test")
    outputs = cell_fn(model, outputs_with_grads=outputs_with_grads, **kwargs)
    ys = {outputs[j]: str(outputs[j]) + "_given_grad" for j in outputs_with_grads}
    for given in ys.values():  # fed by the test, so declared as net inputs
        model.net.AddExternalInput(given)
    grad_map = model.AddGradientOperators(ys)
    return model, outputs, grad_map


def init_params(model, rng, scale=0.5, names=None):
    """Run param_init_net, then give every blob it made random float64 values.

    ``names`` (default: every float blob param_init_net outputs, including
    constants such as MILSTM's alpha or attention's zero bias) are drawn
    uniformly in [-scale, scale]; returns them by name.
    """
    workspace.RunNetOnce(model.param_init_net)
    if names is None:
        names = [out for op in model.param_init_net.Proto().op for out in op.output]
    values = {}
    for name in names:
        shape = workspace.FetchBlob(name).shape
        values[name] = rng.uniform(-scale, scale, size=shape)
        workspace.FeedBlob(name, values[name])
    return values


def feed(blobs):
    for name, value in blobs.items():
        workspace.FeedBlob(name, value)


def fetch(names):
    return {str(n): workspace.FetchBlob(str(n)) for n in names}


def loss_of(outputs, given):
    """Σ_j sum(output_j ⊙ given_j): the loss whose gradients the net computes."""
    return sum(float(np.sum(workspace.FetchBlob(str(o)) * g)) for o, g in zip(outputs, given))
