"""Control flow inside a net: If, While, Do, CreateScope, HasScope.

Caffe2 added these operators in August-September 2017 (97842bdd7/bff126f09
"Control flow operators", d72d83528 "Backpropagation for If operator"); this
is their behaviour at 929c33cee (E7), ``operators/if_op.h``, ``while_op.h``,
``do_op.h`` and ``create_scope_op.h``:

* ``If([cond, ...], [...], then_net=, else_net=)`` runs ``then_net`` when
  the scalar bool ``cond`` is true, else ``else_net`` (if any), **in the same
  workspace**. The nets are created when the If op is, so their inputs must
  exist by then. The extra inputs and outputs only declare what the branches
  read and write (for the gradient and the dependency checks).
* ``While([cond, ...], [...], loop_net=, cond_net=)`` runs ``cond_net`` (if
  given) and then, while ``cond`` holds true, ``loop_net`` and ``cond_net``
  again -- all in the same workspace. ``cond`` is read anew each time.
* ``Do([outer..., ws], [outer..., ws], net=, inner_blobs=, outer_blobs_idx=)``
  runs ``net`` in a workspace of its own
  (:class:`~caffe2rnn.runtime.workspace_stack.BoundWorkspace`) that sees only
  the outer blobs it is bound to: ``inner_blobs[k]`` is outer blob number
  ``outer_blobs_idx[k]`` of Do's inputs then outputs (the last input and
  output, the same blob, holding the workspace stack, not counted). Every
  outer blob is bound exactly once. ``copy_external_blobs`` keeps a copy of
  the bound values in that workspace after the run (the While body: its
  backward reads them); a gradient Do (``is_gradient_op``) pops the forward
  workspace instead of pushing a new one.
* ``CreateScope([], [ws])`` empties the stack of Do workspaces in ``ws``;
  ``HasScope([ws], [has])`` writes whether any is left.

``NetBuilder`` (``ops.IfNet``/``ops.WhileNet``) and ``brew.cond``/``brew.loop``
build these through :mod:`caffe2rnn.control_ops_util`; their gradients are
made by :mod:`caffe2rnn.control_ops_grad`.
"""

import numpy as np

from ..errors import DTypeError, EnforceNotMet, ShapeError
from ..runtime.net import NetInstance
from ..runtime.registry import register, register_gradient
from ..runtime.workspace_stack import WorkspaceStack
from .base import Operator
from .gradient_maker import ShouldNotDoGradient


def _net_argument(op, name, required):
    """The NetDef in argument ``name`` (Caffe2's HasSingleArgumentOfType<NetDef>:
    the ``n`` field), or None when absent and not ``required``."""
    for arg in op.def_.arg:
        if arg.name == name and arg.HasField("n"):
            return arg.n
    if required:
        raise EnforceNotMet("%s must be specified in %s operator" % (name, op.def_.type))
    return None


def _condition(op):
    """The value of input 0: a tensor of one bool (``data<bool>()``)."""
    value = op.inputs[0].value
    if type(value) is not np.ndarray:
        raise DTypeError(
            "Invalid condition in %s operator: tensor expected (blob '%s' holds %s)"
            % (op.def_.type, op.inputs[0].name, op.inputs[0].type_name())
        )
    if value.size != 1:
        raise ShapeError(
            "Invalid condition tensor in %s operator: single value expected (blob '%s' "
            "has shape %s)" % (op.def_.type, op.inputs[0].name, value.shape)
        )
    if value.dtype != np.bool_:
        raise DTypeError(
            "Tensor type mismatch, caller expects elements to be bool while tensor contains "
            "%s (condition blob '%s' of %s)" % (value.dtype, op.inputs[0].name, op.def_.type)
        )
    return bool(value.reshape(-1)[0])


@register("If", inputs=(1, None), outputs=(0, None), inplace="any")
class If(Operator):
    """Run ``then_net`` or ``else_net`` in this workspace, as the bool input 0 says."""

    def setup(self):
        then_net = _net_argument(self, "then_net", required=True)
        else_net = _net_argument(self, "else_net", required=False)
        self.then_net = NetInstance(then_net, self.ws, self.era)
        self.else_net = None if else_net is None else NetInstance(else_net, self.ws, self.era)

    def run(self):
        if _condition(self):
            self.then_net.run()
        elif self.else_net is not None:
            self.else_net.run()


@register("While", inputs=(1, None), outputs=(0, None), inplace="any")
class While(Operator):
    """Run ``cond_net``, then ``loop_net`` and ``cond_net`` while the bool input 0 is true."""

    def setup(self):
        loop_net = _net_argument(self, "loop_net", required=True)
        cond_net = _net_argument(self, "cond_net", required=False)
        self.loop_net = NetInstance(loop_net, self.ws, self.era)
        self.cond_net = None if cond_net is None else NetInstance(cond_net, self.ws, self.era)

    def run(self):
        _condition(self)  # a tensor of one element, checked before the first round
        while True:
            if self.cond_net is not None:
                self.cond_net.run()
            if not _condition(self):
                return
            self.loop_net.run()


