"""The stages every version of ``recurrent_net`` goes through.

Caffe2's ``recurrent_net`` turns a *cell net* (one timestep, written by the
user) into a single ``RecurrentNetwork`` operator. Every version from 2017
did it in the same order; they differ in the details of a few stages. Each
stage is one function here, so the historical versions
(:mod:`caffe2rnn.history`) and the current one (:mod:`caffe2rnn.recurrent`)
are short compositions of the same parts:

1. :func:`find_references` — which cell inputs come from outside the
   recurrence (parameters, sequence lengths, encoder outputs...);
2. :func:`build_backward_cell` — the backward step net, from the gradient
   registry applied to the cell's ops, with recompute ops in front;
3. :func:`find_scratches` — forward intermediates that the backward step
   reads, so each timestep's forward workspace must keep them;
4. :func:`plan_links` — the (T+1)-row state tensors, the *links* that make
   cell blobs views of their rows, and the *aliases* that expose them;
5. :func:`accumulate_linked_gradients` — the ``_accum`` rewrite (2017-06) that
   adds, instead of overwrites, gradients arriving through links;
6. :func:`op_arguments` and :func:`in_call_order` — the parallel lists and
   nets the C++ op reads, in the order each version passed them.

Stages only older versions took (v1's literal input gradient, v2's
pass-through aliases) and every version's argument order are in
:mod:`caffe2rnn.history.stages`.

Shapes: the input sequence is ``T × N × D``; a state tensor is
``(T + 1) × N × D`` (row 0 holds the initial state, row t+1 the output of
step t).
"""

import functools
from dataclasses import astuple, dataclass, field

from . import core
from .errors import KeyNotFoundError
from .operators.rnn.aliases import OffsetAlias
from .operators.rnn.links import Link
from .scope import CurrentNameScope


def check_scoping(cell_net):
    """The 2017-03 assertion: cell inputs must carry the current name scope.

    Added by 0b4021b96 ("Validate scoping"), removed by 042e8ede4 (2017-12)
    because it was "not useful and causing errors".
    """
    for einp in cell_net.Proto().external_input:
        assert einp.startswith(CurrentNameScope()), """
            Cell net external inputs are not properly scoped, use
            AddScopedExternalInputs() when creating them
            """


def scoped_name(scope, name):
    """``<scope>/<name>``: the internal names of a recurrent op and its cells,
    scoped by hand because blobs inside the step net are named from outside
    it (links, references). ``attention.s`` is this function."""
    return f"{str(scope)}/{str(name)}"


def scoper(op_name, scope):
    """``s(name)``: internal blob names are ``<scope or op_name>/<name>``."""
    return functools.partial(scoped_name, op_name if scope is None else scope)


def find_references(cell_proto, inputs, initial_cell_inputs, timestep):
    """Cell external inputs that are neither the step input, a state nor timestep.

    They become extra inputs of the RecurrentNetwork op (after the sequence and
    the initial states), in the cell's external-input order; those with a
    gradient are the op's parameters.
    """
    known = [str(i[0]) for i in inputs] + [str(x[1]) for x in initial_cell_inputs]
    known += [str(x[0]) for x in initial_cell_inputs]
    if timestep is not None:
        known.append(str(timestep))
    return [core.BlobReference(b) for b in cell_proto.external_input if b not in known]


@dataclass
class BackwardCell:
    """What the gradient registry made of the cell: net, mapping, SSA facts."""

    net: object
    mapping: dict
    blob_versions: dict
    scratches: list[str]
    recompute: list[str]


def recompute_ops(cell_proto, recompute_blobs):
    """Forward ops to run again on the way back (``recompute_blobs_on_backward``).

    Every op that writes a listed blob is copied, in forward order, to the
    front of the backward step net; all of its outputs must be listed too,
    or a recomputed op would clobber a blob that was meant to be kept.
    """
    recompute_blobs = set(recompute_blobs)
    ops = []
    for op in cell_proto.op:
        if not recompute_blobs.isdisjoint(set(op.output)):
            assert set(op.output).issubset(recompute_blobs), (
                f"Outputs {set(op.output) - recompute_blobs} are output by op "
                f"but not recomputed: {op}"
            )
            ops.append(op)
    return ops


