"""A RecurrentNetwork operator read back from its arguments, for drawing.

``recurrent_net`` (seed 000) hands the C++ op everything as parallel lists:

* **links** ``(link_internal[i], link_external[i], link_offset[i],
  link_window[i])``: before step t, the step-net blob ``internal`` becomes a
  view of rows ``t+offset .. t+offset+window-1`` of the tensor ``external``.
  ``hidden_t_prev`` views ``states[t]`` (offset 0) and ``hidden_t`` views
  ``states[t+1]`` (offset 1), so the cell writes its output straight into the
  next row;
* **aliases** ``(alias_src, alias_dst, alias_offset)``: after the loop the
  output ``dst`` views ``src`` from row ``offset`` (negative: from the end):
  ``<out>_all`` = rows 1..T (offset 1), ``<out>_last`` = the last row (-1);
* **recurrent_states** with ``initial_recurrent_state_ids`` (the op input
  copied into row 0 of each state tensor);
* the backward pass: ``backward_step_net``, ``backward_link_*`` (links into
  ``<state>_grad``), ``param`` (input indices), ``param_grads`` (the name the
  backward cell writes each parameter's per-step gradient to),
  ``outputs_with_grads``, ``recompute_blobs_on_backward``.

:meth:`RecurrentOp.cpp_backward_step_net` applies what the v3-era C++
gradient op (state of 2017-06-05, seed 004 / history §3.5) did to the
backward step net before running it.
"""

import copy
from dataclasses import dataclass

from ..errors import DrawingError, op_context
from . import sources

RNN_TYPES = ("RecurrentNetwork", "RecurrentNetworkGradient")
ACCUMULATE_OP = "rnn_internal_accumulate_gradient_input"
APPLY_LINK_OP = "rnn_internal_apply_link"


@dataclass(frozen=True)
class Link:
    internal: str
    external: str
    offset: int
    window: int = 1

    def label(self, backward=False):
        text = "%slink t%+d" % ("backward " if backward else "", self.offset)
        return text if self.window == 1 else text + ", window %d" % self.window


@dataclass(frozen=True)
class Alias:
    src: str
    dst: str
    offset: int

    def label(self):
        rows = (
            "rows %d..T" % self.offset
            if self.offset >= 0
            else ("last row" if self.offset == -1 else "last %d rows" % -self.offset)
        )
        return "alias %+d (%s)" % (self.offset, rows)


@dataclass
class CppBackward:
    """The backward step net as the C++ op runs it, and what it changed."""

    net: object
    renamed: dict  # cell gradient name -> "<name>_tmpstep"
    prepended: int  # number of accumulate ops put in front
    appended: int  # number of per-parameter Sums put at the end
    last_row_grads: list  # (GO of an offset -1 alias, states_grad) added by C++


