"""``fig_name_prefixes()``: why ``lstm/lstm/hidden_t_prev_states`` — three prefixes, added by
three pieces of code.

A blob of a recurrent layer gets up to three prefixes (Caffe2 0cdd09da6):

* the **cell's name** — ``rnn_cell.LSTM(..., scope="lstm")`` names its cell
  ``lstm`` and the cell names its blobs ``self.scope("hidden_t")`` =
  ``lstm/hidden_t`` (``rnn_cell.py``);
* the **name scope** — inside ``with core.NameScope("decoder"):`` every name
  the layer and its cell create gets ``decoder/`` in front
  (``AddScopedExternalInputs``, op outputs given as strings); the state
  tensors' names are made by ``recurrent_net`` outside that rule;
* the **op's scope** — ``recurrent_net(..., scope=...)``, the same ``scope=``
  again, names the state tensors it makes ``s(<cell input>_states)`` =
  ``<scope>/<step-net blob>_states`` (``recurrent.py``), and that argument is
  never name-scoped: the op's scope goes in front of the *whole* name of the
  step-net blob, name scope included.

So the prefixes do not always come in the same order: a state tensor is
*op's scope / name scope / cell's name / own name*, every other blob *name
scope / cell's name / own name* -- the two rules the table of the glossary's
"Where blob names come from" (``docs/glossary.md``) gives. (The op's own last
output, ``step_workspaces``, is left out: step 8 teaches step workspaces.)

The figure builds three LSTMs (no name scope and ``scope="lstm"``;
``NameScope("decoder")`` and ``scope="lstm"``, where the order shows;
``NameScope("decoder")`` and ``scope="decoder"``, the sequence-to-sequence
decoder), reads four names from each op and splits each into its prefixes by
the rules above; a name the rules do not give back cannot be drawn
(:class:`~caffe2rnn.errors.DrawingError`).
"""

from ...errors import DrawingError
from . import parts, style
from .svg import MONO_EM, Canvas, Figure, text_width

#: The builds drawn: (name scope or None, rnn_cell.LSTM's scope=).
BUILDS = ((None, "lstm"), ("decoder", "lstm"), ("decoder", "decoder"))
#: Where a prefix comes from: (fill, edge, key text).
SOURCES = {
    "op": ("#F3E5F5", style.RNN_OP, "`scope=` as the op's scope: in front of the whole name, "
           "for the state tensors only"),
    "ns": ("#D2E3FC", "#1A56B8", "the name scope: in front of every name the layer and its "
           "cell create"),
    "cell": ("#CEEAD6", "#137333", "`scope=` as the cell's name: the cell names its blobs "
             "`<name>/hidden_t`, ..."),
    "own": ("#FFFFFF", style.MUTED, "the blob's own name (with `_prev`, `_states`, `_all`)"),
}  # fmt: skip
#: The names read from each op: (row label, the order of its prefixes).
KINDS = (
    ("state tensor (`recurrent_states`)", ("op", "ns", "cell")),
    ("step-net blob (a link's `internal`)", ("ns", "cell")),
    ("op output (`_all` alias)", ("ns", "cell")),
    ("recurrent weight (a reference)", ("ns", "cell")),
)
_SIZE = 11  # px of a name
_ROW = 22


def build_names(name_scope, scope):
    """The four names :data:`KINDS` lists, read from the op of
    ``rnn_cell.LSTM(model, "x", "seq_lengths", ("h0", "c0"), dim_in=3, dim_out=4,
    scope=scope)`` built inside ``NameScope(name_scope)`` (or none)."""
    from ... import core, eras, model_helper, rnn_cell
    from ..rnn_op import RecurrentOp

    with eras.use("E5"), parts.fresh_net_names(), core.NameScope(name_scope or ""):
        model = model_helper.ModelHelper(name="names")
        rnn_cell.LSTM(model, "x", "seq_lengths", ("h0", "c0"), dim_in=3, dim_out=4, scope=scope)
    (op,) = [op for op in model.net.Proto().op if op.type == "RecurrentNetwork"]
    rnn = RecurrentOp(op)
    state = rnn.states[0]
    (read,) = [l.internal for l in rnn.links if l.external == state and l.offset == 0]
    weights = [rnn.inputs[i] for i in rnn.params if rnn.inputs[i].endswith("gates_t_w")]
    return [state, read, op.output[0], weights[0]]


