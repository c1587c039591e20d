"""The ``RecurrentNetwork`` operators of the scratch era (Caffe2 3b190c4df, 3913181a4).

Before step workspaces (32d884d22, 2017-01-27) the operators were different
classes, not refinements of today's: a net of era E0 or E1 creates these,
registered as the variants of ``RecurrentNetwork`` and
``RecurrentNetworkGradient`` for those eras; code built in E0/E1 gets the
scratch era's gradient maker (:class:`GetScratchRecurrentNetworkGradient`).

Forward (:class:`ScratchRecurrentNetworkOp`): one private workspace, child of
the op's, holds the step net (created once) and its blobs. Each run resizes
the state tensors to (T + 1) x N x D (the initial state must be 1 x N x D;
S1 also checks D against ``recurrent_sizes``) and every ``scratch`` tensor to
T x N x ``scratch_sizes[i]``; before step t every link makes its internal blob
a view of row t + offset; after the loop the aliases expose the states.

Gradient (:class:`ScratchRecurrentNetworkGradientOp`): its own private
workspace; links = forward links + backward links; before step t it adds
``GO(0)[t]`` into row t + 1 of the *first* state's gradient (only output 0
had a gradient); after each step ``<grad>_acc += <grad>`` per param; after
the loop the backward aliases, then each param's ``_acc`` and gradient blobs
are swapped. The initial states' gradients were never computed (bug B1,
fixed by 66ad84303): S1 resized outputs 1 and 5 to one element and output 4
to 1 x N x ``recurrent_sizes[0]`` (the LSTM layout of the day); S2 resizes
output ``1 + len(param) + i`` like gradient-op input ``recurrent_input_ids[i]``
— one before the initial state, since input 0 is ``GO(0)``. Both leave them
unwritten.
"""

import numpy as np

from .. import eras
from ..errors import ArgumentError, EnforceNotMet, ShapeError
from ..kernels import checked
from ..operators.base import Operator
from ..operators.gradient_maker import GradientMaker
from ..runtime import Workspace
from ..runtime.registry import register_gradient_variant, register_variant


def _links(args, prefix=""):
    internal = args.repeated(prefix + "link_internal", kind=str)
    external = args.repeated(prefix + "link_external", kind=str)
    offset = args.repeated(prefix + "link_offset", kind=int)
    if not len(internal) == len(external) == len(offset):
        raise ArgumentError("%slink_internal/external/offset mismatch" % prefix)
    return list(zip(internal, external, offset))


def _aliases(args, prefix=""):
    src = args.repeated(prefix + "alias_src", kind=str)
    dst = args.repeated(prefix + "alias_dst", kind=str)
    offset = args.repeated(prefix + "alias_offset", kind=int)
    if not len(src) == len(dst) == len(offset):
        raise ArgumentError("%salias_src/dst/offset mismatch" % prefix)
    return list(zip(src, dst, offset))


def _scratches(op, names_arg):
    names = op.args.repeated(names_arg, kind=str)
    sizes = op.args.repeated("scratch_sizes", kind=int)
    if len(names) != len(sizes):
        raise ArgumentError("%s and scratch_sizes mismatch" % names_arg)
    for name in names:
        op.ws.create_blob(name)  # in the op's workspace: shared by both ops
    return list(zip(names, sizes))


def _step_net(op, arg_name, private):
    from google.protobuf import text_format

    from ..proto import caffe2_pb2

    netdef = caffe2_pb2.NetDef()
    text_format.Parse(op.args.single(arg_name, "", str), netdef)
    private.create_blob(op.timestep).resize((1,), np.int32)
    for name in netdef.external_input:
        private.create_blob(name)
    return private.create_net(netdef)


def _apply_link(link, t, private):
    internal, external, offset = link
    tensor = private.blob(external).value
    private.create_blob(internal).value = checked.link_view(
        tensor, t, offset, 1, "link '%s' -> '%s'" % (internal, external)
    )


def _apply_alias(alias, private):
    src, dst, offset = alias
    tensor = private.blob(src).value
    start = offset if offset >= 0 else tensor.shape[0] + offset
    if tensor.shape[0] - start < 1:
        raise EnforceNotMet("Invalid number of timesteps: %d" % (tensor.shape[0] - start))
    private.create_blob(dst).value = tensor[start:]


def _run_step(net, private, timestep, t):
    private.blob(timestep).value[0] = t
    net.run()


@register_variant("RecurrentNetwork", eras=["E0", "E1"])
class ScratchRecurrentNetworkOp(Operator):
    """``RecurrentNetwork`` of 2016-12 / 2017-01 (module docstring)."""

    def setup(self):
        args = self.args
        self.timestep = args.single("timestep", "timestep", str)
        self.private = Workspace(parent=self.ws, name="recurrent_network")
        self.net = _step_net(self, "step_net", self.private)
        self.scratches = _scratches(self, "scratch")
        states = args.repeated("recurrent_states", kind=str)
        initial = args.repeated("recurrent_inputs", kind=str)
        # S1 (E0) sized its states by ``recurrent_sizes``; S2 (E1, 903acaff1)
        # names the recurrent inputs by index instead.
        s1 = not self.era.recurrent_inputs_by_index
        self.sizes = args.repeated("recurrent_sizes", kind=int) if s1 else None
        if len(states) != len(initial) or (
            self.sizes is not None and len(self.sizes) != len(states)
        ):
            raise ArgumentError("recurrent_states/recurrent_inputs/recurrent_sizes mismatch")
        for state in states:
            self.ws.create_blob(state)
        self.recurrent = list(zip(states, initial))
        self.links = _links(args)
        self.aliases = _aliases(args)

    def run(self):
        x = self.input(0)
        seq_len, batch = x.shape[0], x.shape[1]
        for i, (state, initial) in enumerate(self.recurrent):
            h0 = self.private.blob(initial).value
            if getattr(h0, "ndim", 0) != 3 or h0.shape[:2] != (1, batch):
                raise ShapeError(
                    "initial state '%s' has shape %s; expected 1 x %d x D"
                    % (initial, getattr(h0, "shape", None), batch)
                )
            if self.sizes is not None and h0.shape[2] != self.sizes[i]:
                raise ShapeError(
                    "initial state '%s' has size %d; recurrent_sizes says %d"
                    % (initial, h0.shape[2], self.sizes[i])
                )
            states = self.private.blob(state).resize((seq_len + 1, batch, h0.shape[2]), h0.dtype)
            states[0] = h0[0]
        for name, size in self.scratches:
            self.private.blob(name).resize((seq_len, batch, size), x.dtype)
        for t in range(seq_len):
            for link in self.links:
                _apply_link(link, t, self.private)
            _run_step(self.net, self.private, self.timestep, t)
        for alias in self.aliases:
            _apply_alias(alias, self.private)


