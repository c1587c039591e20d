"""What caffe2rnn says about each operator it registers: the other side of the contract check.

For every registered op type, in the same vocabulary as :mod:`cpp_reader`:

* the schema — from :mod:`caffe2rnn.runtime.registry` (input/output counts, in-place pairs);
* the arguments the implementation reads — read from its Python source with :mod:`ast`: every
  ``args.single(name, default, kind)``, ``args.repeated(...)``, ``args.has(...)``,
  ``args.require(...)``, ``args.value(...)`` in the class, its bases and the module functions they
  call (names built from a helper's parameters, ``name + "_h"``, and loops over constant tuples are
  followed);
* the element types the code checks for — ``float_input`` (float32, float64), ``typed_input(i,
  TYPES, ...)`` and the NumPy types any module constant it uses names;
* the gradient — the registered maker run on a forward op with inputs ``X0, X1, ...``, outputs
  ``Y0, ...`` and gradients ``Y0_grad, ...``, each name mapped back to ``I(i)``, ``O(i)``,
  ``GO(i)``, ``GI(i)``; whether it copies the forward arguments.
"""

import ast
import copy
import functools
import inspect
import re
import sys
import textwrap
from dataclasses import dataclass, field

import numpy as np

import caffe2rnn.operators  # noqa: F401 - registers every operator
from caffe2rnn import eras
from caffe2rnn.operators import gradient_maker as gm
from caffe2rnn.operators.base import Operator
from caffe2rnn.proto import caffe2_pb2
from caffe2rnn.runtime import registry

READS = {"single", "repeated", "has", "require", "value", "net", "has_net"}
KIND_FIELD = {"int": "i", "bool": "i", "float": "f", "str": "s"}
REPEATED_FIELD = {"int": "ints", "bool": "ints", "float": "floats", "str": "strings"}
#: NumPy types → the canonical names of cpp_reader.CANONICAL_TYPE.
NUMPY_TYPE = {
    np.dtype(np.float32): "float",
    np.dtype(np.float64): "double",
    np.dtype(np.float16): "float16",
    np.dtype(np.int32): "int32",
    np.dtype(np.int64): "int64",
    np.dtype(np.int8): "int8",
    np.dtype(np.int16): "int16",
    np.dtype(np.uint8): "uint8",
    np.dtype(np.uint16): "uint16",
    np.dtype(np.bool_): "bool",
    np.dtype(object): "string",
}


@dataclass(frozen=True)
class PyRead:
    name: str
    how: str  # single, repeated, has, any (args.value), net
    kind: str  # int, bool, float, str, "" (has)
    default: object

    @property
    def field(self):
        if self.how == "single":
            return KIND_FIELD.get(self.kind, "?")
        if self.how == "repeated":
            return REPEATED_FIELD.get(self.kind, "?")
        if self.how == "net":
            return "n/s"
        if self.how == "any":
            return "any"
        return ""


@dataclass
class PyContract:
    op_type: str
    cls: type
    num_inputs: tuple
    num_outputs: tuple
    allow_inplace: object
    enforce_inplace: frozenset
    args: dict = field(default_factory=dict)
    unresolved_args: list = field(default_factory=list)
    element_types: frozenset = frozenset()
    gradient: str = ""  # maker, none, should-not, not-implemented, ""
    gradient_ops: list = field(default_factory=list)  # [(type, inputs, outputs)]
    gradient_error: str = ""
    gradient_copies_args: bool = True
    schema: object = None
    era: object = None  # the caffe2rnn Era it was read for


# --- reading the source ---------------------------------------------------------------


@functools.cache
def _source_tree(obj):
    """The parsed source of a class or function (cached: read, never changed)."""
    try:
        return ast.parse(textwrap.dedent(inspect.getsource(obj)))
    except (OSError, TypeError, SyntaxError):
        return None


