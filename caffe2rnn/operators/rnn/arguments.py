"""The arguments of ``RecurrentNetwork`` and ``RecurrentNetworkGradient``, read once.

Caffe2's recurrent op takes everything as parallel lists in its OperatorDef
(``recurrent_net`` writes them, :mod:`caffe2rnn.recurrent_stages`); the op's
set-up, its gradient, the drawings of :mod:`caffe2rnn.viz` and an executor all
need the same reading of them. :func:`read_recurrent_arguments` is that one
reading: it parses every argument into a :class:`RecurrentArguments` and
checks it *before* anything is created or run, so a bad argument is an
:class:`~caffe2rnn.errors.ArgumentError` naming the op, the argument and the
value instead of a silent wrong answer (the C++ op checked little of this).

======================================  ==================================================
argument                                meaning
======================================  ==================================================
``step_net``                            the cell, one timestep (NetDef in ``n``, or its
                                        protobuf text in ``s`` before Caffe2 2017-08)
``backward_step_net``                   its gradient; present = keep one step workspace
                                        per timestep for the backward pass
``recurrent_states``                    state tensors, (T + k) x N x D, row 0..k-1 = h0
``initial_recurrent_state_ids``         op input index of each state's h0
``link_*``                              before step t, blob ``link_internal[i]`` views
                                        rows ``t + offset .. t + offset + window - 1``
                                        of ``link_external[i]`` (:class:`~.links.Link`)
``backward_link_*``                     the same for the gradient tensors (window 1)
``alias_src/dst/offset``                output ``dst`` views ``src`` from row ``offset``
                                        (negative: from the end) (:class:`~.aliases.OffsetAlias`)
``param``                               op input indices of the parameters (gradient)
``param_grads``                         the blob the backward cell writes each
                                        parameter's per-step gradient to
``outputs_with_grads``                  forward outputs (= alias indices) that receive
                                        a gradient; the gradient op's first inputs
``recompute_blobs_on_backward``         forward blobs recomputed by the backward net
``timestep``                            name of the int32 step counter (``"timestep"``)
``num_workspaces``                      forward-only: step workspaces cycled over
``enable_rnn_executor``                 run steps with Caffe2's RNN executor
``rnn_executor.num_threads``            the executor's threads (0, absent: one here)
``caffe2rnn_batch_param_gradients``     gradient op: FC parameter gradients as one
                                        GEMM over all steps (a caffe2rnn option,
                                        :class:`~.param_gradients.BatchedOverTime`)
``<blob>.rename``                       memonger's renames, applied by the gradient op
======================================  ==================================================

The gradient op's inputs are ``[GO(j) for j in outputs_with_grads]``, the
forward inputs, then the forward outputs (the last being the step workspaces);
``param`` and ``initial_recurrent_state_ids`` index the *forward* inputs.

What is refused, and why. caffe2rnn refuses only what Caffe2 refused (a
``CAFFE_ENFORCE`` of caffe2/operators/recurrent_network_op.{h,cc}, 042e8ede4)
or what would have made Caffe2 crash, index out of bounds or read memory it
never wrote; everything else runs with Caffe2's result, even where that
result surprises (a link or alias named like an input overwrites it, exactly
as Caffe2's ``Workspace::CreateBlob`` did). Refused: lists of unequal length
(``extractLinks``, ``constructAliases``, ``constructRecurrentInputs``,
``constructParams``), a negative link offset or window (``RNNApplyLinkOp``),
an alias with a gradient at an offset other than 1 or -1
(``constructRecurrentGradients``); state and parameter indices outside the
op's inputs (protobuf read out of range); a gradient op with fewer inputs or
outputs than its arguments address (out of range); rows read before any step
wrote them (:meth:`RecurrentArguments.check_rows`: uninitialised memory).
``tests/rnn/test_refusal_audit.py`` lists every refusal with its reason.
"""

from dataclasses import dataclass, field

