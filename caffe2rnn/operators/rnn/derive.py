"""Deriving a step's bound calls from the calls of earlier steps.

Building a plan (:mod:`.executor`) runs the loop op by op and binds every op
of every step: at T = 10,000 that is 240,000 ``bind()`` calls, 20,000
fusions and 20,000 step-net instances — seconds of CPU time. Yet the steps
of one loop differ only in *which* memory they touch: the calls are the same
functions in the same order, and each of their arguments is

* the same object at every step (a parameter, FC's cached Wᵀ, the
  ``seq_lengths`` tensor, a function's constant);
* a view moving a fixed number of bytes per timestep through one buffer (a
  link's row of the state or input tensor, and every view the ops made of
  it);
* the array a step workspace holds under a name (an intermediate such as
  ``gates_t``, allocated by its op in that step's workspace), or that
  workspace's blob itself (what a link assignment sets);
* the timestep plus a fixed offset, for an integer.

:meth:`Template.learn` reads that off two steps built op by op;
:meth:`Template.calls` writes out the calls of any other step from its
timestep and step workspace, after :meth:`Template.prepare` gave the
workspace the intermediates its ops would have allocated — through the same
``Blob.resize`` the ops call. The executor checks a template against a third
step built op by op (:meth:`Template.matches`) before it uses it, and then
runs the remaining steps of the first run from derived calls: the very calls
later runs make, so the numbers are the loop's (``tests/rnn/test_executor.py``
compares them). Anything the template cannot express — a call without a
compiled form, an argument of none of the kinds above, a step workspace
lacking an input — leaves the build op by op.
"""

import array

import numpy as np

from ...runtime.blob import Blob
from ..bound_call import _ARGS, BoundCall

#: The attributes of a bound call other than its arguments and declarations.
_PLAIN = ("func", "name", "releases_gil", "cost", "_label", "part_ops")


_new = object.__new__


class CannotDerive(Exception):
    """Two steps' calls differ in a way no template expresses."""


def _address(a):
    return a.__array_interface__["data"][0]


def _buffer(a):
    """The array owning ``a``'s memory."""
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a


def _own_blob(ws, blob):
    """Whether ``blob`` is step workspace ``ws``'s own (not a parent's)."""
    return ws.has_local_blob(blob.name) and ws.get_blob(blob.name) is blob


def _local_name(ws, a):
    """The name of the blob of step workspace ``ws`` (itself, not a parent)
    holding ``a`` or an array of which ``a`` is a contiguous reshape."""
    for name in ws.local_blob_names():
        v = ws.get_blob(name).value
        if v is a:
            return name
        if (
            type(v) is np.ndarray
            and v.dtype == a.dtype
            and v.nbytes == a.nbytes
            and v.flags.c_contiguous
            and a.flags.c_contiguous
            and _address(v) == _address(a)
        ):
            return name
    return None


# --- what an argument is --------------------------------------------------------
class _Same:
    """The same object at every step."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value

    def make(self, t, ws):
        return self.value


class _Constant:
    """An array an op instance keeps for itself and only reads (FCGradient's
    row of ones): equal in every step, so one step's serves them all."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value

    def make(self, t, ws):
        return self.value


class _Timestep:
    """The timestep plus ``offset``."""

    __slots__ = ("offset",)

    def __init__(self, offset):
        self.offset = offset

    def make(self, t, ws):
        return t + self.offset


