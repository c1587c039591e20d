"""A small reader of Caffe2's C++: what each CPU operator declares, at one commit.

Caffe2 said what an operator *is* in a handful of stylised C++ forms, and this
module reads exactly those, with regular expressions and a bracket matcher, no
compiler:

* ``OPERATOR_SCHEMA(Name).NumInputs(1, 2).NumOutputs(1).AllowInplace({{0, 0}})``
  — the schema (caffe2/core/operator_schema.h);
* ``REGISTER_CPU_OPERATOR(Name, FooOp<float, CPUContext>)`` — the class that
  runs it on the CPU, and with it the element types it was instantiated for
  (the ``float`` there, or a ``DispatchHelper<TensorTypes<...>>`` inside);
* ``GetSingleArgument<T>("name", default)``, ``GetRepeatedArgument<T>("name")``,
  ``HasArgument("name")``, ``OP_SINGLE_ARG(T, "name", member, default)`` in the
  class, its out-of-line methods and its base classes — the arguments it reads;
* ``REGISTER_GRADIENT(Name, GetFooGradient)`` and the ``SingleGradientDef(...)``
  / ``CreateOperatorDef(...)`` calls of that maker — its gradient operators;
  ``NO_GRADIENT`` / ``SHOULD_NOT_DO_GRADIENT`` / ``GRADIENT_NOT_IMPLEMENTED_YET``.

Function-like macros that produce any of these (``REGISTER_SEGMENT_DEF``,
``EIGEN_FUNCTOR``, ``OP_SINGLE_ARG``...) are expanded first, as the
preprocessor would; names built by string concatenation from a template's
static members (``string(Def::basename) + Def::OpDef::name``) are evaluated by
looking the members up. What the reader cannot resolve it says (an
``unresolved`` note on the contract) rather than guessing.

Nothing here is Caffe2's code: the checkout is read where it lies
(``CAFFE2_SOURCE*``), and only facts (names, counts, types, defaults) are kept.
"""

import os
import re
from dataclasses import dataclass, field
from typing import Optional

# --- text utilities ------------------------------------------------------------------

_STRING_OR_COMMENT = re.compile(
    r'R"(?P<delim>[^(\s]*)\((?:.|\n)*?\)(?P=delim)"'  # raw string literal
    r'|"(?:\\.|[^"\\\n])*"'  # string literal
    r"|'(?:\\.|[^'\\\n])*'"  # char literal
    r"|//[^\n]*"  # line comment
    r"|/\*(?:.|\n)*?\*/"  # block comment
)


def strip_comments(text):
    """``text`` without comments (each replaced by a space, newlines kept); raw
    string literals become ``""`` (they hold only documentation)."""

    def keep(match):
        s = match.group(0)
        if s.startswith("//"):
            return " "
        if s.startswith("/*"):
            return " " + "\n" * s.count("\n")
        if s.startswith('R"'):
            return '""'
        return s

    return _STRING_OR_COMMENT.sub(keep, text)


_SKIP = re.compile(r'"(?:\\.|[^"\\\n])*"|' r"'(?:\\.|[^'\\\n])*'")
_PAIRS = {"(": ")", "[": "]", "{": "}"}


def matching(text, start):
    """The index just past the bracket that closes ``text[start]`` ("(", "[" or
    "{"); string and char literals are skipped. ``len(text)`` if unclosed."""
    stack = [_PAIRS[text[start]]]
    i = start + 1
    n = len(text)
    while i < n:
        c = text[i]
        if c == '"' or c == "'":
            m = _SKIP.match(text, i)
            i = m.end() if m else i + 1
            continue
        if c in _PAIRS:
            stack.append(_PAIRS[c])
        elif c in ")]}":
            if c != stack[-1]:
                return n  # unbalanced: give up on this construct
            stack.pop()
            if not stack:
                return i + 1
        i += 1
    return n


def split_top(text, sep=",", angles=False):
    """Split ``text`` at ``sep`` outside brackets (and outside ``<...>`` when
    ``angles``: template argument lists)."""
    parts, depth, angle, current = [], 0, 0, []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == '"' or c == "'":
            m = _SKIP.match(text, i)
            end = m.end() if m else i + 1
            current.append(text[i:end])
            i = end
            continue
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif angles and c == "<" and depth == 0:
            angle += 1
        elif angles and c == ">" and depth == 0 and angle:
            angle -= 1
        if c == sep and depth == 0 and angle == 0:
            parts.append("".join(current).strip())
            current = []
        else:
            current.append(c)
        i += 1
    tail = "".join(current).strip()
    if tail or parts:
        parts.append(tail)
    return parts


def call_args(text, open_paren, angles=False):
    """The top-level arguments of the call whose "(" is at ``open_paren``, and
    the index just past its ")" (``angles``: commas inside ``<...>`` too)."""
    end = matching(text, open_paren)
    return split_top(text[open_paren + 1 : end - 1], angles=angles), end


# --- macros ---------------------------------------------------------------------------

