"""The libraries of 2017, as Caffe2's Python code expected them.

Caffe2's programs and tests were written against NumPy 1.13 and Hypothesis 3.
Today's releases removed some of what that code calls; running it unchanged
means giving those names back — their 2017 meaning, nothing more:

* **NumPy's aliases** ``np.float``, ``np.int``, ``np.object``, ``np.str``,
  ``np.long``, ``np.unicode``, ``np.complex`` (the Python types; removed in
  NumPy 1.24) and ``np.asscalar`` (``a.item()``; removed in 1.23).
* ``scipy.misc.logsumexp`` (SciPy's old home of ``special.logsumexp``).
* ``np.delete`` with a non-integer index array: NumPy 1.13 cast it to
  integers (with a DeprecationWarning; an error since 1.19), so
  ``np.delete(x, np.array([]), axis=0)`` — an empty list made an array —
  returned ``x``.
* ``np.sum`` of a generator: NumPy 1.13 summed it with Python's ``sum``
  (``fromnumeric.sum``: ``if isinstance(a, _gentype): res = _sum_(a)``;
  deprecated in 1.15, a TypeError in NumPy 2). Caffe2's
  ``cross_entropy_ops_test.py`` writes its reference that way.
* ``np.fromstring`` of bytes (``sep=""``, its binary mode): NumPy 1.13
  returned a new array of them (``frombuffer`` plus a copy); deprecated in
  1.14, an error in NumPy 2. Caffe2's ``hypothesis_test.py`` reads bytes so.
* **Hypothesis 3's API** (:func:`install_hypothesis3_api`): ``settings`` and
  ``register_profile`` took keywords later removed (``min_satisfying_examples``,
  ``timeout``, ``perform_health_check``...); Hypothesis 3 had no deadline, no
  ``differing_executors`` health check, and ignored a test's return value; its
  ``extra.numpy.arrays`` rounded float elements to the array's dtype where
  Hypothesis 6 refuses them, and stored other elements in integer and bool
  arrays with C casts (``0.5`` → ``0``, ``2**32 - 2`` → ``-2`` in int32)
  where NumPy 2 refuses them. Strategies
  that took ``average_size`` accept it again (a hint Hypothesis 3 used for
  sizes; Hypothesis 6 chooses sizes itself).

* **One-element arrays as scalars**: NumPy 1.13 let ``int()`` and
  ``float()`` take any array of one element (``int(np.random.choice(3, 1))``
  in Caffe2's E4 recurrent_network_test); NumPy 2 takes only 0-d arrays. The
  arrays ``np.random.choice`` and ``np.random.randint`` return (the way 2017
  tests drew sizes and indices) convert again (:class:`OneElementScalars`).
* **round() of an array** (:func:`round2017`): NumPy 1.13's ndarray had
  ``__round__`` (``np.around``: ``round(np.array([1.23456]), 2)`` was
  ``array([1.23])``); NumPy 2 has none for arrays of one or more dimensions,
  and Caffe2's E7 Toy_Regression tutorial rounds its fetched ``(1,)`` weight.
  The "Caffe2 (caffe2rnn)" kernel gives notebooks this ``round``.
* **NetworkX 1.x** for ``memonger`` (:mod:`.networkx2017`).
* **Python 2's lazy itertools** (:func:`install_python2_itertools`):
  ``itertools.izip``, ``imap``, ``ifilter``, ``ifilterfalse`` and
  ``izip_longest`` are Python 3's ``zip``, ``map``, ``filter``,
  ``itertools.filterfalse`` and ``itertools.zip_longest`` (Python 3 made the
  built-ins lazy and dropped the ``i`` names). Caffe2 0cdd09da6's
  ``models/seq2seq/translate.py`` starts with ``from itertools import izip``.

These change the process's modules, so they are installed only where 2017 code
runs: :func:`caffe2rnn.compat.run_program` (NumPy) and the pytest plugin for
Caffe2's test files (both).
"""

import collections
import functools
import importlib.abc
import importlib.machinery
import inspect
import itertools
import sys

import numpy as np