from ...errors import ArgumentError, op_context
from ...proto import check_depth
from ...runtime.arguments import ArgumentHelper
from .aliases import OffsetAlias
from .links import Link
from .rows import RowSchedule

FORWARD = "RecurrentNetwork"
GRADIENT = "RecurrentNetworkGradient"
RNN_TYPES = (FORWARD, GRADIENT)
#: The most threads an RNN executor is given (Caffe2 started as many as asked;
#: a larger request runs with this many, with the same results).
MAX_EXECUTOR_THREADS = 64


@dataclass(frozen=True)
class RecurrentArguments:
    """Every argument of one recurrent op, parsed and checked (module docstring).

    ``inputs`` are the *forward* inputs (the gradient op's ``GO`` inputs and
    forward outputs left out): ``inputs[0]`` is the T x N x ... sequence,
    ``inputs[initial_state_ids[i]]`` the h0 of ``states[i]``,
    ``inputs[p]`` for ``p`` in ``params`` the parameters.
    """

    op_type: str
    where: str  # "op RecurrentNetwork 'name'", for messages
    step_net: object  # NetDef
    backward_step_net: object  # NetDef, or None for a forward-only op
    timestep: str
    inputs: tuple
    states: tuple
    initial_state_ids: tuple
    links: tuple  # of Link
    backward_links: tuple  # of Link (window 1)
    aliases: tuple  # of OffsetAlias
    params: tuple
    param_grads: tuple  # empty: each parameter's gradient output is written
    outputs_with_grads: tuple
    output_gradients: tuple  # gradient op: the GO input of each outputs_with_grads
    recompute_blobs: tuple
    num_workspaces: object  # int, or None when not given
    enable_rnn_executor: object  # bool, or None when not given
    executor_threads: int  # rnn_executor.num_threads (0: not given)
    batch_param_gradients: bool  # caffe2rnn_batch_param_gradients (default False)
    renames: dict = field(default_factory=dict)
    # The row checks already passed, by their arguments: they depend on
    # nothing else, and a loop of T steps costs O(T) Python to check.
    _rows_checked: set = field(default_factory=set, compare=False, repr=False)

    @property
    def is_gradient(self):
        return self.op_type == GRADIENT

    @property
    def sequence_input(self):
        return self.inputs[0]

    def initial_state(self, state):
        """The op input holding the initial value of ``state``."""
        return self.inputs[self.initial_state_ids[self.states.index(state)]]

    def renamed(self, name):
        """``name`` after memonger's renames (argument ``<name>.rename``)."""
        return self.renames.get(name, name)

    def output_gradient(self, j):
        """The gradient op's input holding the gradient of forward output ``j``
        (the last one listed if ``j`` appears twice), or None."""
        if j not in self.outputs_with_grads:
            return None
        last = len(self.outputs_with_grads) - 1 - self.outputs_with_grads[::-1].index(j)
        return self.output_gradients[last] if self.output_gradients else None

    def state_aliases(self, state):
        """(index, alias) of the aliases that view ``state``."""
        return [(j, a) for j, a in enumerate(self.aliases) if a.src == state]

    def check_rows(self, seq_len, initial_rows):
        """Forward: no step and no output reads a state row before it is written.

        ``initial_rows[state]`` is k, the rows its h0 fills (a (k, N, D) h0);
        the state tensor has T + k rows (:class:`~.rows.RowSchedule`). With
        k = 2 and ``recurrent_net``'s links (read at offset 0, write at 1) row
        T + 1 is never written, so ``<state>_last`` would be uninitialised: the
        writing link must be at offset k, as in Caffe2's stateful-convolution
        test (042e8ede4).
        """
        key = ("forward", seq_len, tuple(initial_rows.items()))
        if key in self._rows_checked:
            return
        prefix = self.where + ": " if self.where else ""
        steps = range(seq_len)
        for state, k in initial_rows.items():
            rows = seq_len + k
            schedule = RowSchedule(state, rows, steps, range(k), self.links, self.step_net, prefix)
            schedule.check_link_reads()
            for _, alias in self.state_aliases(state):
                start = alias.offset if alias.offset >= 0 else rows + alias.offset
                schedule.check_written(
                    range(max(start, 0), rows),
                    "output '%s' (alias_offset %d) shows it; with a (k, N, D) initial state "
                    "the link the cell writes must be at link_offset k" % (alias.dst, alias.offset),
                )
        self._rows_checked.add(key)

    def check_gradient_rows(self, seq_len, initial_rows, zeroed_tail_rows=None):
        """Backward: every row of ``<state>_grad`` and of the input gradient is
        written before it is read (by a backward step, the accumulation of an
        ``_all`` output gradient, or an output).

        ``<state>_grad`` has T + k rows; its last ``zeroed_tail_rows`` (default
        k; Caffe2 zeroed 1, see ``caffe2rnn_zero_tail_rows``) are zeroed before the loop,
        the steps run t = T-1 .. 0, and the initial-state gradient is its first
        k rows. The input gradient's T rows must all be written.
        """
        key = ("backward", seq_len, tuple(initial_rows.items()), zeroed_tail_rows)
        if key in self._rows_checked:
            return
        prefix = self.where + ": " if self.where else ""
        steps = range(seq_len - 1, -1, -1)
        links = [
            Link(self.renamed(l.internal), self.renamed(l.external), l.offset, l.window)
            for l in self.links + self.backward_links
        ]
        net = self.backward_step_net
        for state, k in initial_rows.items():
            grad = self.renamed(state + "_grad")
            rows = seq_len + k
            zeroed = range(rows - (k if zeroed_tail_rows is None else zeroed_tail_rows), rows)
            schedule = RowSchedule(grad, rows, steps, zeroed, links, net, prefix)
            schedule.check_link_reads()
            for j, alias in self.state_aliases(state):
                if alias.offset == 1 and self.output_gradient(j) is not None:
                    for rank, t in enumerate(steps):
                        schedule.check_row(
                            t + 1, (rank, -1), "the gradient of '%s' is added to it" % alias.dst
                        )
            schedule.check_written(range(k), "the gradient of the initial state reads it")
        x_grad = self.renamed(self.sequence_input + "_grad")
        schedule = RowSchedule(x_grad, seq_len, steps, (), links, net, prefix)
        schedule.check_link_reads()
        schedule.check_written(range(seq_len), "it is the gradient of '%s'" % self.sequence_input)
        self._rows_checked.add(key)


