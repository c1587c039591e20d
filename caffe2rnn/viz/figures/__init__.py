"""Figures drawn to explain, the way a textbook draws them (not laid out by Graphviz).

Each is a function returning a :class:`~caffe2rnn.viz.figures.svg.Figure`
(shown by Jupyter, ``.save(path)`` writes SVG or PNG), and each is written to
``docs/_static/diagrams/<name>.svg`` by ``docs/make_diagrams.py``. Every blob
name in them is the name the path's ``rnn_cell.LSTM(..., scope="lstm")`` (or
the cell the figure is about) creates, checked by ``tests/viz``:

* :func:`fig_step_net_idea` — one operator with a step net vs unrolling;
* :func:`fig_parent_workspace` — a child workspace reads and writes its parent's blobs (step 2);
* :func:`fig_gradient_ops` — what ``AddGradientOperators([loss])`` appends (step 4);
* :func:`fig_models` — a ModelHelper after one ``brew.fc``: two nets, one workspace (step 6);
* :func:`fig_forward_rows` — the forward loop as rows of the states tensor;
* :func:`fig_recurrent_op` — one RecurrentNetwork op: inputs, insides, outputs;
* :func:`fig_recurrent_net_stages` — ``recurrent_net``'s stages: a cell in, one op out;
* :func:`fig_pass_through_link` — after a pass-through ``Sum``, which blob a backward link views;
* :func:`fig_name_prefixes` — why ``lstm/lstm/...``: three prefixes, added by three pieces of code;
* :func:`fig_bptt` — backpropagation through time, row by row;
* :func:`fig_shared_blobs_ws` — the gradient op's three levels of workspaces: a blob no step
  workspace has is created once, in ``shared_blobs_ws`` (step 13);
* :func:`fig_tmpstep` — one ``_tmpstep`` buffer, in ``shared_blobs_ws``, for all timesteps;
* :func:`fig_backward_step_net` — what the gradient op runs at each step;
* :func:`fig_recurrent_gradient_op` — the RecurrentNetworkGradient op's inputs and outputs,
  in order;
* :func:`fig_lstm_cell` — the LSTM cell in Caffe2's blobs beside torch.nn.LSTM's;
* :func:`fig_gru_cell` — Caffe2's GRU cell (era E6) beside torch.nn.GRU;
* :func:`fig_masking` — masking by sequence length: padded rows repeat the last state;
* :func:`fig_attention_step` — one step of LSTMWithAttention, and what runs before;
* :func:`fig_history_timeline` — the eras, changes and bug fixes, 2016-12 → 2018-03 →
  PyTorch, and its two halves :func:`fig_history_2017` and :func:`fig_history_2018`.
"""

from .attention_step import fig_attention_step
from .backward_step_net import fig_backward_step_net
from .bptt import fig_bptt
from .forward_rows import fig_forward_rows
from .gradient_ops import fig_gradient_ops
from .gru_cell import fig_gru_cell
from .history_timeline import fig_history_2017, fig_history_2018, fig_history_timeline
from .lstm_cell import fig_lstm_cell
from .masking import fig_masking
from .models import fig_models
from .name_prefixes import fig_name_prefixes
from .parent_workspace import fig_parent_workspace
from .pass_through_link import fig_pass_through_link
from .recurrent_gradient_op import fig_recurrent_gradient_op
from .recurrent_net_stages import fig_recurrent_net_stages
from .recurrent_op import fig_recurrent_op
from .shared_blobs_ws import fig_shared_blobs_ws
from .step_net_idea import fig_step_net_idea
from .tmpstep import fig_tmpstep

#: name -> function, in the order the learner meets them.
FIGURES = {
    "fig_step_net_idea": fig_step_net_idea,
    "fig_parent_workspace": fig_parent_workspace,
    "fig_gradient_ops": fig_gradient_ops,
    "fig_models": fig_models,
    "fig_forward_rows": fig_forward_rows,
    "fig_recurrent_op": fig_recurrent_op,
    "fig_bptt": fig_bptt,
    "fig_shared_blobs_ws": fig_shared_blobs_ws,
    "fig_tmpstep": fig_tmpstep,
    "fig_backward_step_net": fig_backward_step_net,
    "fig_recurrent_gradient_op": fig_recurrent_gradient_op,
    "fig_recurrent_net_stages": fig_recurrent_net_stages,
    "fig_pass_through_link": fig_pass_through_link,
    "fig_name_prefixes": fig_name_prefixes,
    "fig_lstm_cell": fig_lstm_cell,
    "fig_gru_cell": fig_gru_cell,
    "fig_masking": fig_masking,
    "fig_attention_step": fig_attention_step,
    "fig_history_timeline": fig_history_timeline,
    "fig_history_2017": fig_history_2017,
    "fig_history_2018": fig_history_2018,
}

__all__ = list(FIGURES)