#: NumPy names removed since 2017 → what they were.
NUMPY_ALIASES = {
    "float": float,
    "int": int,
    "object": object,
    "str": str,
    "long": int,
    "unicode": str,
    "complex": complex,
    "asscalar": lambda a: a.item(),
}

#: ``hypothesis.settings`` keywords of Hypothesis 3 that no longer exist.
REMOVED_SETTINGS = frozenset(
    [
        "min_satisfying_examples",
        "timeout",
        "perform_health_check",
        "strict",
        "max_iterations",
        "max_shrinks",
        "average_list_length",
        "buffer_size",
        "use_coverage",
        "database_file",
    ]
)


#: Python 2's ``itertools`` names → their Python 3 equivalents (the same lazy iterators).
PYTHON2_ITERTOOLS = {
    "izip": zip,
    "imap": map,
    "ifilter": filter,
    "ifilterfalse": itertools.filterfalse,
    "izip_longest": itertools.zip_longest,
}


def install_python2_itertools():
    """Give ``itertools`` back the names Python 2 code imports from it."""
    for name, value in PYTHON2_ITERTOOLS.items():
        if not hasattr(itertools, name):
            setattr(itertools, name, value)


def install_inspect_getargspec():
    """``inspect.getargspec`` (removed in Python 3.11), which E6's
    matmul_op_test.py calls to read a default: ``(args, varargs, keywords,
    defaults)`` from ``getfullargspec``."""
    if hasattr(inspect, "getargspec"):
        return
    ArgSpec = collections.namedtuple("ArgSpec", "args varargs keywords defaults")

    def getargspec(func):
        spec = inspect.getfullargspec(func)
        return ArgSpec(spec.args, spec.varargs, spec.varkw, spec.defaults)

    inspect.getargspec = getargspec


def install_numpy_aliases():
    for name, value in NUMPY_ALIASES.items():
        if name not in np.__dict__:
            setattr(np, name, value)
    if not getattr(np.delete, "_caffe2rnn_2017", False):
        np.delete = _delete_casting_indices(np.delete)
    if not getattr(np.sum, "_caffe2rnn_2017", False):
        np.sum = _sum_of_generators(np.sum)
    if not getattr(np.fromstring, "_caffe2rnn_2017", False):
        np.fromstring = _fromstring_binary_mode(np.fromstring)
    if not getattr(np.set_printoptions, "_caffe2rnn_2017", False):
        np.set_printoptions = _printoptions_nan_threshold(np.set_printoptions)
    for name in ("choice", "randint"):
        function = getattr(np.random, name)
        if not getattr(function, "_caffe2rnn_2017", False):
            setattr(np.random, name, _one_element_scalars(function))


def _delete_casting_indices(delete):
    """``np.delete`` that casts a non-integer index array, as NumPy 1.13 did."""
    import numpy as np

    @functools.wraps(delete)
    def delete2017(arr, obj, axis=None):
        if isinstance(obj, np.ndarray) and obj.dtype.kind not in "iub":
            obj = obj.astype(np.intp)
        return delete(arr, obj, axis=axis)

    delete2017._caffe2rnn_2017 = True
    return delete2017


def _sum_of_generators(numpy_sum):
    """``np.sum`` that sums a generator with Python's ``sum``, as NumPy 1.13 did."""

    @functools.wraps(numpy_sum)
    def sum2017(a, *args, **kwargs):
        if inspect.isgenerator(a):
            result = sum(a)
            out = kwargs.get("out")
            if out is not None:
                out[...] = result
                return out
            return result
        return numpy_sum(a, *args, **kwargs)

    sum2017._caffe2rnn_2017 = True
    return sum2017


def _fromstring_binary_mode(fromstring):
    """``np.fromstring`` whose binary mode (``sep=""``) copies the bytes, as NumPy 1.13 did."""
    import numpy as np

    @functools.wraps(fromstring)
    def fromstring2017(string, dtype=float, count=-1, sep="", **kwargs):
        if sep == "":
            if isinstance(string, str):
                string = string.encode("latin-1")
            return np.frombuffer(string, dtype=dtype, count=count).copy()
        return fromstring(string, dtype=dtype, count=count, sep=sep, **kwargs)

    fromstring2017._caffe2rnn_2017 = True
    return fromstring2017


