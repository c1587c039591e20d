"""LastNWindowCollector: keep the last N rows seen, across runs, in a ring buffer.

``LastNWindowCollector([last_n, next, data] → [last_n, next])``, both in place
(Caffe2's ``EnforceOneToOneInplace``), with ``num_to_collect = N`` (required,
> 0). Each run appends the rows of ``data`` (its first dim) to ``last_n``:

* until ``last_n`` holds N rows it grows, row ``next`` onwards being written;
* then it is a ring: the rows go to ``next, next + 1, ...`` modulo N, so
  ``last_n`` holds the last N rows seen, in ring order (Caffe2 promised no
  order); ``next`` (a 0-d int32) becomes where the following row goes;
* a ``data`` of more than N rows replaces ``last_n`` by its last N rows, and
  ``next`` becomes 0.

``last_n`` may start as an empty blob (``workspace.CreateBlob``): it takes
``data``'s type and row shape. An empty ``data`` changes nothing (it only
gives an uninitialised ``last_n`` its type and shape, as Caffe2's
``CopyFrom``).

Refused as Caffe2 did (``CAFFE_ENFORCE``): N ≤ 0, a 0-d ``data``, ``last_n``
rows of another shape, a ``next`` that is not 0-d or not below the rows
``last_n`` will hold. Refused here where Caffe2 would have written outside
the rows or lost them: a negative ``next``, a ``next`` so far past the rows
that the new ones would not fit, a ``last_n`` of another type than
``data`` (Caffe2 reallocated it, uninitialised) and a ``next`` that is not
int32 (likewise). While ``last_n`` is empty, ``next`` is reset to 0
whatever it holds, as the C++ did.

From E6 (042e8ede4) the op takes two optional inputs: a mutex (input 3, from
``CreateMutex``) held while it collects, and ``num_visited`` (input 4, in
place as output 2; a one-element int64): the count of rows seen, set to 0
while ``last_n`` is empty and increased by ``data``'s rows at each run. An
output 2 without input 4 must already hold one element, as the C++ enforced;
here it must be int64 too (the C++ reallocated another type, uninitialised).
E5's schema took exactly three inputs and two outputs; caffe2rnn accepts the
E6 form in every era.

Caffe2: caffe2/operators/last_n_window_collector.cc at 0cdd09da6 and 042e8ede4.
"""

import numpy as np

from ..errors import ArgumentError, DTypeError, ShapeError
from ..runtime.registry import register, register_gradient
from .atomic import mutex_input
from .base import Operator
from .gradient_maker import ShouldNotDoGradient

#: INPUT_TAGS(LAST_N_IN, NEXT_IN, DATA, MUTEX, NUM_VISITED_IN);
#: OUTPUT_TAGS(LAST_N, NEXT, NUM_VISITED) (042e8ede4)
_MUTEX, _NUM_VISITED = 3, 2


@register(
    "LastNWindowCollector",
    inputs=(3, 5),
    outputs=(2, 3),
    enforce_inplace=[(0, 0), (1, 1), (4, 2)],
)
class LastNWindowCollector(Operator):
    """Append data's rows to a ring buffer of the last ``num_to_collect`` rows."""

    def setup(self):
        self.n = self.args.single("num_to_collect", -1, int)
        if self.n <= 0:
            raise ArgumentError("num_to_collect must be > 0, got %d" % self.n)

    def run(self):
        if len(self.inputs) > _MUTEX:
            with mutex_input(self, _MUTEX):
                self.collect()
        else:
            self.collect()

    def collect(self):
        data = self.input(2)
        if not isinstance(data, np.ndarray) or data.ndim < 1:
            raise self.shape_error(2, "a tensor of at least 1 dim (its rows)")
        old = self.inputs[0].value
        initialized = isinstance(old, np.ndarray) and old.size > 0
        if initialized:
            if old.ndim != data.ndim or old.shape[1:] != data.shape[1:]:
                raise self.shape_error(0, "rows of shape %s like input 2" % (data.shape[1:],))
            if old.dtype != data.dtype:
                raise DTypeError(
                    "input 0 ('%s') holds %s rows; expected %s like input 2 ('%s')"
                    % (self.input_name(0), old.dtype, data.dtype, self.input_name(2))
                )
        entries = data.shape[0]
        if len(self.outputs) > _NUM_VISITED:
            self._count_visited(initialized, entries)
        if entries == 0:
            if not initialized:
                self.output(0, data.shape, data.dtype)
            return
        to_copy = min(entries, self.n)
        held = old.shape[0] if initialized else 0
        rows = min(self.n, held + to_copy)
        start = self._next(rows) if initialized else self._reset_next()
        first = min(to_copy + start, self.n) - start
        if entries <= self.n and start + first > rows:
            raise ShapeError(
                "input 1 ('%s') = %d: %d new rows from there do not fit the %d rows of "
                "'%s'" % (self.input_name(1), start, first, rows, self.input_name(0))
            )
        kept = old[:held].copy() if held else None
        out = self.output(0, (rows,) + data.shape[1:], data.dtype)
        if held:
            out[:held] = kept
        if entries > self.n:
            out[...] = data[entries - self.n :]
            following = 0
        else:
            out[start : start + first] = data[:first]
            out[: to_copy - first] = data[first:to_copy]
            following = (start + to_copy) % self.n
        self.output(1, (), np.int32)[...] = following

    def _count_visited(self, initialized, entries):
        """Output 2: ``*num_visited`` (0 while last_n is empty) ``+= entries``."""
        blob = self.outputs[_NUM_VISITED]
        value = blob.value
        if not isinstance(value, np.ndarray) or value.size != 1:
            raise ShapeError(
                "output 2 ('%s') must hold one element (num_visited; CAFFE_ENFORCE_EQ(1, "
                "size)), got %s" % (blob.name, getattr(value, "shape", type(value).__name__))
            )
        if value.dtype != np.int64:
            raise DTypeError(
                "output 2 ('%s') is %s; num_visited is int64" % (blob.name, value.dtype)
            )
        visited = 0 if not initialized else int(value.reshape(-1)[0])
        if visited < 0:
            raise ShapeError(
                "output 2 ('%s') = %d; num_visited must be >= 0" % (blob.name, visited)
            )
        out = self.output(_NUM_VISITED, value.shape, np.int64)
        out.reshape(-1)[0] = visited + entries

    def _reset_next(self):
        """An empty ``last_n``: ``if (!output_initialized) *next_data = 0;`` whatever
        ``next`` held (any type: ``mutable_data<int32_t>()`` reallocated it), after
        ``CAFFE_ENFORCE_EQ(0, next->ndim())`` (a blob that is not a tensor becomes one)."""
        value = self.inputs[1].value
        if isinstance(value, np.ndarray) and value.ndim != 0:
            raise self.shape_error(1, "a 0-d tensor (the next row to write)")
        return 0

    def _next(self, rows):
        """Input 1: a 0-d int32 in ``[0, rows)``."""
        nxt = self.input(1)
        if not isinstance(nxt, np.ndarray) or nxt.dtype != np.int32:
            raise DTypeError("input 1 ('%s') must be a 0-d int32 tensor" % self.input_name(1))
        if nxt.ndim != 0:
            raise self.shape_error(1, "a 0-d tensor (the next row to write)")
        start = int(nxt)
        if not 0 <= start < rows:
            raise ShapeError(
                "input 1 ('%s') = %d; expected it in [0, %d) (the rows of '%s')"
                % (self.input_name(1), start, rows, self.input_name(0))
            )
        return start


register_gradient("LastNWindowCollector")(ShouldNotDoGradient)