def find_scratches(cell_proto, backward_proto):
    """Forward blobs the backward step net reads but does not produce.

    A *scratch* has SSA version > 0 in the cell (some op wrote it), is read
    before written in the backward net, and is not a cell external output
    (those live in the state tensors). Caffe2 kept scratches in each step's
    workspace; they are listed as backward-net external inputs. Order: the
    cell's SSA ``blob_versions`` insertion order.
    """
    backward_ssa, _ = core.get_ssa(backward_proto)
    undefined = core.get_undefined_blobs(backward_ssa)
    _, blob_versions = core.get_ssa(cell_proto)
    outputs = set(cell_proto.external_output)
    return [
        blob
        for blob, ver in blob_versions.items()
        if ver > 0 and blob in undefined and blob not in outputs
    ]


def build_backward_cell(cell_net, recompute_blobs_on_backward=None, mapping_to_str=False):
    """The backward step net of ``cell_net``.

    Gradients of the cell's external outputs are *given* (``<out>_grad``: they
    arrive through links from the states-gradient tensors); the registry
    writes the rest. Recompute ops go first, scratches are appended to the
    backward net's external inputs.
    """
    cell_proto = cell_net.Proto()
    inner_outputs_map = {o: o + "_grad" for o in cell_proto.external_output}
    backward_ops, backward_mapping = core.GradientRegistry.GetBackwardPass(
        cell_proto.op, inner_outputs_map
    )
    convert = str if mapping_to_str else (lambda v: v)
    backward_mapping = {str(k): convert(v) for k, v in backward_mapping.items()}

    backward_cell_net = core.Net("RecurrentBackwardStep")
    del backward_cell_net.Proto().op[:]
    recompute = []
    if recompute_blobs_on_backward is not None:
        # Caffe2 kept a set here (hash order reached the op argument); we keep
        # the caller's order, without duplicates, so the op is deterministic.
        recompute = list(dict.fromkeys(str(b) for b in recompute_blobs_on_backward))
        backward_cell_net.Proto().op.extend(recompute_ops(cell_proto, recompute))
    backward_cell_net.Proto().op.extend(backward_ops)

    _, backward_blob_versions = core.get_ssa(backward_cell_net.Proto())
    scratches = find_scratches(cell_proto, backward_cell_net.Proto())
    backward_cell_net.Proto().external_input.extend(scratches)
    backward_cell_net.Proto().type = "simple"
    return BackwardCell(
        backward_cell_net, backward_mapping, backward_blob_versions, scratches, recompute
    )


@dataclass
class LinkPlan:
    """The links, aliases and outputs of one RecurrentNetwork op."""

    forward_links: list[Link] = field(default_factory=list)
    backward_links: list[Link] = field(default_factory=list)
    aliases: list[OffsetAlias] = field(default_factory=list)
    outputs: list[str] = field(default_factory=list)
    recurrent_states: list[str] = field(default_factory=list)


def recurrent_input_gradient(backward, cell_input):
    """The blob holding ``cell_input``'s gradient inside the backward step.

    Normally ``<cell_input>_grad``. When no backward op writes that name (its
    SSA version is 0: the cell's first op on the recurrent input is a
    pass-through such as ``Sum``), the gradient lives under the name the
    registry mapped it to — bug B3, fixed by 96bafa3b2 / 0d616f25c (2017-03).
    """
    recurrent_input_grad = cell_input + "_grad"
    if not backward.blob_versions.get(recurrent_input_grad, 0):
        if cell_input not in backward.mapping:
            # Caffe2 (recurrent.py at 0cdd09da6) raised a bare KeyError here.
            raise KeyNotFoundError(
                "recurrent_net: the recurrent state input %r gets no gradient in the "
                "backward step net (no op of the step net reads it, or only ops without a "
                "gradient do), so its backward link has nothing to view. Read it in the "
                "step net, or give it as an ordinary input instead of a recurrent state"
                % cell_input
            )
        return backward.mapping[cell_input]
    return recurrent_input_grad


