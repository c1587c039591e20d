"""caffe2rnn: see and run how Caffe2's recurrent networks worked.

A pure-Python + NumPy re-implementation of the part of Caffe2 that recurrent
networks need (protobuf NetDefs, ``core``, workspaces, operators, model
helpers), the ``RecurrentNetwork`` operator with Cython kernels beneath
readable Python twins, and the cells built on it.

The package holds three kinds of thing:

* **Caffe2's modules**, under Caffe2's names, where :mod:`caffe2rnn.compat`
  expects them (``caffe2.python.X`` is ``caffe2rnn.X``): ``core``,
  ``workspace``, ``_import_c_extension``, ``model_helper``, ``brew``,
  ``helpers``, ``modeling``, ``cnn``, ``rnn_cell``, ``gru_cell``,
  ``recurrent``, ``attention``, ``optimizer``, ``scope``, ``utils``,
  ``gradient_checker``, ``control_ops_util``, and ``proto``
  (``caffe2.proto``).
* **caffe2rnn's own machinery**: ``runtime`` (what Caffe2 did in C++:
  workspaces, nets, the operator registry), ``operators``, ``kernels`` (with
  their Cython twins in ``_ext``), ``cells`` (the RNN cells ``rnn_cell``
  exposes), ``recurrent_stages`` (the stages of ``recurrent_net``),
  ``extract_predictor``, ``eras`` (the one era vocabulary), ``errors``,
  ``history`` (the 2016-17 versions, which plug in by registering),
  ``example_cells``, ``viz`` and ``compat``.
* **The demo application**: ``demo`` (``python -m caffe2rnn demo``).

Importing the package registers every operator, today's and the older
eras' (:mod:`caffe2rnn.runtime.registry`), and the drawing layer's net drawer
for the gradient checker.
"""

__version__ = "0.1.0"

# Importing these registers what they contribute: every operator; the
# operators of older eras and their recurrent_net texts; the gradient
# checker's net drawer; the gradients of If, While and Do.
from . import control_ops_grad, history, operators, viz  # noqa: F401, E402
