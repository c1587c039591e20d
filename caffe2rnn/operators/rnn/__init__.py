"""The RecurrentNetwork family (Caffe2's ``caffe2/operators/rnn/``).

Importing registers ``RecurrentNetwork`` (:mod:`.recurrent_network`),
``RecurrentNetworkGradient`` and its gradient maker (:mod:`.gradient`),
``rnn_internal_apply_link`` (:mod:`.links`),
``rnn_internal_accumulate_gradient_input`` (:mod:`.accumulate`) and
``RecurrentNetworkBlobFetcher`` (:mod:`.blob_fetcher`). These are today's
operators (Caffe2 042e8ede4 and PyTorch's copy); what they did differently in
2017 lives in :mod:`caffe2rnn.history.operator_eras`.
"""

from . import accumulate, blob_fetcher, gradient, links, recurrent_network  # noqa: F401
from .step_workspaces import ScratchWorkspaces  # noqa: F401