@register_variant("RecurrentNetworkGradient", eras=["E0", "E1"])
class ScratchRecurrentNetworkGradientOp(Operator):
    """``RecurrentNetworkGradient`` of 2016-12 / 2017-01 (module docstring)."""

    def setup(self):
        args = self.args
        self.timestep = args.single("timestep", "timestep", str)
        self.s1 = not self.era.recurrent_inputs_by_index
        self.private = Workspace(parent=self.ws, name="recurrent_network_gradient")
        self.scratches = _scratches(self, "backward_scratch")
        self.links = _links(args) + _links(args, "backward_")
        self.aliases = _aliases(args, "backward_")
        if self.s1:
            names = args.repeated("param", kind=str)
            grads = args.repeated("param_gradient", kind=str)
            if len(names) != len(grads):
                raise ArgumentError("param and param_gradient mismatch")
            self.params = list(zip(names, grads))
            self.sizes = args.repeated("recurrent_sizes", kind=int)
            for i in (1, 5):  # placeholders of the LSTM layout
                if len(self.outputs) > i:
                    self.outputs[i].resize((1,), np.float32)
        else:
            ids = args.repeated("param", kind=int)
            self.params = [
                (self.def_.input[i + 1], self.def_.output[k + 1]) for k, i in enumerate(ids)
            ]
            self.initial_ids = args.repeated("recurrent_input_ids", kind=int)
        states = args.repeated("recurrent_states", kind=str)
        self.recurrent = [(s, s + "_grad", i == 0) for i, s in enumerate(states)]
        self.net = _step_net(self, "backward_step_net", self.private)

    def run(self):
        x = self.input(1)
        seq_len, batch = x.shape[0], x.shape[1]
        if self.s1:
            if len(self.outputs) > 4:
                self.outputs[4].resize((1, batch, self.sizes[0]), np.float32)
        else:
            for i, input_id in enumerate(self.initial_ids):
                like = self.input(input_id)  # one before the initial state (B1)
                self.outputs[i + len(self.params) + 1].resize(like.shape, like.dtype)
        for param, grad in self.params:
            p = self.private.blob(param).value
            self.private.create_blob(grad).resize(p.shape, p.dtype)
            self.private.create_blob(grad + "_acc").resize(p.shape, p.dtype).fill(0)
        for state, grad, _ in self.recurrent:
            s = self.private.blob(state).value
            g = self.private.create_blob(grad).resize(s.shape, s.dtype)
            g[-1] = 0
        for input_id in self.args.repeated("input_gradient_ids", kind=int):
            like = self.input(input_id + 1)
            self.private.create_blob(self.def_.input[input_id + 1] + "_grad").resize(
                like.shape, like.dtype
            )
        for name, size in self.scratches:
            self.private.blob(name).resize((seq_len, batch, size), x.dtype)
        go = self.input(0)
        for t in range(seq_len - 1, -1, -1):
            for _, grad, has_external in self.recurrent:
                if has_external:  # only output 0 had a gradient
                    g = self.private.blob(grad).value
                    g[t + 1] += go[t]
            for link in self.links:
                _apply_link(link, t, self.private)
            _run_step(self.net, self.private, self.timestep, t)
            for _, grad in self.params:
                acc = self.private.blob(grad + "_acc").value
                acc += self.private.blob(grad).value
        for alias in self.aliases:
            _apply_alias(alias, self.private)
        for _, grad in self.params:
            self.private.blob(grad + "_acc").swap(self.private.blob(grad))


@register_gradient_variant("RecurrentNetwork", eras=["E0", "E1"])
class GetScratchRecurrentNetworkGradient(GradientMaker):
    """``GetRecurrentNetworkGradient`` of the scratch era: inputs ``[GO(0)] +
    inputs + outputs``; outputs ``GI(i)`` of every input (S1, era E0) or
    ``GI(0)``, ``GI(param)``, ``GI(recurrent_input_ids)`` (S2, era E1)."""

    def get_gradient_defs(self):
        inputs = [self.GO(0)] + list(self.def_.input) + list(self.def_.output)
        if not eras.current().recurrent_inputs_by_index:
            outputs = [self.GI(i) for i in range(len(self.def_.input))]
        else:
            outputs = [self.GI(0)]
            outputs += [self.GI(i) for i in self.arg("param", [])]
            outputs += [self.GI(i) for i in self.arg("recurrent_input_ids", [])]
        return [self.op_def("RecurrentNetworkGradient", inputs, outputs)]
