"""Reading an operator's arguments (C++ ``ArgumentHelper``).

Arguments are parsed once, when the operator is created, so running it costs
nothing. A value stored in the wrong field (``axis=2.0`` where an int is
expected) is an :class:`~caffe2rnn.errors.ArgumentTypeError` naming the op and
the argument.
"""

from ..errors import ArgumentError, ArgumentTypeError

_SINGLE_FIELDS = ("f", "i", "s", "n")


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
        """One value of ``kind`` (int, float, bool, str or 'netdef')."""
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
            if arg.HasField("i"):
                return float(arg.i)
            raise self._bad(name, "a float", arg)
        if kind is str:
            if not arg.HasField("s"):
                raise self._bad(name, "a string", arg)
            return arg.s.decode("utf-8")
        if kind == "netdef":
            if arg.HasField("n"):
                return arg.n
            if arg.HasField("s"):
                return arg.s
            raise self._bad(name, "a NetDef (or its text)", arg)
        raise ValueError("unknown argument kind %r" % (kind,))

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
            if len(arg.strings):
                raise self._bad(name, "a list of floats", arg)
            return [float(v) for v in (arg.floats or arg.ints)]
        if kind is str:
            if len(arg.floats) or len(arg.ints):
                raise self._bad(name, "a list of strings", arg)
            return [s.decode("utf-8") for s in arg.strings]
        raise ValueError("unknown argument kind %r" % (kind,))

    def require(self, name, kind=int):
        if name not in self._args:
            raise ArgumentError("%s: argument '%s' is required" % (self._where, name))
        return self.single(name, kind=kind)