def read_recurrent_arguments(op_def, where=None):
    """Parse and check the arguments of a RecurrentNetwork(Gradient) OperatorDef.

    Raises :class:`~caffe2rnn.errors.ArgumentError` (or its subclasses) naming
    the op, the argument and the value; nothing is created or changed.
    ``where`` prefixes the messages (default: the op, ``op RecurrentNetwork
    'name'``); the operator passes ``""`` because the runtime adds the op and
    net to every error it raises.
    """
    where = op_context(op_def) if where is None else where
    if op_def.type not in (FORWARD, GRADIENT):
        raise ArgumentError("%s is not a %s or %s operator" % (where, FORWARD, GRADIENT))
    # A step net holding a RecurrentNetwork holding a step net...: Caffe2 parsed
    # the op with protobuf's recursion limit (100 levels), and copies of it fail
    # here beyond that (upb): too deep, said before anything is copied.
    check_depth(op_def, "%s '%s'" % (op_def.type, op_def.name) if op_def.name else op_def.type)
    args = ArgumentHelper(op_def, where or op_def.type)
    fail = _Failer(where)
    gradient = op_def.type == GRADIENT

    # Absent: an empty NetDef (Caffe2's extractNetDef parsed the default "").
    step_net = args.net("step_net")
    backward = None
    if gradient or args.has_net("backward_step_net"):
        backward = args.net("backward_step_net")

    outputs_with_grads = tuple(args.repeated("outputs_with_grads", kind=int))
    n_go = len(outputs_with_grads) if gradient else 0
    aliases = _aliases(args, fail)
    inputs, _ = _split_inputs(op_def, gradient, n_go, aliases, fail)
    result = RecurrentArguments(
        op_type=op_def.type,
        where=where,
        step_net=step_net,
        backward_step_net=backward,
        timestep=args.single("timestep", "timestep", str),
        inputs=inputs,
        states=tuple(args.repeated("recurrent_states", kind=str)),
        initial_state_ids=tuple(args.repeated("initial_recurrent_state_ids", kind=int)),
        links=_links(args, fail, "link_", window=True),
        backward_links=_links(args, fail, "backward_link_", window=False),
        aliases=aliases,
        params=tuple(args.repeated("param", kind=int)),
        param_grads=tuple(args.repeated("param_grads", kind=str)),
        outputs_with_grads=outputs_with_grads,
        output_gradients=tuple(op_def.input[:n_go]),
        recompute_blobs=tuple(args.repeated("recompute_blobs_on_backward", kind=str)),
        num_workspaces=args.single("num_workspaces", None, int),
        enable_rnn_executor=args.single("enable_rnn_executor", None, bool),
        executor_threads=_executor_threads(args.single("rnn_executor.num_threads", 0, int)),
        batch_param_gradients=args.single("caffe2rnn_batch_param_gradients", False, bool),
        renames={
            a.name[: -len(".rename")]: args.single(a.name, kind=str)
            for a in op_def.arg
            if a.name.endswith(".rename")
        },
    )
    _check_indices(result, op_def, gradient, fail)
    if gradient:
        # Caffe2 read output(1 + i) for parameter i and output(1 + P + i) for
        # state i; more outputs than that are never written.
        expected = 1 + len(result.params) + len(result.states)
        if len(op_def.output) < expected:
            fail(
                "param",
                "and recurrent_states ask for %d outputs (input, %d parameter and %d "
                "initial-state gradients); the op has %d"
                % (expected, len(result.params), len(result.states), len(op_def.output)),
            )
    return result