_DEFINE = re.compile(r"^[ \t]*#[ \t]*define[ \t]+(\w+)\(([^)]*)\)(.*)$", re.M)
#: Macros that are the forms this reader reads: never expanded.
TERMINAL_MACROS = frozenset(
    [
        "REGISTER_CPU_OPERATOR",
        "REGISTER_CPU_OPERATOR_STR",
        "REGISTER_CPU_OPERATOR_WITH_ENGINE",
        "REGISTER_CPU_OPERATOR_CREATOR",
        "OPERATOR_SCHEMA",
        "OPERATOR_SCHEMA_STR",
        "REGISTER_GRADIENT",
        "REGISTER_GRADIENT_STR",
        "NO_GRADIENT",
        "SHOULD_NOT_DO_GRADIENT",
        "GRADIENT_NOT_IMPLEMENTED_YET",
        "REGISTER_CUDA_OPERATOR",
        "REGISTER_CUDA_OPERATOR_STR",
        "REGISTER_CUDA_OPERATOR_WITH_ENGINE",
        "REGISTER_CUDNN_OPERATOR",
    ]
)
#: A macro is expanded only if its body holds one of these (so the thousands of
#: CAFFE_ENFORCE-like macros are left alone).
_INTERESTING = re.compile(
    r"REGISTER_|OPERATOR_SCHEMA|GRADIENT|Get(?:Single|Repeated)Argument|HasArgument|\bclass\b|\bstruct\b"
    r"|\bconst\s+char\s*\*"
)


@dataclass
class Macro:
    name: str
    params: list
    body: str

    def expand(self, args):
        params = [p.strip() for p in self.params if p.strip()]
        values = {}
        for k, p in enumerate(params):
            if p == "...":
                values["__VA_ARGS__"] = ", ".join(args[k:])
            else:
                values[p] = args[k] if k < len(args) else ""
        body = re.sub(r"\s*##\s*", "##", self.body)

        def substitute(match):
            token = match.group(0)
            if token == "##":
                return token
            if token.startswith("#"):
                name = token[1:].strip()
                return '"%s"' % values[name] if name in values else token
            return values.get(token, token)

        return re.sub(r"#\s*\w+|\b\w+\b|##", substitute, body).replace("##", "")


def read_macros(text):
    """The function-like macros ``#define``d in ``text`` (continuations joined)."""
    macros = {}
    for m in _DEFINE.finditer(text):
        if m.group(1) not in TERMINAL_MACROS and _INTERESTING.search(m.group(3)):
            macros[m.group(1)] = Macro(m.group(1), m.group(2).split(","), m.group(3))
    return macros


def expand_macros(text, macros, rounds=4):
    """``text`` with every invocation of ``macros`` expanded (nested ones too)."""
    if not macros:
        return text
    pattern = re.compile(r"\b(%s)\s*\(" % "|".join(map(re.escape, macros)))
    for _ in range(rounds):
        out, pos, changed = [], 0, False
        for m in pattern.finditer(text):
            if m.start() < pos:
                continue
            line_start = text.rfind("\n", 0, m.start()) + 1
            if re.match(r"[ \t]*#[ \t]*define\b", text[line_start : m.start()]):
                continue  # the definition itself
            args, end = call_args(text, m.end() - 1)
            out.append(text[pos : m.start()])
            out.append(" " + macros[m.group(1)].expand(args) + " ")
            pos, changed = end, True
        out.append(text[pos:])
        text = "".join(out)
        if not changed:
            break
    return text


# --- the model ------------------------------------------------------------------------


@dataclass(frozen=True)
class ArgRead:
    """One argument read: ``GetSingleArgument<float>("alpha", 0.01)``."""

    name: str
    how: str  # "single", "repeated" or "has"
    ctype: str  # the C++ type ("" for HasArgument)
    default: Optional[str]  # the default expression's text, or None

    @property
    def field(self):
        """The ``caffe2.Argument`` field the C++ reads (proto_utils.cc): ``f``,
        ``i``, ``s``, ``n`` or their repeated forms; ``""`` for ``has``."""
        if self.how == "has":
            return ""
        base = _FIELD_OF_TYPE.get(self.ctype, "?")
        if self.how == "repeated":
            return {"f": "floats", "i": "ints", "s": "strings", "n": "nets"}.get(base, "?")
        return base


_FIELD_OF_TYPE = {
    "float": "f",
    "double": "f",
    "bool": "i",
    "int": "i",
    "int8_t": "i",
    "int16_t": "i",
    "int32_t": "i",
    "int64_t": "i",
    "long": "i",
    "uint8_t": "i",
    "uint16_t": "i",
    "size_t": "i",
    "TIndex": "i",
    "string": "s",
    "std::string": "s",
    "NetDef": "n",
}


@dataclass
class GradientCall:
    """One gradient op a maker writes: ``SingleGradientDef("FooGradient", "",
    {I(0), GO(0)}, {GI(0)})`` → type, inputs, outputs (each an expression such
    as ``I(0)``), the names of any arguments it adds."""

    op_type: str
    inputs: list
    outputs: list
    args: list


@dataclass
class Contract:
    """What one era's C++ says about one operator type."""

    op_type: str
    file: str = ""
    #: ``(min, max)`` (``max`` None: no limit) or a text the reader could not
    #: reduce to a range (a function, a set).
    num_inputs: object = None
    num_outputs: object = None
    allow_inplace: object = ()  # frozenset of (i, o), "one-to-one", "any" or a text
    enforce_inplace: object = ()
    has_schema: bool = False
    #: the schema's calls as written: [(method, [argument texts])]
    schema_calls: list = field(default_factory=list)
    registered: bool = False
    cpp_class: str = ""
    element_types: frozenset = frozenset()
    args: dict = field(default_factory=dict)  # name -> list of ArgRead
    #: "maker" (REGISTER_GRADIENT), "none" (NO_GRADIENT), "should-not"
    #: (SHOULD_NOT_DO_GRADIENT), "not-implemented", or "" (nothing registered).
    gradient: str = ""
    gradient_maker: str = ""
    gradient_calls: list = field(default_factory=list)
    gradient_copies_args: bool = True
    #: the maker has branches (if/for): its calls are alternatives, not a list
    gradient_conditional: bool = False
    unresolved: list = field(default_factory=list)


