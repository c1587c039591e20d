"""The historical versions one can draw: name → (description, cell builders).

The command line (``python -m caffe2rnn render --version v2 ...``) lists and
builds these beside caffe2rnn's own ``recurrent_net``; each builder returns
the ``RecurrentNetwork`` OperatorDef a version's text makes of a cell, built
under the version's own era.
"""

import re

from . import VERSIONS, cells
from .compare import built_op


def _historical(version):
    """{cell: builder} for a historical recurrent_net, built under its own era."""
    return {
        name: (lambda name=name: built_op(version, cells.HISTORICAL[name]()))
        for name in cells.HISTORICAL
    }


def versions():
    """version name → (the first line of its module's docstring, {cell: builder})."""
    return {
        name: (_plain((module.__doc__ or name).strip().splitlines()[0]), _historical(name))
        for name, module in VERSIONS.items()
    }


def _plain(text):
    """A docstring's first line for the terminal: no reST quotes, no research-note ids."""
    text = re.sub(r"\bseed \d+(?: #\d+)?,?\s*", "", text.replace("``", ""))
    return re.sub(r"\s+([,.])", r"\1", text).strip()
