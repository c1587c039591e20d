"""A plain-text progress bar for training loops: a terminal and a log file alike.

On a terminal the bar redraws one line (``\\r``); written to a file or a pipe
(``make demo > log``, CI) it prints a full line at every tenth of the run, so
the log shows the loss falling without thousands of carriage returns::

    char-rnn   [#########.....................]  300/1000  loss 2.1437  41.2 steps/s  eta 17s

No dependencies; the caller says what the numbers mean (``unit``).
"""

import sys
import time


def _duration(seconds):
    seconds = int(round(seconds))
    if seconds < 60:
        return "%ds" % seconds
    return "%dm%02ds" % divmod(seconds, 60)


class Progress:
    """``update(step, loss)`` after each of ``total`` steps; ``close()`` at the end.

    ``lines`` is how many lines a non-interactive stream gets (besides the
    last step, which is always printed).
    """

    def __init__(self, total, label, stream=None, width=30, lines=10, unit="steps"):
        self.total, self.label, self.width, self.unit = total, label, width, unit
        self.stream = sys.stdout if stream is None else stream
        isatty = getattr(self.stream, "isatty", None)
        self.interactive = bool(isatty and isatty())
        self.every = max(1, total // max(1, lines))
        self.start = time.perf_counter()
        self._open = False

    def line(self, step, loss):
        """The text of the bar after ``step`` steps with the latest ``loss``."""
        done = int(self.width * step / self.total) if self.total else self.width
        elapsed = time.perf_counter() - self.start
        rate = step / elapsed if elapsed > 0 else 0.0
        eta = (self.total - step) / rate if rate > 0 else 0.0
        return "%-10s [%s%s] %*d/%d  loss %.4f  %.1f %s/s  %s %s" % (
            self.label,
            "#" * done,
            "." * (self.width - done),
            len(str(self.total)),
            step,
            self.total,
            loss,
            rate,
            self.unit,
            "eta" if step < self.total else "took",
            _duration(eta if step < self.total else elapsed),
        )

    def update(self, step, loss):
        if self.interactive:
            self.stream.write("\r" + self.line(step, loss))
            self._open = True
            if step >= self.total:
                self.close()
        elif step >= self.total or step % self.every == 0:
            self.stream.write(self.line(step, loss) + "\n")
        self.stream.flush()

    def write(self, text):
        """Print ``text`` (e.g. a sample) without tearing the bar on a terminal."""
        self.close()
        self.stream.write(text.rstrip("\n") + "\n")
        self.stream.flush()

    def close(self):
        if self._open:
            self.stream.write("\n")
            self.stream.flush()
            self._open = False
