"""NumPy 1.13's reading of a *list* index, for Caffe2's test files.

Until NumPy 1.15, ``x[[slice(0, 2), slice(1, None)]]`` meant
``x[slice(0, 2), slice(1, None)]``: a list (not a tuple) index that held a
slice, ``Ellipsis``, ``None`` or another sequence was read as a tuple of
indices. NumPy deprecated that in 1.15 and made it an ``IndexError`` in
1.23. Caffe2's 2017 tests build such lists for their reference functions
(``hypothesis_test.py::test_slice``, ``utility_ops_test.py::test_slice``:
``slc = [slice(si, ei) ...]; x[slc]``), so they fail today before comparing
anything with Caffe2rnn.

:func:`install` puts a finder first on ``sys.meta_path`` that loads the
``*_test.py`` files of the Caffe2 checkout with every subscript ``v[i]``
whose index is an expression (not a literal tuple, slice or constant)
rewritten to ``v[__caffe2rnn_index2017__(i)]``; :func:`index2017` turns such
a list into a tuple as NumPy 1.13 did and returns anything else unchanged.
The files are read where they lie and compiled in memory (no cache file is
written into the checkout). pytest's assertion rewriting does not apply to
them (their checks are ``unittest`` assertions).
"""

import ast
import builtins
import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys

_HELPER = "__caffe2rnn_index2017__"
#: NumPy's ``NPY_MAXDIMS`` at the time: longer lists were always fancy indices.
_MAXDIMS = 32


def index2017(index):
    """``index`` as NumPy 1.13 read it: a short list holding a slice,
    Ellipsis, None or a sequence becomes a tuple."""
    if type(index) is list and len(index) < _MAXDIMS:
        for item in index:
            if item is None or item is Ellipsis or isinstance(item, (slice, list, tuple)):
                return tuple(index)
            if hasattr(item, "__len__") and hasattr(item, "shape") and len(item.shape):
                return tuple(index)  # an array of one or more dimensions
    return index


class _WrapIndices(ast.NodeTransformer):
    def visit_Subscript(self, node):
        self.generic_visit(node)
        if not isinstance(node.slice, (ast.Tuple, ast.Slice, ast.Constant)):
            node.slice = ast.Call(
                func=ast.Name(id=_HELPER, ctx=ast.Load()), args=[node.slice], keywords=[]
            )
        return node


def transform(source, path):
    """The code object of ``source`` with its indices wrapped (module doc)."""
    tree = _WrapIndices().visit(ast.parse(source, path))
    ast.fix_missing_locations(tree)
    return compile(tree, path, "exec", dont_inherit=True)


class _Loader(importlib.abc.Loader):
    def __init__(self, path):
        self.path = path

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        with open(self.path, "rb") as source:
            code = transform(source.read(), self.path)
        exec(code, module.__dict__)


class TestFileFinder(importlib.abc.MetaPathFinder):
    """Finds the ``*_test.py`` modules under ``root`` and loads them transformed."""

    def __init__(self, root):
        self.root = os.path.abspath(root) + os.sep

    def find_spec(self, name, path=None, target=None):
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        origin = getattr(spec, "origin", None)
        if not origin or not origin.endswith("_test.py"):
            return None
        if not os.path.abspath(origin).startswith(self.root):
            return None
        return importlib.util.spec_from_file_location(name, origin, loader=_Loader(origin))


class IndexTransformer(_WrapIndices):
    """The rewrite as an AST transformer, for code compiled elsewhere: the
    "Caffe2 (caffe2rnn)" Jupyter kernel applies it to every notebook cell
    (after :func:`install_helper`)."""


def install_helper():
    """Make the rewritten subscripts' helper a built-in name. Idempotent."""
    setattr(builtins, _HELPER, index2017)


def install(root):
    """Load the test files under ``root`` with NumPy 1.13's list indices. Idempotent."""
    install_helper()
    for finder in sys.meta_path:
        if isinstance(finder, TestFileFinder) and finder.root == os.path.abspath(root) + os.sep:
            return
    sys.meta_path.insert(0, TestFileFinder(root))