def _printoptions_nan_threshold(set_printoptions):
    """``np.set_printoptions(threshold=np.nan)``: "never summarise", as NumPy
    1.13 read it (NumPy 1.14 made a NaN threshold an error; E6's
    matmul_op_test.py sets one)."""
    import sys

    @functools.wraps(set_printoptions)
    def set_printoptions2017(*args, **kwargs):
        threshold = kwargs.get("threshold")
        if isinstance(threshold, float) and threshold != threshold:
            kwargs["threshold"] = sys.maxsize
        return set_printoptions(*args, **kwargs)

    set_printoptions2017._caffe2rnn_2017 = True
    return set_printoptions2017


def _one_element_scalars(function):
    """``function`` whose array results are :class:`OneElementScalars` views."""

    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        result = function(*args, **kwargs)
        return result.view(OneElementScalars) if type(result) is np.ndarray else result

    wrapper._caffe2rnn_2017 = True
    return wrapper


class OneElementScalars(np.ndarray):
    """An ndarray that ``int()``/``float()``/``complex()`` convert when it
    holds one element, whatever its rank (NumPy 1.13's rule)."""

    def _scalar(self):
        if self.size != 1:
            raise TypeError("only size-1 arrays can be converted to Python scalars")
        return self.reshape(()).view(np.ndarray)[()]

    def __int__(self):
        return int(self._scalar())

    def __float__(self):
        return float(self._scalar())

    def __complex__(self):
        return complex(self._scalar())


_builtin_round = round


def round2017(number, ndigits=None):
    """Python's ``round`` with NumPy 1.13's ``__round__`` of arrays and NumPy
    scalars: rounded element by element (``np.around``), keeping the type --
    an array stays an array, ``round(np.float32(1.23456), 2)`` is the float32
    1.23 (NumPy 2 returns a Python float, printed with float64's digits);
    anything else goes to the built-in."""
    if isinstance(number, (np.ndarray, np.generic)):
        return np.around(number, ndigits or 0)
    return _builtin_round(number) if ndigits is None else _builtin_round(number, ndigits)


def _settings_keywords(kwargs):
    """Hypothesis 3 ``settings`` keywords → today's."""
    import hypothesis

    kwargs = dict(kwargs)
    if kwargs.pop("perform_health_check", True) is False:
        kwargs["suppress_health_check"] = list(hypothesis.HealthCheck)
    # Hypothesis 3 had no ``differing_executors`` check (Hypothesis 6): a
    # @given helper called from several test methods (E7 rnn_cell_test's
    # lstm_base, from test_lstm and test_milstm) ran there.
    later = getattr(hypothesis.HealthCheck, "differing_executors", None)
    suppressed = list(kwargs.get("suppress_health_check", ()))
    if later is not None and later not in suppressed:
        kwargs["suppress_health_check"] = suppressed + [later]
    for name in REMOVED_SETTINGS & set(kwargs):
        del kwargs[name]
    return kwargs


def _dropping_average_size(strategy):
    @functools.wraps(strategy)
    def wrapper(*args, **kwargs):
        kwargs.pop("average_size", None)
        return strategy(*args, **kwargs)

    return wrapper


def _stored_as(dtype, value):
    """``value`` as NumPy 1.13 stored it in an array of ``dtype`` (C casts: a
    float truncated, an integer wrapped around), which Hypothesis 3's arrays
    did with every element it drew."""
    import numpy as np

    return np.array(value).astype(dtype, casting="unsafe")[()]


