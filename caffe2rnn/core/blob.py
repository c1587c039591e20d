"""``BlobReference``: a blob's name, plus the net that produced it.

A BlobReference is *only a name*: it holds no data. Data lives in a workspace
under that name. The reference remembers the :class:`~caffe2rnn.core.Net` it
came from so that ``blob.Relu([])`` can add an op to that net.
"""

from typing import Any, Union

from .. import scope as _scope
from ..operators.gradient_maker import GradientSlice  # noqa: F401 - core.GradientSlice
from ..runtime import registry as _registry

#: What the API accepts as a blob's name (a BlobReference is also a name).
BlobName = Union[str, bytes, "BlobReference"]


class BlobReference:
    """A reference to a blob name, optionally bound to the net making it.

    Equal to (and hashing like) its name string, so it can stand in for the
    name as a dict key: ``links[str(b)]`` and ``b in mapping`` both work.
    """

    def __init__(self, name: Any, net: Any = None) -> None:
        if isinstance(name, str):
            self._name = name
        elif isinstance(name, bytes):
            self._name = name.decode("utf-8")
        else:
            self._name = str(name)
        self._from_net = net
        self.meta = {}

    def __hash__(self):
        return hash(self._name)

    def __eq__(self, other):
        if isinstance(other, str):
            return self._name == other
        if isinstance(other, bytes):
            return self._name == other.decode("utf-8")
        if isinstance(other, BlobReference):
            return self._name == other._name
        return False

    def __ne__(self, other):
        return not self.__eq__(other)

    def __str__(self) -> str:
        return self._name

    def __repr__(self):
        return f'BlobReference("{self._name}")'

    def __add__(self, other):
        if not isinstance(other, str):
            raise RuntimeError("Cannot add BlobReference to a non-string.")
        return BlobReference(self._name + other, self._from_net)

    def __radd__(self, other):
        if not isinstance(other, str):
            raise RuntimeError("Cannot add a non-string to BlobReference.")
        return BlobReference(other + self._name, self._from_net)

    def Net(self) -> Any:
        return self._from_net

    def GetNameScope(self) -> str:
        return self._name[: self._name.rfind(_scope._NAMESCOPE_SEPARATOR) + 1]

    def _CreateAndAddToNet(self, op_type, inputs=None, *args, **kwargs):
        inputs = [] if inputs is None else inputs
        if isinstance(inputs, (BlobReference, str)):
            inputs = [inputs]
        return self._from_net.__getattr__(op_type)([self] + list(inputs), *args, **kwargs)

    def __getattr__(self, op_type):
        """``blob.Op(inputs, outputs, **kw)`` = ``net.Op([blob] + inputs, ...)``."""
        if op_type.startswith("__"):
            raise AttributeError(op_type)
        if self._from_net is None:
            raise RuntimeError(
                "You cannot use a blob reference that does not have a net "
                "source to create operators. Create the operator from an "
                "explicit net object."
            )
        if not _registry.is_registered(op_type):
            raise RuntimeError(
                "Method "
                + op_type
                + " is not a registered operator."
                + " Did you mean: ["
                + ",".join(_registry.close_matches(op_type))
                + "]"
            )
        return lambda *args, **kwargs: self._CreateAndAddToNet(op_type, *args, **kwargs)


def ScopedName(name: BlobName) -> str:
    """The current name scope followed by ``name``."""
    if isinstance(name, bytes):
        name = name.decode("ascii")
    return _scope.CurrentNameScope() + name


def ScopedBlobReference(name: BlobName, *args: Any, **kwargs: Any) -> "BlobReference":
    """A BlobReference whose name gets the current name scope prepended."""
    return BlobReference(ScopedName(name), *args, **kwargs)
