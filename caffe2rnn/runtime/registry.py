"""The operator registry: op type name → implementation, schema, gradient.

Caffe2 kept three registries in C++: operator implementations
(``REGISTER_CPU_OPERATOR``), schemas (``OPERATOR_SCHEMA``: input/output counts
and in-place rules) and gradient makers (``REGISTER_GRADIENT``). Here one
decorator call registers all three facts about an op type::

    @register("Sigmoid", inputs=1, outputs=1, inplace=[(0, 0)])
    class Sigmoid(Operator):
        def run(self): ...

    @register_gradient("Sigmoid")
    class GetSigmoidGradient(GradientMaker):
        def get_gradient_defs(self):
            return [self.op_def("SigmoidGradient", [self.O(0), self.GO(0)], [self.GI(0)])]

**Eras.** A few operators behaved differently in older Caffe2 (the
``RecurrentNetwork`` family: :mod:`caffe2rnn.history.operator_eras`). The
registered class is today's; an older era's class is a *variant* registered
for the eras it covers, from the history package, which plugs in this way::

    @register_variant("RecurrentNetwork", eras=["E3", "E4"])
    class PerTimestepForward(RecurrentNetworkOp): ...

A net created with an era (:func:`caffe2rnn.eras.for_running`) asks
:func:`operator_class` with that era and gets the variant, or today's class
when the op did not change; the era is then handed to the operator itself
(``Operator(op_def, ws, era)``), which passes it on to the step nets it
creates. Gradient makers that changed with the *building* era are
registered the same way (:func:`register_gradient_variant`) and looked up
with the era code is built under (:func:`gradient_maker`).
"""

import difflib

from .. import eras as _eras
from ..errors import ArgumentError, GradientError, UnknownOperatorError

_OPERATORS = {}
_SCHEMAS = {}
_GRADIENTS = {}
_VARIANTS = {}  # (op type, era name) -> class
_GRADIENT_VARIANTS = {}  # (op type, era name) -> gradient maker


class OpSchema:
    """Input/output counts and in-place rules of one op type.

    ``inputs``/``outputs`` are an int or ``(min, max)`` (``max=None``: no limit).
    ``counts``, a function of ``(n_inputs, n_outputs)``, narrows them further,
    as Caffe2's ``NumInputs(std::function)`` / ``NumInputsOutputs`` did (its
    ``__doc__`` says what it accepts in the error).
    ``inplace`` lists the allowed ``(input, output)`` index pairs (``"any"``:
    all; a function of ``(input, output)``: the pairs it accepts, as Caffe2's
    ``AllowInplace(std::function)``); ``enforce_inplace`` the pairs that
    *must* share a name (or a function of ``(input, output)``, as
    ``EnforceInplace(std::function)``).
    """

    def __init__(
        self,
        op_type,
        inputs=(0, None),
        outputs=(0, None),
        inplace=(),
        enforce_inplace=(),
        doc=None,
        counts=None,
    ):
        self.op_type = op_type
        self.inputs = (inputs, inputs) if isinstance(inputs, int) else tuple(inputs)
        self.outputs = (outputs, outputs) if isinstance(outputs, int) else tuple(outputs)
        self.counts = counts
        self.inplace = inplace if inplace == "any" or callable(inplace) else frozenset(inplace)
        self.enforce_inplace = (
            enforce_inplace if callable(enforce_inplace) else frozenset(enforce_inplace)
        )
        self.doc = doc

    def enforced(self, i, j):
        """Whether input ``i`` and output ``j`` must be the same blob."""
        if callable(self.enforce_inplace):
            return bool(self.enforce_inplace(i, j))
        return (i, j) in self.enforce_inplace

    @staticmethod
    def _count_ok(n, bounds):
        low, high = bounds
        return n >= low and (high is None or n <= high)

    @staticmethod
    def _describe(bounds):
        low, high = bounds
        if high == low:
            return str(low)
        return "%d or more" % low if high is None else "%d to %d" % (low, high)

    def verify(self, op_def):
        """Return ``None`` if ``op_def`` fits the schema, else what is wrong."""
        n_in, n_out = len(op_def.input), len(op_def.output)
        if not self._count_ok(n_in, self.inputs):
            return "%s takes %s inputs, got %d" % (self.op_type, self._describe(self.inputs), n_in)
        if not self._count_ok(n_out, self.outputs):
            return "%s takes %s outputs, got %d" % (
                self.op_type,
                self._describe(self.outputs),
                n_out,
            )
        if self.counts is not None and not self.counts(n_in, n_out):
            return "%s takes %s, got %d inputs and %d outputs" % (
                self.op_type,
                (self.counts.__doc__ or "other counts").strip(),
                n_in,
                n_out,
            )
        for i, name in enumerate(op_def.input):
            for j, out in enumerate(op_def.output):
                if name != out:
                    continue
                allowed = (
                    self.inplace == "any"
                    or (self.inplace(i, j) if callable(self.inplace) else (i, j) in self.inplace)
                    or self.enforced(i, j)
                )
                if not allowed:
                    return (
                        "%s does not allow input %d ('%s') to be written in "
                        "place as output %d" % (self.op_type, i, name, j)
                    )
        for i in range(n_in):
            for j in range(n_out):
                if self.enforced(i, j) and op_def.input[i] != op_def.output[j]:
                    return "%s requires input %d and output %d to be the same blob" % (
                        self.op_type,
                        i,
                        j,
                    )
        return None