# --- classes --------------------------------------------------------------------------

_CLASS = re.compile(
    r"(?:template\s*<(?P<tparams>[^{};]*?)>\s*)?\b(?:class|struct)\s+(?:CAFFE2_API\s+)?"
    r"(?P<name>\w+)\s*(?P<spec><[^{};]*?>)?\s*(?:final\s*)?(?::(?!:)(?P<bases>[^{;]*))?\{"
)


@dataclass
class ClassDef:
    name: str
    tparams: list  # template parameter names
    bases: list  # base class expressions
    body: str
    file: str
    tparam_defaults: list = field(default_factory=list)  # [(name, default or None)]


def _template_param_names(text):
    return [name for name, _ in _template_params(text)]


def _template_params(text):
    """``typename T, bool B = true`` → ``[("T", None), ("B", "true")]``."""
    params = []
    for part in split_top(text or "", angles=True):
        head, _, default = part.partition("=")
        head = head.strip()
        m = re.search(r"(\w+)\s*$", head)
        if m and head not in ("", "typename", "class"):
            params.append((m.group(1), default.strip() or None))
    return params


def template_mapping(cls, expr):
    """Template parameter → argument for ``expr`` naming ``cls`` (defaults
    filled in, themselves substituted)."""
    args = template_args(expr)
    mapping = {}
    for k, (name, default) in enumerate(cls.tparam_defaults):
        if k < len(args):
            mapping[name] = args[k]
        elif default is not None:
            mapping[name] = substitute(default, mapping)
    return mapping


def _base_names(bases):
    out = []
    for part in split_top(bases or "", angles=True):
        part = re.sub(r"\b(public|protected|private|virtual)\b", "", part).strip()
        if part:
            out.append(part)
    return out


def template_name(expr):
    """``caffe2::FooOp<float, CPUContext>`` → ``FooOp``."""
    expr = expr.strip()
    m = re.match(r"(?:typename\s+)?((?:\w+::)*)(\w+)", expr)
    return m.group(2) if m else expr


def template_args(expr):
    """``FooOp<float, Bar<int>>`` → ``["float", "Bar<int>"]``."""
    i = expr.find("<")
    if i < 0:
        return []
    depth = 0
    for j in range(i, len(expr)):
        if expr[j] == "<":
            depth += 1
        elif expr[j] == ">":
            depth -= 1
            if depth == 0:
                return split_top(expr[i + 1 : j], angles=True)
    return split_top(expr[i + 1 :], angles=True)


# --- the reader -----------------------------------------------------------------------

_EXCLUDED_PARTS = ("gpu", "cuda", "cudnn", "_test.", "/test/", "/mkl/", "/mpi/", "/python/mkl")

_ARG_CALL = re.compile(
    r"\b(GetSingleArgument|GetRepeatedArgument|HasArgument|HasSingleArgumentOfType)\s*"
    r"(?:<(?P<t>[^<>()]*(?:<[^<>()]*>)?[^<>()]*)>)?\s*\("
)
_TYPE_WORDS = (
    "float",
    "double",
    "int",
    "int32_t",
    "int64_t",
    "long",
    "bool",
    "uint8_t",
    "int8_t",
    "int16_t",
    "uint16_t",
    "string",
    "std::string",
    "float16",
    "char",
    "TIndex",
)
_TYPE_RE = re.compile(r"(?<![\w:])(%s)(?![\w])" % "|".join(re.escape(t) for t in _TYPE_WORDS))
#: C++ spellings → one canonical name per element type.
CANONICAL_TYPE = {
    "float": "float",
    "double": "double",
    "int": "int32",
    "int32_t": "int32",
    "int64_t": "int64",
    "long": "int64",
    "bool": "bool",
    "uint8_t": "uint8",
    "int8_t": "int8",
    "int16_t": "int16",
    "uint16_t": "uint16",
    "string": "string",
    "std::string": "string",
    "float16": "float16",
    "char": "int8",
    "TIndex": "int64",
}


