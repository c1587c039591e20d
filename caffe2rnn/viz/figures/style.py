"""The drawn figures' look: the graph views' palette (:mod:`caffe2rnn.viz.style`), sizes, gates.

A colour means the same thing in a drawn figure as in a Graphviz view: a
link is the blue dashed line of ``viz.recurrent``, an alias the green one, a
state tensor the yellow of its cylinder, a gradient the orange of a gradient
blob, a step net the green box of a step-net cluster, a ``+=`` the red of an
accumulating ``Sum``. So every colour here is read from the graph views'
tables instead of being written twice.
"""

from ..style import BLOB_KINDS, CLUSTER_STYLES, EDGE_KINDS, OP_FAMILIES
from . import svg

#: The width every figure is drawn at, in px: it fits the docs' text column
#: (688 px, :data:`caffe2rnn.viz.sizing.PAGE_PX`) and a notebook's output
#: area, so a figure is shown at 100 % and its labels at their own size.
WIDTH = 672

# Sizes in px. The site check (``scripts/check_site.py``) wants every label of
# a drawn figure at :data:`MIN_PX` or more where the page shows it; NOTE, the
# smallest size a figure uses (row notes, keys, subscripts), is that floor.
TITLE = 13.5
LABEL = 12
SMALL = 11
NOTE = 10.5
#: The smallest text a drawn figure may have at page width, in px.
MIN_PX = NOTE
#: The sizes of the dense figures of steps 8, 10 and 12 (the forward rows, the
#: RecurrentNetwork op, BPTT, the backward step net): a reader met them at the
#: column's width and could not read 10.5 px notes there (round 12), so their
#: smallest label is READ_NOTE.
READ_SMALL = 12
READ_NOTE = 11.5

_state = BLOB_KINDS["state"][0]
_gradient = BLOB_KINDS["gradient"][0]
_param = BLOB_KINDS["param"][0]

STATE_FILL, STATE_EDGE = _state["fillcolor"], _state["color"]
GRADIENT_FILL, GRADIENT_EDGE = _gradient["fillcolor"], _gradient["color"]
PARAM_FILL, PARAM_EDGE = _param["fillcolor"], _param["color"]
INK, MUTED = svg.INK, svg.MUTED
INPUT_FILL, INPUT_EDGE = "#E8EAED", MUTED  # a net input: the grey pill of the graph views

LINK = EDGE_KINDS["link"][0]["color"]
ALIAS = EDGE_KINDS["alias"][0]["color"]
ACCUMULATE = EDGE_KINDS["accumulate"][0]["color"]

STEP_FILL, STEP_EDGE = CLUSTER_STYLES["step"]["fillcolor"], CLUSTER_STYLES["step"]["color"]
BACKWARD_FILL, BACKWARD_EDGE = (
    CLUSTER_STYLES["backward"]["fillcolor"],
    CLUSTER_STYLES["backward"]["color"],
)
RNN_FILL, RNN_EDGE = CLUSTER_STYLES["rnn"]["fillcolor"], CLUSTER_STYLES["rnn"]["color"]

COMPUTE = OP_FAMILIES["compute"][0]
ACTIVATION = OP_FAMILIES["activation"][0]
RNN_OP = OP_FAMILIES["rnn"][0]
SHAPE = OP_FAMILIES["shape"][0]  # Split, Concat...: the grey of the graph views

#: The four gates of an LSTM, each one colour (fill, text/edge) wherever it is drawn.
GATES = {
    "i": ("#D2E3FC", "#1A56B8"),
    "f": ("#FEEFC3", "#A85400"),
    "o": ("#CEEAD6", "#137333"),
    "g": ("#E9D5F5", "#6A1B9A"),
}
GATE_NAMES = {"i": "input", "f": "forget", "o": "output", "g": "cell candidate"}
