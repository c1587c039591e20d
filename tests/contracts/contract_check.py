"""Comparing an operator's contract in the C++ of an era with caffe2rnn's.

:func:`differences` takes what :mod:`cpp_reader` read and what
:mod:`caffe2rnn_contracts` read for one op type and returns every
:class:`Difference`, each a short, stable sentence (so the table of known
differences in :mod:`contract_differences` can name it exactly):

``schema``
    the (inputs, outputs) counts each side accepts, compared over a grid of
    counts (Caffe2's ranges, sets and ``[](int in, int out) {...}`` lambdas are
    all evaluated), and the in-place pairs each allows or enforces;
``arg <name>``
    an argument one side reads and the other does not, a different field
    (``f`` for ``GetSingleArgument<float>``, ``i``, ``s``, ``ints``...), or a
    different literal default;
``types``
    the element types: the C++ registration's (``FooOp<float, CPUContext>``,
    ``DispatchHelper<TensorTypes<...>>``) against the types caffe2rnn's code
    checks for. float64 where the C++ registered float is caffe2rnn's one stated
    extension (:data:`caffe2rnn.operators.base.FLOAT64_EXTENSION`) and is not a
    difference;
``gradient``
    the kind of gradient registration and the gradient operators: type,
    inputs, outputs, whether the forward arguments are copied.
"""

import keyword
import re
from dataclasses import dataclass

from caffe2rnn_contracts import gradient_of

#: The counts of inputs and outputs (and in-place pairs) the schema grid covers.
GRID = 12


@dataclass(frozen=True, order=True)
class Difference:
    op_type: str
    aspect: str
    detail: str

    def __str__(self):
        return "%s [%s]: %s" % (self.op_type, self.aspect, self.detail)


# --- C++ lambdas ---------------------------------------------------------------------

_LAMBDA = re.compile(
    r"\[[^\]]*\]\s*\(([^)]*)\)\s*(?:->\s*\w+\s*)?\{\s*return\s+([^;]+);\s*\}", re.S
)


def cpp_lambda(text):
    """``[](int in, int out) { return in == out + 1; }`` → a Python function;
    None if it is not a one-``return`` lambda of ints."""
    m = _LAMBDA.fullmatch(text.strip())
    if not m:
        return None
    params = []
    for p in m.group(1).split(","):
        words = p.split()
        params.append(words[-1] if len(words) > 1 else "_%d" % len(params))
    expr = m.group(2)
    for k, name in enumerate(params):  # ``int in``: a Python keyword
        if keyword.iskeyword(name):
            params[k] = name + "_"
            expr = re.sub(r"\b%s\b" % name, name + "_", expr)
    expr = expr.replace("&&", " and ").replace("||", " or ")
    expr = re.sub(r"!(?!=)", " not ", expr)
    expr = re.sub(r"\btrue\b", "True", re.sub(r"\bfalse\b", "False", expr))
    expr = expr.replace("/", "//")
    try:
        code = compile("lambda %s: %s" % (", ".join(params), expr.strip()), "<lambda>", "eval")
    except SyntaxError:
        return None
    return eval(code, {"__builtins__": {}})  # noqa: S307 - arithmetic on two ints


# --- counts -------------------------------------------------------------------------


def _int(text):
    text = text.strip()
    if text in ("INT_MAX", "std::numeric_limits<int>::max()"):
        return 10**9
    try:
        return int(text)
    except ValueError:
        return None


def cpp_counts(c, reader=None):
    """``accepts(n_in, n_out)`` of a C++ schema; None when it cannot be read.
    No schema at all: Caffe2 checked nothing (every count accepted)."""
    if not c.has_schema:
        return lambda n_in, n_out: True
    checks = []
    for method, args in c.schema_calls:
        if method in ("NumInputs", "NumOutputs"):
            side = 0 if method == "NumInputs" else 1
            value = c.num_inputs if side == 0 else c.num_outputs
            if isinstance(value, tuple):
                low, high = value
                high = 10**9 if high is None else high
                checks.append(lambda n, s=side, lo=low, hi=high: lo <= n[s] <= hi)
            elif isinstance(value, frozenset):
                checks.append(lambda n, s=side, v=value: n[s] in v)
            else:
                fn = cpp_lambda(args[0]) if len(args) == 1 else None
                if fn is None:
                    return None
                checks.append(lambda n, s=side, f=fn: bool(f(n[s])))
        elif method == "NumInputsOutputs":
            fn = cpp_lambda(args[0])
            if fn is None:
                return None
            checks.append(lambda n, f=fn: bool(f(n[0], n[1])))
        elif method == "SameNumberOfOutput":
            checks.append(lambda n: n[0] == n[1])
        elif method == "OutputCalculator":
            fn = cpp_lambda(args[0])
            if fn is None:
                return None
            checks.append(lambda n, f=fn: n[1] == f(n[0]))
    return lambda n_in, n_out: all(check((n_in, n_out)) for check in checks)