def split(name, order, name_scope, scope):
    """``name`` as ``[(prefix, source), ...]`` in ``order`` (sources of :data:`SOURCES`),
    its own name last; a prefix the name does not carry is a :class:`DrawingError`."""
    prefixes = {"op": scope, "ns": name_scope, "cell": scope}
    found, rest = [], name
    for source in order:
        if prefixes[source] is None:
            continue
        prefix = prefixes[source] + "/"
        if not rest.startswith(prefix):
            raise DrawingError(
                "fig_name_prefixes: %r does not start with the %s prefix %r where expected"
                % (name, source, prefix)
            )
        found.append((prefix, source))
        rest = rest[len(prefix) :]
    return found + [(rest, "own")]


def fig_name_prefixes(builds=BUILDS):
    """Four names from each of ``builds`` (name scope, scope), each split into its prefixes."""
    read = [(ns, scope, build_names(ns, scope)) for ns, scope in builds]
    canvas = Canvas(
        style.WIDTH,
        "Why lstm/lstm/hidden_t_prev_states: three prefixes, added by three pieces of code",
        "Names of rnn_cell.LSTM's blobs split into their prefixes: the op's scope (scope= "
        "as recurrent_net's scope), the name scope, the cell's name (scope= as the cell's "
        "name), the blob's own name. "
        + " ".join(
            "NameScope %s, scope=%r: %s." % (ns or "none", scope, ", ".join(names))
            for ns, scope, names in read
        ),
    )
    top = parts.heading(
        canvas,
        "Why `lstm/lstm/hidden_t_prev_states`: three prefixes, added by three pieces of code",
        "Names read from three `rnn_cell.LSTM` builds, each split into where its parts come from.",
    )
    left, right = 10, style.WIDTH - 10
    y = top + 14
    with canvas.group("key"):
        for fill, edge, text in SOURCES.values():
            canvas.rect(left, y - 7, 22, 14, fill, edge, 1.2, 3)
            canvas.text(left + 30, y, text, style.NOTE)
            y += 18
    label_w = 196
    for ns, scope, names in read:
        y += 30
        with canvas.group("build"):
            call = 'rnn_cell.LSTM(..., scope="%s")' % scope
            if ns:
                call = 'with core.NameScope("%s"): %s' % (ns, call)
            canvas.text(left, y, "`%s`" % call, style.SMALL, bold=True)
            y += 2
            for (label, order), name in zip(KINDS, names):
                y += _ROW
                canvas.text(left + 8, y, label, style.NOTE, fill=style.MUTED)
                x = left + label_w
                with canvas.group("name"):
                    for part, source in split(name, order, ns, scope):
                        fill, edge, _ = SOURCES[source]
                        w = len(part) * MONO_EM * _SIZE + 4
                        canvas.rect(x, y - 9, w, 18, fill, edge, 1.0, 3)
                        canvas.text(x + 2, y, "`%s`" % part, _SIZE)
                        x += w + 1
    canvas.text_block(
        left,
        y + 20,
        "`scope=` is used twice: even without a name scope, `lstm/lstm/...`.",
        style.NOTE,
        width=right - left,
        fill=style.MUTED,
    )
    if text_width("`%s`" % max((n for *_, ns in read for n in ns), key=len), _SIZE) > (
        right - left - label_w
    ):
        raise DrawingError("fig_name_prefixes: a name is wider than the figure")
    return Figure("fig_name_prefixes", canvas.svg())
