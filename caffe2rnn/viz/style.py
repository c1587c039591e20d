"""One palette and one legend for every caffe2rnn drawing.

Caffe2's ``net_drawer`` had two styles: every operator a green filled box
(``#0F9D58``, white text) and every blob an octagon. That is enough to read a
small net but not to *teach* one: a learner also needs to see which blobs are
parameters, which are gradients, which a recurrent step keeps for the backward
pass and how step nets are tied to the big (T+1)-row state tensors. The
choices below follow Caffe2's own ``net_drawer.py`` where it had one and
common diagram practice (TensorBoard, Netron) elsewhere:

* operators are boxes coloured by family (net_drawer's green for plain
  compute ops, other hues for activations, shape ops, accumulation, RNN
  plumbing); gradient operators get a rounded, lighter box;
* blobs are ellipses; graph inputs/outputs are grey *pills*; parameters are
  blue; gradient blobs orange with a dashed border; scratch blobs (kept per
  timestep for the backward pass) grey dotted; recompute blobs purple dotted;
  state tensors are cylinders (storage that outlives one step);
* links and aliases are dashed edges labelled with their offset and window.

Every drawing is built on a :class:`~caffe2rnn.viz.canvas.Canvas`, which
remembers which of these styles it used and appends a legend naming exactly
those, so the key in each figure matches the figure. Text reaches Graphviz
through :func:`dot_text` (plain labels) or :func:`html_text` (tables), each
applied once.
"""

import html

import graphviz

FONT = "Helvetica"

# Operator families: fill colour, and the op types in each. Anything not
# listed is "compute" and keeps net_drawer's green.
OP_FAMILIES = {
    "compute": ("#0F9D58", ()),
    "activation": (
        "#E67C00",
        ("Sigmoid", "Tanh", "Relu", "Softmax", "LSTMUnit", "SoftmaxWithLoss"),
    ),
    "shape": (
        "#5F6368",
        (
            "Reshape",
            "Concat",
            "Split",
            "Transpose",
            "Squeeze",
            "ExpandDims",
            "Copy",
            "Alias",
            "CopyOnDeviceLike",
        ),
    ),
    "accumulate": ("#C5221F", ("Sum",)),
    "rnn": (
        "#7B1FA2",
        (
            "RecurrentNetwork",
            "RecurrentNetworkGradient",
            "rnn_internal_accumulate_gradient_input",
            "rnn_internal_apply_link",
        ),
    ),
}

# Blob kinds, in legend order: (node attributes, legend text).
BLOB_KINDS = {
    "blob": (
        {"shape": "ellipse", "style": "filled", "fillcolor": "#FFFFFF", "color": "#202124"},
        "blob",
    ),
    "external_input": (
        {"shape": "box", "style": "rounded,filled", "fillcolor": "#E8EAED", "color": "#5F6368"},
        "net input (external)",
    ),
    "external_output": (
        {
            "shape": "box",
            "style": "rounded,filled,bold",
            "fillcolor": "#E8EAED",
            "color": "#202124",
        },
        "net output (external)",
    ),
    "undefined": (
        {
            "shape": "box",
            "style": "rounded,filled,dashed",
            "fillcolor": "#FCE8E6",
            "color": "#C5221F",
        },
        "read before written, not declared",
    ),
    "param": ({"style": "filled", "fillcolor": "#D2E3FC", "color": "#1A73E8"}, "parameter"),
    "gradient": (
        {"style": "filled,dashed", "fillcolor": "#FEEFC3", "color": "#E37400"},
        "gradient blob",
    ),
    "scratch": (
        {"style": "filled,dotted", "fillcolor": "#DADCE0", "color": "#202124", "penwidth": "2"},
        "scratch: kept per step for backward",
    ),
    # a double outline: loud beside the other marks (a thicker border alone went unseen)
    "read_by_backward": ({"penwidth": "2", "peripheries": "2"}, "read by the backward step"),
    "recompute": (
        {"style": "filled,dotted", "fillcolor": "#E9D5F5", "color": "#7B1FA2", "penwidth": "2"},
        "recomputed on backward",
    ),
    "renamed": (
        {"style": "filled,dashed", "fillcolor": "#FFD7A8", "color": "#B06000", "penwidth": "2"},
        "renamed by the C++ op (_tmpstep)",
    ),
    "accum": (
        {"style": "filled,dashed", "fillcolor": "#F6C7C3", "color": "#C5221F"},
        "_accum: internal gradient part",
    ),
    "state": (
        {"shape": "cylinder", "style": "filled", "fillcolor": "#FFF7D6", "color": "#B08D00"},
        "state tensor, (T+1) rows",
    ),
    "collapsed": (
        {
            "shape": "box",
            "style": "rounded,filled",
            "fillcolor": "#FFFFFF",
            "color": "#5F6368",
            "penwidth": "1.5",
        },
        "a net's ops, listed (collapsed)",
    ),
    "backward_step": (
        {"shape": "box", "style": "filled", "fillcolor": "#FEEFC3", "color": "#E37400"},
        "one run of the backward step net",
    ),
}

