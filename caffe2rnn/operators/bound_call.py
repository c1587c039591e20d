"""Bound calls: what an operator's ``bind()`` returns to the RNN executor.

A *bound call* is one zero-argument call — a NumPy function or a kernel on
the very arrays one run of an operator used — together with what it
*declares* about itself:

* ``reads`` and ``writes``: the arrays (or blob tokens ``("blob", id)``) whose
  memory it reads and writes. The executor's scheduler
  (:mod:`caffe2rnn.operators.rnn.schedule`) orders calls by them, and two
  calls that declare disjoint memory may run at once. ``None`` for both: the
  call cannot say (an op run as itself), and is a barrier.
* ``releases_gil``: whether it spends its time without Python's lock (a BLAS
  product, a large element-wise loop, a compiled kernel): only such calls can
  really run beside another thread.
* ``cost``: a rough estimate in µs; it only steers which thread runs it.
* ``sets``: for a call that only *sets* something (a link's view into a
  blob, the timestep), what it sets; the executor skips such a call on later
  runs when the first run already left it in place.
* ``part_ops``: for a fused call, the step net's ops whose calls it computes
  at once (their indices); :attr:`parts` gives those calls back, rebuilt
  from the fused call's arguments (errors and descriptions name them).
* ``name``: the routine, as the binder names it (``"matmul"``, ``"add"``,
  ``"lstm_unit_forward"``...): what :meth:`describe` prints and what the
  executor's fusion (:mod:`caffe2rnn.operators.rnn.fusion`) matches on.

The constructors below are the one home of each kind's declaration, so an
operator says *what* it calls (``BoundCall.product(a, b, out)``) and the
rules for reads, writes, threads and cost live here, next to each other.
Caffe2's executor (``caffe2/operators/recurrent_network_executor.h`` at
042e8ede4) read the same facts off the step net's operator definitions;
here they are read off the calls themselves, which is finer.
"""

import numpy as np

#: NumPy runs an element-wise loop without the GIL from this many elements on
#: (and so does the compiled executor's LoopCall, which reads
#: :attr:`BoundCall.releases_gil`).
UFUNC_NOGIL_SIZE = 500

#: What a product costs per multiply-add, and an element-wise op per element, in µs.
_PER_MULTIPLY_ADD = 4e-5
_PER_ELEMENT = 1e-3
_PER_LSTM_ELEMENT = 5e-3


