"""Copying the blobs of every step workspace out, to look at them.

``RecurrentNetworkBlobFetcher`` (Caffe2 ``c0ef34a60``, 2017-07): input 0 is a
``step_workspaces`` blob; for each step workspace i and each of its *local*
blobs ``b`` (the step's intermediates: gates, timestep, link views...), a copy
is stored in the op's workspace as ``<prefix>_<b><i>`` (argument ``prefix``,
default ``"rnn"``). Output 0 is a 1-D string tensor of the names written:
``str`` here; a net of an era whose policy ``fetched_names_are_bytes`` is
set (E6) gets them as ``bytes``, as Python 3 fetched Caffe2's string tensors.

:func:`caffe2rnn.recurrent.retrieve_step_blobs` runs it for every
``RecurrentNetwork`` op of a net (Caffe2's ``recurrent.retrieve_step_blobs``).
"""

import numpy as np

from ...errors import DTypeError, EnforceNotMet
from ...runtime.registry import register, register_gradient
from ..base import Operator
from ..gradient_maker import ShouldNotDoGradient
from .step_workspaces import ScratchWorkspaces


@register("RecurrentNetworkBlobFetcher", inputs=1, outputs=1)
class RecurrentNetworkBlobFetcherOp(Operator):
    """Copy every step workspace's local blobs into this workspace."""

    @property
    def names_as_bytes(self):
        """Output the names as ``bytes`` (Caffe2's string tensor under Python 3)."""
        return self.era is not None and self.era.fetched_names_are_bytes

    def setup(self):
        self.prefix = self.args.single("prefix", "rnn", str)

    def run(self):
        scratch = self.inputs[0].value
        if not isinstance(scratch, ScratchWorkspaces):
            raise EnforceNotMet(
                "input 0 ('%s') must hold the step workspaces of a "
                "RecurrentNetwork op" % self.input_name(0)
            )
        names = []
        for i, step_ws in enumerate(scratch.step_workspaces):
            if step_ws is None:
                continue
            for name in step_ws.local_blobs():
                value = step_ws.get_blob(name).value
                if type(value) is not np.ndarray:
                    raise DTypeError("step workspace %d: blob '%s' is not a tensor" % (i, name))
                new_name = "%s_%s%d" % (self.prefix, name, i)
                self.ws.create_blob(new_name).value = value.copy()
                names.append(new_name)
        if self.names_as_bytes:
            names = [name.encode() for name in names]
        self.outputs[0].value = np.array(names, dtype=object).reshape(len(names))


# SHOULD_NOT_DO_GRADIENT(RecurrentNetworkBlobFetcher) (recurrent_network_blob_fetcher_op.cc)
register_gradient("RecurrentNetworkBlobFetcher")(ShouldNotDoGradient)
