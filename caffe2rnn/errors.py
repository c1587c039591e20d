"""The exceptions caffe2rnn raises.

Caffe2 reported almost every failure as ``caffe2::EnforceNotMet`` (surfaced in
Python as ``RuntimeError``), with a message that named the failing check. We
keep that name for the root of operator failures, but give each kind of
mistake its own class that *also* subclasses the natural built-in exception,
so ``except ValueError`` / ``except KeyError`` work as a Python user expects.

Every message names where it happened: the net, the operator (index, type and
name) and the blob, e.g.::

    net 'train', op #0 LSTMUnit: input 2 ('lstm/gates_t') has shape (1, 4, 10);
    expected (1, 4, 12) (4 x cell_t_prev.dim(2))
"""


class Caffe2RNNError(Exception):
    """Root of every exception raised on purpose by caffe2rnn."""


class EnforceNotMet(Caffe2RNNError, RuntimeError):
    """A failed run-time check, as Caffe2's ``CAFFE_ENFORCE`` reported it."""


class ShapeError(EnforceNotMet, ValueError):
    """A blob has the wrong shape (or size) for the operator reading it."""


class DTypeError(EnforceNotMet, TypeError):
    """A blob has the wrong element type for the operator reading it."""


class ArgumentError(EnforceNotMet, ValueError):
    """An operator argument is missing or has a bad value."""


class ArgumentTypeError(ArgumentError, TypeError):
    """An operator argument has the wrong kind of value (int, float, list...)."""


class KeyNotFoundError(EnforceNotMet, KeyError):
    """A name or key that is not where it was looked up."""

    def __str__(self):  # KeyError would print the repr of the message
        return str(self.args[0]) if self.args else ""


class BlobNotFoundError(KeyNotFoundError):
    """A blob name that is not in the workspace (nor in its parents)."""


class UnknownOperatorError(Caffe2RNNError, AttributeError):
    """An operator type that no implementation is registered for.

    Subclasses ``AttributeError`` because Caffe2 raised it from
    ``Net.__getattr__`` (``net.Fcc(...)``) at op-creation time.
    """


class GradientError(Caffe2RNNError, RuntimeError):
    """The gradient of an operator cannot be built (no maker, bad versions...)."""


class GradientUsageError(GradientError, ValueError):
    """A forward pass whose gradient Caffe2's Python refused with ``ValueError``
    (``core.IR.SanityCheck``: a ``StopGradient`` whose output nothing reads)."""


class ProtoParseError(EnforceNotMet, ValueError):
    """Bytes or text that do not parse as the expected protobuf message.

    Also an :class:`EnforceNotMet` (a ``RuntimeError``): Caffe2's bindings
    checked the parse with ``CAFFE_ENFORCE``, so ``RunNetOnce(b"...")`` of bad
    bytes raised ``RuntimeError`` there.
    """


class WrongTypeError(Caffe2RNNError, TypeError, ValueError):
    """A Python call got the wrong kind of object: a blob name that is not a
    string, a "net" that is neither a Net, a NetDef nor its serialized bytes...

    Also a ``ValueError``, which is what Caffe2's ``StringifyProto`` and
    ``Workspace.run`` raised for these.
    """


class BuildError(Caffe2RNNError, ValueError, AssertionError):
    """A model-building call Caffe2 rejected with a Python ``assert``
    (``ClonePartial`` whose inputs are computed by the kept ops, an
    ``ExecutionStep`` with both nets and substeps, ...).

    Also an ``AssertionError``, so code written for Caffe2 catches it as before.
    """


class WorkspaceError(EnforceNotMet):
    """Misuse of workspaces or nets: unknown net, refusing to overwrite one..."""


class ModelError(Caffe2RNNError, ValueError):
    """A model cannot be built or transformed as asked: an optimizer with a
    negative learning rate, a predictor net cut at blobs no op reads..."""


class QueueClosedError(EnforceNotMet, EOFError):
    """A closed blobs queue has nothing left to dequeue (or no room to enqueue)."""


class QueueTimeoutError(EnforceNotMet, TimeoutError):
    """Waiting on a blobs queue timed out, or would never end because no other
    thread is running that could fill (or drain) it."""


class AllocationError(EnforceNotMet, MemoryError):
    """A tensor larger than the allocation cap (see
    :func:`caffe2rnn.runtime.settings.set_max_alloc_bytes`), or one the machine
    could not allocate. Caffe2 let the allocator abort or throw ``bad_alloc``."""


class NestingError(EnforceNotMet, RecursionError):
    """Something nested too deeply to process: a text proto of thousands of
    levels, a net whose step nets recurse without end..."""


class ProtoNestingError(ProtoParseError, NestingError):
    """A protobuf message nested deeper than the parser's recursion limit."""


class OutOfRangeError(EnforceNotMet, IndexError):
    """An index (an argument, a label, a position in a blob) outside its range."""


class MemoryLayoutError(EnforceNotMet, ValueError):
    """An array a kernel cannot use in place: read-only, not C-contiguous,
    misaligned, or overlapping another argument of the same call (NumPy says
    ``ValueError: assignment destination is read-only`` for the first)."""


class InvalidValueError(EnforceNotMet, ValueError):
    """A value NumPy (or Python) refused while an operator computed with it:
    shapes that do not broadcast, a negative size, an unparsable string..."""


class InvalidTypeError(EnforceNotMet, TypeError):
    """An operation on values of a type it does not support (a ufunc on an
    object tensor of strings, a non-number where a number is needed...)."""