class CppSource:
    """One era's C++ (the folder holding ``caffe2/``), read once."""

    def __init__(self, root):
        self.root = root
        self.files = {}  # relative path -> comment-free, macro-expanded text
        self.classes = {}  # name -> [ClassDef]
        raw = {}
        for folder, _, names in os.walk(os.path.join(root, "caffe2")):
            for name in names:
                if not name.endswith((".h", ".cc", ".cpp")):
                    continue
                path = os.path.join(folder, name)
                rel = os.path.relpath(path, root).replace(os.sep, "/")
                if any(part in "/" + rel.lower() for part in _EXCLUDED_PARTS):
                    continue
                with open(path, encoding="utf-8", errors="replace") as f:
                    raw[rel] = strip_comments(f.read().replace("\\\n", " "))
        global_macros = {}
        for rel, text in sorted(raw.items()):
            if rel.endswith(".h"):
                global_macros.update(read_macros(text))
        for rel, text in raw.items():
            macros = dict(global_macros)
            macros.update(read_macros(text))
            self.files[rel] = expand_macros(text, macros)
        self._index_classes()
        self._methods = self._index_methods()

    # --- classes and their code ---------------------------------------------------
    _ALIAS = re.compile(
        r"template\s*<(?P<tparams>[^{};]*?)>\s*using\s+(?P<name>\w+)\s*=\s*(?P<expr>[^;]+);"
    )

    def _index_classes(self):
        """Classes and structs, and ``template <...> using Name = Expr;`` aliases
        (a class whose only base is the aliased expression)."""
        for rel, text in self.files.items():
            for m in self._ALIAS.finditer(text):
                self.classes.setdefault(m.group("name"), []).append(
                    ClassDef(
                        m.group("name"),
                        _template_param_names(m.group("tparams")),
                        [re.sub(r"\btypename\s+|\btemplate\s+", "", m.group("expr")).strip()],
                        "",
                        rel,
                        _template_params(m.group("tparams")),
                    )
                )
            for m in _CLASS.finditer(text):
                brace = m.end() - 1
                end = matching(text, brace)
                self.classes.setdefault(m.group("name"), []).append(
                    ClassDef(
                        m.group("name"),
                        _template_param_names(m.group("tparams")),
                        _base_names(m.group("bases")),
                        text[brace:end],
                        rel,
                        _template_params(m.group("tparams")),
                    )
                )

    _METHOD = re.compile(r"\b(\w+)\s*(<(?:[^<>{};()]|<[^<>{};()]*>)*>)?\s*::\s*~?\w+\s*\(")

    def _index_methods(self):
        """Out-of-line member definitions, by class name: ``Foo<T>::Bar(...) {...}``."""
        methods = {}
        for text in self.files.values():
            for m in self._METHOD.finditer(text):
                cls = m.group(1)
                if cls not in self.classes:
                    continue
                _, after = call_args(text, m.end() - 1)
                k = after
                # skip qualifiers and a constructor's initializer list up to "{"
                while k < len(text) and text[k] not in "{;":
                    if text[k] == "(":
                        k = matching(text, k)
                        continue
                    k += 1
                if k < len(text) and text[k] == "{":
                    targs = template_args(m.group(2)) if m.group(2) else None
                    methods.setdefault(cls, []).append((targs, text[m.start() : matching(text, k)]))
        return methods

    def methods_of(self, cls, expr):
        """The out-of-line methods of ``cls`` that apply to ``expr``: generic
        ones (``Foo<T, Context>::``) and the specializations whose arguments
        are ``expr``'s (``Foo<float, CPUContext, LpPool>::`` only for LpPool)."""
        wanted = [_normal(a) for a in template_args(expr)]
        out = []
        for targs, text in self._methods.get(cls.name, []):
            if targs is None:
                out.append(text)
                continue
            if all(
                _normal(a) in cls.tparams or (k < len(wanted) and _normal(a) == wanted[k])
                for k, a in enumerate(targs)
            ):
                out.append(text)
        return out

    def find_class(self, name, near_file=""):
        """The definition of class ``name`` (the one in ``near_file`` or its
        header first)."""
        candidates = self.classes.get(name, [])
        if not candidates:
            return None
        stem = near_file.rsplit(".", 1)[0]
        for c in candidates:
            if c.file == near_file:
                return c
        for c in candidates:
            if c.file.rsplit(".", 1)[0] == stem:
                return c
        with_code = [c for c in candidates if len(c.body) > 2]
        return (with_code or candidates)[0]

    _STOP_BASES = frozenset(["Operator", "OperatorBase", "GradientMakerBase"])

    def class_code(self, expr, near_file="", _seen=None):
        """All code of the class ``expr`` names: its body, its out-of-line
        methods and (recursively) its bases' — with its template parameters
        replaced by ``expr``'s arguments."""
        _seen = set() if _seen is None else _seen
        name = template_name(expr)
        if name in _seen or name in self._STOP_BASES:
            return ""
        _seen.add(name)
        cls = self.find_class(name, near_file)
        if cls is None:
            return ""
        code = cls.body + "\n" + "\n".join(self.methods_of(cls, expr))
        mapping = template_mapping(cls, expr)
        code = fold_ternaries(substitute(code, mapping))
        code = self._named_constants(code)
        # helper structs built from the operator (FtrlParams(this), PowFunctor(op)) that
        # read its arguments through op-> / op.
        for helper in sorted(set(re.findall(r"\b([A-Z]\w+)\b", code)) - _seen):
            found = self.find_class(helper, cls.file)
            if found is not None and re.search(
                r"\bop\s*(?:->|\.)\s*(?:template\s+)?(?:GetSingleArgument|GetRepeatedArgument|HasArgument)",
                found.body,
            ):
                _seen.add(helper)
                code += "\n" + self._named_constants(found.body)
        for base in cls.bases:
            code += "\n" + self.class_code(substitute(base, mapping), cls.file, _seen)
        return code

    def _resolved_class(self, expr, near_file=""):
        """The class ``expr`` names, following ``using X = Y`` aliases, with the
        template-parameter mapping of the class finally reached."""
        for _ in range(8):
            cls = self.find_class(template_name(expr), near_file)
            if cls is None:
                return None, {}
            mapping = template_mapping(cls, expr)
            if cls.body or len(cls.bases) != 1:
                return cls, mapping
            expr = substitute(cls.bases[0], mapping)  # an alias: follow it
        return None, {}

    _CONSTANT = re.compile(
        r'\bstatic\s+(?:constexpr\s+)?(?:const\s+)?char\s*(?:const\s*)?\*\s*(?:const\s+)?(\w+)\s*=\s*("[^"]*")'
    )

    def _named_constants(self, code):
        """``GetRepeatedArgument<int>(VALUE_TAG)`` → ``("value")``: class-local
        string constants, and ``OpSchema::Arg_IsTest``-like static members, put in."""
        for name, literal in self._CONSTANT.findall(code):
            code = re.sub(r"(?<![\w:])%s(?!\w)" % name, literal, code)

        def qualified(m):
            value = self.static_string(m.group(1), m.group(2))
            return '"%s"' % value if value is not None else m.group(0)

        return re.sub(r"(?<=\()\s*(\w+)::(\w+)(?=\s*[,)])", qualified, code)

    def member_alias(self, expr, member, near_file=""):
        """``A<args>::member``: the type ``using member = ...`` (or ``typedef``,
        or a member alias template ``member<x, y>``) names inside struct A, with
        template parameters replaced; None if A has no such member."""
        cls, mapping = self._resolved_class(expr, near_file)
        if cls is None:
            return None
        name = template_name(member)
        m = re.search(
            r"(?:template\s*<(?P<tp>[^;{}]*?)>\s*)?\busing\s+%s\s*=\s*(?P<e>[^;]+);"
            % re.escape(name),
            cls.body,
        )
        if m:
            result = substitute(re.sub(r"\btypename\s+|\btemplate\s+", "", m.group("e")), mapping)
            if m.group("tp"):
                inner = dict(zip(_template_param_names(m.group("tp")), template_args(member)))
                result = substitute(result, inner)
            # the struct's other (non-template) member aliases it uses
            siblings = {
                a.group(1): a.group(2)
                for a in re.finditer(r"(?<!>)\s\busing\s+(\w+)\s*=\s*([^;]+);", cls.body)
                if a.group(1) != name
            }
            for other, value in siblings.items():
                if re.search(r"(?<![\w:])%s(?![\w<])" % other, result):
                    value = substitute(re.sub(r"\btypename\s+|\btemplate\s+", "", value), mapping)
                    result = substitute(result, {other: value.strip()})
            return result.strip()
        m = re.search(r"\btypedef\s+([^;]+?)\s+%s\s*;" % re.escape(name), cls.body)
        if m:
            return substitute(re.sub(r"\btypename\s+|\btemplate\s+", "", m.group(1)), mapping)
        if name in mapping:
            return mapping[name]
        return None

    def static_int(self, expr, member, near_file="", depth=0):
        """The value of ``static constexpr int member = ...`` in class ``expr``
        (sums of literals, other such members and ``X::f().size()`` of a
        ``static constexpr std::array<int, N> f()``); None if not reducible."""
        if "::" in expr:
            expr = self.resolve_type(expr, near_file)
        cls, mapping = self._resolved_class(expr, near_file)
        if cls is None or depth > 8:
            return None
        m = re.search(
            r"\bstatic\s+constexpr\s+(?:int|size_t)\s+%s\s*=\s*([^;]+);" % re.escape(member),
            cls.body,
        )
        if m is None:
            m = re.search(
                r"std::array<\s*int\s*,\s*(\d+)\s*>\s*%s\s*\(" % re.escape(member), cls.body
            )
            if m:
                return int(m.group(1))
            for base in cls.bases:
                value = self.static_int(substitute(base, mapping), member, cls.file, depth + 1)
                if value is not None:
                    return value
            return None
        total = 0
        for term in split_top(
            fold_ternaries(substitute(m.group(1), mapping)), sep="+", angles=True
        ):
            term = re.sub(r"\btypename\s+|\btemplate\s+", "", term).strip()
            term = re.sub(r"\(\s*\)\s*\.\s*size\s*\(\s*\)$", "", term)
            if re.fullmatch(r"\d+", term):
                total += int(term)
                continue
            parts = split_scope(term)
            if len(parts) == 1:
                value = self.static_int(expr, parts[0], near_file, depth + 1)
            else:
                owner = self.resolve_type("::".join(parts[:-1]), near_file)
                value = self.static_int(owner, parts[-1], near_file, depth + 1)
            if value is None:
                return None
            total += value
        return total

    def static_string(self, expr, member, near_file=""):
        """``A<args>::member`` where ``member`` is a ``static constexpr const
        char*`` (or ``const char*``) string in struct A (or, for
        ``A<...>::X::member``, in the struct alias X names)."""
        cls, _ = self._resolved_class(expr, near_file)
        if cls is None:
            return None
        m = re.search(r'\b%s\s*(?:\[\s*\])?\s*=\s*"([^"]*)"' % re.escape(member), cls.body)
        if m:
            return m.group(1)
        # defined out of the class: const char* Foo::name = "..."
        pat = re.compile(
            r'\b%s\s*(?:<[^;{}]*>)?\s*::\s*%s\s*(?:\[\s*\])?\s*=\s*"([^"]*)"'
            % (re.escape(template_name(expr)), re.escape(member))
        )
        for text in self.files.values():
            m = pat.search(text)
            if m:
                return m.group(1)
        return None

    def expand_alias(self, expr):
        """``FooAlias<CPUContext>`` of ``template <class C> using FooAlias = FooOp<float, C>;``
        → ``FooOp<float, CPUContext>`` (aliases of aliases too); other expressions unchanged."""
        for _ in range(4):
            defs = self.classes.get(template_name(expr), [])
            alias = next((d for d in defs if d.body == "" and len(d.bases) == 1), None)
            if alias is None or any(d.body for d in defs):
                return expr
            expr = substitute(alias.bases[0], template_mapping(alias, expr))
        return expr

    def resolve_type(self, expr, near_file=""):
        """``A<args>::Member`` (a chain) → the class expression it stands for."""
        expr = re.sub(r"\btypename\s+|\btemplate\s+", "", expr).strip()
        parts = split_scope(expr)
        current = parts[0]
        for member in parts[1:]:
            alias = self.member_alias(current, member, near_file)
            if alias is None:
                return expr
            current = self.resolve_type(alias, near_file) if "::" in alias else alias
        return current

    def eval_name(self, expr, near_file=""):
        """A registration's name: ``Foo`` (a bare name), ``"Foo"``, or a
        ``string(A::basename) + (A::OpDef::name) + "Gradient"`` concatenation."""
        expr = expr.strip()
        if re.fullmatch(r"\w+", expr):
            return expr
        pieces = []
        for term in split_top(expr, sep="+", angles=True):
            term = term.strip()
            while True:  # peel string(...) and (...) wrappers
                m = re.fullmatch(r"(?:std::)?string\s*\((.*)\)", term, re.S) or re.fullmatch(
                    r"\((.*)\)", term, re.S
                )
                if not m:
                    break
                term = m.group(1).strip()
            if term.startswith('"'):
                pieces.append(term.strip('"'))
                continue
            parts = split_scope(term)
            owner = parts[0]
            for member in parts[1:-1]:
                owner = self.member_alias(owner, member, near_file) or owner
            value = self.static_string(owner, parts[-1], near_file)
            if value is None:
                return None
            pieces.append(value)
        return "".join(pieces)


