"""Graphviz drawings that teach what ``recurrent_net`` builds.

Every function returns a ``graphviz.Digraph``: its DOT text is
``graph.source`` (no Graphviz needed); :func:`render` writes SVG/PNG/PDF and
:func:`show` displays it in Jupyter. One palette and legend
(:mod:`caffe2rnn.viz.style`) is shared by all views:

* :func:`net` — Caffe2 ``net_drawer``'s op/blob view (or ops only);
* :func:`ssa` — every blob version ``name@v`` as ``core.get_ssa`` numbers it;
* :func:`scratches` — the forward cell with what the backward step reads;
* :func:`recurrent` — a RecurrentNetwork op with its step nets, links, aliases;
* :func:`backward` — its backward step net as the C++ op runs it;
* :func:`timeline` — the (T+1)-row state tensors and the rows each step uses;
* :func:`unroll` — one column per timestep, left to right;
* :func:`backward_timeline` — the backward steps in the order they run and the
  gradient rows each reads and writes;
* :func:`compare` — the historical versions' op arguments side by side;
* :func:`stepper` — a slider over t (forward and backward) highlighting the rows
  each step reads and writes (:func:`stepper_html`: the same without a kernel).

Beside these generated views, :mod:`caffe2rnn.viz.figures` holds figures
*drawn* to explain (the forward loop as rows of a tensor, backpropagation
through time, the LSTM cell beside torch's, why a step net, the history
timeline): ``viz.figures.fig_bptt()`` and the like, pure Python, no Graphviz.

Every view takes ``width="page"``: laid out for a text column of about 700 px
(top to bottom, rows, the legend below, long sequences collapsed; see
:mod:`caffe2rnn.viz.sizing`), with ``graph.full_size()`` the same view at full
size, which :func:`show` keeps one click away. The default, ``"full"``, is
Graphviz's natural layout (what ``python -m caffe2rnn render`` draws unless
asked for ``--width page``).
"""

from .. import gradient_checker as _gradient_checker
from . import figures  # noqa: F401
from .backward_timeline import backward_timeline  # noqa: F401
from .compare import compare  # noqa: F401
from .netdraw import net  # noqa: F401
from .recurrent import backward, recurrent  # noqa: F401
from .render import pipe as _pipe
from .render import render, show  # noqa: F401
from .scratches import scratches, scratches_of  # noqa: F401
from .ssa import ssa  # noqa: F401
from .stepper import stepper, stepper_html  # noqa: F401
from .timeline import timeline  # noqa: F401
from .unroll import unroll  # noqa: F401

# ``NetGradientChecker.CompareNets(print_net_images=True)`` draws with this.
_gradient_checker.register_net_png_drawer(lambda net_: _pipe(net(net_), "png"))