class _Scanner(ast.NodeVisitor):
    """Collects argument reads and type checks in one function or class,
    following module functions it calls (with constant arguments bound)."""

    def __init__(
        self,
        module,
        reads,
        types,
        unresolved,
        seen,
        local_defs=None,
        cls=None,
        era=None,
        used=None,
    ):
        self.era = era  # the caffe2rnn Era the op runs as: decides era-gated branches
        self.used = {} if used is None else used  # era field -> value: the gates consulted
        self.gates = {}  # local name -> the truth value an era gate gave it
        self.cls = cls  # the operator class: resolves self.<attr> (UniformFill.bound_kind)
        self.module = module
        self.reads = reads
        self.types = types
        self.unresolved = unresolved  # [(enclosing function node, call text)]
        self.seen = seen
        self.env = [{}]
        self.local_defs = {} if local_defs is None else local_defs
        self.function = None
        self.followed = set()  # function nodes scanned with bound parameters
        self.read_aliases = {}  # local name -> ArgumentHelper method it stands for

    def visit_ClassDef(self, node):
        for item in node.body:
            if isinstance(item, ast.FunctionDef):
                self.local_defs[item.name] = item
        self.generic_visit(node)

    def visit_FunctionDef(self, node):
        for item in ast.walk(node):
            if isinstance(item, ast.FunctionDef) and item is not node:
                self.local_defs.setdefault(item.name, item)
        outer, self.function = self.function, node
        self.generic_visit(node)
        self.function = outer

    # string values a node can take (a list), or None
    def strings(self, node):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return [node.value]
        if isinstance(node, ast.Name):
            for scope in reversed(self.env):
                if node.id in scope:
                    return scope[node.id]
            value = getattr(self.module, node.id, None)
            if isinstance(value, str):
                return [value]
            if isinstance(value, (tuple, list, frozenset)) and all(
                isinstance(v, str) for v in value
            ):
                return list(value)
            return None
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            left, right = self.strings(node.left), self.strings(node.right)
            if left is None or right is None:
                return None
            return [a + b for a in left for b in right]
        if isinstance(node, (ast.Tuple, ast.List)):
            out = []
            for elt in node.elts:
                values = self.strings(elt)
                if values is None:
                    return None
                out += values
            return out
        if isinstance(node, ast.Attribute):
            value = _resolve_attr(self.module, node)
            if isinstance(value, str):
                return [value]
        return None

    def _bind_loop(self, target, iter_node):
        values = self.strings(iter_node)
        if isinstance(target, ast.Name) and values is not None:
            self.env[-1][target.id] = values

    def visit_For(self, node):
        self._bind_loop(node.target, node.iter)
        self.generic_visit(node)

    def _comprehension(self, node):
        self.env.append({})
        for gen in node.generators:
            self._bind_loop(gen.target, gen.iter)
        self.generic_visit(node)
        self.env.pop()

    visit_ListComp = visit_GeneratorExp = visit_SetComp = visit_DictComp = _comprehension

    # --- era gates: ``if eras.current().flatten_axis:``, ``self.era is None or
    # eras.get(self.era).concat_add_axis`` decide which branch runs for the era checked
    def gate(self, node):
        """True/False when ``node`` is decided by the era checked, else None."""
        if self.era is None:
            return None
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Call)
            and isinstance(node.value.func, ast.Attribute)
            and node.value.func.attr in ("get", "current")
            and isinstance(node.value.func.value, ast.Name)
            and node.value.func.value.id in ("eras", "_eras")
        ):
            value = getattr(self.era, node.attr, None)
            self.used[node.attr] = value
            return bool(value) if isinstance(value, (bool, tuple)) else None
        if (
            isinstance(node, ast.Compare)
            and len(node.ops) == 1
            and isinstance(node.ops[0], (ast.Is, ast.IsNot))
            and isinstance(node.left, ast.Attribute)
            and node.left.attr == "era"
            and isinstance(node.comparators[0], ast.Constant)
            and node.comparators[0].value is None
        ):  # an op checked for an era has one named: ``self.era is None`` is False
            return isinstance(node.ops[0], ast.IsNot)
        if (
            isinstance(node, ast.Compare)
            and len(node.ops) == 1
            and isinstance(node.ops[0], (ast.Eq, ast.NotEq))
            and isinstance(node.left, ast.Attribute)
            and node.left.attr == "op_type"
            and isinstance(node.left.value, ast.Name)
            and node.left.value.id == "self"
            and isinstance(node.comparators[0], ast.Constant)
            and self.cls is not None
        ):  # ``self.op_type == "GivenTensorFill"``: the class scanned says
            same = self.cls.op_type == node.comparators[0].value
            return same if isinstance(node.ops[0], ast.Eq) else not same
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            inner = self.gate(node.operand)
            return None if inner is None else not inner
        if isinstance(node, ast.BoolOp):
            values = [self.gate(v) for v in node.values]
            decisive = isinstance(node.op, ast.Or)  # the value that decides an or / an and
            if decisive in values:
                return decisive
            if all(v is not None for v in values):
                return not decisive
            return None
        if isinstance(node, ast.Name):
            return self.gates.get(node.id)
        return None

    def visit_BoolOp(self, node):
        """``a and b``: b runs only if a did not decide (short-circuit), likewise ``or``."""
        stop = isinstance(node.op, ast.Or)  # the value that ends an or / an and
        for value in node.values:
            self.visit(value)
            if self.gate(value) is stop:
                break

    def visit_If(self, node):
        decided = self.gate(node.test)
        self.visit(node.test)
        for stmt in node.body if decided is not False else []:
            self.visit(stmt)
        for stmt in node.orelse if decided is not True else []:
            self.visit(stmt)

    def visit_IfExp(self, node):
        decided = self.gate(node.test)
        self.visit(node.test)
        if decided is not False:
            self.visit(node.body)
        if decided is not True:
            self.visit(node.orelse)

    def visit_Assign(self, node):
        value = node.value
        if len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            decided = self.gate(value)
            if decided is not None:
                self.gates[node.targets[0].id] = decided
        if (
            len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and isinstance(value, ast.Attribute)
            and value.attr in READS
            and _is_args(value.value)
        ):  # single = self.args.single: later single("db", ...) calls are reads
            self.read_aliases[node.targets[0].id] = value.attr
        if len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            values = self.strings(node.value)
            if values is not None:
                self.env[-1][node.targets[0].id] = values
        self.generic_visit(node)

    def visit_Call(self, node):
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in READS and _is_args(func.value):
            self._read(func.attr, node)
        elif isinstance(func, ast.Name) and func.id in self.read_aliases:
            self._read(self.read_aliases[func.id], node)
        elif isinstance(func, ast.Attribute) and func.attr == "float_input":
            self.types.update(("float", "double"))
        elif isinstance(func, ast.Attribute) and func.attr == "typed_input" and len(node.args) > 1:
            self.types.update(_types_of(self.module, node.args[1]))
        elif isinstance(func, ast.Name) and func.id in self.local_defs:
            self._follow_local(self.local_defs[func.id], node, skip_self=False)
        elif (
            isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Name)
            and func.value.id == "self"
            and func.attr in self.local_defs
        ):
            self._follow_local(self.local_defs[func.attr], node, skip_self=True)
        elif isinstance(func, ast.Name):
            target = getattr(self.module, func.id, None)
            if inspect.isfunction(target) and target.__module__.startswith("caffe2rnn"):
                self._follow(target, node)
            elif inspect.isclass(target) and target.__module__.startswith("caffe2rnn"):
                self._follow_class(target)  # ConvPoolArguments(self): its reads are the op's
        self.generic_visit(node)

    def visit_Name(self, node):
        """A module table of functions the class dispatches through
        (``_POLICIES[policy](self)``): each function's reads are the op's."""
        value = getattr(self.module, node.id, None)
        if isinstance(value, dict) and value and all(inspect.isfunction(v) for v in value.values()):
            for function in value.values():
                if function.__module__.startswith("caffe2rnn") and (function, ()) not in self.seen:
                    self.seen.add((function, ()))
                    tree = _source_tree(function)
                    if tree is not None:
                        module = sys.modules[function.__module__]
                        inner = _Scanner(
                            module,
                            self.reads,
                            self.types,
                            self.unresolved,
                            self.seen,
                            era=self.era,
                            used=self.used,
                        )
                        inner.visit(tree)
                        self.followed |= inner.followed

    def _follow_class(self, cls):
        if (cls, ()) in self.seen or issubclass(cls, Operator):
            return
        self.seen.add((cls, ()))
        tree = _source_tree(cls)
        if tree is None:
            return
        module = sys.modules[cls.__module__]
        inner = _Scanner(
            module, self.reads, self.types, self.unresolved, self.seen, era=self.era, used=self.used
        )
        inner.visit(tree)
        self.followed |= inner.followed

    def _bindings(self, params, call):
        scope = {}
        for name, arg in zip(params, call.args):
            values = self.strings(arg)
            if values is not None:
                scope[name] = values
        for kw in call.keywords:
            values = self.strings(kw.value) if kw.arg else None
            if values is not None:
                scope[kw.arg] = values
        return scope

    def _follow_local(self, definition, call, skip_self):
        params = [a.arg for a in definition.args.args][1 if skip_self else 0 :]
        scope = self._bindings(params, call)
        if not scope:
            return
        key = (id(definition), tuple(sorted((k, tuple(v)) for k, v in scope.items())))
        if key in self.seen:
            return
        self.seen.add(key)
        self.followed.add(definition)
        self.env.append(scope)
        outer, self.function = self.function, definition
        for stmt in definition.body:
            self.visit(stmt)
        self.function = outer
        self.env.pop()

    def visit_Compare(self, node):
        """``x.dtype in TYPES``, ``x.dtype != np.float32``: a type check."""
        sides = [node.left] + list(node.comparators)
        if any(isinstance(s, ast.Attribute) and s.attr == "dtype" for s in sides):
            for side in sides:
                if not (isinstance(side, ast.Attribute) and side.attr == "dtype"):
                    self.types.update(_types_of(self.module, side))
        self.generic_visit(node)

    def _follow(self, function, call):
        tree = _source_tree(function)
        if tree is None or not tree.body:
            return
        definition = tree.body[0]
        params = [a.arg for a in definition.args.args]
        scope = self._bindings(params, call)
        key = (function, tuple(sorted((k, tuple(v)) for k, v in scope.items())))
        if key in self.seen:
            return
        self.seen.add(key)
        module = sys.modules[function.__module__]
        inner = _Scanner(
            module, self.reads, self.types, self.unresolved, self.seen, era=self.era, used=self.used
        )
        inner.env = [scope]
        inner.visit(definition)
        self.followed |= inner.followed

    def _kind(self, node):
        """The ``kind`` of a read: a name (``float``), or ``self.<attr>`` of the class."""
        if isinstance(node, ast.Name):
            return node.id
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id == "self"
            and self.cls is not None
        ):
            value = getattr(self.cls, node.attr, None)
            if isinstance(value, type):
                return value.__name__
        if node is None:
            return "int"  # ArgumentHelper's default kind
        return "?"  # computed (``int if kind is bool else kind``): any field

    def _read(self, method, node):
        names = self.strings(node.args[0]) if node.args else None
        if names is None:
            self.unresolved.append((self.function, ast.unparse(node)))
            return
        positional = list(node.args[1:])
        keywords = {kw.arg: kw.value for kw in node.keywords}
        default_node = keywords.get("default", positional[0] if positional else None)
        kind_node = keywords.get("kind", positional[1] if len(positional) > 1 else None)
        kind = self._kind(kind_node)
        if method in ("has", "has_net"):
            how, kind, default = "has", "", None
        elif method == "value":
            how, kind, default = "any", "", _literal(default_node)
        elif method == "net":
            how, kind, default = "net", "", None
        elif method == "require":
            how, default = "single", None
            kind = self._kind(node.args[1] if len(node.args) > 1 else kind_node)
        else:
            how, default = method, _literal(default_node)
        for name in names:
            read = PyRead(name, how, kind, default)
            bucket = self.reads.setdefault(name, [])
            if read not in bucket:
                bucket.append(read)