def cpp_inplace(c):
    """``(allowed(i, o), enforced(i, o))`` of a C++ schema; None if unreadable.
    No schema: nothing is checked (everything allowed, nothing enforced)."""
    if not c.has_schema:
        return (lambda i, o: True), (lambda i, o: False)

    def rule(value, method_names):
        if value == "one-to-one":
            return lambda i, o: i == o
        if isinstance(value, frozenset):
            return lambda i, o, v=value: (i, o) in v
        if value == ():
            return lambda i, o: False
        for method, args in c.schema_calls:
            if method in method_names:
                fn = cpp_lambda(args[0])
                if fn is not None:
                    return lambda i, o, f=fn: bool(f(i, o))
        return None

    allowed = rule(c.allow_inplace, ("AllowInplace",))
    enforced = rule(c.enforce_inplace, ("EnforceInplace",))
    if allowed is None or enforced is None:
        return None
    return allowed, enforced


def py_counts(p):
    def accepts(n_in, n_out):
        for n, (low, high) in ((n_in, p.num_inputs), (n_out, p.num_outputs)):
            if n < low or (high is not None and n > high):
                return False
        counts = getattr(p.schema, "counts", None)
        return counts is None or bool(counts(n_in, n_out))

    return accepts


def py_inplace(p):
    value = p.allow_inplace
    if value == "any":
        allowed = lambda i, o: True  # noqa: E731
    elif callable(value):
        allowed = lambda i, o: bool(value(i, o))  # noqa: E731
    else:
        allowed = lambda i, o: (i, o) in value  # noqa: E731
    return allowed, p.schema.enforced


def _describe_counts(accepts):
    pairs = [(i, o) for i in range(GRID) for o in range(GRID) if accepts(i, o)]
    if not pairs:
        return "nothing"
    ins = sorted({i for i, _ in pairs})
    outs = sorted({o for _, o in pairs})
    if len(pairs) == len(ins) * len(outs):
        return "inputs %s, outputs %s" % (_span(ins), _span(outs))
    return "(in, out) in {%s}" % ", ".join("%d:%d" % p for p in pairs[:6]) + (
        "..." if len(pairs) > 6 else ""
    )


def _span(values):
    if values == list(range(values[0], values[-1] + 1)):
        if values[-1] == GRID - 1:
            return "%d+" % values[0]
        return str(values[0]) if values[0] == values[-1] else "%d-%d" % (values[0], values[-1])
    return "{%s}" % ",".join(map(str, values))


def schema_differences(c, p):
    out = []
    cpp = cpp_counts(c)
    py = py_counts(p)
    if cpp is None:
        out.append(("schema", "counts: the C++ schema is not readable here"))
    elif any(cpp(i, o) != py(i, o) for i in range(GRID) for o in range(GRID)):
        out.append(
            (
                "schema",
                "counts: C++ %s; caffe2rnn %s" % (_describe_counts(cpp), _describe_counts(py)),
            )
        )
    rules = cpp_inplace(c)
    if rules is None:
        out.append(("schema", "in-place: the C++ rule is not readable here"))
        return out
    (c_allow, c_force), (p_allow, p_force) = rules, py_inplace(p)
    max_in = max([i for i in range(GRID) for o in range(GRID) if py(i, o)] or [0])
    max_out = max([o for i in range(GRID) for o in range(GRID) if py(i, o)] or [0])
    pairs = [(i, o) for i in range(max_in) for o in range(max_out)]
    # a pair is allowed when allowed or enforced (OpSchema::Verify)
    c_ok = {q for q in pairs if c_allow(*q) or c_force(*q)}
    p_ok = {q for q in pairs if p_allow(*q) or p_force(*q)}
    if c_ok != p_ok:
        out.append(
            ("schema", "in-place allowed: C++ %s; caffe2rnn %s" % (_pairs(c_ok), _pairs(p_ok)))
        )
    c_must = {q for q in pairs if c_force(*q)}
    p_must = {q for q in pairs if p_force(*q)}
    if c_must != p_must:
        out.append(
            ("schema", "in-place enforced: C++ %s; caffe2rnn %s" % (_pairs(c_must), _pairs(p_must)))
        )
    return out