class RecurrentOp:
    """The arguments of one RecurrentNetwork(Gradient) ``OperatorDef``."""

    def __init__(self, op):
        if op.type not in RNN_TYPES:
            raise DrawingError(
                "%s is not a RecurrentNetwork operator (expected type "
                "%s)" % (op_context(op), " or ".join(RNN_TYPES))
            )
        self.op = op
        self.name = op.name or op.type
        self.step_net = sources.net_argument(op, "step_net")
        if self.step_net is None:
            raise DrawingError("%s: argument 'step_net' is missing" % op_context(op))
        self.backward_step_net = sources.net_argument(op, "backward_step_net")
        self.timestep = sources.string(op, "timestep", "timestep")
        self.outputs_with_grads = sources.ints(op, "outputs_with_grads")
        # The gradient op's inputs start with one GO per outputs_with_grads.
        self.is_gradient = op.type == "RecurrentNetworkGradient"
        skip = len(self.outputs_with_grads) if self.is_gradient else 0
        self.inputs = list(op.input[skip:])
        self.states = sources.strings(op, "recurrent_states")
        self.initial_state_ids = sources.ints(op, "initial_recurrent_state_ids")
        self._check_same_length(
            ("recurrent_states", self.states),
            ("initial_recurrent_state_ids", self.initial_state_ids),
        )
        self.links = self._links("link_internal", "link_external", "link_offset", "link_window")
        self.backward_links = self._links(
            "backward_link_internal", "backward_link_external", "backward_link_offset", None
        )
        src, dst, offset = (
            sources.strings(op, "alias_src"),
            sources.strings(op, "alias_dst"),
            sources.ints(op, "alias_offset"),
        )
        self._check_same_length(("alias_src", src), ("alias_dst", dst), ("alias_offset", offset))
        self.aliases = [Alias(*a) for a in zip(src, dst, offset)]
        self.params = sources.ints(op, "param")
        self.param_grads = sources.strings(op, "param_grads")
        if self.param_grads:
            self._check_same_length(("param", self.params), ("param_grads", self.param_grads))
        self.recompute = sources.strings(op, "recompute_blobs_on_backward")
        for index in self.params + self.initial_state_ids:
            if not 0 <= index < len(self.inputs):
                raise DrawingError(
                    "%s: input index %d (from 'param' or "
                    "'initial_recurrent_state_ids') is out of range "
                    "for %d inputs" % (op_context(op), index, len(self.inputs))
                )

    def _check_same_length(self, *named_lists):
        lengths = {len(values) for _, values in named_lists}
        if len(lengths) > 1:
            raise DrawingError(
                "%s: arguments %s must have equal lengths, got %s"
                % (
                    op_context(self.op),
                    ", ".join(n for n, _ in named_lists),
                    ", ".join(str(len(v)) for _, v in named_lists),
                )
            )

    def _links(self, internal, external, offset, window):
        names = [
            (internal, sources.strings(self.op, internal)),
            (external, sources.strings(self.op, external)),
            (offset, sources.ints(self.op, offset)),
        ]
        windows = sources.ints(self.op, window) if window else []
        if windows:
            names.append((window, windows))
        self._check_same_length(*names)
        windows = windows or [1] * len(names[0][1])
        return [Link(*fields) for fields in zip(names[0][1], names[1][1], names[2][1], windows)]

    @property
    def sequence_input(self):
        return self.inputs[0]

    def initial_state(self, state):
        """The op input copied into row 0 of ``state``."""
        return self.inputs[self.initial_state_ids[self.states.index(state)]]

    def references(self):
        """Op inputs that every step reads as they are (weights, encoder outputs)."""
        initial = {self.inputs[i] for i in self.initial_state_ids}
        return [b for b in self.inputs[1:] if b not in initial]

    def recurrent_pairs(self):
        """(state, read_blob, written_blob): blobs linked at offsets 0 and 1."""
        pairs = []
        for state in self.states:
            reads = [l.internal for l in self.links if l.external == state and l.offset == 0]
            writes = [l.internal for l in self.links if l.external == state and l.offset == 1]
            for read in reads:
                for write in writes:
                    pairs.append((state, read, write))
        return pairs

    def param_gradient_names(self):
        """(param input, its gradient output ``GI``, the cell's per-step blob)."""
        triples = []
        for i, index in enumerate(self.params):
            param = self.inputs[index]
            grad = self.op.output[1 + i] if self.is_gradient else param + "_grad"
            cell = self.param_grads[i] if self.param_grads else grad
            triples.append((param, grad, cell))
        return triples

    def output_gradient(self, alias_index):
        """Name of the gradient fed for alias output ``alias_index`` (GO), or None."""
        if alias_index not in self.outputs_with_grads:
            return None
        if self.is_gradient:
            return self.op.input[self.outputs_with_grads.index(alias_index)]
        return self.aliases[alias_index].dst + "_grad"

    def gradient_op_def(self):
        """The RecurrentNetworkGradient OperatorDef (this op's, or the one its
        registered gradient maker makes for the outputs in outputs_with_grads)."""
        if self.is_gradient:
            return self.op
        from ..operators.gradient_maker import get_gradient_for_op

        g_output = [
            out + "_grad" if j in self.outputs_with_grads else None
            for j, out in enumerate(self.op.output)
        ]
        ops, _ = get_gradient_for_op(self.op, g_output)
        return ops[0]

    def cpp_backward_step_net(self):
        """The backward step net exactly as the gradient op runs it.

        Built by caffe2rnn's own ``RecurrentNetworkGradient`` (bound in a
        scratch workspace; inside ``eras.use(...)``, that era's variant), so the
        drawing is what runs: the prepended
        ``rnn_internal_accumulate_gradient_input`` ops of the ``_all`` output
        gradients, the ``_tmpstep`` renames and the per-parameter Sums (or an
        older era's accumulate-and-swap ops). Its ``rnn_internal_apply_link``
        ops are left out: the views draw links as edges. A ``_last`` output's
        gradient is not an op at all: the op adds it to the last row of
        ``<state>_grad`` once, before the loop.
        """
        if self.backward_step_net is None:
            raise DrawingError(
                "%s has no backward_step_net (a forward-only op); "
                "there is no backward pass to draw" % op_context(self.op)
            )
        from .. import eras
        from ..operators.rnn.gradient import RecurrentNetworkGradientOp
        from ..runtime import Workspace

        grad_def = self.gradient_op_def()
        scratch = Workspace(name="viz")
        for name in grad_def.input:
            scratch.create_blob(name)
        cls = RecurrentNetworkGradientOp
        if eras.named() is not None:  # drawn inside ``eras.use(...)``: that era's op
            from ..history.operator_eras import operator_class

            cls = operator_class(cls, eras.named())
        gradient_op = cls(grad_def, scratch)
        net = copy.deepcopy(gradient_op.step_net)
        ops = [op for op in net.op if op.type != APPLY_LINK_OP]
        del net.op[:]
        net.op.extend(ops)
        prepended = 0
        while prepended < len(ops) and ops[prepended].type == ACCUMULATE_OP:
            prepended += 1
        # Seed 004 renamed the cell's gradient blob <name>_tmpstep; an older
        # era's accumulator (<grad>_acc) sits beside it instead: no rename.
        renamed = {
            cell: p.cell_gradient
            for (_, _, cell), p in zip(self.param_gradient_names(), gradient_op.params)
            if p.cell_gradient == cell + "_tmpstep"
        }
        last_row = []
        for j, alias in enumerate(self.aliases):
            gradient = self.output_gradient(j)
            if gradient is not None and alias.offset == -1 and alias.src in self.states:
                last_row.append((gradient, alias.src + "_grad"))
        return CppBackward(net, renamed, prepended, len(self.params), last_row)
