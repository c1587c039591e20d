"""Reading an operator's arguments (C++ ``ArgumentHelper``): the one place that does.

Arguments are parsed once, when the operator is created, so running it costs
nothing. A value stored in the wrong field is an
:class:`~caffe2rnn.errors.ArgumentTypeError` naming the op and the argument, as
in Caffe2, whose ``GetSingleArgument<T>`` read exactly one field of
``caffe2.Argument`` per type and refused any other ("Argument min does not
have the right field: expected field f", caffe2/utils/proto_utils.cc,
``INSTANTIATE_GET_SINGLE_ARGUMENT``, at 0cdd09da6 and 042e8ede4): ``f`` for
float and double, ``i`` for the integer types and bool, ``s`` for strings.
So an integer where a float is read is refused: Python's ``UniformFill(min=-1)``
stores ``-1`` in ``i`` (``utils.MakeArgument``), and Caffe2 refused it; write
``min=-1.0``. The repeated forms read one list field each (``floats``,
``ints``, ``strings``) and ignored the others, so Caffe2's
``GetRepeatedArgument<float>`` of an argument holding ``ints`` was an empty
list — a silent wrong answer. caffe2rnn refuses a list in another field
instead (a deliberate difference: the error names the argument and the field).

Operators (``self.args``), gradient makers (``self.arg(...)``), the recurrent
op's argument check and the step-net extraction all read through an
:class:`ArgumentHelper`.
"""

import functools

from ..errors import ArgumentError, ArgumentTypeError, ProtoParseError
from ..proto import caffe2_pb2, parse_text

_SINGLE_FIELDS = ("f", "i", "s", "n")


@functools.lru_cache(maxsize=128)
def _net_from_text(text):
    """The NetDef that ``text`` spells, parsed once (callers copy it).

    Era-2017 ``recurrent_net`` passed step nets as text, and every creation of
    the op (a gradient checker re-creates it for each probe) reads them again;
    parsing the text is most of creating the op. A text that does not parse
    raises, and is not remembered."""
    return parse_text(caffe2_pb2.NetDef, text)


class ArgumentHelper:
    """Typed access to the ``arg`` list of an OperatorDef or NetDef."""

    def __init__(self, proto, where=""):
        self._args = {a.name: a for a in proto.arg}
        self._where = where or proto.type

    def has(self, name):
        return name in self._args

    def names(self):
        return list(self._args)

    def _bad(self, name, expected, arg):
        present = [f for f in _SINGLE_FIELDS if arg.HasField(f)]
        present += [f for f in ("floats", "ints", "strings", "nets") if len(getattr(arg, f))]
        return ArgumentTypeError(
            "%s: argument '%s' must be %s; it holds %s"
            % (self._where, name, expected, ", ".join(present) if present else "no value")
        )

    def single(self, name, default=None, kind=int):
        """One value of ``kind`` (int, float, bool or str)."""
        arg = self._args.get(name)
        if arg is None:
            return default
        if kind is int or kind is bool:
            if not arg.HasField("i"):
                raise self._bad(name, "an integer", arg)
            return bool(arg.i) if kind is bool else arg.i
        if kind is float:
            if arg.HasField("f"):
                return arg.f
            raise self._bad(
                name, "a float (field f: an integer such as 1 is stored in i; write 1.0)", arg
            )
        if kind is str:
            if not arg.HasField("s"):
                raise self._bad(name, "a string", arg)
            return arg.s.decode("utf-8")
        raise ValueError("unknown argument kind %r" % (kind,))

    def value(self, name, default=None):
        """The argument's value whatever field holds it, as Caffe2's Python
        read a forward op's arguments: a scalar field (``f``, ``i``, ``s``
        decoded, ``n``) or else the list (``floats``, ``ints``, ``strings``)."""
        arg = self._args.get(name)
        if arg is None:
            return default
        for field in _SINGLE_FIELDS:
            if arg.HasField(field):
                value = getattr(arg, field)
                return value.decode() if field == "s" else value
        return list(arg.floats or arg.ints or [s.decode() for s in arg.strings])

    def has_net(self, name):
        """True if ``name`` holds a NetDef or a non-empty string (Caffe2's test
        for "this op has a backward pass")."""
        arg = self._args.get(name)
        return arg is not None and (arg.HasField("n") or (arg.HasField("s") and arg.s != b""))

    def net(self, name):
        """The NetDef argument ``name`` holds: a NetDef in ``n`` or its text in
        ``s`` (Caffe2's ``detail::extractNetDef`` accepted either); an empty
        NetDef when absent. Text that does not parse is a
        :class:`~caffe2rnn.errors.ProtoParseError` naming the op and argument."""
        arg = self._args.get(name)
        net = caffe2_pb2.NetDef()
        if arg is None:
            return net
        if arg.HasField("n"):
            net.CopyFrom(arg.n)
            return net
        if arg.HasField("s"):
            try:
                net.CopyFrom(_net_from_text(arg.s))
                return net
            except ProtoParseError as exc:
                raise type(exc)(
                    "%s: argument '%s' is not a valid NetDef (text format): %s"
                    % (self._where, name, exc)
                ) from None
        raise ArgumentError(
            "%s: argument '%s' must hold a NetDef (in n) or its text (in s)" % (self._where, name)
        )

    def repeated(self, name, default=(), kind=int):
        """A list of ``kind`` values (int, float or str)."""
        arg = self._args.get(name)
        if arg is None:
            return list(default)
        if kind is int:
            if len(arg.floats) or len(arg.strings):
                raise self._bad(name, "a list of integers", arg)
            return list(arg.ints)
        if kind is float:
            if len(arg.ints) or len(arg.strings):
                raise self._bad(name, "a list of floats (field floats: write 1.0, not 1)", arg)
            return list(arg.floats)
        if kind is str:
            if len(arg.floats) or len(arg.ints):
                raise self._bad(name, "a list of strings", arg)
            return [s.decode("utf-8") for s in arg.strings]
        raise ValueError("unknown argument kind %r" % (kind,))

    def require(self, name, kind=int):
        if name not in self._args:
            raise ArgumentError("%s: argument '%s' is required" % (self._where, name))
        return self.single(name, kind=kind)