def _pairs(pairs):
    if not pairs:
        return "none"
    text = ", ".join("%d->%d" % q for q in sorted(pairs)[:8])
    return text + ("..." if len(pairs) > 8 else "")


# --- arguments ----------------------------------------------------------------------


def _cpp_literal(text):
    """A C++ default as a Python value, or None when it is not a literal."""
    if text is None:
        return None
    t = text.strip()
    while t.startswith("(") and t.endswith(")"):
        t = t[1:-1].strip()
    if t in ("true", "false"):
        return t == "true"
    m = re.fullmatch(r'(?:std::)?(?:string\()?"([^"]*)"\)?', t)
    if m:
        return m.group(1)
    m = re.fullmatch(r"(-?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?)[fFlL]?", t)
    if m:
        value = float(m.group(1))
        return int(value) if re.fullmatch(r"-?\d+", m.group(1)) else value
    return None


def _same_default(cpp_value, py_value):
    if isinstance(cpp_value, bool) or isinstance(py_value, bool):
        return bool(cpp_value) == bool(py_value)
    if isinstance(cpp_value, (int, float)) and isinstance(py_value, (int, float)):
        return abs(float(cpp_value) - float(py_value)) <= 1e-6 * max(1.0, abs(float(cpp_value)))
    return cpp_value == py_value


def arg_differences(c, p):
    out = []
    cpp_names, py_names = set(c.args), set(p.args)
    for name in sorted(cpp_names - py_names):
        out.append(("arg " + name, "read by the C++, not by caffe2rnn"))
    for name in sorted(py_names - cpp_names):
        out.append(("arg " + name, "read by caffe2rnn, not by the C++"))
    for name in sorted(cpp_names & py_names):
        c_fields = {r.field for r in c.args[name] if r.how != "has"}
        p_fields = set()
        for r in p.args[name]:
            if r.how != "has":
                p_fields.update(r.field.split("/"))
        # "?": a field decided at run time (GetSingleArgument<T> with T the element
        # type; a kind computed in Python) matches any field of the other side
        c_extra = (c_fields - p_fields - {"?"}) if "?" not in p_fields else set()
        p_extra = (p_fields - c_fields - {"?"}) if "?" not in c_fields else set()
        if c_fields and p_fields and (c_extra or p_extra):
            out.append(
                (
                    "arg " + name,
                    "field: C++ %s; caffe2rnn %s"
                    % ("/".join(sorted(c_fields)), "/".join(sorted(p_fields))),
                )
            )
        if any(r.how == "has" for r in c.args[name]):
            continue  # read only when present: the C++ default is never used
        c_defaults = [_cpp_literal(r.default) for r in c.args[name] if r.how == "single"]
        c_defaults = [d for d in c_defaults if d is not None]
        p_defaults = [
            r.default
            for r in p.args[name]
            if r.how == "single"
            and r.default is not None
            and not (isinstance(r.default, str) and r.default.startswith("<"))
        ]
        if c_defaults and p_defaults:
            for d in p_defaults:
                if not any(_same_default(cd, d) for cd in c_defaults):
                    out.append(
                        (
                            "arg " + name,
                            "default: C++ %s; caffe2rnn %r"
                            % (" or ".join(repr(x) for x in c_defaults), d),
                        )
                    )
    return out


# --- element types ------------------------------------------------------------------


def type_differences(c, p):
    cpp, py = set(c.element_types), set(p.element_types)
    if "float" in cpp:
        py.discard("double") if "double" not in cpp else None
    if cpp == py:
        return []
    describe = lambda s: ", ".join(sorted(s)) if s else "any (unchecked)"  # noqa: E731
    return [("types", "C++ %s; caffe2rnn %s" % (describe(cpp), describe(py)))]


# --- gradients ----------------------------------------------------------------------

_INDEX = re.compile(r"\b(?:I|O|GO|GI|GI_V|GI_I|GO_V|GO_I)\((\d+)\)")


