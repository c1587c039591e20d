"""A RecurrentNetwork operator read back from its arguments, for drawing.

``recurrent_net`` hands the C++ op everything as parallel lists:

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

The arguments are read by the operator's own reader
(:mod:`caffe2rnn.operators.rnn.arguments`), links and aliases are its
:class:`~caffe2rnn.operators.rnn.links.Link` and
:class:`~caffe2rnn.operators.rnn.aliases.OffsetAlias`, and
:meth:`RecurrentOp.cpp_backward_step_net` is the backward step net the
gradient op builds (``prepared_backward_step_net``).
"""

from dataclasses import dataclass

from ..errors import ArgumentError, DrawingError, op_context
from ..operators.rnn.aliases import OffsetAlias
from ..operators.rnn.arguments import RNN_TYPES, read_recurrent_arguments
from ..operators.rnn.gradient import prepared_backward_step_net
from ..operators.rnn.links import Link

ACCUMULATE_OP = "rnn_internal_accumulate_gradient_input"
APPLY_LINK_OP = "rnn_internal_apply_link"

__all__ = [
    "RecurrentOp",
    "CppBackward",
    "Link",
    "OffsetAlias",
    "link_label",
    "row_label",
    "alias_label",
]


def link_label(link, backward=False):
    """Edge label of a link: ``link t+1`` (``, window 3`` when it spans rows)."""
    text = "%slink t%+d" % ("backward " if backward else "", link.offset)
    return text if link.window == 1 else text + ", window %d" % link.window


def row_label(link):
    """A link's edge label on a page, the rows it views: ``row t+1``, ``rows t..t+2``."""

    def row(offset):
        return "t" if offset == 0 else "t%+d" % offset

    if link.window == 1:
        return "row " + row(link.offset)
    return "rows %s..%s" % (row(link.offset), row(link.offset + link.window - 1))


def alias_label(alias):
    """Edge label of an alias: ``alias +1 (rows 1..T)``, ``alias -1 (last row)``."""
    if alias.offset >= 0:
        rows = "rows %d..T" % alias.offset
    else:
        rows = "last row" if alias.offset == -1 else "last %d rows" % -alias.offset
    return "alias %+d (%s)" % (alias.offset, rows)


@dataclass
class CppBackward:
    """The backward step net as the C++ op runs it, and what it changed."""

    net: object
    renamed: dict  # cell gradient name -> "<name>_tmpstep"
    prepended: int  # number of accumulate ops put in front
    appended: int  # number of per-parameter Sums put at the end
    last_row_grads: list  # (GO of an offset -1 alias, states_grad) added by C++


class RecurrentOp:
    """One RecurrentNetwork(Gradient) ``OperatorDef``, read by the op's own reader
    (:func:`caffe2rnn.operators.rnn.arguments.read_recurrent_arguments`), so a
    drawing shows what runs; bad arguments are a :class:`DrawingError`."""

    def __init__(self, op):
        if op.type not in RNN_TYPES:
            raise DrawingError(
                "%s is not a RecurrentNetwork operator (expected type "
                "%s)" % (op_context(op), " or ".join(RNN_TYPES))
            )
        try:
            self.arguments = a = read_recurrent_arguments(op)
        except ArgumentError as error:
            raise DrawingError(str(error)) from error
        self.op = op
        self.name = op.name or op.type
        self.is_gradient = a.is_gradient
        self.step_net = a.step_net
        self.backward_step_net = a.backward_step_net
        self.timestep = a.timestep
        self.outputs_with_grads = list(a.outputs_with_grads)
        self.inputs = list(a.inputs)
        self.states = list(a.states)
        self.initial_state_ids = list(a.initial_state_ids)
        self.links = list(a.links)
        self.backward_links = list(a.backward_links)
        self.aliases = list(a.aliases)
        self.params = list(a.params)
        self.param_grads = list(a.param_grads)
        self.recompute = list(a.recompute_blobs)

    @property
    def called(self):
        """How a title names the op: ``RecurrentNetwork 'name'``, or just its
        type when it has no name (``rnn_cell`` and ``recurrent_net`` leave
        ``OperatorDef.name`` empty)."""
        return "%s '%s'" % (self.op.type, self.op.name) if self.op.name else self.op.type

    @property
    def sequence_input(self):
        return self.arguments.sequence_input

    def initial_state(self, state):
        """The op input copied into row 0 of ``state``."""
        return self.arguments.initial_state(state)

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
            triples.append((param, self.arguments.renamed(grad), self.arguments.renamed(cell)))
        return triples

    def output_gradient(self, alias_index):
        """Name of the gradient fed for alias output ``alias_index`` (GO), or None."""
        if alias_index not in self.outputs_with_grads:
            return None
        if self.is_gradient:
            return self.arguments.output_gradient(alias_index)
        return self.aliases[alias_index].dst + "_grad"

    def cpp_backward_step_net(self):
        """The backward step net exactly as the gradient op runs it
        (:func:`~caffe2rnn.operators.rnn.gradient.prepared_backward_step_net`),
        without its ``rnn_internal_apply_link`` ops: the views draw links as
        edges (inside ``eras.use(...)``, as that era's gradient op ran it). A
        ``_last`` output's gradient is not an op at all: the op adds it to the
        last row of ``<state>_grad`` once, before the loop.
        """
        if self.backward_step_net is None:
            raise DrawingError(
                "%s has no backward_step_net (a forward-only op); "
                "there is no backward pass to draw" % op_context(self.op)
            )
        net = prepared_backward_step_net(self.op)
        ops = [op for op in net.op if op.type != APPLY_LINK_OP]
        del net.op[:]
        net.op.extend(ops)
        prepended = 0
        while prepended < len(ops) and ops[prepended].type == ACCUMULATE_OP:
            prepended += 1
        # Caffe2 from 0c2c95309 renamed the cell's gradient blob <name>_tmpstep;
        # an older era's accumulator (<grad>_acc) sits beside it instead.
        written = {name for op in ops for name in op.output}
        renamed = {
            cell: cell + "_tmpstep"
            for _, _, cell in self.param_gradient_names()
            if cell + "_tmpstep" in written
        }
        last_row = []
        for j, alias in enumerate(self.aliases):
            gradient = self.output_gradient(j)
            if gradient is not None and alias.offset == -1 and alias.src in self.states:
                last_row.append((gradient, alias.src + "_grad"))
        return CppBackward(net, renamed, prepended, len(self.params), last_row)
