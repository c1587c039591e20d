"""A recurrent cell whose blob names the caller chooses, and the names an SVG shows.

Shared by ``test_viz_names.py`` and the diagram fuzzer (``tests/fuzz``): the
cell is ``a = x * h_prev; b = a + w; h = tanh(b)`` with every name given, so
names that look alike (``a:b``, ``a_b``) or carry DOT/HTML syntax (``&amp;``,
``\\"``) reach every view.
"""

import xml.etree.ElementTree as ET

from caffe2rnn import core
from caffe2rnn.recurrent import recurrent_net

SVG = "{http://www.w3.org/2000/svg}"
ROLES = ("x", "h_prev", "a", "b", "h", "w")


def cell_and_op(names):
    """``names``: {role: blob name} for the roles of :data:`ROLES`. Returns the
    cell ``NetDef`` and the ``RecurrentNetwork`` op ``recurrent_net`` builds."""
    n = dict(zip(ROLES, ROLES), **names)
    cell = core.Net("cell")
    cell.AddExternalInputs(n["x"], n["h_prev"], n["w"])
    cell.Mul([n["x"], n["h_prev"]], n["a"])
    cell.Sum([n["a"], n["w"]], n["b"])
    cell.Tanh(n["b"], n["h"])
    cell.AddExternalOutputs(core.BlobReference(n["h"]))
    net = core.Net("outer")
    recurrent_net(net, cell, [(n["x"], "seq")], [(n["h_prev"], "h0")], {n["h_prev"]: n["h"]})
    (op,) = [o for o in net.Proto().op if o.type == "RecurrentNetwork"]
    return cell.Proto(), op


def node_texts(svg):
    """The text of every node of a rendered SVG, its lines joined without
    separator (labels wrap after '/' and '_'), as the reader sees it."""
    root = ET.fromstring(svg)
    texts = []
    for group in root.iter(SVG + "g"):
        if (group.get("class") or "").split()[:1] != ["node"]:
            continue
        lines = [t.text or "" for t in group.iter(SVG + "text")]
        texts.append("".join(lines))
    return texts