class _Moving:
    """A view of ``buffer`` moving ``step`` bytes per timestep."""

    __slots__ = ("rows", "t_first", "view")

    def __init__(self, a, buffer, t0, step):
        offset = _address(a) - _address(buffer)
        span = a.itemsize + sum((n - 1) * s for n, s in zip(a.shape, a.strides))  # strides >= 0
        # The timesteps at which the view lies inside its buffer: [t_first, t_last].
        room = buffer.nbytes - span
        if step > 0:
            t_first, t_last = t0 - offset // step, t0 + (room - offset) // step
        elif step < 0:
            t_first, t_last = t0 - (room - offset) // -step, t0 + offset // -step
        else:
            t_first = t_last = t0
        self.t_first, self.view = t_first, None
        if step == 0 or a.ndim == 0:  # one view, made at every call
            self.rows = None
            self.view = (a.shape, a.dtype, buffer, offset, a.strides, step, t0, a.flags.writeable)
            return
        # Every timestep's view at once: row i is the view at t_first + i (indexing
        # it makes a view in C, far cheaper than building one from its parts).
        self.rows = np.ndarray(
            (t_last - t_first + 1,) + a.shape,
            a.dtype,
            buffer,
            offset + (t_first - t0) * step,
            (step,) + a.strides,
        )
        if not a.flags.writeable:
            self.rows.flags.writeable = False

    def make(self, t, ws):
        if self.rows is None:
            shape, dtype, buffer, offset, strides, step, t0, writeable = self.view
            offset += (t - t0) * step
            if offset < 0 or offset + np.dtype(dtype).itemsize > buffer.nbytes:
                raise CannotDerive("a moving view leaves its buffer at timestep %d" % t)
            view = np.ndarray(shape, dtype, buffer, offset, strides)
            if not writeable:
                view.flags.writeable = False
            return view
        i = t - self.t_first
        if not 0 <= i < len(self.rows):
            raise CannotDerive("a moving view leaves its buffer at timestep %d" % t)
        return self.rows[i]


class _Held:
    """The array a step workspace's blob ``name`` holds (``shape``: the
    argument's, a reshape of it when it differs)."""

    __slots__ = ("name", "shape", "held_shape", "dtype")

    def __init__(self, name, a, held):
        self.name, self.shape, self.held_shape, self.dtype = name, a.shape, held.shape, a.dtype

    def make(self, t, ws):
        blob = ws.local_blob(self.name)
        value = None if blob is None else blob.value
        if (
            type(value) is not np.ndarray
            or value.shape != self.held_shape
            or value.dtype != self.dtype
            or not value.flags.c_contiguous
        ):
            raise CannotDerive("step workspace has no %s array for '%s'" % (self.shape, self.name))
        return value if value.shape == self.shape else value.reshape(self.shape)


class _Blob:
    """A step workspace's own blob ``name`` (what a link assignment sets)."""

    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def make(self, t, ws):
        blob = ws.local_blob(self.name)
        if blob is None:
            raise CannotDerive("step workspace has no blob '%s'" % self.name)
        return blob