def _normal(text):
    return re.sub(r"\s+", "", text)


def split_scope(expr):
    """``A<x::y>::B::c`` → ``["A<x::y>", "B", "c"]`` (``::`` outside ``<>``)."""
    parts, depth, start = [], 0, 0
    i = 0
    while i < len(expr):
        c = expr[i]
        if c == "<":
            depth += 1
        elif c == ">":
            depth -= 1
        elif c == ":" and depth == 0 and expr[i : i + 2] == "::":
            parts.append(expr[start:i].strip())
            start = i + 2
            i += 2
            continue
        i += 1
    parts.append(expr[start:].strip())
    return [p for p in parts if p]


_BRANCH = r'(?:"[^"]*"|[\w:]+(?:\([^()]*\))?)'
_TERNARY = re.compile(r"\b(true|false)\s*\?\s*(%s)\s*:\s*(%s)" % (_BRANCH, _BRANCH))


def fold_ternaries(text):
    """``true ? a : b`` → ``a`` (conditions that a template argument made literal)."""
    return _TERNARY.sub(lambda m: m.group(2) if m.group(1) == "true" else m.group(3), text)


def substitute(text, mapping):
    """Replace whole-word template parameters in ``text``."""
    if not mapping:
        return text
    pattern = re.compile(r"(?<![\w:])(%s)(?!\w)" % "|".join(map(re.escape, mapping)))
    return pattern.sub(lambda m: mapping[m.group(1)], text)