def _is_args(node):
    """``self.args``, ``args``, ``op.args``, ``helper``: an ArgumentHelper."""
    if isinstance(node, ast.Attribute):
        return node.attr == "args"
    return isinstance(node, ast.Name) and node.id in ("args", "helper")


def _literal(node):
    if node is None:
        return None
    try:
        return ast.literal_eval(node)
    except (ValueError, SyntaxError, TypeError):
        return "<%s>" % ast.unparse(node)


def _resolve_attr(module, node):
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    value = getattr(module, node.id, None)
    for part in reversed(parts):
        value = getattr(value, part, None)
    return value


def _types_of_value(values):
    out = set()
    for v in values:
        if isinstance(v, np.dtype):
            dtype = v
        elif isinstance(v, type) and issubclass(v, np.generic):
            try:
                dtype = np.dtype(v)
            except TypeError:  # an abstract type (np.integer)
                continue
        else:
            continue
        if dtype in NUMPY_TYPE:
            out.add(NUMPY_TYPE[dtype])
    return out


def _types_of(module, node):
    if isinstance(node, (ast.Tuple, ast.List)):
        out = set()
        for elt in node.elts:
            if isinstance(elt, ast.Attribute):
                out |= _types_of_value([_resolve_attr(module, elt)])
        return out
    if isinstance(node, ast.Name):
        value = getattr(module, node.id, None)
        if isinstance(value, (tuple, list, frozenset, set)):
            return _types_of_value(value)
    if isinstance(node, ast.Attribute):
        value = _resolve_attr(module, node)
        if isinstance(value, (tuple, list, frozenset, set)):
            return _types_of_value(value)
        return _types_of_value([value])
    return set()


