"""Where each operator of a ``core.Net`` was created.

When a net fails, the error names the op (``net 'train', op #3 FC``), but not
the line of *your* program that made it: with helpers building ops for you,
that is the question. Caffe2 (0cdd09da6) kept the answer for every op added
through ``net.<OpType>(...)``: the Python stack at that moment, as
``(file, line)`` pairs with the frames of ``core.py`` itself left out, stored
in ``workspace.operator_tracebacks[net name][op index]``. Two things read it:

* ``workspace.RunNetOnce``/``CreateNet``/``RunNet`` (and ``C.Workspace``'s
  ``run``/``create_net``) print where the op was made when it fails
  (``workspace.CallWithExceptionIntercept``, :func:`creation_report`);
* ``net.PopulateProtoWithFileName()`` writes the innermost frame into each
  op's ``name`` as ``"file:line"``, e.g. before drawing the net.

Caffe2 wrote into ``op.name``; ``OperatorDef.debug_info`` (a full stack as
text) only arrived in Caffe2 c48918c10 (2018-02), after every era caffe2rnn
mirrors, so it stays unset here. Ops a net did not create itself (cloned,
appended, gradient ops) have no record and keep their names.
"""

import os
import sys
import sysconfig

from .. import workspace

_CORE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep
_PACKAGE_DIR = os.path.dirname(_CORE_DIR.rstrip(os.sep)) + os.sep
#: Where the interpreter's and installed packages' code lives: the frames of
#: the machinery that runs your program (runpy, IPython, pytest...).
_LIBRARY_DIRS = tuple(
    os.path.join(os.path.abspath(path), "")
    for path in {
        sysconfig.get_paths()[key] for key in ("stdlib", "platstdlib", "purelib", "platlib")
    }
)
#: At most this many frames are printed.
REPORT_FRAMES = 8


def record(net_name, op_index):
    """Remember the current stack as the creation place of op ``op_index``."""
    workspace.operator_tracebacks[net_name][op_index] = creation_frames()


def creation_frames():
    """``[(file, line), ...]`` of the calling stack, innermost first, without
    the frames inside ``caffe2rnn/core``.

    Walks ``sys._getframe`` instead of using ``traceback``/``inspect``, which
    read source files: Caffe2 avoided that because it is slow on network file
    systems, and this runs for every op created.
    """
    frames = []
    frame = sys._getframe(1)
    while frame is not None:
        filename = frame.f_code.co_filename
        if not filename.startswith(_CORE_DIR):
            frames.append((filename, frame.f_lineno))
        frame = frame.f_back
    return frames


def populate_file_names(net):
    """Set ``op.name = "file:line"`` for every op of ``net`` with a record."""
    frames_by_op = workspace.operator_tracebacks.get(net.Name())
    if not frames_by_op:
        return
    for index, op in enumerate(net.Proto().op):
        frames = frames_by_op.get(index)
        if frames:
            op.name = "%s:%d" % frames[0]


def _is_machinery(filename):
    return filename.startswith(_LIBRARY_DIRS) and not filename.startswith(_PACKAGE_DIR)


def creation_report(net_name, op_index):
    """Where op ``op_index`` of net ``net_name`` was created, as text; "" if unknown.

    ::

        Operator 1 of network train was created at:
        /home/me/caffe2rnn/brew.py:52
        /home/me/train.py:31

    Innermost frame first, as Caffe2 printed them (under the heading
    "Traceback for operator 1 in network train"; it is not the traceback of
    the error). Unlike Caffe2, the frames of the interpreter and of installed
    packages (runpy, IPython, pytest...) are left out, caffe2rnn's own are
    kept, and at most :data:`REPORT_FRAMES` are shown.
    """
    frames = workspace.operator_tracebacks.get(net_name, {}).get(op_index)
    if not frames:
        return ""
    shown = [f for f in frames if not _is_machinery(f[0])] or frames[:1]
    lines = ["Operator %d of network %s was created at:" % (op_index, net_name)]
    lines += ["%s:%d" % frame for frame in shown[:REPORT_FRAMES]]
    if len(shown) > REPORT_FRAMES:
        lines.append("... and %d outer frames" % (len(shown) - REPORT_FRAMES))
    return "\n".join(lines)