class BoundCall:
    """``func(*args)`` and what it declares (module docstring)."""

    __slots__ = (
        "func",
        "args",
        "name",
        "_reads",
        "_writes",
        "releases_gil",
        "cost",
        "_sets",
        "_label",
        "part_ops",
    )

    def __init__(
        self,
        func,
        args,
        name,
        reads,
        writes,
        releases_gil=False,
        cost=0.5,
        sets=None,
        label=None,
    ):
        self.func, self.args, self.name = func, tuple(args), name
        self._reads = reads if reads is None or reads is _ARGS else tuple(reads)
        self._writes = writes if writes is None or writes is _ARGS else tuple(writes)
        self.releases_gil, self.cost = releases_gil, cost
        self._sets, self._label = sets, label
        # A fused call: the indices of the ops it stands for, one per part
        # (:mod:`caffe2rnn.operators.rnn.fusion`); None otherwise. One tuple
        # shared by every step (a plan holds T fused calls).
        self.part_ops = None

    #: Bound calls pass every argument by position (what the compiled executor
    #: expects of a call it may run through NumPy's inner loops).
    keywords = None

    def __call__(self):
        return self.func(*self.args)

    # A NumPy call of (a, b, out) reads a and b and writes out: its
    # declaration is read off its arguments rather than kept twice (a plan
    # holds T x ops calls).
    @property
    def reads(self):
        """The arrays (or blob tokens) this call reads; None: it cannot say."""
        if self._reads is _ARGS:
            return tuple(a for a in self.args[:-1] if isinstance(a, np.ndarray))
        return self._reads

    @property
    def sets(self):
        """For a call that only sets something: what it sets (blob tokens,
        the timestep's memory); None for a call that computes."""
        if self._sets is _ARGS:
            if self.name == ASSIGN:
                return list(self.writes)
            return [("memory", self.args[2].__array_interface__["data"][0])]  # timestep
        return self._sets

    @property
    def label(self):
        """What :meth:`describe` says instead of the routine and shapes, or None."""
        if self.name == TIMESTEP:
            return "timestep[0] = %d" % self.args[1]
        return self._label

    @property
    def writes(self):
        """The arrays (or blob tokens) this call writes; None: it cannot say."""
        if self._writes is _ARGS:
            if self.name == ASSIGN:
                return tuple(("blob", id(blob)) for blob in self.args[0])
            return self.args[-1:]
        return self._writes

    @property
    def parts(self):
        """A fused call's parts: ``[(call, op index), ...]``, the calls it
        computes at once, rebuilt from its arguments by the splitter its
        fused kernel registered (:data:`SPLITTERS`); None for other calls.
        Rebuilt, not kept: a plan holds T fused calls."""
        if not self.part_ops:
            return None
        return list(zip(SPLITTERS[self.name](self), self.part_ops))

    def __repr__(self):
        return "<BoundCall %s>" % self.describe()

    def describe(self):
        """One line: the label, or the routine and the shapes it is bound to."""
        if self.label is not None:
            return self.label
        return "%s(%s)" % (self.name, ", ".join(map(_shape, self.args)))

    def lines(self):
        """What :meth:`describe` says, one line per thing set (an assignment
        of several links is one call and several lines)."""
        if self.name == ASSIGN:
            blobs, values = self.args
            return ["%s = view %s" % (b.name, v.shape) for b, v in zip(blobs, values)]
        if self.parts:  # a fused call: what it computes, part by part
            first, *rest = (part.describe() for part, _ in self.parts)
            return ["%s: %s" % (self.name, first)] + ["  then %s" % text for text in rest]
        return [self.describe()]

    # --- the kinds of bound call ------------------------------------------
    @classmethod
    def product(cls, a, b, out):
        """``np.matmul(a, b, out)`` of matrices: a BLAS product."""
        m = a.shape[0] if a.ndim > 1 else 1
        k, n = a.shape[-1], b.shape[-1] if b.ndim > 1 else 1
        cost = 1.0 + m * k * n * _PER_MULTIPLY_ADD
        return cls(np.matmul, (a, b, out), "matmul", _ARGS, _ARGS, True, cost)

    @classmethod
    def elementwise(cls, ufunc, a, b, out):
        """``ufunc(a, b, out)`` (``np.add``, ``np.subtract``, ``np.multiply``)."""
        nogil = out.size >= UFUNC_NOGIL_SIZE
        cost = 0.5 + out.size * _PER_ELEMENT
        return cls(ufunc, (a, b, out), ufunc.__name__, _ARGS, _ARGS, nogil, cost)

    @classmethod
    def copy(cls, dst, src):
        """``np.copyto(dst, src)``."""
        nogil = dst.size >= UFUNC_NOGIL_SIZE
        cost = 0.5 + dst.size * _PER_ELEMENT
        return cls(np.copyto, (dst, src), "copyto", (src,), (dst,), nogil, cost)

    @classmethod
    def kernel(cls, func, name, args, reads, writes, releases_gil, size):
        """A caffe2rnn kernel (``caffe2rnn.kernels``) over ``size`` elements."""
        cost = 1.0 + size * _PER_LSTM_ELEMENT
        return cls(func, args, name, reads, writes, releases_gil, cost)

    @classmethod
    def assignment(cls, assign, blobs, values):
        """``assign(blobs, values)``: each blob's value set to a view made once
        (the link ops of a step; ``assign`` is the kernel path's ``assign_values``)."""
        return cls(assign, (blobs, values), ASSIGN, (), _ARGS, sets=_ARGS)

    @classmethod
    def timestep(cls, array, t):
        """``array[0] = t``: the step's timestep blob (args ``(0, t, array)``:
        its memory and its label are read off them when asked)."""
        return cls(_set_first, (0, t, array), TIMESTEP, (), _ARGS, sets=_ARGS)

    @classmethod
    def loop_copy(cls, copy):
        """A parameter copied into another layout once per loop
        (:class:`caffe2rnn.operators.fc_layout` ``_LoopCopy``)."""
        source = copy.source()
        reads = () if source is None else (source,)
        return cls(copy.refresh, (), "refresh", reads, (copy.value,), label=copy.what)


#: ``reads``/``writes`` of a NumPy call ``f(a, b, out)``, what an assignment or
#: a timestep sets: read off the call's arguments when asked (a plan holds T x
#: ops calls; keeping them too would cost a kilobyte per step).
_ARGS = object()


def _set_first(index, value, array):
    """``array[index] = value`` (the timestep's call)."""
    array[index] = value


#: Fused kernel name -> a function of a fused call returning the BoundCalls
#: it computes at once, in order (registered by the module that fuses them).
SPLITTERS = {}

#: The names of the calls that set rather than compute.
ASSIGN = "assign"
TIMESTEP = "timestep"


def _shape(a):
    return "x".join(map(str, a.shape)) if hasattr(a, "shape") else repr(a)
