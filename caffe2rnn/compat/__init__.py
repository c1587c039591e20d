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
``future.utils`` (the ``viewitems``/``viewkeys``/``viewvalues``/``bytes_to_native_str`` of the
``future`` package) is provided too when that package is not installed.

A whole Caffe2 program runs the same way, from the command line::

    python -m caffe2rnn.compat caffe2/python/examples/char_rnn.py --train_data t.txt

**A Caffe2 checkout fills the gaps.** caffe2rnn re-implements the framework
(``core``, ``workspace``, the operators, ``rnn_cell``...), not every module
written on top of it. Given a checkout of Caffe2's sources (``checkout=`` of
:func:`install`; for a program, the checkout it lies in, or
``$CAFFE2_SOURCE``), a ``caffe2.python.X`` that caffe2rnn does not have is
Caffe2's own ``caffe2/python/X.py``, run unchanged on caffe2rnn: the seq2seq
model code, ``data_parallel_model``, ``memonger``, the test utilities
(:mod:`.checkout`). caffe2rnn's module always wins where it has one.

2017 code also expected the libraries of 2017: NumPy's removed aliases
(``np.float``...) and Hypothesis 3's API. :mod:`.environment2017` provides
them for a program run here and for Caffe2's test files run with the pytest
plugin (:mod:`.pytest_plugin`)::

    python -m pytest -p caffe2rnn.compat.pytest_plugin --caffe2-source ~/caffe2 \
        ~/caffe2/caffe2/python/operator_test/rnn_cell_test.py

**The era of the whole process.** ``CAFFE2RNN_ERA=E6`` (any era name of
:mod:`caffe2rnn.eras`) in the environment makes :func:`install` put the whole
process in that era, as if every line ran inside ``eras.use("E6")``. That is
how the "Caffe2 (caffe2rnn)" Jupyter kernels (:mod:`.kernel`), in which
Caffe2's own tutorial notebooks run unchanged, hold one era for a session.

