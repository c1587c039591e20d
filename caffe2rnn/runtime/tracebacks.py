"""Where each operator of a net was created, read when a run fails.

:mod:`caffe2rnn.core.tracebacks` records, for every op a ``core.Net``
creates, the Python stack of that moment in :data:`operator_tracebacks`
(``workspace.operator_tracebacks`` in Caffe2's API: the same dict). When
creating or running a net fails, :func:`call_with_exception_intercept`
(``workspace.CallWithExceptionIntercept``) prints where the failing op was
made (:func:`creation_report`) before the exception goes on unchanged. The
store lives here, below both the model-building side that writes it and the
workspace API that reads it.
"""

import os
import sys
import sysconfig
from collections import defaultdict

#: net name → {op index → [(file, line), ...]}: where each op of a ``core.Net``
#: was created, innermost frame first (E7: ``(file, line, function)``).
operator_tracebacks = defaultdict(dict)

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
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


def _is_machinery(filename):
    # "<frozen runpy>": a module the interpreter carries frozen inside itself
    if filename.startswith("<frozen "):
        return True
    return filename.startswith(_LIBRARY_DIRS) and not filename.startswith(_PACKAGE_DIR)


def _place(frame):
    """``file:line`` of a frame — or, for code a notebook cell ran, the name
    IPython's own tracebacks give it (``Cell In[4], line 3``): its file is a
    temporary one named after the cell's hash (``/tmp/ipykernel_81/2729.py``),
    which says nothing to the reader of the notebook."""
    filename, line = frame[0], frame[1]
    ipython = sys.modules.get("IPython")  # only when a notebook or IPython runs us
    shell = ipython.get_ipython() if hasattr(ipython, "get_ipython") else None
    name_of = getattr(getattr(shell, "compile", None), "format_code_name", None)
    label = name_of(filename) if callable(name_of) else None
    if label:
        return "%s %s, line %d" % (label[0], label[1], line)
    return "%s:%d" % (filename, line)


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
    kept, at most :data:`REPORT_FRAMES` are shown, and a notebook cell's line
    is named as IPython names it (``Cell In[4], line 3``).
    """
    frames = operator_tracebacks.get(net_name, {}).get(op_index)
    if not frames:
        return ""
    shown = [f for f in frames if not _is_machinery(f[0])] or frames[:1]
    lines = ["Operator %d of network %s was created at:" % (op_index, net_name)]
    lines += [_place(frame) for frame in shown[:REPORT_FRAMES]]
    if len(shown) > REPORT_FRAMES:
        lines.append("... and %d outer frames" % (len(shown) - REPORT_FRAMES))
    return "\n".join(lines)


def call_with_exception_intercept(func, op_id_fetcher, net_name, *args, **kwargs):
    """``func(*args, **kwargs)``; if it raises, say where the failing op was made.

    The failing op's index comes from ``op_id_fetcher()``; when
    :data:`operator_tracebacks` knows where that op of ``net_name`` was created,
    that place is printed to stderr (:func:`creation_report`) before the
    exception goes on unchanged.
    """
    try:
        return func(*args, **kwargs)
    except Exception:
        report = creation_report(net_name, op_id_fetcher())
        if report:
            print(report, file=sys.stderr)
        raise
