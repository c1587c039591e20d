"""Side by side: the ``RecurrentNetwork`` arguments each version builds.

::

    >>> rows = compare(["v1", "v2", "v3"], "lstm")
    >>> [r.argument for r in rows if r.differs]
    ['backward_link_internal', ..., 'param_grads', ...]

One :class:`Row` per argument name (plus ``inputs`` and ``outputs``), in the
order the arguments first appear; ``values`` has one entry per version —
``None`` when that version does not pass the argument. Step nets are shown
as parsed NetDefs (text and NetDef arguments compare equal when the nets
are), so a difference is a difference in what the op would run. Each version
builds under its own era, with fresh net names, in a private workspace
(:mod:`.sandbox`): the caller's workspace is left as it was.
"""

from dataclasses import dataclass
from typing import Optional

from google.protobuf import text_format

from ..proto import caffe2_pb2
from . import VERSIONS, cells, era
from .sandbox import sandbox

NET_ARGUMENTS = ("step_net", "backward_step_net")


@dataclass
class Row:
    argument: str
    values: tuple[Optional[object], ...]
    differs: bool


def argument_value(arg):
    """An Argument as a plain value: NetDef (from text or n), list, scalar."""
    if arg.name in NET_ARGUMENTS:
        net = caffe2_pb2.NetDef()
        if arg.HasField("n"):
            net.CopyFrom(arg.n)
        else:
            text_format.Parse(arg.s.decode("utf-8"), net)
        return net
    for field in ("f", "i", "s"):
        if arg.HasField(field):
            value = getattr(arg, field)
            return value.decode("utf-8") if field == "s" else value
    for field in ("floats", "ints", "strings"):
        values = list(getattr(arg, field))
        if values:
            return [v.decode("utf-8") if field == "strings" else v for v in values]
    return []


def op_values(op_def):
    """``{name: value}`` for an op's inputs, outputs and arguments, in order."""
    values = {"inputs": list(op_def.input), "outputs": list(op_def.output)}
    for arg in op_def.arg:
        values[arg.name] = argument_value(arg)
    return values


def built_op(version, cell, **kwargs):
    """The RecurrentNetwork OperatorDef ``version`` builds for ``cell``."""
    with sandbox(), era(version):
        net, _ = cell.build(VERSIONS[version].recurrent_net, **kwargs)
    return next(op for op in net.Proto().op if op.type == "RecurrentNetwork")


def compare(versions, cell="lstm", **kwargs) -> list[Row]:
    """Rows of (argument, value per version, differs?) for ``cell`` (a name in
    :data:`cells.HISTORICAL` or a :class:`cells.Cell`)."""
    if isinstance(cell, str):
        cell = cells.HISTORICAL[cell]()
    per_version = [op_values(built_op(v, cell, **kwargs)) for v in versions]
    names = list(dict.fromkeys(n for values in per_version for n in values))
    rows = []
    for name in names:
        values = tuple(values.get(name) for values in per_version)
        rows.append(Row(name, values, any(v != values[0] for v in values[1:])))
    return rows