def _without_overridden(tree, overridden):
    """The class ``tree`` without the methods a subclass overrides (unless the
    override calls ``super().<name>``: then the base's code runs too)."""
    body = tree.body[0].body if tree.body and isinstance(tree.body[0], ast.ClassDef) else []
    keep = [
        item
        for item in body
        if not (isinstance(item, ast.FunctionDef) and overridden.get(item.name) is False)
    ]
    if not body:
        return tree
    cls = copy.copy(tree.body[0])
    cls.body = keep or [ast.Pass()]
    return ast.Module(body=[cls], type_ignores=[])


#: class -> [(era gates consulted {field: value}, era is None, result)]: a class is
#: scanned again only for an era whose gates it consulted differ
_SCANS = {}


def scan_class(cls, era=None):
    """``(reads, types, unresolved)`` of an operator class and its caffe2rnn bases
    (a base's method a subclass overrides without calling ``super()`` is left out),
    as it runs in ``era`` (None: every era-gated branch)."""
    for used, no_era, result in _SCANS.get(cls, ()):
        if (era is None) == no_era and all(
            getattr(era, name, None) == value for name, value in used.items()
        ):
            return result
    used = {}
    result = _scan_class(cls, era, used)
    _SCANS.setdefault(cls, []).append((used, era is None, result))
    return result