class ArithmeticFailure(EnforceNotMet, ArithmeticError):
    """Arithmetic Python refused: a division by zero in an index computation,
    an integer overflow converting a size..."""


class FileAccessError(EnforceNotMet, OSError):
    """A file an operator reads or writes cannot be opened (``Print`` to a
    log folder that cannot be created...)."""


class DatabaseError(EnforceNotMet, OSError):
    """A database (a ``minidb`` checkpoint) that cannot be opened, read or
    written, or whose contents are not what its format says: a truncated or
    crafted file, a record that is not a ``BlobProto``... The message names
    the file and the record or blob."""


# The family class that stands for a built-in exception raised inside an
# operator, most specific first (UnicodeDecodeError is a ValueError,
# RecursionError a RuntimeError...).
_BUILTIN_FAMILY = (
    (MemoryError, AllocationError),
    (RecursionError, NestingError),
    (IndexError, OutOfRangeError),
    (KeyError, KeyNotFoundError),
    (ArithmeticError, ArithmeticFailure),
    (ValueError, InvalidValueError),
    (TypeError, InvalidTypeError),
    (AttributeError, InvalidTypeError),  # a method called on the wrong kind of value
    (OSError, FileAccessError),
)


def family_class(exc):
    """The caffe2rnn class to report ``exc`` as: its own class if it is one of
    ours, else the family class of its nearest built-in base (``EnforceNotMet``
    if none fits: Caffe2 reported everything else that way)."""
    if isinstance(exc, Caffe2RNNError):
        return type(exc)
    for builtin, cls in _BUILTIN_FAMILY:
        if isinstance(exc, builtin):
            return cls
    return EnforceNotMet


def in_family(exc, message=None):
    """``exc`` as a caffe2rnn exception (a new one; chain it with ``from exc``).

    A foreign exception keeps its built-in type through the family class (a
    NumPy ``ValueError`` becomes an :class:`InvalidValueError`, still a
    ``ValueError``) and its type name in the message, so nothing is lost.
    """
    if message is None:
        message = str(exc)
    cls = family_class(exc)
    if not isinstance(exc, Caffe2RNNError):
        message = "%s (%s)" % (message, type(exc).__name__)
    try:
        return cls(message)
    except TypeError:  # one of our subclasses with a different constructor
        return EnforceNotMet(message)


#: The op caffe2rnn puts in front of a step net's own ops, one per link (in every
#: era; Caffe2's C++ applied links itself until 2017-09): docs/concepts/links-and-aliases.md.
LINK_OP = "rnn_internal_apply_link"

#: The ops a recurrent op adds to the step net it was given, before or after
#: the ops written there: the link ops (and the era-B2 variant applying a link
#: once per step workspace), the backward step net's gradient-accumulation ops.
#: Error messages do not number them (:func:`op_context`). The appended
#: parameter-gradient ``Sum`` ops are ordinary ``Sum`` ops and continue the count.
STEP_NET_INTERNAL_OPS = frozenset(
    (
        LINK_OP,
        "rnn_history_apply_link_once",
        "rnn_internal_accumulate_gradient_input",
        "rnn_history_accumulate_param_gradient",
    )
)


def op_context(op, index=None, net_name=None, ops=None):
    """Describe an operator for an error message: ``net 'n', op #3 FC 'fc1'``.

    ``ops``, the net's operators, numbers ``op`` as the net was written: a
    recurrent op's step net runs with ops put in front of the ones its
    author wrote (one ``rnn_internal_apply_link`` per link, and in the
    backward step net the gradient-accumulation ops; see
    :data:`STEP_NET_INTERNAL_OPS`), and those are not counted, so the first
    op written is ``op #0`` whatever runs before it. An error in one of
    those added ops says where it runs instead: ``net 'lstm', before op #0``
    (its own message names the link), or ``after op #7`` for one appended.
    (Caffe2's messages did not number step-net ops this way:
    docs/concepts/differences.md.)
    """
    parts = []
    if net_name:
        parts.append("net '%s'" % net_name)
    if index is not None and ops is not None:
        ops = list(ops)
        written = sum(1 for other in ops[:index] if other.type not in STEP_NET_INTERNAL_OPS)
        if op.type in STEP_NET_INTERNAL_OPS:
            if written:
                parts.append("after op #%d" % (written - 1))
            else:
                parts.append("before op #0")
            return ", ".join(parts)
        index = written
    where = "op" if index is None else "op #%d" % index
    label = "%s %s" % (where, op.type)
    if op.name:
        label += " '%s'" % op.name
    parts.append(label)
    return ", ".join(parts)


class DrawingError(Caffe2RNNError, ValueError):
    """Something :mod:`caffe2rnn.viz` cannot draw: not a net, not a
    RecurrentNetwork operator, link/alias arguments of unequal lengths..."""


class GraphvizNotFoundError(Caffe2RNNError, RuntimeError):
    """Rendering needs Graphviz's ``dot`` program, which is not installed.

    ``pip install graphviz`` installs only the Python bindings; the binary
    comes from the operating system or conda.
    """


class PydotNotFoundError(Caffe2RNNError, ImportError):
    """:mod:`caffe2rnn.net_drawer` returns pydot graphs, as Caffe2's did, and
    pydot is not installed (``pip install pydot``)."""


class TextError(Caffe2RNNError, ValueError):
    """A text that :mod:`caffe2rnn.demo.char_rnn` cannot learn from or sample with:
    a missing, empty, binary or too short file, a character outside the
    vocabulary, or a non-positive size."""