def gradient_differences(c, p):
    out = []
    cpp_kind = c.gradient or "none registered"
    py_kind = p.gradient or "none registered"
    if cpp_kind != py_kind:
        return [("gradient", "registration: C++ %s; caffe2rnn %s" % (cpp_kind, py_kind))]
    if cpp_kind != "maker":
        return out
    calls = [
        (
            k.op_type.replace("{op}", c.op_type),
            None if k.inputs is None else [_blob_expr(e) for e in k.inputs],
            None if k.outputs is None else [_blob_expr(e) for e in k.outputs],
        )
        for k in c.gradient_calls
    ]
    literal = [
        k for k in calls if not k[0].startswith("?") and k[1] is not None and k[2] is not None
    ]
    # how many inputs/outputs the probe op needs: what the C++ calls address
    need_in = need_out = 0
    for _, ins, outs in literal:
        for expr in (ins or []) + (outs or []):
            for m in _INDEX.finditer(expr):
                index = int(m.group(1))
                if expr.startswith(("I(", "GI")):
                    need_in = max(need_in, index + 1)
                else:
                    need_out = max(need_out, index + 1)
    n_in = max(p.num_inputs[0], min(need_in, p.num_inputs[1] or need_in))
    n_out = max(p.num_outputs[0], min(need_out, p.num_outputs[1] or need_out))
    ops, error, copies = gradient_of(c.op_type, n_in, n_out, era=p.era)
    if copies != c.gradient_copies_args and ops:
        out.append(
            (
                "gradient",
                "forward arguments copied: C++ %s; caffe2rnn %s" % (c.gradient_copies_args, copies),
            )
        )
    if error:
        if not c.gradient_conditional:
            out.append(
                (
                    "gradient",
                    "caffe2rnn's maker fails on %d inputs, %d outputs: %s"
                    % (n_in, n_out, error[:120]),
                )
            )
        return out
    if not calls:
        return out
    if len(literal) == len(calls) and not c.gradient_conditional:
        want = [(t, list(i), list(o)) for t, i, o in literal]
        got = [(t, list(i), list(o)) for t, i, o in ops]
        if want != got:
            out.append(("gradient", "ops: C++ %s; caffe2rnn %s" % (_ops(want), _ops(got))))
        return out
    for op in ops:
        same_type = [k for k in calls if k[0] == op[0] or k[0].startswith("?")]
        if not same_type:
            out.append(
                ("gradient", "caffe2rnn writes %s, which the C++ maker never writes" % _ops([op]))
            )
        elif all(k in literal for k in same_type) and not any(
            (k[1], k[2]) == (op[1], op[2]) for k in same_type
        ):
            out.append(
                ("gradient", "ops: C++ one of %s; caffe2rnn %s" % (_ops(same_type), _ops([op])))
            )
    return out


def _blob_expr(expr):
    """A C++ blob-name expression in the probe's notation: ``I(0)`` stays,
    ``"_" + GI(0) + "_dims"`` → ``_{GI(0)}_dims``; anything else is kept as
    ``?expr`` (never equal to a name)."""
    if re.fullmatch(r"(?:I|O|GO|GI|GI_V|GI_I|GO_V|GO_I)\(\d+\)", expr):
        return expr
    pieces = []
    for term in expr.split("+"):
        term = term.strip()
        if re.fullmatch(r'"[^"]*"', term):
            pieces.append(term.strip('"'))
        elif re.fullmatch(r"(?:I|O|GO|GI)\(\d+\)", term):
            pieces.append("{%s}" % term)
        else:
            return "?" + expr
    return "".join(pieces)


def _ops(ops):
    return "; ".join("%s(%s -> %s)" % (t, ",".join(i), ",".join(o)) for t, i, o in ops)


# --- all ----------------------------------------------------------------------------


def differences(c, p):
    """Every :class:`Difference` between C++ contract ``c`` and caffe2rnn's ``p``."""
    found = []
    if not c.registered:
        found.append(("registration", "no REGISTER_CPU_OPERATOR in the C++"))
    found += schema_differences(c, p)
    if c.registered:
        found += arg_differences(c, p)
        found += type_differences(c, p)
    found += gradient_differences(c, p)
    return [Difference(c.op_type, aspect, detail) for aspect, detail in found]