def _scan_class(cls, era, used):
    reads, types, unresolved, seen, followed = {}, set(), [], set(), set()
    overridden = {}  # method name -> True if the override calls super().<name>
    for klass in cls.__mro__:
        if klass in (Operator, object) or not klass.__module__.startswith("caffe2rnn"):
            continue
        tree = _source_tree(klass)
        if tree is None:
            continue
        tree = _without_overridden(tree, overridden)
        for item in tree.body[0].body if isinstance(tree.body[0], ast.ClassDef) else []:
            if isinstance(item, ast.FunctionDef) and item.name not in overridden:
                calls_super = "super()." + item.name in ast.unparse(item)
                overridden[item.name] = calls_super
            elif isinstance(item, ast.FunctionDef) and overridden[item.name]:
                overridden[item.name] = "super()." + item.name in ast.unparse(item)
        scanner = _Scanner(
            sys.modules[klass.__module__],
            reads,
            types,
            unresolved,
            seen,
            cls=cls,
            era=era,
            used=used,
        )
        scanner.visit(tree)
        followed |= scanner.followed
    texts = [text for function, text in unresolved if function not in followed]
    return reads, frozenset(types), texts


# --- gradients ------------------------------------------------------------------------


_NAMES = re.compile(r"(X|Y)(\d+)(_grad)?(?!\d)")


