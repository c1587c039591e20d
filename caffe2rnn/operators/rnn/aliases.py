"""Offset aliases: the op's outputs as views of its recurrent-state tensors.

After the forward loop, Caffe2's ``applyOffsetAlias`` made each output
``dst`` point at rows ``offset ... end`` of a state tensor ``src`` — a
negative offset counts from the end. ``recurrent_net`` made two per state:

    hidden_t_all   = states[1:]     offset  1   T x N x D   every h_t
    hidden_t_last  = states[T:]     offset -1   1 x N x D   the final h

They are views (O(1) in T), so they read whatever the states tensor holds;
they are re-made after every run, because a run with a different T or batch
size reallocates the states tensor. A zero-length alias (offset = rows) is an
empty tensor, as in Caffe2.
"""

from dataclasses import dataclass

from ...kernels import checked


@dataclass(frozen=True)
class OffsetAlias:
    """Output ``dst`` = rows ``offset:`` of ``src`` (negative: from the end)."""

    src: str
    dst: str
    offset: int = 0


def apply_offset_alias(alias, ws):
    """Make blob ``alias.dst`` a view of ``alias.src`` from row ``alias.offset``."""
    src = ws.blob(alias.src).value
    where = "alias '%s' of '%s'" % (alias.dst, alias.src)
    ws.create_blob(alias.dst).value = checked.offset_alias(src, alias.offset, where)
