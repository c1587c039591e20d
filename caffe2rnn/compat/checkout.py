"""Caffe2's own Python modules, from a source checkout, for what caffe2rnn lacks.

caffe2rnn re-implements Caffe2's framework; much Caffe2 Python code was built
*on* that framework and needs nothing else from C++: the seq2seq model and its
beam search (``caffe2/python/models/seq2seq``), ``data_parallel_model``,
``memonger``, ``net_builder``, the test utilities (``hypothesis_test_util``,
``test_util``). With a :class:`Checkout`, :mod:`caffe2rnn.compat` loads such
a module from the checkout's file, unchanged, whenever caffe2rnn has no module
of that name. Nothing is copied: the checkout is the user's, read where it
lies.

Only Python source is loaded (``X.py`` or a package folder); Caffe2's
compiled parts never existed in a source checkout and are caffe2rnn's job.
Caffe2's Python folders had no ``__init__.py`` in 2017 (CMake added them at
install), so a folder without one is a namespace package here.
"""

import importlib.machinery
import importlib.util
import os


class Checkout:
    """A Caffe2 source tree: ``root`` holds ``caffe2/python``."""

    def __init__(self, root):
        self.root = os.path.abspath(os.fspath(root))

    def __repr__(self):
        return "Checkout(%r)" % self.root

    def path_of(self, fullname):
        """The file or folder ``caffe2.python.X.Y`` would be in this checkout."""
        return os.path.join(self.root, *fullname.split("."))

    def find_spec(self, fullname):
        """A module spec for ``fullname`` (a ``caffe2.*`` name) or None."""
        path = self.path_of(fullname)
        if os.path.isfile(path + ".py"):
            return importlib.util.spec_from_file_location(fullname, path + ".py")
        if os.path.isdir(path):
            init = os.path.join(path, "__init__.py")
            if os.path.isfile(init):
                return importlib.util.spec_from_file_location(
                    fullname, init, submodule_search_locations=[path]
                )
            spec = importlib.machinery.ModuleSpec(fullname, None, is_package=True)
            spec.submodule_search_locations = [path]
            return spec
        return None


def is_checkout(root):
    return os.path.isdir(os.path.join(root, "caffe2", "python"))


def find_checkout(program=None):
    """The checkout a program lies in (``.../caffe2/python/...``), else the one
    ``$CAFFE2_SOURCE`` names, else None."""
    if program is not None:
        folder = os.path.dirname(os.path.abspath(program))
        while True:
            if (
                os.path.basename(folder) == "python"
                and os.path.basename(os.path.dirname(folder)) == "caffe2"
            ):
                root = os.path.dirname(os.path.dirname(folder))
                if is_checkout(root):
                    return Checkout(root)
            parent = os.path.dirname(folder)
            if parent == folder:
                break
            folder = parent
    source = os.environ.get("CAFFE2_SOURCE")
    if source and is_checkout(source):
        return Checkout(source)
    return None
