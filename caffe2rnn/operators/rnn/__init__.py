"""The RecurrentNetwork family (Caffe2's ``caffe2/operators/rnn/``).

Importing registers ``RecurrentNetwork`` (:mod:`.recurrent_network`),
``RecurrentNetworkGradient`` and its gradient maker (:mod:`.gradient`),
``rnn_internal_apply_link`` (:mod:`.links`),
``rnn_internal_accumulate_gradient_input`` (:mod:`.accumulate`) and
``RecurrentNetworkBlobFetcher`` (:mod:`.blob_fetcher`). The behaviours that
changed across Caffe2's history are gathered in :mod:`.policies`.
"""

from . import accumulate, blob_fetcher, gradient, links, recurrent_network  # noqa: F401
from .step_workspaces import ScratchWorkspaces  # noqa: F401