def read_arg_reads(code):
    """Every argument read in ``code``: name → list of :class:`ArgRead`."""
    reads = {}
    for m in _ARG_CALL.finditer(code):
        if re.search(r"\bhelper\s*\.\s*$", code[max(0, m.start() - 20) : m.start()]):
            continue  # ArgumentHelper helper(def): a shape-inference function, not the op
        args, _ = call_args(code, m.end() - 1)
        kind = m.group(1)
        ctype = (m.group("t") or "").strip()
        if "," in ctype:  # GetSingleArgument<OperatorDef, int>(def, "name", ...)
            ctype = ctype.split(",")[-1].strip()
        names = [k for k, a in enumerate(args) if re.fullmatch(r'"\w[\w.]*"', a)]
        if not names:
            continue
        k = names[0]
        name = args[k].strip('"')
        default = args[k + 1] if len(args) > k + 1 else None
        if kind in ("HasArgument", "HasSingleArgumentOfType"):
            read = ArgRead(name, "has", ctype if kind != "HasArgument" else "", None)
        elif kind == "GetRepeatedArgument":
            read = ArgRead(name, "repeated", ctype, default)
        else:
            if not ctype and default is not None:
                ctype = _deduce_type(default)
            read = ArgRead(name, "single", ctype, default)
        bucket = reads.setdefault(name, [])
        if read not in bucket:
            bucket.append(read)
    # GetArgument(operator_def, "mode").s(): required (proto_utils.cc throws without it)
    for m in _GET_ARGUMENT.finditer(code):
        ctype = {"s": "string", "i": "int64_t", "f": "float", "n": "NetDef"}[m.group(2)]
        read = ArgRead(m.group(1), "single", ctype, None)
        bucket = reads.setdefault(m.group(1), [])
        if read not in bucket:
            bucket.append(read)
    return reads


_GET_ARGUMENT = re.compile(r'\bGetArgument\s*\(\s*\w+\s*,\s*"(\w+)"\s*\)\s*\.\s*([sifn])\s*\(\s*\)')


def _deduce_type(default):
    d = default.strip()
    if d.startswith('"'):
        return "string"
    if re.fullmatch(r"-?\d+", d):
        return "int"
    if re.fullmatch(r"-?[\d.]+(e-?\d+)?f", d):
        return "float"
    if re.fullmatch(r"-?[\d.]+(e-?\d+)?", d):
        return "double"
    if d in ("true", "false"):
        return "bool"
    return ""