def register(
    op_type,
    inputs=(0, None),
    outputs=(0, None),
    inplace=(),
    enforce_inplace=(),
    doc=None,
    counts=None,
):
    """Class decorator: register an :class:`~caffe2rnn.operators.base.Operator`."""

    def decorate(cls):
        schema = OpSchema(
            op_type, inputs, outputs, inplace, enforce_inplace, doc or cls.__doc__, counts
        )
        _OPERATORS[op_type] = cls
        _SCHEMAS[op_type] = schema
        cls.op_type = op_type
        cls.schema = schema
        return cls

    return decorate


def register_gradient(op_type):
    """Decorator: register a gradient maker (a GradientMaker subclass or marker)."""

    def decorate(maker):
        _GRADIENTS[op_type] = maker
        return maker

    return decorate


def _era_names(era_list):
    names = [_eras.get(e).name for e in era_list]
    if not names:
        raise ValueError("a variant needs at least one era")
    return names


def register_variant(op_type, eras, **schema):
    """Class decorator: ``op_type`` is created as this class in nets of ``eras``.

    ``op_type`` must be registered already (today's class); the variant
    shares its schema unless ``schema`` gives its own (``inputs=``,
    ``outputs=``, ``inplace=``... as :func:`register`): the op's schema in
    those eras, checked when a net of those eras creates it.
    """
    names = _era_names(eras)

    def decorate(cls):
        if op_type not in _OPERATORS:
            raise UnknownOperatorError(
                "cannot register a variant of '%s': the operator is not registered" % op_type
            )
        cls.op_type = op_type
        cls.schema = OpSchema(op_type, doc=cls.__doc__, **schema) if schema else _SCHEMAS[op_type]
        for name in names:
            _VARIANTS[(op_type, name)] = cls
        return cls

    return decorate


def register_gradient_variant(op_type, eras):
    """Decorator: the gradient maker of ``op_type`` for code built in ``eras``."""
    names = _era_names(eras)

    def decorate(maker):
        for name in names:
            _GRADIENT_VARIANTS[(op_type, name)] = maker
        return maker

    return decorate


def variants(op_type):
    """``{era name: class}`` of the registered variants of ``op_type``."""
    return {era: cls for (t, era), cls in sorted(_VARIANTS.items()) if t == op_type}


def is_registered(op_type):
    return op_type in _OPERATORS


def registered_operators():
    """Sorted list of every registered op type (``workspace.RegisteredOperators``)."""
    return sorted(_OPERATORS)


def close_matches(op_type):
    """Registered op types that look like ``op_type`` (case-insensitive)."""
    by_lower = {}
    for name in _OPERATORS:
        by_lower.setdefault(name.lower(), name)
    hits = difflib.get_close_matches(op_type.lower(), list(by_lower), n=5, cutoff=0.6)
    return [by_lower[hit] for hit in hits]


