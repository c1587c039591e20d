"""Summarize: a tensor's min, max, mean and standard deviation, as a tensor or a log line.

``Summarize([X] → [(Y)])`` computes four statistics of all of X's elements and
writes them, when the op has an output, into ``Y = [min, max, mean, std]`` (a
1-D tensor of 4). ``std`` is the unbiased one, ``sqrt(Σ (x − mean)² / (n − 1))``,
and 0 for a single element. ``model_helper`` lists Summarize among the ops a
model may call, to watch a blob during training.

With ``to_file=1`` each run also appends the line ``"min max mean std"`` to
``<root folder>/<X's name>.summary`` (``/`` in the name becomes ``#``), in C++'s
default number format (six significant digits, as ``%g``). The root folder is
the workspace's (``workspace.ResetWorkspace(root)``; ``"."`` by default, the
current directory), and the file is created empty when the operator is
created, as Caffe2 opened it for writing in the operator's constructor.

As in Caffe2, min and max start from the first element and skip NaNs after it
(C++'s ``std::min``/``std::max`` never pick a NaN), while a NaN anywhere makes
the mean and std NaN. The sums are in double precision, as from Caffe2
ade6d89b6 (2017-11-09); before, they were in float. X must hold at least one
element: Caffe2 042e8ede4 enforced it; 0cdd09da6 read the first element of an
empty tensor. Summarize has no gradient (``SHOULD_NOT_DO_GRADIENT``).

Caffe2: caffe2/operators/summarize_op.{h,cc} (at 0cdd09da6 and 042e8ede4).
"""

import math
import os

import numpy as np

from ..errors import FileAccessError
from ..runtime.registry import register, register_gradient
from .base import Operator
from .gradient_maker import ShouldNotDoGradient

#: The extension of the file ``to_file=1`` writes (Caffe2's ``kSummaryzeOpExtension``).
EXTENSION = ".summary"


def summary_path(root_folder, blob_name):
    """The file Summarize(to_file=1) appends to for the blob ``blob_name``."""
    return os.path.join(root_folder, blob_name.replace("/", "#") + EXTENSION)


def statistics(x):
    """``(min, max, mean, std)`` of every element of ``x`` (at least one), as Caffe2
    computed them (module docstring)."""
    flat = x.reshape(-1)
    n = flat.size
    if np.isnan(flat[0]):
        low = high = flat[0]
    else:
        low, high = np.fmin.reduce(flat), np.fmax.reduce(flat)
    mean = flat.mean(dtype=np.float64)
    std = 0.0 if n == 1 else math.sqrt(np.square(flat - mean, dtype=np.float64).sum() / (n - 1))
    return float(low), float(high), float(mean), std


@register("Summarize", inputs=1, outputs=(0, 1))
class Summarize(Operator):
    """X's ``[min, max, mean, std]`` into Y and/or a ``.summary`` file (module docstring)."""

    def setup(self):
        self.to_file = self.args.single("to_file", 0, int) != 0
        self.path = None
        if self.to_file:
            self.path = summary_path(self.ws.root_folder, self.def_.input[0])
            try:
                open(self.path, "w").close()
            except OSError as exc:
                raise FileAccessError(
                    "Failed to open summarize file for tensor %s: %s" % (self.def_.input[0], exc)
                ) from exc

    def run(self):
        x = self.float_input(0)
        if x.size == 0:  # summarize_op.cc, 042e8ede4: CAFFE_ENFORCE_GT(N, 0)
            raise self.shape_error(0, "at least one element")
        stats = statistics(x)
        if self.to_file:
            try:
                with open(self.path, "a") as log:
                    log.write("%g %g %g %g\n" % stats)
            except OSError as exc:
                raise FileAccessError(
                    "cannot append the summary of '%s' to %s: %s"
                    % (self.input_name(0), self.path, exc)
                ) from exc
        if self.outputs:
            np.copyto(self.output(0, (4,), x.dtype), stats)


register_gradient("Summarize")(ShouldNotDoGradient)