The seeds were Python 2; :func:`py2_namespace` gives ``exec`` a globals dict in
which ``map`` returns a list (Caffe2's argument builder iterates a value more
than once, so a lazy ``map`` would become an empty argument).
"""

import argparse
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


def bytes_to_native_str(b, encoding="utf-8"):
    """``future.utils.bytes_to_native_str``: the native ``str`` of ``b`` (decoded
    under Python 3)."""
    return b.decode(encoding)


_FUTURE_UTILS: dict = {
    "viewitems": viewitems,
    "viewkeys": viewkeys,
    "viewvalues": viewvalues,
    "bytes_to_native_str": bytes_to_native_str,
}


def _basestring_check():
    """``past.builtins.basestring`` under Python 3: ``isinstance(x, basestring)``
    is true for ``str`` and ``bytes``."""

    class _BaseStringMeta(type):
        def __instancecheck__(cls, instance):
            return isinstance(instance, (str, bytes))

    return _BaseStringMeta("basestring", (), {})


_PAST_BUILTINS = {
    "basestring": _basestring_check(),
    "unicode": str,
    "long": int,
    "xrange": range,
}


class Caffe2Finder(importlib.abc.MetaPathFinder):
    """Meta-path finder mapping ``caffe2.*`` (and ``future.utils``) names.

    ``checkout`` (a :class:`~.checkout.Checkout` or None) answers the
    ``caffe2.*`` names caffe2rnn has no module for.
    """

    #: prefix of an imported name → prefix of the caffe2rnn module it is.
    PREFIXES = (("caffe2.python.", "caffe2rnn."), ("caffe2.proto.", "caffe2rnn.proto."))

    def __init__(self, provide_future, provide_past=False, checkout=None):
        self.packages = {"caffe2": None, "caffe2.python": None, "caffe2.proto": "caffe2rnn.proto"}
        self.plain_modules = {}
        if provide_future:
            self.packages["future"] = None
            self.plain_modules["future.utils"] = _FUTURE_UTILS
        if provide_past:
            self.packages["past"] = None
            self.plain_modules["past.builtins"] = _PAST_BUILTINS
        self.checkout = checkout

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
                    # Caffe2's own module, when a checkout is known; else
                    # ModuleNotFoundError for ``fullname``.
                    return self.checkout.find_spec(fullname) if self.checkout else None
                return importlib.machinery.ModuleSpec(
                    fullname,
                    _AliasLoader(real),
                    is_package=found.submodule_search_locations is not None,
                )
        return None


_finder = None

#: The environment variable that names the Caffe2 era of the whole process
#: (any name :func:`caffe2rnn.eras.get` knows: ``E5``, ``E6``, ``v2``...),
#: read by :func:`install`. The "Caffe2 (caffe2rnn)" Jupyter kernels set it
#: (:mod:`.kernel`): an ``eras.use`` block does not outlive a notebook cell.
ERA_VARIABLE = "CAFFE2RNN_ERA"
#: (previous process era,) when install() set the process era from the variable.
_era_before_install = None


def era_from_environment():
    """The :class:`~caffe2rnn.eras.Era` ``$CAFFE2RNN_ERA`` names, or None when
    it is unset or empty; an unknown name is an ArgumentError naming the variable."""
    from .. import eras
    from ..errors import ArgumentError

    name = os.environ.get(ERA_VARIABLE, "").strip()
    if not name:
        return None
    try:
        return eras.get(name)
    except ArgumentError as exc:
        raise ArgumentError("$%s=%r: %s" % (ERA_VARIABLE, name, exc)) from None


def install(checkout=None):
    """Make ``import caffe2...`` (and, if needed, ``future.utils`` and
    ``past.builtins``) resolve here.

    ``checkout``: the root of a Caffe2 source checkout (the folder holding
    ``caffe2/python``), whose modules answer the names caffe2rnn does not
    have. Idempotent; a later call with a checkout sets it. Returns the
    installed finder.

    The first call also reads ``$CAFFE2RNN_ERA`` (:data:`ERA_VARIABLE`):
    when it names an era, the whole process builds and runs in that era
    (:func:`caffe2rnn.eras.set_process_era`; an ``eras.use`` block, ``--era``
    or ``--caffe2-era`` still override it where they apply).
    """
    global _finder, _era_before_install
    if _finder is None:
        from .. import eras

        era = era_from_environment()
        provide_future = importlib.util.find_spec("future") is None
        provide_past = importlib.util.find_spec("past") is None
        _finder = Caffe2Finder(provide_future, provide_past)
        sys.meta_path.insert(0, _finder)
        if era is not None:
            _era_before_install = (eras.set_process_era(era),)
    if checkout is not None:
        from .checkout import Checkout

        _finder.checkout = checkout if isinstance(checkout, Checkout) else Checkout(checkout)
    return _finder


def uninstall():
    """Remove the import hook and forget the ``caffe2.*`` modules it made (and the
    process era ``$CAFFE2RNN_ERA`` set)."""
    global _finder, _era_before_install
    if _finder is None:
        return
    from .. import eras

    sys.meta_path.remove(_finder)
    for name in [n for n in sys.modules if _finder.provided(n)]:
        del sys.modules[name]
    _finder = None
    if _era_before_install is not None:
        eras.set_process_era(_era_before_install[0])
    _era_before_install = None


def run_program(path, argv=(), checkout=None, era=None):
    """Run the Caffe2 Python program ``path`` as ``__main__`` with ``argv``.

    Installs the import hook first; ``sys.argv`` is ``[path, *argv]`` while
    it runs, as if started with ``python path argv...``. The program's text
    is not changed: what it imports from ``caffe2`` is caffe2rnn, and what
    caffe2rnn lacks comes from ``checkout`` — by default the Caffe2 checkout
    the program lies in, else ``$CAFFE2_SOURCE`` (:mod:`.checkout`). NumPy's
    2017 aliases and Python 2's ``itertools.izip``... are provided
    (:mod:`.environment2017`). ``era`` (e.g.
    ``"E6"``) builds and runs the program under that Caffe2 era
    (:func:`caffe2rnn.eras.use`).
    """
    from .. import eras
    from . import environment2017
    from .checkout import find_checkout

    install(checkout or find_checkout(path))
    environment2017.install_numpy_aliases()
    environment2017.install_python2_itertools()
    saved = sys.argv[:]
    saved_path = sys.path[:]
    sys.argv = [path, *argv]
    # As ``python path``: the program's folder is first on sys.path.
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    try:
        if era is None:
            runpy.run_path(path, run_name="__main__")
        else:
            with eras.use(era):
                runpy.run_path(path, run_name="__main__")
    finally:
        sys.argv = saved
        sys.path[:] = saved_path


def _parser():
    parser = argparse.ArgumentParser(
        prog="python -m caffe2rnn.compat",
        description="Run a Caffe2 Python program unchanged, its caffe2 imports answered by "
        "caffe2rnn (and, for modules caffe2rnn does not have, by a Caffe2 checkout).",
    )
    parser.add_argument(
        "--caffe2-source",
        metavar="DIR",
        help="a Caffe2 source checkout (the folder holding caffe2/python) for the modules "
        "caffe2rnn does not have; default: the checkout PROGRAM lies in, else $CAFFE2_SOURCE",
    )
    parser.add_argument(
        "--era",
        help="build and run under this Caffe2 era (a name of caffe2rnn.eras; default "
        "$CAFFE2RNN_ERA, else E5)",
    )
    parser.add_argument(
        "--seed",
        type=int,
        metavar="N",
        help="seed the random ops that have no random_seed of their own (fillers, Dropout); "
        "Caffe2 seeded them from the clock, so by default each run draws other numbers",
    )
    parser.add_argument("program", metavar="PROGRAM.py")
    parser.add_argument("arguments", nargs=argparse.REMAINDER, metavar="ARGUMENTS")
    return parser


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if not argv:
        _parser().print_usage(sys.stderr)
        return 2
    # Options before PROGRAM are ours; everything after it is the program's.
    options = _parser().parse_args(argv)
    program, arguments = options.program, options.arguments
    if not os.path.isfile(program):
        print("caffe2rnn.compat: %s: no such file" % program, file=sys.stderr)
        return 2
    from .. import eras
    from ..errors import ArgumentError

    if options.era is not None:
        try:
            eras.get(options.era)
        except ArgumentError as exc:
            print("caffe2rnn.compat: --era: %s" % exc, file=sys.stderr)
            return 2
    if options.caffe2_source is not None and not os.path.isdir(
        os.path.join(options.caffe2_source, "caffe2", "python")
    ):
        print(
            "caffe2rnn.compat: --caffe2-source %s: no caffe2/python folder there"
            % options.caffe2_source,
            file=sys.stderr,
        )
        return 2
    if options.seed is not None:
        from ..operators import rng

        rng.seed(options.seed)
    run_program(program, arguments, checkout=options.caffe2_source, era=options.era)
    return 0
