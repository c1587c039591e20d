"""Run 2017 Caffe2 Python code unmodified: ``import caffe2`` → caffe2rnn.

The 2017 seed texts (``recurrent_net`` and friends, see "seed text" in the docs
glossary) start with Caffe2 imports::

    from caffe2.python import core, workspace
    from caffe2.python.scope import CurrentNameScope
    from caffe2.proto import caffe2_pb2
    from future.utils import viewitems, viewkeys

After :func:`install`, an import hook answers those names with caffe2rnn's
modules — the *same* module objects, so ``caffe2.python.core is
caffe2rnn.core``. The mapping is by rule, not by list: ``caffe2.python.X`` is
``caffe2rnn.X`` and ``caffe2.proto.X`` is ``caffe2rnn.proto.X``, so modules
added later (``caffe2rnn.recurrent``...) work without touching this file.
``future.utils`` (the ``viewitems``/``viewkeys``/``viewvalues`` of the
``future`` package) is provided too when that package is not installed.

A whole Caffe2 program runs the same way, from the command line::

    python -m caffe2rnn.compat caffe2/python/examples/char_rnn.py --train_data t.txt

The seeds were Python 2; :func:`py2_namespace` gives ``exec`` a globals dict in
which ``map`` returns a list (Caffe2's argument builder iterates a value more
than once, so a lazy ``map`` would become an empty argument).
"""

import builtins
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import os
import runpy
import sys


def viewitems(obj, **kwargs):
    """``future.utils.viewitems``: ``obj.items()`` (a view under Python 3)."""
    return obj.items(**kwargs)


def viewkeys(obj, **kwargs):
    return obj.keys(**kwargs)


def viewvalues(obj, **kwargs):
    return obj.values(**kwargs)


def _py2_map(function, *iterables):
    """Python 2's ``map``: the results as a list (Python 3's is a lazy iterator)."""
    return list(builtins.map(function, *iterables))


def py2_namespace(**names):
    """A globals dict for ``exec``-ing Python 2 seed text; ``names`` are added.

    Holds ``map`` returning a list, and ``viewitems``/``viewkeys``/
    ``viewvalues``. (Python 2's ``map(None, a, b)`` padding is not provided:
    no seed uses it.)
    """
    namespace = {
        "__name__": "caffe2_seed",
        "map": _py2_map,
        "viewitems": viewitems,
        "viewkeys": viewkeys,
        "viewvalues": viewvalues,
    }
    namespace.update(names)
    return namespace


class _AliasLoader(importlib.abc.Loader):
    """Loads a name as an existing module (``target``) or as a fresh package.

    ``target=None`` makes an empty package (``caffe2``, ``caffe2.python``);
    ``attributes`` are then copied into it (``future.utils``' functions).
    """

    def __init__(self, target=None, attributes=None):
        self.target = target
        self.attributes = attributes or {}

    def create_module(self, spec):
        if self.target is None:
            return None  # the import system makes a new empty module
        return importlib.import_module(self.target)

    def exec_module(self, module):
        for key, value in self.attributes.items():
            setattr(module, key, value)


_FUTURE_UTILS = {"viewitems": viewitems, "viewkeys": viewkeys, "viewvalues": viewvalues}


class Caffe2Finder(importlib.abc.MetaPathFinder):
    """Meta-path finder mapping ``caffe2.*`` (and ``future.utils``) names."""

    #: prefix of an imported name → prefix of the caffe2rnn module it is.
    PREFIXES = (("caffe2.python.", "caffe2rnn."), ("caffe2.proto.", "caffe2rnn.proto."))

    def __init__(self, provide_future):
        self.packages = {"caffe2": None, "caffe2.python": None, "caffe2.proto": "caffe2rnn.proto"}
        if provide_future:
            self.packages["future"] = None
            self.plain_modules = {"future.utils": _FUTURE_UTILS}
        else:
            self.plain_modules = {}

    def provided(self, name):
        """True for module names this finder answers (whether loaded or not)."""
        return (
            name in self.packages
            or name in self.plain_modules
            or any(name.startswith(p) for p, _ in self.PREFIXES)
        )

    def find_spec(self, fullname, path=None, target=None):
        if fullname in self.packages:
            return importlib.machinery.ModuleSpec(
                fullname, _AliasLoader(self.packages[fullname]), is_package=True
            )
        if fullname in self.plain_modules:
            return importlib.machinery.ModuleSpec(
                fullname, _AliasLoader(attributes=self.plain_modules[fullname])
            )
        for prefix, real_prefix in self.PREFIXES:
            if fullname.startswith(prefix):
                real = real_prefix + fullname[len(prefix) :]
                try:
                    found = importlib.util.find_spec(real)
                except ModuleNotFoundError:
                    found = None
                if found is None:
                    return None  # → ModuleNotFoundError for ``fullname``
                return importlib.machinery.ModuleSpec(
                    fullname,
                    _AliasLoader(real),
                    is_package=found.submodule_search_locations is not None,
                )
        return None


_finder = None


def install():
    """Make ``import caffe2...`` (and, if needed, ``future.utils``) resolve here.

    Idempotent; returns the installed finder.
    """
    global _finder
    if _finder is None:
        provide_future = importlib.util.find_spec("future") is None
        _finder = Caffe2Finder(provide_future)
        sys.meta_path.insert(0, _finder)
    return _finder


def uninstall():
    """Remove the import hook and forget the ``caffe2.*`` modules it made."""
    global _finder
    if _finder is None:
        return
    sys.meta_path.remove(_finder)
    for name in [n for n in sys.modules if _finder.provided(n)]:
        del sys.modules[name]
    _finder = None


def run_program(path, argv=()):
    """Run the Caffe2 Python program ``path`` as ``__main__`` with ``argv``.

    Installs the import hook first; ``sys.argv`` is ``[path, *argv]`` while
    it runs, as if started with ``python path argv...``. The program's text
    is not changed: what it imports from ``caffe2`` is caffe2rnn.
    """
    install()
    saved = sys.argv[:]
    sys.argv = [path, *argv]
    try:
        runpy.run_path(path, run_name="__main__")
    finally:
        sys.argv = saved


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in ("-h", "--help"):
        print("usage: python -m caffe2rnn.compat PROGRAM.py [ARGUMENTS...]")
        print("Run a Caffe2 Python program unchanged, its caffe2 imports answered by caffe2rnn.")
        return 0 if argv else 2
    if not os.path.isfile(argv[0]):
        print("caffe2rnn.compat: %s: no such file" % argv[0], file=sys.stderr)
        return 2
    # Under ``python -m`` this file runs as ``__main__``, a second copy of the
    # module: use the real one, so there is one import hook.
    from caffe2rnn import compat

    compat.run_program(argv[0], argv[1:])
    return 0


if __name__ == "__main__":
    sys.exit(main())
