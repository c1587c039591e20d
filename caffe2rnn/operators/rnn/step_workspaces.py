"""Where each timestep runs: step workspaces and the shared-blobs workspace.

The forward op keeps, in its *last output blob* (``<scope>/step_workspaces``),
a :class:`ScratchWorkspaces` object (Caffe2's ``detail::ScratchWorkspaces``):

    op's workspace          params, inputs, <state> tensors, <state>_grad
      └ shared_blobs_ws     recompute_blobs_on_backward, backward-net blobs
          ├ step workspace 0   timestep = 0, step-net intermediates of t = 0
          ├ step workspace 1   ...
          └ ...

A step net run in step workspace t reads parameters through the parent chain,
writes linked blobs into the big tensors, and keeps its intermediates (gates,
activations) locally. With a backward pass there is one step workspace per
timestep, because the backward step net of step t needs step t's
intermediates. Forward-only, intermediates are dead after the step, so the op
cycles over ``num_workspaces`` (2, or 4 with the RNN executor) whatever T is
(:class:`CycleWhenForwardOnly`). The gradient op receives the same object as
its last input, and ``RecurrentNetworkBlobFetcher`` copies blobs out of it.
"""

import numpy as np

from ...runtime.workspace import Workspace


class ScratchWorkspaces:
    """The step workspaces of one recurrent op, and their shared parent."""

    caffe2_type_name = "caffe2::detail::ScratchWorkspaces"

    def __init__(self):
        self.step_workspaces = []  # Workspace or None (created on first use)
        self.shared_blobs_ws = None

    def shared(self, parent):
        """The shared-blobs workspace, created as a child of ``parent`` once."""
        if self.shared_blobs_ws is None:
            self.shared_blobs_ws = Workspace(parent=parent, name="shared_blobs")
        return self.shared_blobs_ws

    def step(self, i):
        """Step workspace ``i``, a child of the shared-blobs workspace."""
        ws = self.step_workspaces[i]
        if ws is None:
            ws = self.step_workspaces[i] = Workspace(
                parent=self.shared_blobs_ws, name="step_%d" % i
            )
        return ws

    def grow(self, n):
        """At least ``n`` step-workspace slots (never shrinks: another op may
        share this object and use more)."""
        if len(self.step_workspaces) < n:
            self.step_workspaces.extend([None] * (n - len(self.step_workspaces)))

    def __repr__(self):
        return "ScratchWorkspaces(%d step workspaces)" % len(self.step_workspaces)


def scratch_of(blob):
    """The ScratchWorkspaces in ``blob``, replacing any other content (as Caffe2's
    ``Output<ScratchWorkspaces>`` did)."""
    if not isinstance(blob.value, ScratchWorkspaces):
        blob.value = ScratchWorkspaces()
    return blob.value


def update_timestep_blob(ws, name, t):
    """Set the int32 one-element ``timestep`` blob of ``ws`` to ``t`` (and
    return the blob).

    ``CreateBlob`` semantics: if the outer workspace already has a blob of that
    name, it is the one written (and shared by all steps), as in Caffe2.
    """
    blob = ws.create_blob(name)
    blob.resize((1,), np.int32)[0] = t
    return blob


class CycleWhenForwardOnly:
    """Step workspace per timestep with a backward pass; else cycle over a few.

    Caffe2 from 2017-05 (``18fbc13a6``, and ``359776004``: never shrink): with
    a backward pass step t runs in workspace t; forward-only it runs in
    workspace ``t % num_workspaces``. Caffe2 042e8ede4 used 2, or 4 when the
    op runs with the RNN executor (``enable_rnn_executor=1``: the executor
    ran up to 4 timesteps at once); PyTorch's copy adds the ``num_workspaces``
    argument to choose.
    """

    default_num_workspaces = 2
    executor_num_workspaces = 4

    def num_workspaces(self, requested, enable_rnn_executor=False):
        """``requested`` (argument ``num_workspaces``, checked >= 1 by the
        argument reader) or the default of the executor / plain loop."""
        if requested is not None:
            return requested
        if enable_rnn_executor:
            return self.executor_num_workspaces
        return self.default_num_workspaces

    def prepare(self, scratch, seq_len, has_backward_pass, num_workspaces):
        scratch.grow(seq_len if has_backward_pass else num_workspaces)

    def index(self, t, has_backward_pass, num_workspaces):
        return t if has_backward_pass else t % num_workspaces
