"""Where each operator of a ``core.Net`` was created.

When a net fails, the error names the op (``net 'train', op #3 FC``), but not
the line of *your* program that made it: with helpers building ops for you,
that is the question. Caffe2 (0cdd09da6) kept the answer for every op added
through ``net.<OpType>(...)``: the Python stack at that moment, as
``(file, line)`` pairs with the frames of ``core.py`` itself left out, stored
in ``workspace.operator_tracebacks[net name][op index]`` (at 929c33cee, era E7:
``(file, line, function)`` triples). Two things read it:

* ``workspace.RunNetOnce``/``CreateNet``/``RunNet`` (and ``C.Workspace``'s
  ``run``/``create_net``) print where the op was made when it fails
  (``workspace.CallWithExceptionIntercept``,
  :func:`caffe2rnn.runtime.tracebacks.creation_report`);
* ``net.PopulateProtoWithFileName()`` writes the innermost frame into each
  op's ``name`` as ``"file:line"`` (E7: ``"file:line:function"``), e.g.
  before drawing the net.

Caffe2 wrote into ``op.name``; ``OperatorDef.debug_info`` (a full stack as
text) only arrived in Caffe2 c48918c10 (2018-02), after every era caffe2rnn
mirrors, so it stays unset here. Ops a net did not create itself (cloned,
appended, gradient ops) have no record and keep their names.
"""

import os
import sys

from .. import eras
from ..runtime.tracebacks import operator_tracebacks

_CORE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


def record(net_name, op_index):
    """Remember the current stack as the creation place of op ``op_index``."""
    operator_tracebacks[net_name][op_index] = creation_frames()


def creation_frames():
    """``[(file, line), ...]`` of the calling stack, innermost first, without
    the frames inside ``caffe2rnn/core``; ``(file, line, function)`` in the
    eras whose Caffe2 recorded the function too (E7).

    Walks ``sys._getframe`` instead of using ``traceback``/``inspect``, which
    read source files: Caffe2 avoided that because it is slow on network file
    systems, and this runs for every op created.
    """
    with_function = eras.current().tracebacks_name_functions
    frames = []
    frame = sys._getframe(1)
    while frame is not None:
        code = frame.f_code
        if not code.co_filename.startswith(_CORE_DIR):
            if with_function:
                frames.append((code.co_filename, frame.f_lineno, code.co_name))
            else:
                frames.append((code.co_filename, frame.f_lineno))
        frame = frame.f_back
    return frames


def populate_file_names(net):
    """Set ``op.name = "file:line"`` (with ``":function"`` where the record
    holds it) for every op of ``net`` with a record."""
    frames_by_op = operator_tracebacks.get(net.Name())
    if not frames_by_op:
        return
    for index, op in enumerate(net.Proto().op):
        frames = frames_by_op.get(index)
        if frames:
            op.name = ":".join(map(str, frames[0]))
