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

from ...errors import ArgumentError


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
    A write is recorded as (rank of the step in ``steps``, op index).
    """

    def __init__(self, tensor, n_rows, steps, ready, links, netdef, where):
        self.tensor, self.n_rows, self.steps, self.where = tensor, n_rows, steps, where
        self.links = [link for link in links if link.external == tensor]
        self.first_read, self.first_write = first_uses(netdef)
        self.written = [None] * n_rows
        for r in ready:
            if 0 <= r < n_rows:
                self.written[r] = (-1, -1)
        for link in self.links:
            when = self.first_write.get(link.internal)
            if when is None:
                continue
            for rank, t in enumerate(steps):
                for r in self._span(link, t):
                    if self.written[r] is None or (rank, when) < self.written[r]:
                        self.written[r] = (rank, when)

    def _span(self, link, t):
        return range(t + link.offset, min(t + link.offset + link.window, self.n_rows))

    def check_link_reads(self):
        """Every row a link's view is read from was written by an earlier step
        (or earlier in the same step)."""
        for link in self.links:
            reads = self.first_read.get(link.internal)
            if reads is None or self.first_write.get(link.internal, reads + 1) <= reads:
                continue
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
        if self.written[r] is None or self.written[r] >= before:
            raise ArgumentError(
                "%srow %d of the %d rows of '%s' is never written before %s: it would be "
                "uninitialised memory (T = %d)"
                % (self.where, r, self.n_rows, self.tensor, reader, len(self.steps))
            )

    def check_written(self, rows, reader):
        """``rows`` are all written by the end of the run (read by ``reader``)."""
        end = (len(self.steps), 0)
        for r in rows:
            self.check_row(r, end, reader)