_INPUT_TYPE = re.compile(
    r"\bInput\s*\([^()]*\)\s*\.\s*(?:template\s+)?(?:data|IsType)\s*<\s*([\w:]+)\s*>"
)


def registered_types(expr, code):
    """The element types an operator is registered for or checks its inputs
    against: the type arguments of its registration (``FooOp<float, ...>``),
    ``DispatchHelper<TensorTypes<...>>`` lists, and ``Input(i).data<T>()`` /
    ``IsType<T>()`` on its inputs."""
    types = element_types(" ".join(template_args(expr)))
    for listed in re.findall(r"DispatchHelper\s*<\s*TensorTypes\s*<([^>]*)>", code):
        types |= element_types(listed)
    for name in _INPUT_TYPE.findall(code):
        types |= element_types(name)
    return types


def element_types(text):
    """The element types named in a class expression or a ``TensorTypes<...>``."""
    return frozenset(CANONICAL_TYPE[t] for t in _TYPE_RE.findall(text))


# --- schemas, registrations, gradients ------------------------------------------------

_SCHEMA = re.compile(r"\bOPERATOR_SCHEMA(_STR)?\s*\(")
_REGISTER = re.compile(r"\bREGISTER_CPU_OPERATOR(_STR)?\s*\(")
_GRADIENT = re.compile(
    r"\b(REGISTER_GRADIENT(?:_STR)?|NO_GRADIENT|SHOULD_NOT_DO_GRADIENT|"
    r"GRADIENT_NOT_IMPLEMENTED_YET)\s*\("
)
_GRADIENT_KIND = {
    "NO_GRADIENT": "none",
    "SHOULD_NOT_DO_GRADIENT": "should-not",
    "GRADIENT_NOT_IMPLEMENTED_YET": "not-implemented",
}


def _int(text):
    text = text.strip()
    if text == "INT_MAX" or text == "std::numeric_limits<int>::max()":
        return None
    try:
        return int(text)
    except ValueError:
        return text


def _range(args, source=None, near_file=""):
    """``NumInputs(1)``, ``NumInputs(1, 3)``, ``NumInputs(set<int>{1, 3})``,
    ``NumInputs(Def::ForwardOp::kNumInputs)``, ``NumInputs(1, Op<float>::kMax)``."""

    def value(text):
        text = text.strip()
        if source is not None and "::" in text and "{" not in text and "numeric_limits" not in text:
            parts = split_scope(text)
            owner = source.resolve_type("::".join(parts[:-1]), near_file)
            found = source.static_int(owner, parts[-1], near_file)
            if found is not None:
                return found
        return _int(text)

    if len(args) == 1:
        single = value(args[0])
        if isinstance(single, int):
            return (single, single)
        m = re.fullmatch(r"(?:std::)?set<int>\s*\{(.*)\}|\{(.*)\}", args[0].strip(), re.S)
        if m:
            values = [value(v) for v in split_top(m.group(1) or m.group(2))]
            if all(isinstance(v, int) for v in values):
                return frozenset(values)
        return "?" + args[0].strip()
    if len(args) == 2:
        low, high = value(args[0]), value(args[1])
        if isinstance(low, int) and (high is None or isinstance(high, int)):
            return (low, high)
    return "?" + ", ".join(args)


def _pairs(arg):
    """``{{0, 0}, {1, 1}}`` → ``frozenset({(0, 0), (1, 1)})``; else the text."""
    m = re.fullmatch(r"\{(.*)\}", arg.strip(), re.S)
    if not m:
        return "?" + arg.strip()
    pairs = set()
    for pair in split_top(m.group(1)):
        pm = re.fullmatch(r"\{\s*(\d+)\s*,\s*(\d+)\s*\}", pair)
        if not pm:
            return "?" + arg.strip()
        pairs.add((int(pm.group(1)), int(pm.group(2))))
    return frozenset(pairs)


def _schema_chain(text, pos):
    """The ``.Method(args)`` calls chained from ``pos``: [(method, args)]."""
    chain = []
    while True:
        m = re.compile(r"\s*\.\s*(\w+)\s*\(").match(text, pos)
        if not m:
            return chain
        inner = text[m.end() : matching(text, m.end() - 1) - 1]
        args, pos = call_args(text, m.end() - 1, angles="::" in inner and "<" in inner)
        chain.append((m.group(1), args))


