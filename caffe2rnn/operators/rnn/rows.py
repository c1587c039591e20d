"""Which rows of a recurrent tensor are written before they are read.

A recurrent op allocates its tensors uninitialised (``Resize``, as Caffe2
did): the (T + k)-row state tensors forward, ``<state>_grad`` and the input
gradient backward. Their rows are filled by the steps, through links: at step
t a link ``(offset, window)`` spans rows ``t + offset .. t + offset + window
- 1``. It *writes* them when a step-net op outputs the link's view, it
*reads* them when an op reads the view before any op writes it.

:class:`RowSchedule` replays a run's order of steps (t = 0 .. T-1 forward,
T-1 .. 0 backward) on paper and answers, before the op writes anything,
whether a step or an output would see a row nothing wrote. Such a row holds
whatever the allocator left there -- the silent wrong results a bad link
offset or a (k, N, D) initial state with ``recurrent_net``'s links gave
(Caffe2 042e8ede4 read them too).
"""

import numpy as np

from ...errors import ArgumentError

#: ``written``'s mark of a row nothing writes (larger than any write's key).
_NEVER = np.iinfo(np.int64).max


def first_uses(netdef):
    """({blob: index of the first op reading it}, {blob: index of the first op writing it})."""
    first_read, first_write = {}, {}
    for i, op in enumerate(netdef.op):
        for name in op.input:
            first_read.setdefault(name, i)
        for name in op.output:
            first_write.setdefault(name, i)
    return first_read, first_write


class RowSchedule:
    """When each row of one tensor is first written, in the order steps run.

    ``steps`` lists the timesteps in run order; ``ready`` the rows valid
    before the first step (initial states forward, the zeroed tail backward).
    A write is recorded as (rank of the step in ``steps``, op index), kept as
    one integer per row that orders as the pair does (:meth:`key`): the
    replay is a few array operations per link, not T Python iterations (at
    T = 10,000 the per-row loop cost a quarter of a second of the first run).
    Link offsets and windows are >= 0 (the argument reader refuses others),
    so every row a link spans is >= 0.
    """

    def __init__(self, tensor, n_rows, steps, ready, links, netdef, where):
        self.tensor, self.n_rows, self.steps, self.where = tensor, n_rows, steps, where
        self.links = [link for link in links if link.external == tensor]
        self.first_read, self.first_write = first_uses(netdef)
        self._ops = len(netdef.op) + 2  # op indices -1 .. len - 1, and one more
        self._t = np.asarray(steps, dtype=np.int64).reshape(-1)
        self._ranks = np.arange(len(self._t), dtype=np.int64)
        #: per row, the key of its first write, or _NEVER
        self.written = np.full(n_rows, _NEVER, np.int64)
        for r in ready:
            if 0 <= r < n_rows:
                self.written[r] = self.key(-1, -1)
        for link in self.links:
            when = self.first_write.get(link.internal)
            if when is None:
                continue
            keys = self.key(self._ranks, when)
            for rows, inside in self._spans(link):
                np.minimum.at(self.written, rows[inside], keys[inside])

    def key(self, rank, op):
        """The integer standing for the write (or read) ``(rank, op)``."""
        return (rank + 1) * self._ops + (op + 1)

    def _spans(self, link):
        """Per row of the link's window, ``(rows, inside)``: that row at each
        step in run order, and which of them lie in the tensor."""
        for w in range(link.window):
            rows = self._t + (link.offset + w)
            yield rows, rows < self.n_rows

    def _span(self, link, t):
        return range(t + link.offset, min(t + link.offset + link.window, self.n_rows))

    def check_link_reads(self):
        """Every row a link's view is read from was written by an earlier step
        (or earlier in the same step)."""
        for link in self.links:
            reads = self.first_read.get(link.internal)
            if reads is None or self.first_write.get(link.internal, reads + 1) <= reads:
                continue
            before = self.key(self._ranks, reads)
            if all(
                (self.written[rows[inside]] < before[inside]).all()
                for rows, inside in self._spans(link)
            ):
                continue
            # Some row is read unwritten: find the first, in run order, to name it.
            for rank, t in enumerate(self.steps):
                for r in self._span(link, t):
                    self.check_row(
                        r,
                        (rank, reads),
                        "link '%s' (offset %d, window %d) reads it at timestep %d"
                        % (link.internal, link.offset, link.window, t),
                    )

    def check_row(self, r, before, reader):
        """Row ``r`` must have been written before ``before`` = (rank, op index)."""
        if not 0 <= r < self.n_rows:
            return  # out of the tensor: the link's own bounds check reports it
        if self.written[r] >= self.key(*before):
            raise ArgumentError(
                "%srow %d of the %d rows of '%s' is never written before %s: it would be "
                "uninitialised memory (T = %d)"
                % (self.where, r, self.n_rows, self.tensor, reader, len(self.steps))
            )

    def check_written(self, rows, reader):
        """``rows`` are all written by the end of the run (read by ``reader``)."""
        end = (len(self.steps), 0)
        rows = np.asarray(rows, dtype=np.int64).reshape(-1)
        inside = rows[(rows >= 0) & (rows < self.n_rows)]
        if (self.written[inside] < self.key(*end)).all():
            return
        for r in rows.tolist():  # name the first row left unwritten
            self.check_row(r, end, reader)