# Edge kinds: (attributes, legend text).
EDGE_KINDS = {
    "data": ({"color": "#5F6368"}, "reads / writes"),
    "link": (
        {"style": "dashed", "color": "#1A73E8", "fontcolor": "#1A73E8"},
        "link: view of rows t+offset",
    ),
    "alias": (
        {"style": "dashed", "color": "#188038", "fontcolor": "#188038"},
        "alias: view from row offset",
    ),
    "reference": ({"style": "dotted", "color": "#5F6368"}, "reference (same blob every step)"),
    "recurrent": (
        {"color": "#C5221F", "penwidth": "2", "fontcolor": "#C5221F"},
        "recurrent: step t feeds t+1",
    ),
    "rename": ({"style": "dotted", "color": "#B06000", "fontcolor": "#B06000"}, "renamed blob"),
    "accumulate": (
        {"color": "#C5221F", "penwidth": "1.5", "fontcolor": "#C5221F", "arrowhead": "empty"},
        "+= gradient accumulated",
    ),
    "inplace": (
        {"style": "dotted", "color": "#C5221F", "arrowhead": "none"},
        "same buffer (in-place)",
    ),
    # the op's last output: a blob holding its step workspaces, not a view of a tensor
    "workspaces": (
        {"style": "dotted", "color": "#7B1FA2", "penwidth": "1.2"},
        "op output: its step workspaces",
    ),
}

CLUSTER_STYLES = {
    "rnn": {"style": "rounded,filled", "fillcolor": "#F8F0FC", "color": "#7B1FA2"},
    "step": {"style": "rounded,filled", "fillcolor": "#F1F8F4", "color": "#0F9D58"},
    "backward": {"style": "rounded,filled", "fillcolor": "#FEF7E0", "color": "#E37400"},
    "time": {"style": "rounded,filled", "fillcolor": "#F8F9FA", "color": "#9AA0A6"},
    "state": {"style": "rounded,dashed", "color": "#B08D00", "fillcolor": "#FFFFFF"},
    "side": {"style": "invis"},
    "now": {"style": "rounded,filled,bold", "fillcolor": "#FEF7E0", "color": "#E37400"},
}

# Blob kinds that decide the shape/fill; later ones win.
KIND_PRIORITY = [
    "blob",
    "external_input",
    "external_output",
    "undefined",
    "param",
    "gradient",
    "accum",
    "renamed",
    "read_by_backward",
    "recompute",
    "scratch",
    "state",
    "collapsed",
]


def op_family(op_type):
    for family, (_, types) in OP_FAMILIES.items():
        if op_type in types:
            return family
    return "compute"


def accumulates_gradient(op):
    """A Sum belongs to the red "accumulate" family only when it adds gradients."""
    return is_gradient_op(op) or any(is_gradient_name(name) for name in op.output)


def is_gradient_op(op):
    """Caffe2 marks generated ops with ``is_gradient_op``; older ones only by name
    (``StopGradient`` is a forward op: it only stops the gradient builder)."""
    return op.is_gradient_op or (op.type.endswith("Gradient") and op.type != "StopGradient")


def is_gradient_name(name):
    """Caffe2's gradient naming: ``x_grad``, ``x_grad_autosplit_0``, ``x_grad_accum``..."""
    return "_grad" in name


def wrap(text, width=24, breaks="/"):
    """Break long blob paths after '/' (and any other character of ``breaks``,
    e.g. '_' on a page) so labels stay narrow; the break character ends the
    line, so the lines joined give the name back."""
    text = str(text)
    if len(text) <= width or not any(c in text for c in breaks):
        return text
    pieces, piece = [], ""
    for char in text:
        piece += char
        if char in breaks:
            pieces.append(piece)
            piece = ""
    pieces.append(piece)
    lines, line = [], ""
    for piece in pieces:
        if line and len(line + piece) > width:
            lines.append(line)
            line = piece
        else:
            line += piece
    lines.append(line)
    return "\n".join(lines)


def wrap_name(text, width=26, fallback=22):
    """A blob name broken after '/' only, so no part of it is split (``lstm/lstm/`` +
    ``hidden_t_prev_states``, never ``hidden_t_`` + ``prev_states``); a name with a
    part longer than ``width`` (attention's
    ``attention_weighted_encoder_context_t_prev``) also breaks after '_', at
    ``fallback`` characters, as page views did before."""
    text = str(text)
    if max(len(part) for part in text.split("/")) <= width:
        return wrap(text, width, "/")
    return wrap(text, fallback, "/_")


def html_text(text):
    """Text for an HTML-like label (tables): ``&``, ``<``, ``>`` and quotes as entities."""
    return html.escape(str(text), quote=True)


def dot_text(text):
    """Text for a plain DOT label, shown exactly as given.

    In a DOT string Graphviz reads ``\\n``, ``\\l``, ``\\N`` and ``\\"`` as
    escapes and ``&amp;`` as an entity, and the ``graphviz`` package treats
    ``<...>`` as an HTML label. So backslashes are doubled, ``&`` becomes
    ``&amp;`` and the result is marked as not HTML; the package then escapes
    the quotes. Line breaks stay line breaks. Called once, by the canvas, on
    every label it writes.
    """
    return graphviz.nohtml(str(text).replace("\\", "\\\\").replace("&", "&amp;"))


def op_label(op, index, width=28, breaks="/"):
    """net_drawer's label, ``"<name>/<Type> (op#<i>)"``, wrapped to stay narrow."""
    text = "%s (op#%d)" % (op.type, index)
    return wrap(op.name + "/" + text, width, breaks) if op.name else text