def plan_links(
    inputs,
    initial_cell_inputs,
    links,
    s,
    backward,
    state_input_gradient=recurrent_input_gradient,
    input_gradient_link_first=False,
):
    """Lay out state tensors, links and aliases.

    For each recurrent state ``(cell_input, initial_blob)``:

    * state tensor ``s(cell_input + "_states")``, (T + 1) × N × D;
    * forward links: ``cell_input`` views row t (offset 0), its linked cell
      output views row t + 1 (offset 1) — the cell writes its output straight
      into the tensor, where the next step reads it as input;
    * aliases: ``<output>_all`` = rows 1..T (offset 1), ``<output>_last`` = the
      last row (offset −1);
    * backward links into ``<state>_grad``: the output's gradient at offset 1,
      the input's gradient at offset 0 (from ``state_input_gradient``).

    The sequence input gets a forward link (``input_t`` = row t of the input)
    and a backward link writing its gradient into ``<input>_grad``.
    ``backward`` is None in forward-only mode (no backward links).
    ``input_gradient_link_first``: v1 listed a state's offset-0 backward link
    before its offset-1 one (the order reaches the op's arguments).
    """
    plan = LinkPlan()
    for cell_input, _ in initial_cell_inputs:
        cell_input = str(cell_input)
        state = s(cell_input + "_states")
        states_grad = state + "_grad"
        cell_output = links[str(cell_input)]
        plan.forward_links.append(Link(str(cell_input), state, 0))
        plan.forward_links.append(Link(str(cell_output), state, 1))
        plan.aliases.append(OffsetAlias(state, str(cell_output) + "_all", 1))
        plan.aliases.append(OffsetAlias(state, str(cell_output) + "_last", -1))
        plan.outputs.extend([cell_output + "_all", cell_output + "_last"])
        plan.recurrent_states.append(state)
        if backward is not None:
            state_links = [
                Link(str(cell_output) + "_grad", states_grad, 1),
                Link(str(state_input_gradient(backward, cell_input)), states_grad, 0),
            ]
            if input_gradient_link_first:
                state_links.reverse()
            plan.backward_links.extend(state_links)
            backward.net.Proto().external_input.append(str(cell_output) + "_grad")

    for input_t, input_blob in inputs:
        plan.forward_links.append(Link(str(input_t), str(input_blob), 0))
    if backward is not None:
        for input_t, input_blob in inputs:
            plan.backward_links.append(
                Link(str(backward.mapping[str(input_t)]), str(input_blob) + "_grad", 0)
            )
    return plan


def accumulate_linked_gradients(backward_cell_net):
    """Make gradients arriving through links add up instead of being overwritten.

    A backward-net external input (its value arrives through a link, e.g.
    ``hidden_t_grad`` = GO[t] + the recurrent gradient from step t + 1) may
    also be written by a backward op when the blob has a consumer inside the
    cell (stacked layers, attention). That op's output is renamed
    ``<blob>_accum`` and ``Sum([blob, blob_accum]) -> blob`` is inserted right
    after it. In-place ops are left alone: they already read the old value
    (renaming them would add it twice — B8). Bug B7, fixed by 417f74509 and
    made effective by f49200962 (2017-06).
    """
    proto = backward_cell_net.Proto()
    operators = [core.caffe2_pb2.OperatorDef() for _ in proto.op]
    for copy, op in zip(operators, proto.op):
        copy.CopyFrom(op)
    del proto.op[:]
    for op in operators:
        proto.op.extend([op])
        for j, output_blob in enumerate(op.output):
            if output_blob in proto.external_input and output_blob not in op.input:
                output_blob = core.BlobReference(output_blob)
                accum_blob = output_blob + "_accum"
                proto.op[-1].output[j] = str(accum_blob)
                backward_cell_net.Sum([output_blob, accum_blob], [output_blob])