class Reader:
    """The operator contracts of one era's C++ (``Reader(root).contracts``)."""

    def __init__(self, root):
        self.source = CppSource(root)
        self.contracts = {}
        for rel, text in sorted(self.source.files.items()):
            self._schemas(rel, text)
        for rel, text in sorted(self.source.files.items()):
            self._registrations(rel, text)
            self._gradients(rel, text)

    def _contract(self, name, rel):
        c = self.contracts.get(name)
        if c is None:
            c = self.contracts[name] = Contract(name, rel)
        return c

    def _schemas(self, rel, text):
        for m in _SCHEMA.finditer(text):
            args, end = call_args(text, m.end() - 1)
            name = self.source.eval_name(args[0] if args else "", rel)
            if not name:
                continue
            c = self._contract(name, rel)
            c.has_schema = True
            c.num_inputs = c.num_inputs or (0, None)
            c.num_outputs = c.num_outputs or (0, None)
            for method, margs in _schema_chain(text, end):
                c.schema_calls.append((method, margs))
                if method == "NumInputs":
                    c.num_inputs = _range(margs, self.source, rel)
                elif method == "NumOutputs":
                    c.num_outputs = _range(margs, self.source, rel)
                elif method == "NumInputsOutputs":
                    c.num_inputs = c.num_outputs = "?" + ", ".join(margs)
                elif method == "AllowInplace":
                    c.allow_inplace = _pairs(margs[0])
                elif method == "EnforceInplace":
                    c.enforce_inplace = _pairs(margs[0])
                elif method == "AllowOneToOneInplace":
                    c.allow_inplace = "one-to-one"
                elif method == "EnforceOneToOneInplace":
                    c.enforce_inplace = "one-to-one"
                elif method == "FillUsing":
                    c.unresolved.append("schema filled by %s" % margs[0])

    def _registrations(self, rel, text):
        for m in _REGISTER.finditer(text):
            args, _ = call_args(text, m.end() - 1)
            if len(args) < 2:
                continue
            name = self.source.eval_name(args[0], rel)
            if not name:
                continue
            expr = self.source.resolve_type(", ".join(args[1:]), rel)
            c = self._contract(name, rel)
            c.registered = True
            c.cpp_class = expr
            code = self.source.class_code(expr, rel)
            if not code:
                c.unresolved.append("class %s not found" % template_name(expr))
            c.args = read_arg_reads(code)
            c.element_types = registered_types(self.source.expand_alias(expr), code)

    def _gradients(self, rel, text):
        for m in _GRADIENT.finditer(text):
            args, _ = call_args(text, m.end() - 1)
            if not args:
                continue
            name = self.source.eval_name(args[0], rel)
            if not name:
                continue
            c = self._contract(name, rel)
            kind = m.group(1)
            if kind in _GRADIENT_KIND:
                c.gradient = _GRADIENT_KIND[kind]
                continue
            c.gradient = "maker"
            maker = self.source.resolve_type(", ".join(args[1:]), rel)
            c.gradient_maker = maker
            code = self.source.class_code(maker, rel)
            if not code:
                c.unresolved.append("gradient maker %s not found" % template_name(maker))
                continue
            c.gradient_calls = read_gradient_calls(code, self.source, rel)
            # CopyArguments() false turns the automatic copy off; a maker that then
            # copies Def().arg() itself (Transpose, SequenceMask) still copies them
            c.gradient_copies_args = not re.search(
                r"CopyArguments\s*\(\s*\)\s*const\s*(?:override\s*)?\{\s*return\s+false", code
            ) or bool(re.search(r"(?:Def\(\)|def_)\s*\.\s*arg\s*\(\s*\)", code))
            body = code
            g = re.search(r"GetGradientDefs\s*\(\s*\)\s*(?:override\s*)?\{", code)
            if g:
                body = code[g.end() - 1 : matching(code, g.end() - 1)]
            c.gradient_conditional = bool(re.search(r"\b(if|for|while|switch)\b|\?", body))


_GRAD_CALL = re.compile(r"\b(SingleGradientDef|CreateOperatorDef)\s*\(")


def _string_list(text):
    """``vector<string>{I(0), GO(0)}`` → ``["I(0)", "GO(0)"]`` (expressions
    normalised: spaces removed); None when not a literal list."""
    text = text.strip()
    m = re.fullmatch(r"(?:std::)?(?:vector\s*<\s*(?:std::)?string\s*>\s*)?\{(.*)\}", text, re.S)
    if m:
        return [re.sub(r"\s+", "", v) for v in split_top(m.group(1))]
    m = re.fullmatch(r"(?:std::)?vector\s*<\s*(?:std::)?string\s*>\s*\(\s*\)", text)
    if m:
        return []
    return None


def gradient_op_type(expr, source=None, near_file=""):
    """A gradient op's type: ``"FooGradient"``, ``def_.type() + "Gradient"``
    (``{op}Gradient``), or a concatenation of static strings; "?" otherwise."""
    expr = expr.strip()
    if re.fullmatch(r'"\w+"', expr):
        return expr.strip('"')
    m = re.fullmatch(r'(?:def_|Def\(\))\s*\.\s*type\(\)\s*\+\s*"(\w+)"', expr)
    if m:
        return "{op}" + m.group(1)
    if source is not None:
        value = source.eval_name(expr, near_file)
        if value:
            return value
    return "?" + re.sub(r"\s+", "", expr)


#: ``string tmp_dims = "_" + O(0) + "_dims";``: a local blob name of a maker
_LOCAL_STRING = re.compile(r"\b(?:std::)?string\s+(\w+)\s*=\s*([^;{}]+);")


def _local_names(code):
    """A maker's local strings assigned once: name -> expression."""
    found = {}
    for m in _LOCAL_STRING.finditer(code):
        found.setdefault(m.group(1), []).append(m.group(2).strip())
    return {name: exprs[0] for name, exprs in found.items() if len(exprs) == 1}


def _with_locals(items, local):
    if items is None:
        return None
    return [local.get(item.strip(), item) for item in items]


def read_gradient_calls(code, source=None, near_file=""):
    calls = []
    local = _local_names(code)
    for m in _GRAD_CALL.finditer(code):
        args, _ = call_args(code, m.end() - 1)
        if len(args) < 4:
            continue
        inputs = _with_locals(_string_list(args[2]), local)
        outputs = _with_locals(_string_list(args[3]), local)
        extra = " ".join(args[4:])
        names = re.findall(r'MakeArgument\s*<[^>]*>\s*\(\s*"(\w+)"', extra)
        op_type = gradient_op_type(args[0], source, near_file)
        calls.append(GradientCall(op_type, inputs, outputs, names))
    return calls