def _stack(op, blob, create):
    """The WorkspaceStack ``blob`` holds; ``create``: make one if it holds
    something else (Caffe2's ``Output<WorkspaceStack>``), else refuse
    (``Input<WorkspaceStack>``)."""
    if isinstance(blob.value, WorkspaceStack):
        return blob.value
    if create:
        blob.value = WorkspaceStack()
        return blob.value
    raise DTypeError(
        "%s: blob '%s' holds %s, not a workspace stack (made by CreateScope)"
        % (op.def_.type, blob.name, blob.type_name())
    )


@register("Do", inputs=(1, None), outputs=(1, None), inplace="any")
class Do(Operator):
    """Run ``net`` in a workspace of its own, bound to the outer blobs (module docstring)."""

    def setup(self):
        self.net_def = _net_argument(self, "net", required=True)
        self.is_gradient = self.def_.is_gradient_op
        self.copy_external_blobs = self.args.single("copy_external_blobs", False, bool)
        self.reuse_workspace = self.args.single("reuse_workspace", False, bool)
        self.check(
            not (self.is_gradient and self.reuse_workspace),
            "Gradient Do op requires use of stacked workspaces",
        )
        self.check(
            not (self.copy_external_blobs and self.reuse_workspace),
            "Reuse workspace and copy external blobs simultaneously in Do op",
        )
        inner_blobs = self.args.repeated("inner_blobs", kind=str)
        outer_blobs_idx = self.args.repeated("outer_blobs_idx", kind=int)
        self.check(
            len(inner_blobs) == len(outer_blobs_idx),
            "Invalid blob bindings: different inner/outer blobs lengths",
        )
        outer_names = self._outer_names()
        self.bindings = {}
        used = set()
        for inner, index in zip(inner_blobs, outer_blobs_idx):
            self.check(
                inner not in self.bindings,
                "Invalid blob bindings: redefinition of inner blob " + inner,
            )
            self.check(
                0 <= index < len(outer_names),
                "Invalid blob bindings: outer blob index (%d, inner name: %s) is out of "
                "bounds [0, %d]" % (index, inner, len(outer_names) - 1),
            )
            outer = outer_names[index]
            self.check(outer not in used, "Reusage of outer name: " + outer)
            used.add(outer)
            self.bindings[inner] = outer
        self.check(
            len(used) == len(set(outer_names)), "Not all outer names are used in blob bindings"
        )

    def _outer_names(self):
        inputs, outputs = list(self.def_.input), list(self.def_.output)
        self.check(len(inputs) > 0, "Expected at least one input blob")
        input_ws = inputs.pop()
        self.check(len(set(inputs)) == len(inputs), "Duplicate input blobs")
        self.check(len(outputs) > 0, "Expected at least one output blob")
        output_ws = outputs.pop()
        self.check(input_ws == output_ws, "Expected same input/output workspace blob")
        self.check(len(set(outputs)) == len(outputs), "Duplicate output blobs")
        return inputs + outputs

    def run(self):
        stack = _stack(self, self.outputs[-1], create=True)
        if self.is_gradient:
            workspace = stack.pop_gradient_workspace(self.ws, self.bindings)
        elif self.reuse_workspace and not stack.empty():
            workspace = stack.reuse_last_forward_workspace(self.ws, self.bindings)
        else:
            workspace = stack.push_forward_workspace(self.ws, self.bindings)
        self.check(workspace is not None, "Failed to initialize Do op workspace")
        # Caffe2 kept the net it created in that workspace (GetNet); it is made
        # anew here, so its ops bind the blobs the workspace holds now.
        net = workspace.create_net(self.net_def, overwrite=True, era=self.era)
        net.run()
        if not self.is_gradient and self.copy_external_blobs:
            workspace.copy_forwarded_tensors(self.bindings)


@register("CreateScope", inputs=0, outputs=1)
class CreateScope(Operator):
    """Output 0 holds an empty stack of Do workspaces (a new one if it held anything else)."""

    def run(self):
        _stack(self, self.outputs[0], create=True).clear()


@register("HasScope", inputs=1, outputs=1)
class HasScope(Operator):
    """Output 0 = [True] while the workspace stack of input 0 has workspaces to pop."""

    def run(self):
        stack = _stack(self, self.inputs[0], create=False)
        self.output(0, (1,), np.bool_)[0] = not stack.empty()


register_gradient("CreateScope")(ShouldNotDoGradient)
register_gradient("HasScope")(ShouldNotDoGradient)