def unpack_triples(items):
    """Links or aliases (or plain triples) → their three parallel lists for the
    op (``internal, external, offset`` / ``src, dst, offset``)."""
    triples = [tuple(item)[:3] if isinstance(item, tuple) else astuple(item)[:3] for item in items]
    if triples:
        a, b, c = zip(*triples)
        return a, b, c
    return [], [], []


def parameters(references, backward):
    """References that receive a gradient, and the cell blobs holding it.

    ``param_grads`` (from 8e01e4c8b, 2017-04-25) names, per parameter, the blob
    the backward cell writes its per-step gradient into — not always
    ``<param>_grad``: after a pass-through op (``Add`` with broadcast in
    attention) it is the output's gradient (bugs B4/B5).
    """
    keys = set(backward.mapping)
    params = [x for x in references if x in keys]
    param_grads = [str(backward.mapping[x]) for x in references if x in keys]
    return params, param_grads


def op_arguments(
    plan,
    all_inputs,
    initial_cell_inputs,
    timestep,
    cell_net,
    backward=None,
    references=(),
    outputs_with_grads=(0,),
):
    """Every argument any version passed to ``RecurrentNetwork``, by name.

    The links, aliases and backward links as parallel lists (``link_internal``,
    ``link_external``, ``link_offset``, ...), states and initial-state input
    indices, the step nets as protobuf text, the timestep name; with a
    ``backward`` cell also ``param`` (input indices), ``param_grads``,
    ``outputs_with_grads`` and ``recompute_blobs_on_backward``. Each version
    keeps the ones it passed, in its own order (:func:`in_call_order`).
    """
    link_internal, link_external, link_offset = unpack_triples(plan.forward_links)
    alias_src, alias_dst, alias_offset = unpack_triples(plan.aliases)
    recurrent_inputs = [str(x[1]) for x in initial_cell_inputs]
    arguments = {
        "alias_src": alias_src,
        "alias_dst": [str(a) for a in alias_dst],
        "alias_offset": alias_offset,
        "recurrent_states": plan.recurrent_states,
        "initial_recurrent_state_ids": [all_inputs.index(i) for i in recurrent_inputs],
        "link_internal": [str(l) for l in link_internal],
        "link_external": [str(l) for l in link_external],
        "link_offset": link_offset,
        "step_net": str(cell_net.Proto()),
        "timestep": "timestep" if timestep is None else str(timestep),
    }
    if backward is not None:
        b_internal, b_external, b_offset = unpack_triples(plan.backward_links)
        params, param_grads = parameters(references, backward)
        arguments.update(
            {
                "param": [all_inputs.index(p) for p in params],
                "backward_link_internal": [str(l) for l in b_internal],
                "backward_link_external": [str(l) for l in b_external],
                "backward_link_offset": b_offset,
                "backward_step_net": str(backward.net.Proto()),
                "outputs_with_grads": outputs_with_grads,
                "recompute_blobs_on_backward": list(backward.recompute),
                "param_grads": param_grads,
            }
        )
    return arguments


def in_call_order(arguments, call_order):
    """``arguments`` in the order of ``call_order`` (a text's keyword order),
    keeping only those the text passed.

    Python 3 turns keywords into ``Argument`` messages in call-site order, so
    the order of a text's call is the OperatorDef's (Caffe2 under Python 2 had
    a hash order). :data:`caffe2rnn.recurrent.CALL_ORDER` is today's;
    :mod:`caffe2rnn.history.stages` keeps each historical text's.
    """
    return {name: arguments[name] for name in call_order if name in arguments}