def operator_class(op_type, era=None):
    """The class ``op_type`` is created as: the variant registered for
    ``era`` (an :class:`~caffe2rnn.eras.Era` or its name), else today's
    class; UnknownOperatorError if the type is not registered."""
    try:
        cls = _OPERATORS[op_type]
    except KeyError:
        hint = close_matches(op_type)
        raise UnknownOperatorError(
            "operator type '%s' is not registered%s"
            % (op_type, "; did you mean: " + ", ".join(hint) if hint else "")
        ) from None
    if era is None:
        return cls
    return _VARIANTS.get((op_type, _eras.get(era).name), cls)


def has_variant(op_type, era):
    """Whether ``op_type`` has a class of its own registered for ``era`` (an
    :class:`~caffe2rnn.eras.Era` or its name): its form changed after it."""
    return (op_type, _eras.get(era).name) in _VARIANTS


def schema(op_type):
    return _SCHEMAS.get(op_type)


def gradient_maker(op_type, era=None):
    """The gradient maker of ``op_type`` for code built in ``era`` (its
    variant if one is registered, else today's); GradientError if none."""
    if era is not None:
        variant = _GRADIENT_VARIANTS.get((op_type, _eras.get(era).name))
        if variant is not None:
            return variant
    try:
        return _GRADIENTS[op_type]
    except KeyError:
        raise GradientError("Gradient maker for operator %s not implemented." % op_type) from None


def has_gradient_maker(op_type):
    return op_type in _GRADIENTS


# -- engine preferences ---------------------------------------------------------------
#
# Caffe2 could register several implementations ("engines") of one op type and
# chose among them when it created an operator: the engines the OperatorDef
# names, then the per-op preference, then the global one, then the default
# (caffe2/core/operator.cc, 042e8ede4: SetPerOpEnginePref, SetGlobalEnginePref,
# SetEnginePref, SetOpEnginePref; Python: core.SetEnginePref...). caffe2rnn has
# one CPU implementation per op type, which is what Caffe2 created whenever no
# preferred engine was registered; the preferences are kept and checked as
# Caffe2 checked them, and read back with engine_preferences().

#: Caffe2's DeviceType values whose operator registry exists here: CPU (0) only.
REGISTERED_DEVICE_TYPES = (0,)
_PER_OP_ENGINE_PREF = {}
_GLOBAL_ENGINE_PREF = {1: ["CUDNN"]}  # Caffe2's initial value: CUDA prefers cuDNN


def _check_device_type(device_type):
    if device_type not in REGISTERED_DEVICE_TYPES:
        raise ArgumentError("Device type %s not registered." % (device_type,))


def _check_op_on_device(op_type, device_type):
    _check_device_type(device_type)
    if not is_registered(op_type):
        raise ArgumentError(
            "Operator type %s not registered in %s registry." % (op_type, device_type)
        )


def set_per_op_engine_pref(per_op_pref):
    """``{device_type: {op_type: [engine, ...]}}`` replaces the per-op preferences."""
    for device_type, op_prefs in per_op_pref.items():
        for op_type in op_prefs:
            _check_op_on_device(op_type, device_type)
    _PER_OP_ENGINE_PREF.clear()
    for device_type, op_prefs in per_op_pref.items():
        _PER_OP_ENGINE_PREF[device_type] = {op: list(e) for op, e in op_prefs.items()}


def set_global_engine_pref(global_pref):
    """``{device_type: [engine, ...]}`` replaces the global preferences."""
    for device_type in global_pref:
        _check_device_type(device_type)
    _GLOBAL_ENGINE_PREF.clear()
    _GLOBAL_ENGINE_PREF.update({d: list(e) for d, e in global_pref.items()})


def set_engine_pref(per_op_pref, global_pref):
    set_per_op_engine_pref(per_op_pref)
    set_global_engine_pref(global_pref)


def set_op_engine_pref(op_type, op_pref):
    """``{device_type: [engine, ...]}`` for one op type, other op types kept."""
    for device_type in op_pref:
        _check_op_on_device(op_type, device_type)
    for device_type, engines in op_pref.items():
        _PER_OP_ENGINE_PREF.setdefault(device_type, {})[op_type] = list(engines)


def engine_preferences():
    """``(per_op, global)``: copies of the preferences now in force."""
    per_op = {d: {op: list(e) for op, e in p.items()} for d, p in _PER_OP_ENGINE_PREF.items()}
    return per_op, {d: list(e) for d, e in _GLOBAL_ENGINE_PREF.items()}
