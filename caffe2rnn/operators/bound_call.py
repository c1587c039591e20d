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
* ``parts``: for a fused call, the calls it computes at once, each with its
  op's index in the step net (errors and descriptions name those ops).
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
        "reads",
        "writes",
        "releases_gil",
        "cost",
        "sets",
        "label",
        "parts",
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
        parts=None,
    ):
        self.func, self.args, self.name = func, tuple(args), name
        self.reads = None if reads is None else tuple(reads)
        self.writes = None if writes is None else tuple(writes)
        self.releases_gil, self.cost = releases_gil, cost
        self.sets, self.label = sets, label
        # A fused call: the ``(call, op index)`` pairs it computes at once
        # (:mod:`caffe2rnn.operators.rnn.fusion`); None otherwise.
        self.parts = parts

    #: Bound calls pass every argument by position (what the compiled executor
    #: expects of a call it may run through NumPy's inner loops).
    keywords = None

    def __call__(self):
        return self.func(*self.args)

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
        return cls(np.matmul, (a, b, out), "matmul", (a, b), (out,), True, cost)

    @classmethod
    def elementwise(cls, ufunc, a, b, out):
        """``ufunc(a, b, out)`` (``np.add``, ``np.subtract``, ``np.multiply``)."""
        nogil = out.size >= UFUNC_NOGIL_SIZE
        cost = 0.5 + out.size * _PER_ELEMENT
        reads = [x for x in (a, b) if isinstance(x, np.ndarray)]
        return cls(ufunc, (a, b, out), ufunc.__name__, reads, (out,), nogil, cost)

    @classmethod
    def copy(cls, dst, src):
        """``np.copyto(dst, src)``."""
        nogil = dst.size >= UFUNC_NOGIL_SIZE
        return cls(np.copyto, (dst, src), "copyto", (src,), (dst,), nogil, 0.5 + dst.size * 1e-3)

    @classmethod
    def kernel(cls, func, name, args, reads, writes, releases_gil, size):
        """A caffe2rnn kernel (``caffe2rnn.kernels``) over ``size`` elements."""
        cost = 1.0 + size * _PER_LSTM_ELEMENT
        return cls(func, args, name, reads, writes, releases_gil, cost)

    @classmethod
    def assignment(cls, assign, blobs, values):
        """``assign(blobs, values)``: each blob's value set to a view made once
        (the link ops of a step; ``assign`` is the kernel path's ``assign_values``)."""
        tokens = [("blob", id(blob)) for blob in blobs]
        return cls(assign, (blobs, values), ASSIGN, (), tokens, sets=tokens)

    @classmethod
    def timestep(cls, array, t):
        """``array[0] = t``: the step's timestep blob."""
        target = ("memory", array.__array_interface__["data"][0])
        label = "timestep[0] = %d" % t
        return cls(array.__setitem__, (0, t), TIMESTEP, (), (array,), sets=[target], label=label)

    @classmethod
    def loop_copy(cls, copy):
        """A parameter copied into another layout once per loop
        (:class:`caffe2rnn.operators.fc_layout` ``_LoopCopy``)."""
        source = copy.source()
        reads = () if source is None else (source,)
        return cls(copy.refresh, (), "refresh", reads, (copy.value,), label=copy.what)


#: The names of the calls that set rather than compute.
ASSIGN = "assign"
TIMESTEP = "timestep"


def _shape(a):
    return "x".join(map(str, a.shape)) if hasattr(a, "shape") else repr(a)