def _symbol(name, n_in, n_out):
    """A blob name of the probe as the C++ would write it: ``X0`` → ``I(0)``,
    ``X0_grad`` → ``GI(0)``, ``Y1_grad`` → ``GO(1)``; inside a longer name,
    ``_X0_grad_dims`` → ``_{GI(0)}_dims``."""

    def one(m):
        kind = {"X": "I", "Y": "O"}[m.group(1)]
        if m.group(3):
            kind = "G" + kind
        return "{%s(%s)}" % (kind, m.group(2))

    text = _NAMES.sub(one, name)
    m = re.fullmatch(r"\{([^{}]*)\}", text)
    return m.group(1) if m else text


def gradient_of(op_type, n_in, n_out, args=(), era=None):
    """``(ops, error, copies_args)``: the gradient ops caffe2rnn's maker writes
    for ``op_type`` with ``n_in`` inputs and ``n_out`` outputs, as
    ``(type, [inputs], [outputs])`` in I/O/GO/GI symbols."""
    op = caffe2_pb2.OperatorDef()
    op.type = op_type
    op.input.extend("X%d" % i for i in range(n_in))
    op.output.extend("Y%d" % i for i in range(n_out))
    probe = op.arg.add()
    probe.name, probe.i = "contract_probe", 1
    for arg in args:
        op.arg.add().CopyFrom(arg)
    try:
        with eras.use(era or eras.current()):
            ops, _ = gm.get_gradient_for_op(op, ["Y%d_grad" % i for i in range(n_out)])
    except Exception as exc:  # noqa: BLE001 - recorded, compared as text
        return [], "%s: %s" % (type(exc).__name__, exc), True
    out = [
        (
            g.type,
            [_symbol(x, n_in, n_out) for x in g.input],
            [_symbol(y, n_in, n_out) for y in g.output],
        )
        for g in ops
    ]
    copies = all(any(a.name == "contract_probe" for a in g.arg) for g in ops) if ops else True
    return out, "", copies


def gradient_kind(op_type, era=None):
    if not registry.has_gradient_maker(op_type):
        return ""
    maker = registry.gradient_maker(op_type, era)
    if maker is gm.NotRegistered:
        return ""
    if maker is gm.NoGradient or (inspect.isclass(maker) and issubclass(maker, gm.NoGradient)):
        return "none"
    if inspect.isclass(maker) and issubclass(maker, gm.ShouldNotDoGradient):
        return "should-not"
    if inspect.isclass(maker) and issubclass(maker, gm.GradientNotImplementedYet):
        return "not-implemented"
    return "maker"


# --- all of it ------------------------------------------------------------------------


def caffe2rnn_era(name):
    """The caffe2rnn :class:`~caffe2rnn.eras.Era` an era of the table runs as:
    the era of that name, or today's (E6) for an era caffe2rnn does not have."""
    return eras.ERAS.get(name) or eras.get("E6")


def contract(op_type, era=None):
    """caffe2rnn's contract of ``op_type`` as it runs in ``era`` (a name or an
    Era; None: every era-gated branch counts)."""
    era = (
        None if era is None else eras.get(era) if isinstance(era, eras.Era) else caffe2rnn_era(era)
    )
    cls = registry.operator_class(op_type, era)
    schema = cls.schema  # an era's variant may have its own
    reads, types, unresolved = scan_class(cls, era)
    return PyContract(
        op_type,
        cls,
        tuple(schema.inputs),
        tuple(schema.outputs),
        schema.inplace,
        schema.enforce_inplace,
        reads,
        unresolved,
        types,
        gradient_kind(op_type, era),
        schema=schema,
        era=era,
    )


def all_contracts(era=None):
    """The contracts of caffe2rnn's operators (not of ops a test registered)."""
    return {
        op: contract(op, era)
        for op in registry.registered_operators()
        if registry.operator_class(op).__module__.startswith("caffe2rnn.")
    }