class _Learner:
    """Pairs up the arguments of two steps ``(t, ws)`` into argument kinds;
    one kind per pair of objects, so an array an op passes to several
    calls is made once per derived step, as it was bound once."""

    def __init__(self, first, second):
        (self.t1, self.ws1), (self.t2, self.ws2) = first, second
        self.kinds = {}

    def structure(self, x, y):
        """A template of ``x`` (step 1's) and ``y`` (step 2's): tuples and
        lists of templates, or an argument kind."""
        if type(x) is not type(y):
            raise CannotDerive("%s against %s" % (type(x).__name__, type(y).__name__))
        if type(x) in (tuple, list):
            if len(x) != len(y):
                raise CannotDerive("sequences of %d and %d" % (len(x), len(y)))
            return (type(x), [self.structure(a, b) for a, b in zip(x, y)])
        key = (id(x), id(y))
        kind = self.kinds.get(key)
        if kind is None:
            kind = self.kinds[key] = self.kind(x, y)
        return kind

    def kind(self, x, y):
        if x is y:
            return _Same(x)
        if type(x) is np.ndarray:
            return self.array(x, y)
        if (
            type(x) is Blob
            and type(y) is Blob
            and x.name == y.name
            and _own_blob(self.ws1, x)
            and _own_blob(self.ws2, y)
        ):
            return _Blob(x.name)
        if type(x) is int:
            if x - self.t1 == y - self.t2:
                return _Timestep(x - self.t1)
        elif type(x) in (float, bool, str) and x == y:
            return _Same(x)
        raise CannotDerive("arguments %r and %r" % (x, y))

    def array(self, x, y):
        buffer = _buffer(x)
        if (
            buffer is _buffer(y)
            and (x.shape, x.strides, x.dtype) == (y.shape, y.strides, y.dtype)
            and x.flags.writeable == y.flags.writeable
            and min(x.strides, default=0) >= 0
            and buffer.flags.c_contiguous
            and (buffer.flags.writeable or not x.flags.writeable)
        ):
            moved = _address(y) - _address(x)
            dt = self.t2 - self.t1
            if dt and not moved:
                # the same memory at every step (a parameter's reshape, a
                # gradient summed over time): one view serves every step, as
                # one array does in the op-by-op loop's reads and writes
                return _Same(x)
            if dt and moved % dt == 0:
                return _Moving(x, buffer, self.t1, moved // dt)
        name = _local_name(self.ws1, x)
        if name is not None and name == _local_name(self.ws2, y):
            return _Held(name, x, self.ws1.get_blob(name).value)
        if _equal_owned(x, y):
            return _Constant(x)
        raise CannotDerive("arrays %s and %s" % (x.shape, y.shape))


def _equal_owned(x, y):
    """Two arrays owning their memory, alike in shape, type and every bit."""
    return (
        x.base is None
        and y.base is None
        and (x.shape, x.strides, x.dtype) == (y.shape, y.strides, y.dtype)
        and x.tobytes() == y.tobytes()
    )


def _kinds(template):
    """The argument kinds in a template."""
    if type(template) is tuple:
        for item in template[1]:
            yield from _kinds(item)
    else:
        yield template


class _Recipe:
    """How to write out one step's calls quickly: the values of the argument
    kinds that vary (made once per step), the constant ones, and the tuples
    and lists to assemble from them.

    The values of a step's kinds sit in one list, the *pool*: the constants,
    then the varying kinds' values. :meth:`index` compiles a template to the
    index of its value -- a kind's place in the pool, or past it, the place
    of an assembled tuple or list (:attr:`builds`) -- once every kind has
    been counted (:meth:`count`); :meth:`maker` writes the function that
    assembles a step's calls from its pool.
    """

    def __init__(self):
        self.constants, self.varying, self.builds = [], [], []
        self._index = {}  # id(kind) -> its pool index
        self._moving = None  # [(rows, t_first)] of the first varying kinds (:meth:`_order`)
        self._others = None  # the varying kinds after them
        self._span = None  # the timesteps at which every moving view lies in its buffer

    def count(self, template):
        """Give every kind in ``template`` its place among the constants or
        the varying values."""
        for kind in _kinds(template):
            if id(kind) not in self._index:
                constant = type(kind) in (_Same, _Constant)
                places = self.constants if constant else self.varying
                self._index[id(kind)] = (constant, len(places))
                places.append(kind.value if constant else kind)

    def _order(self):
        """Put the moving views made from their ``rows`` first among the
        varying kinds (once, after :meth:`count`, before any :meth:`index`):
        :meth:`pool` then makes them by indexing, with no method call each."""
        moving = [k for k in self.varying if type(k) is _Moving and k.rows is not None]
        others = [k for k in self.varying if not (type(k) is _Moving and k.rows is not None)]
        self.varying = moving + others
        for i, kind in enumerate(self.varying):
            self._index[id(kind)] = (False, i)
        self._moving = [(k.rows, k.t_first) for k in moving]
        self._others = others
        first = max((k.t_first for k in moving), default=0)
        last = min((k.t_first + len(k.rows) - 1 for k in moving), default=-1)
        self._span = (first, last) if moving else None
        self._at = None  # per timestep of the span, its moving views (:meth:`_views`)

    def _views(self):
        """Per timestep of ``_span``, the tuple of the moving kinds' views:
        made once for every timestep, by NumPy's own iteration over each
        ``rows`` (a view per row, made in C) rather than an index per view and
        step (the plan keeps every one of them anyway)."""
        first, last = self._span
        columns = [rows[first - t0 : last - t0 + 1] for rows, t0 in self._moving]
        self._at = list(zip(*map(list, columns)))
        return self._at

    def index(self, template):
        """The pool index of ``template``'s value (after :meth:`count`)."""
        if self._others is None:
            self._order()
        if type(template) is tuple:
            kind, items = template
            indices = [self.index(item) for item in items]
            self.builds.append((indices, kind is list))
            return len(self.constants) + len(self.varying) + len(self.builds) - 1
        constant, i = self._index[id(template)]
        return i if constant else len(self.constants) + i

    def pool(self, t, ws):
        """The pool of the step ``(t, ws)``."""
        span = self._span
        if span is not None and span[0] <= t <= span[1]:  # every row index in range
            pool = self.constants + list((self._at or self._views())[t - span[0]])
            pool += [kind.make(t, ws) for kind in self._others]
        else:  # (a view leaving its buffer raises CannotDerive)
            pool = self.constants + [kind.make(t, ws) for kind in self.varying]
        return pool

    def maker(self, templates):
        """A function of a step's pool returning its calls (``templates``:
        the :class:`_CallTemplate` of each, compiled by :meth:`index`).

        It is written out as Python source once per template -- each tuple or
        list assembled by one expression, each call's attributes set by one
        statement -- and compiled: per step, the bytecode does what walking
        the templates would do, without the walk (a plan derives T steps).
        The objects it makes are those the walk made: one tuple or list per
        assembled template, shared by the calls that name it.
        """
        size = len(self.constants) + len(self.varying)

        def ref(i):
            return "pool[%d]" % i if i < size else "v%d" % i

        lines = ["def make(pool):"]
        for k, (indices, is_list) in enumerate(self.builds):
            items = ", ".join(map(ref, indices))
            if is_list:
                value = "[%s]" % items
            else:
                value = "(%s,)" % items if len(indices) == 1 else "(%s)" % items
            lines.append("    v%d = %s" % (size + k, value))
        names = {"new": _new, "BoundCall": BoundCall}
        for j, c in enumerate(templates):
            lines.append("    c%d = new(BoundCall)" % j)
            for attr in _PLAIN + ("_sets",):
                names["%s_%d" % (attr, j)] = getattr(c, "sets" if attr == "_sets" else attr)
                lines.append("    c%d.%s = %s_%d" % (j, attr, attr, j))
            for attr, index in (("args", c.args), ("_reads", c.reads), ("_writes", c.writes)):
                lines.append("    c%d.%s = %s" % (j, attr, ref(index)))
        lines.append("    return [%s]" % ", ".join("c%d" % j for j in range(len(templates))))
        exec(compile("\n".join(lines), "<derived step calls>", "exec"), names)
        return names["make"]


class _CallTemplate:
    """One bound call's template: its plain attributes, and templates of its
    arguments and of the arrays it declares it reads and writes."""

    __slots__ = _PLAIN + ("args", "reads", "writes", "sets")

    def __init__(self, learner, x, y):
        if type(x) is not BoundCall or type(y) is not BoundCall:
            raise CannotDerive("not a plain bound call")
        for attr in _PLAIN:
            a, b = getattr(x, attr), getattr(y, attr)
            if a is not b and a != b:
                raise CannotDerive("calls differ in %s" % attr)
            setattr(self, attr, a)
        if x._sets is not y._sets:
            raise CannotDerive("calls differ in what they set")
        self.sets = x._sets
        self.args = learner.structure(x.args, y.args)
        self.reads, self.writes = (
            self._declared(learner, getattr(x, a), getattr(y, a)) for a in ("_reads", "_writes")
        )

    @staticmethod
    def _declared(learner, x, y):
        if type(x) is not tuple:  # None, or BoundCall's read-off-the-arguments marker
            if x is not y:
                raise CannotDerive("calls differ in what they declare")
            return _Same(x)
        return learner.structure(x, y)

    def written(self):
        """The templates of what the call writes."""
        if type(self.writes) is _Same:
            return self.args[1][-1:] if self.writes.value is _ARGS else []
        return [self.writes]

    def compile(self, recipe):
        """The pool indices of its arguments and declarations (:class:`_Recipe`)."""
        self.args, self.reads, self.writes = (
            recipe.index(x) for x in (self.args, self.reads, self.writes)
        )


class Template:
    """The calls of one step of a loop, as a function of its timestep and
    step workspace (module docstring)."""

    def __init__(self, calls, held, local):
        self._held = held  # {name: _Held}: the step workspace's arrays the calls use
        self._local = local  # the names the step net's ops write that are its workspace's own
        # the intermediates its ops allocate: (name, shape, dtype)
        self._allocated = [(n, h.held_shape, h.dtype) for n, h in held.items() if n in local]
        self._recipe = recipe = _Recipe()
        for c, _ in calls:
            for template in (c.args, c.reads, c.writes):
                recipe.count(template)
        for c, _ in calls:
            c.compile(recipe)
        self._templates = [c for c, _ in calls]
        self._make = recipe.maker(self._templates)
        #: names of the step workspace's own blobs whose arrays the plan
        #: relies on (guards: the executor sets them from the steps it learned)
        self.guarded = []
        self.ops = array.array("l", [j for _, j in calls])  # the op index of each call

    @classmethod
    def learn(cls, first, second, outputs):
        """The template of two steps built op by op, or None.

        ``first`` and ``second`` are ``(t, ws, [(call, op index), ...])``;
        ``outputs`` the names the step net's ops write. Every array such a
        name holds in the first step's workspace must be one the calls use:
        a derived step's workspace then ends up holding what the loop leaves
        in it.
        """
        (t1, ws1, calls1), (t2, ws2, calls2) = first, second
        learner = _Learner((t1, ws1), (t2, ws2))
        if len(calls1) != len(calls2) or not calls1:
            return None
        try:
            calls = []
            for (x, i), (y, j) in zip(calls1, calls2):
                if i != j:
                    return None
                calls.append((_CallTemplate(learner, x, y), i))
        except CannotDerive:
            return None
        kinds = list(learner.kinds.values())
        held = {k.name: k for k in kinds if type(k) is _Held}
        accounted = set(held) | {k.name for k in kinds if type(k) is _Blob}
        if any(k.name not in outputs for k in kinds if type(k) is _Blob):
            return None  # a link assignment of a blob the step net does not write
        local = [name for name in outputs if ws1.has_local_blob(name)]
        for name in local:
            if name not in accounted and ws1.get_blob(name).value is not None:
                return None  # an output the calls do not account for
        for c, _ in calls:  # an op's private constant must never be written
            if any(type(k) is _Constant for w in c.written() for k in _kinds(w)):
                return None
        return cls(calls, held, local)

    def prepare(self, ws):
        """Give step workspace ``ws`` what creating and running the step
        net's instance would have made in it before its calls run: a blob for
        each name its ops write that no outer workspace holds (as creating the
        instance does) and, for each
        intermediate the calls use, the array its op allocates there
        (``Blob.resize``, as the op calls it). An array the step reads but
        does not write must be there already (the forward pass's): the calls
        check (:class:`CannotDerive`)."""
        create = ws.create_local_blob
        for name in self._local:
            create(name)
        for name, shape, dtype in self._allocated:
            create(name).resize(shape, dtype)

    def calls(self, t, ws):
        """The calls of the step at timestep ``t`` in step workspace ``ws``
        (after :meth:`prepare`; the op each stands for: :attr:`ops`), and the
        blobs of ``ws`` named in :attr:`guarded`, which the plan guards."""
        pool = self._recipe.pool(t, ws)
        guarded = [ws.local_blob(name) for name in self.guarded]
        if None in guarded:
            raise CannotDerive(
                "step workspace has no blob '%s'" % self.guarded[guarded.index(None)]
            )
        return self._make(pool), guarded

    def matches(self, t, ws, calls):
        """Whether the derived calls of the step ``(t, ws)`` are ``calls``
        (that step's calls bound op by op): same functions, same arguments —
        the same objects, arrays over the same memory, or an op's private
        constant of the same bits."""
        try:
            derived, _ = self.calls(t, ws)
        except CannotDerive:
            return False
        if len(derived) != len(calls):
            return False
        return all(i == j and _same_call(x, y) for x, i, (y, j) in zip(derived, self.ops, calls))


def _same_call(x, y):
    if type(y) is not BoundCall:
        return False
    if any(getattr(x, a) is not getattr(y, a) and getattr(x, a) != getattr(y, a) for a in _PLAIN):
        return False
    return (
        x._sets is y._sets
        and _same(x.args, y.args)
        and _same(x._reads, y._reads)
        and _same(x._writes, y._writes)
    )


def _same(x, y):
    if type(x) in (tuple, list):
        return type(x) is type(y) and len(x) == len(y) and all(map(_same, x, y))
    if x is y:
        return True
    if type(x) is np.ndarray and type(y) is np.ndarray:
        if _equal_owned(x, y):
            return True
        return (
            _address(x) == _address(y)
            and (x.shape, x.strides, x.dtype) == (y.shape, y.strides, y.dtype)
            and x.flags.writeable == y.flags.writeable
        )
    return type(x) is type(y) and type(x) in (int, float, bool, str) and x == y
