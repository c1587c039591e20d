"""Nets, operators, arguments and errors printed at the width of the docs' text column.

The notebooks (``notebooks/``) print op lists, an operator's arguments and error messages.
On the docs site a notebook's output area holds :data:`WIDTH` characters at 1280 px; a
longer line is cut off. These helpers print one op per line, inputs then outputs, and
wrap long lists of blob names between names, never inside one::

    >>> from caffe2rnn import core, listing
    >>> net = core.Net("tiny")
    >>> _ = net.FC(["x", "w", "b"], "h")
    >>> listing.ops(net)
    #0 FC(x, w, b) -> h

Only the notebooks use this module; nothing in the library depends on it.
"""

import textwrap

from .errors import ArgumentError, op_context
from .proto import caffe2_pb2
from .runtime.arguments import ArgumentHelper

#: Characters per line of a notebook's output area on the docs site (1280 px).
WIDTH = 78


def wrap(text, indent="", width=WIDTH):
    """``text`` filled to ``width``, paragraph by paragraph (lines of its own stay lines);
    continuation lines start with ``indent``. Names are never split."""
    lines = []
    for line in str(text).splitlines() or [""]:
        lines.append(
            textwrap.fill(
                line,
                width,
                subsequent_indent=indent,
                break_long_words=False,
                break_on_hyphens=False,
            )
            or line
        )
    return "\n".join(lines)


def _operators(net):
    if hasattr(net, "Proto"):
        net = net.Proto()
    if isinstance(net, caffe2_pb2.NetDef):
        return list(net.op)
    if isinstance(net, caffe2_pb2.OperatorDef):
        return [net]
    return list(net)


def op_text(op, index=None, width=WIDTH):
    """One op as ``#i Type(inputs) -> outputs``; when that does not fit, the inputs are
    wrapped under the first one and the outputs get a line of their own."""
    prefix = ("#%d " % index if index is not None else "") + op.type + "("
    head = prefix + ", ".join(op.input) + ")"
    outputs = "-> " + ", ".join(op.output)
    if len(head) + 1 + len(outputs) <= width:
        return head + " " + outputs
    return wrap(head, " " * len(prefix), width) + "\n" + wrap("   " + outputs, " " * 6, width)


def ops(net, numbered=True, start=0, width=WIDTH):
    """Print the ops of a ``core.Net``, a ``NetDef`` or a list of ``OperatorDef`` s, one
    per line (numbered from ``start``)."""
    for i, op in enumerate(_operators(net)):
        print(op_text(op, start + i if numbered else None, width))


def names(label, items, width=WIDTH):
    """Print ``label`` and the names in ``items``, comma-separated, wrapped under the
    first name."""
    text = "%s %s" % (label, ", ".join(str(item) for item in items) if items else "(none)")
    print(wrap(text, " " * (len(label) + 1), width))


def step_net(op, name="step_net"):
    """The step net of a ``RecurrentNetwork`` op, as a ``NetDef`` whose ``.op`` lists the
    cell's operators. ``name="backward_step_net"`` gives its gradient's.

    The op keeps it as an argument: a ``NetDef`` in the ``Argument``'s field ``n``, or
    (what Caffe2's ``recurrent_net`` wrote until 201087e1e, 2017-10-10, so in era E5) its
    protobuf text in ``s``; both are
    read as the op reads them (:meth:`~caffe2rnn.runtime.arguments.ArgumentHelper.net`).
    An op without the argument is an :class:`~caffe2rnn.errors.ArgumentError`::

        >>> from caffe2rnn import listing, model_helper, rnn_cell
        >>> model = model_helper.ModelHelper(name="doc")
        >>> _ = rnn_cell.LSTM(model, "x", "lengths", ("h0", "c0"), 3, 4, scope="lstm")
        >>> rnn_op = model.net.Proto().op[1]
        >>> [op.type for op in listing.step_net(rnn_op).op]
        ['FC', 'Sum', 'LSTMUnit']
    """
    arguments = ArgumentHelper(op, op_context(op))
    if not arguments.has_net(name):
        raise ArgumentError(
            "%s: no argument '%s' holding a net (expected a RecurrentNetwork op; its "
            "arguments are %s)" % (op_context(op), name, [arg.name for arg in op.arg])
        )
    return arguments.net(name)


def argument_value(arg):
    """An ``Argument``'s value as text: a number, a string, a list (``[]`` when empty —
    an empty repeated argument sets no field), or a summary of a step net."""
    if arg.HasField("n"):
        return "<a NetDef, %d ops>" % len(arg.n.op)
    if arg.HasField("s"):
        text = arg.s.decode()
        if arg.name.endswith("step_net"):
            return "<a NetDef as text, %d characters>" % len(text)
        return repr(text)
    if arg.HasField("i"):
        return str(arg.i)
    if arg.HasField("f"):
        return "%g" % arg.f
    for field in ("ints", "floats", "strings"):
        values = list(getattr(arg, field))
        if values:
            if field == "strings":
                values = [v.decode() for v in values]
            return "[%s]" % ", ".join(str(v) for v in values)
    return "[]"


def arguments(op, width=WIDTH):
    """Print each argument of ``op``, one per line: name, then value (wrapped)."""
    column = max((len(a.name) for a in op.arg), default=0) + 1
    column = min(column, 28)
    for arg in op.arg:
        text = "%-*s %s" % (column, arg.name, argument_value(arg))
        print(wrap(text, " " * (column + 2), width))


def source(text, width=WIDTH):
    """Print source code, a line too long for ``width`` broken between words with a
    trailing backslash and the rest indented under it (the file itself is unchanged)."""
    for line in text.rstrip("\n").splitlines():
        if len(line) <= width:
            print(line)
            continue
        indent = " " * (len(line) - len(line.lstrip()) + 4)
        pieces = textwrap.wrap(
            line,
            width - 2,
            subsequent_indent=indent,
            drop_whitespace=True,
            break_long_words=False,
            break_on_hyphens=False,
        )
        print(" \\\n".join(pieces))


def error(exception, width=WIDTH):
    """Print ``TypeName: message`` wrapped to ``width``."""
    print(wrap("%s: %s" % (type(exception).__name__, exception), "    ", width))
