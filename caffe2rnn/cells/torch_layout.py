"""``torch.nn.LSTM`` weights in Caffe2's layout, and back.

An engineer who knows PyTorch meets the same LSTM in Caffe2 with three
differences of layout (docs/start-here.md draws them):

* **gate order** — torch stacks the four gate blocks of ``weight_ih_l0``
  (``4H × D``) as *input, forget, cell (g), output*; Caffe2's ``LSTMUnit``
  reads its ``4H`` pre-activations as *input, forget, output, cell (g)*
  (``caffe2/operators/lstm_unit_op.h`` at 0cdd09da6: ``X[0..D)`` i,
  ``X[D..2D)`` f, ``X[2D..3D)`` o, ``X[3D..4D)`` g);
* **two FCs** — Caffe2's LSTM projects the whole input sequence once with the
  FC ``<scope>/i2h`` (``i2h_w``, ``i2h_b``) and the previous hidden state at
  each step with the FC ``<scope>/gates_t`` (``gates_t_w``, ``gates_t_b``);
  torch's ``weight_ih``/``bias_ih`` and ``weight_hh``/``bias_hh`` are the
  same two products, so ``i2h_b`` takes ``bias_ih`` and ``gates_t_b`` takes
  ``bias_hh`` (only their sum matters);
* **float32** — Caffe2's LSTM ops are float-only.

Both FCs keep torch's ``out × in`` weight shape (Caffe2's ``FC`` computes
``X · Wᵀ + b`` as ``torch.nn.Linear`` does), so nothing is transposed: only
the gate blocks move.

:func:`lstm_params_from_torch` returns the four Caffe2 arrays;
:func:`load_torch_lstm` feeds them into the current workspace under a
scope's names (after ``param_init_net`` ran, so the blobs it fills exist with
the shapes the model expects); :func:`lstm_params_to_torch` goes back.
"""

import numpy as np

from ..errors import BlobNotFoundError, ShapeError

#: torch.nn.LSTM's gate blocks, top to bottom of ``weight_ih_l0``.
TORCH_GATES = ("i", "f", "g", "o")
#: Caffe2's gate blocks, as ``LSTMUnit`` reads them.
CAFFE2_GATES = ("i", "f", "o", "g")

#: The suffixes of the four Caffe2 parameter blobs, under ``<scope>/``.
PARAM_NAMES = ("i2h_w", "i2h_b", "gates_t_w", "gates_t_b")


def reorder_gates(array, source, target, name="array"):
    """``array`` (``4H × …``) with its four gate blocks moved from the order
    ``source`` to the order ``target`` (tuples of ``'i'``, ``'f'``, ``'g'``,
    ``'o'``), as a new float32 array."""
    array = np.asarray(array)
    if array.ndim not in (1, 2) or array.shape[0] % 4:
        raise ShapeError(
            "%s has shape %s; expected 4 gate blocks of equal height on axis 0"
            % (name, tuple(array.shape))
        )
    blocks = dict(zip(source, np.split(array, 4, axis=0)))
    return np.ascontiguousarray(np.concatenate([blocks[g] for g in target]), dtype=np.float32)


def lstm_params_from_torch(weight_ih, weight_hh, bias_ih=None, bias_hh=None):
    """Caffe2's ``(i2h_w, i2h_b, gates_t_w, gates_t_b)`` from one layer of a
    ``torch.nn.LSTM`` (``weight_ih_l0``: ``4H × D``, ``weight_hh_l0``:
    ``4H × H``, biases ``4H``; ``bias=False`` layers: pass None for zeros).

    Arrays or anything ``np.asarray`` takes (a torch tensor's ``.detach()``
    included). Raises :class:`~caffe2rnn.errors.ShapeError` when the shapes are
    not those of one LSTM layer.
    """
    weight_ih = np.asarray(weight_ih)
    weight_hh = np.asarray(weight_hh)
    if weight_hh.ndim != 2 or weight_hh.shape[0] != 4 * weight_hh.shape[1]:
        raise ShapeError(
            "weight_hh has shape %s; expected (4 * H, H) (torch.nn.LSTM's weight_hh_l<k>)"
            % (tuple(weight_hh.shape),)
        )
    hidden = weight_hh.shape[1]
    if weight_ih.ndim != 2 or weight_ih.shape[0] != 4 * hidden:
        raise ShapeError(
            "weight_ih has shape %s; expected (4 * H, D) = (%d, D) like weight_hh"
            % (tuple(weight_ih.shape), 4 * hidden)
        )
    biases = []
    for name, bias in (("bias_ih", bias_ih), ("bias_hh", bias_hh)):
        bias = np.zeros(4 * hidden, np.float32) if bias is None else np.asarray(bias)
        if bias.shape != (4 * hidden,):
            raise ShapeError(
                "%s has shape %s; expected (%d,) (4 * H)" % (name, tuple(bias.shape), 4 * hidden)
            )
        biases.append(bias)

    def caffe2(array, name):
        return reorder_gates(array, TORCH_GATES, CAFFE2_GATES, name)

    return (
        caffe2(weight_ih, "weight_ih"),
        caffe2(biases[0], "bias_ih"),
        caffe2(weight_hh, "weight_hh"),
        caffe2(biases[1], "bias_hh"),
    )


def lstm_params_to_torch(i2h_w, i2h_b, gates_t_w, gates_t_b):
    """The inverse of :func:`lstm_params_from_torch`: ``(weight_ih, weight_hh,
    bias_ih, bias_hh)`` in torch's gate order, float32."""

    def torch(array, name):
        return reorder_gates(array, CAFFE2_GATES, TORCH_GATES, name)

    return (
        torch(i2h_w, "i2h_w"),
        torch(gates_t_w, "gates_t_w"),
        torch(i2h_b, "i2h_b"),
        torch(gates_t_b, "gates_t_b"),
    )


def load_torch_lstm(scope, weight_ih, weight_hh, bias_ih=None, bias_hh=None):
    """Feed one ``torch.nn.LSTM`` layer's weights into the current workspace
    as the parameters of the Caffe2 LSTM built under ``scope`` (e.g.
    ``rnn_cell.LSTM(..., scope="lstm")`` → ``lstm/i2h_w`` …).

    Run the model's ``param_init_net`` first: each blob must exist with the
    shape the model gave it (a missing blob is a
    :class:`~caffe2rnn.errors.BlobNotFoundError`, a shape mismatch a
    :class:`~caffe2rnn.errors.ShapeError`, each naming the blob; then nothing
    is fed). Returns the names fed, in :data:`PARAM_NAMES` order.
    """
    from .. import workspace

    values = lstm_params_from_torch(weight_ih, weight_hh, bias_ih, bias_hh)
    names = ["%s/%s" % (scope, suffix) for suffix in PARAM_NAMES]
    for name, value in zip(names, values):
        if not workspace.HasBlob(name):
            raise BlobNotFoundError(
                "%s is not in the workspace; run the model's param_init_net before "
                "loading weights into it" % name
            )
        current = workspace.FetchBlob(name)
        if current.shape != value.shape:
            raise ShapeError(
                "%s has shape %s in the workspace; the torch weights give %s"
                % (name, tuple(current.shape), tuple(value.shape))
            )
    for name, value in zip(names, values):
        workspace.FeedBlob(name, value)
    return names
