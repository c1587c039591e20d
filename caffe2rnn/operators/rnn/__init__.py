"""The RecurrentNetwork family (Caffe2's ``caffe2/operators/rnn/``).

Importing registers ``RecurrentNetwork`` (:mod:`.recurrent_network`),
``RecurrentNetworkGradient`` and its gradient maker (:mod:`.gradient`),
``rnn_internal_apply_link`` (:mod:`.links`),
``rnn_internal_accumulate_gradient_input`` (:mod:`.accumulate`) and
``RecurrentNetworkBlobFetcher`` (:mod:`.blob_fetcher`). These are today's
operators (Caffe2 042e8ede4 and PyTorch's copy); what they did differently in
2017 lives in :mod:`caffe2rnn.history.operator_eras`. The op's arguments are
read and checked once, by :mod:`caffe2rnn.operators.rnn.arguments`;
:func:`prepared_backward_step_net` is the backward step net as the gradient op
runs it.
"""

from . import accumulate, blob_fetcher, gradient, links, recurrent_network  # noqa: F401
from .arguments import RecurrentArguments, read_recurrent_arguments  # noqa: F401
from .gradient import prepared_backward_step_net  # noqa: F401
from .step_workspaces import ScratchWorkspaces  # noqa: F401