def install_hypothesis3_api():
    """Make the ``hypothesis`` module accept Hypothesis 3 code. Idempotent;
    nothing without Hypothesis."""
    try:
        import hypothesis
    except ImportError:
        return
    import hypothesis.extra.numpy as hnp
    import hypothesis.strategies as st

    if getattr(hypothesis, "_caffe2rnn_3_api", False):
        return
    settings = hypothesis.settings
    original_init = settings.__init__
    original_register = settings.register_profile

    def __init__(self, parent=None, **kwargs):
        kwargs = _settings_keywords(kwargs)
        if parent is None:
            kwargs.setdefault("deadline", None)  # Hypothesis 3 had none
        original_init(self, parent, **kwargs)

    def register_profile(name, parent=None, **kwargs):
        kwargs = _settings_keywords(kwargs)
        if parent is None:
            kwargs.setdefault("deadline", None)
        return original_register(name, parent, **kwargs)

    # ``settings`` refuses attribute assignment through its metaclass.
    type.__setattr__(settings, "__init__", __init__)
    type.__setattr__(settings, "register_profile", staticmethod(register_profile))
    # Hypothesis 6 loads its "ci" profile (derandomize=True) when it sees a CI
    # variable such as CI=1; Hypothesis 3 had no such profile, so a suite would
    # draw different examples on a CI machine than on a desk. Start from the
    # plain default, as 2017 did, so both draw the same.
    settings.load_profile("default")
    settings.register_profile("caffe2rnn-2017", deadline=None)
    settings.load_profile("caffe2rnn-2017")

    original_given = hypothesis.given

    @functools.wraps(original_given)
    def given(*strategies, **kw_strategies):
        decorate = original_given(*strategies, **kw_strategies)

        def decorator(test):
            @functools.wraps(test)
            def ignoring_return_value(*args, **kwargs):
                test(*args, **kwargs)

            ignoring_return_value.__signature__ = inspect.signature(test)
            return decorate(ignoring_return_value)

        return decorator

    hypothesis.given = given

    original_arrays = hnp.arrays

    @functools.wraps(original_arrays)
    def arrays(dtype, shape, elements=None, **kwargs):
        kind = np.dtype(dtype) if not isinstance(dtype, st.SearchStrategy) else None
        if elements is not None and kind is not None and kind.kind in "fc":
            elements = elements.map(kind.type)  # rounded, as Hypothesis 3 did
        elif elements is not None and kind is not None and kind.kind in "iub":
            elements = elements.map(functools.partial(_stored_as, kind))
        return original_arrays(dtype, shape, elements=elements, **kwargs)

    hnp.arrays = arrays
    for name in ("lists", "text", "sets", "frozensets", "dictionaries", "binary"):
        setattr(st, name, _dropping_average_size(getattr(st, name)))
    hypothesis._caffe2rnn_3_api = True


def install_scipy_misc_logsumexp():
    """``scipy.misc.logsumexp`` (moved to ``scipy.special`` in SciPy 0.19,
    removed from ``misc`` in 1.3), which ``crf_test.py`` imports. Added when
    ``scipy.misc`` is imported (at once if it already is): importing SciPy's
    special functions costs every Caffe2 test file a third of a second, and
    one file needs them. Nothing without SciPy."""
    misc = sys.modules.get("scipy.misc")
    if misc is not None:
        _add_logsumexp(misc)
    elif not any(isinstance(f, _ScipyMiscFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _ScipyMiscFinder())


def _add_logsumexp(misc):
    if not hasattr(misc, "logsumexp"):
        try:
            import scipy.special
        except ImportError:
            return
        misc.logsumexp = scipy.special.logsumexp


class _ScipyMiscFinder(importlib.abc.MetaPathFinder):
    """Finds ``scipy.misc`` as Python would, and adds ``logsumexp`` to it once
    it has run."""

    def find_spec(self, fullname, path, target=None):
        if fullname != "scipy.misc":
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        run = spec.loader.exec_module

        def exec_module(module):
            run(module)
            _add_logsumexp(module)

        spec.loader.exec_module = exec_module
        return spec


def install():
    """All: NumPy's aliases, Hypothesis 3's API, NetworkX 1.x's
    (:mod:`.networkx2017`, for ``memonger``), SciPy's ``misc.logsumexp``,
    Python 2's itertools names, ``inspect.getargspec``."""
    from . import networkx2017

    install_numpy_aliases()
    install_python2_itertools()
    install_inspect_getargspec()
    install_hypothesis3_api()
    networkx2017.install()
    install_scipy_misc_logsumexp()
