"""Figures drawn to explain, the way a textbook draws them (not laid out by Graphviz).

Each is a function returning a :class:`~caffe2rnn.viz.figures.svg.Figure`
(shown by Jupyter, ``.save(path)`` writes SVG or PNG), and each is written to
``docs/_static/diagrams/<name>.svg`` by ``docs/make_diagrams.py``:

* :func:`fig_step_net_idea` — one operator with a step net vs unrolling;
* :func:`fig_forward_rows` — the forward loop as rows of the states tensor;
* :func:`fig_bptt` — backpropagation through time, row by row;
* :func:`fig_lstm_cell` — the LSTM cell in Caffe2's blobs beside torch.nn.LSTM's;
* :func:`fig_history_timeline` — the eras, changes and bug fixes, 2016-12 → 2018-03 → PyTorch.
"""

from .bptt import fig_bptt
from .forward_rows import fig_forward_rows
from .history_timeline import fig_history_timeline
from .lstm_cell import fig_lstm_cell
from .step_net_idea import fig_step_net_idea

#: name -> function, in the order the learner meets them.
FIGURES = {
    "fig_step_net_idea": fig_step_net_idea,
    "fig_forward_rows": fig_forward_rows,
    "fig_bptt": fig_bptt,
    "fig_lstm_cell": fig_lstm_cell,
    "fig_history_timeline": fig_history_timeline,
}

__all__ = list(FIGURES)