def _executor_threads(requested):
    """``rnn_executor.num_threads``: <= 0 means not given (Caffe2 kept its
    default then); more than :data:`MAX_EXECUTOR_THREADS` runs with that many
    (the results are the same whatever the number of threads)."""
    return min(max(requested, 0), MAX_EXECUTOR_THREADS)


class _Failer:
    def __init__(self, where):
        self.where = where

    def __call__(self, argument, message, error=ArgumentError):
        prefix = self.where + ": " if self.where else ""
        raise error("%sargument '%s' %s" % (prefix, argument, message))


def _same_length(fail, named):
    lengths = [len(values) for _, values in named]
    if len(set(lengths)) > 1:
        prefix = fail.where + ": " if fail.where else ""
        raise ArgumentError(
            "%sarguments %s must have equal lengths; got %s"
            % (prefix, ", ".join(n for n, _ in named), ", ".join(map(str, lengths)))
        )


def _links(args, fail, prefix, window):
    internal = args.repeated(prefix + "internal", kind=str)
    external = args.repeated(prefix + "external", kind=str)
    offset = args.repeated(prefix + "offset", kind=int)
    named = [(prefix + "internal", internal), (prefix + "external", external)]
    named.append((prefix + "offset", offset))
    windows = [1] * len(offset)
    if window and args.has(prefix + "window"):
        windows = args.repeated(prefix + "window", kind=int)
        named.append((prefix + "window", windows))
    _same_length(fail, named)
    for name, o, w in zip(internal, offset, windows):
        if o < 0:
            fail(prefix + "offset", "is %d for link '%s'; a row offset must be >= 0" % (o, name))
        if w < 0:
            fail(prefix + "window", "is %d for link '%s'; a window must be >= 0" % (w, name))
    return tuple(Link(*fields) for fields in zip(internal, external, offset, windows))


def _aliases(args, fail):
    src = args.repeated("alias_src", kind=str)
    dst = args.repeated("alias_dst", kind=str)
    offset = args.repeated("alias_offset", kind=int)
    _same_length(fail, [("alias_src", src), ("alias_dst", dst), ("alias_offset", offset)])
    return tuple(OffsetAlias(*fields) for fields in zip(src, dst, offset))


def _split_inputs(op_def, gradient, n_go, aliases, fail):
    """(forward inputs, forward outputs) as the op sees them."""
    names = list(op_def.input)
    if not gradient:
        if not names:
            fail("step_net", "needs an input sequence (input 0); the op has no inputs")
        return tuple(names), tuple(op_def.output)
    if len(names) < n_go + 2:
        fail(
            "outputs_with_grads",
            "lists %d outputs, so the gradient op needs at least %d inputs (the output "
            "gradients, the sequence, the step workspaces); it has %d"
            % (n_go, n_go + 2, len(names)),
        )
    forward = names[n_go:]
    # Forward outputs: the alias outputs then the step workspaces, when the
    # tail matches (as the gradient maker lays it out); else just the latter.
    n_out = len(aliases) + 1
    dsts = [a.dst for a in aliases]
    if not (len(forward) > n_out and forward[len(forward) - n_out : -1] == dsts):
        n_out = 1
    return tuple(forward[:-n_out]), tuple(forward[-n_out:])


def _check_indices(a, op_def, gradient, fail):
    _same_length(
        fail,
        [("recurrent_states", a.states), ("initial_recurrent_state_ids", a.initial_state_ids)],
    )
    n = len(a.inputs)
    for i in a.initial_state_ids:
        if not 0 <= i < n:
            fail(
                "initial_recurrent_state_ids",
                "holds %d; expected an input index in 0..%d (the op has %d forward inputs)"
                % (i, n - 1, n),
            )
    # The forward op never reads ``param``; the gradient op reads input
    # ``p + len(outputs_with_grads)`` for each (its forward inputs, then the
    # forward outputs).
    if gradient:
        addressable = len(op_def.input) - len(a.outputs_with_grads)
        for p in a.params:
            if not 0 <= p < addressable:
                fail(
                    "param",
                    "holds %d; expected an index in 0..%d of the forward inputs and outputs "
                    "the gradient op has" % (p, addressable - 1),
                )
    if a.param_grads and len(a.param_grads) != len(a.params):
        fail("param_grads", "has %d names for %d params" % (len(a.param_grads), len(a.params)))
    # Each entry names a forward output: the gradient maker read GO(j) with
    # g_output_.at(j) (std::out_of_range for a negative or too large j), and a
    # gradient op given one would ignore that output's gradient: refused.
    if gradient:
        n_out = len(a.aliases) + 1  # the alias outputs, then the step workspaces
        for j in a.outputs_with_grads:
            if not 0 <= j < n_out:
                fail(
                    "outputs_with_grads",
                    "holds %d; expected a forward output index in 0..%d (the op has %d "
                    "aliases and the step workspaces)" % (j, n_out - 1, len(a.aliases)),
                )
    # Caffe2's gradient op (constructRecurrentGradients): an alias of a
    # recurrent state that takes a gradient must cover all steps (1) or the
    # last one (-1). Indices naming no alias of a state take no gradient.
    if gradient:
        for j in a.outputs_with_grads:
            if not 0 <= j < len(a.aliases):
                continue
            alias = a.aliases[j]
            if alias.src in a.states and alias.offset not in (1, -1):
                fail(
                    "outputs_with_grads",
                    "holds %d, output '%s' of '%s' at alias_offset %d; only offsets 1 (all "
                    "steps) and -1 (last step) can take a gradient"
                    % (j, alias.dst, alias.src, alias.offset),
                )
    if a.num_workspaces is not None and a.num_workspaces < 1:
        # Not a Caffe2 argument (PyTorch's copy of the op added it).
        fail("num_workspaces", "is %d; expected >= 1" % a.num_workspaces)
