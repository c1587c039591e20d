"""Fuzzing the drawings with blob names: every blob its own node, every name shown as it is.

A recurrent cell ``a = x * h_prev; b = a + w; h = tanh(b)`` gets random,
distinct blob names built from pieces that mean something to DOT, HTML or the
graphviz package (``:`` a port, ``&amp;`` an entity, ``\\"`` an escaped quote,
``<...>`` an HTML label, ``/`` ``@`` ``#`` ``[`` the separators of caffe2rnn's
own node ids) and from look-alikes (``a:b`` next to ``a_b``). Building may
refuse a name with a caffe2rnn error; when it builds, each of the ``ssa``,
``scratches``, ``recurrent`` and ``unroll`` views, at full size or page
width, must render, and every name must be the whole text of a node of the
SVG (``name`` or ``name@v``): a merged node (ids not injective) or a label
escaped twice or not at all loses one.
"""

import os
import sys

from fuzz_harness import FUZZ, fuzz_settings, in_family
from hypothesis import given
from hypothesis import strategies as st

from caffe2rnn import viz
from caffe2rnn.viz.render import pipe

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(__file__)), "viz"))
from names import ROLES, cell_and_op, node_texts  # noqa: E402  (tests/viz/names.py)

PIECES = ["a", "b", "_", ":", "/", "@", "#", "[", "]", "%", "&", ";", " ", "-", ".", "<", ">",
          "&amp;", '\\"', '"', "\\", "&#38;", "&lt;", "\\n", "é", "→"]  # fmt: skip
#: Names recurrent_net gives blobs of its own: a cell name equal to one is not a fuzz finding.
TAKEN = {"seq", "h0", "timestep", "outer", "cell"}


def _usable(name):
    return name == name.strip() and name not in TAKEN and "grad" not in name


names = st.lists(st.sampled_from(PIECES), min_size=1, max_size=5).map("".join).filter(_usable)


def _view(name, cell, op, width):
    if name == "ssa":
        return viz.ssa(cell, width=width)
    if name == "scratches":
        return viz.scratches_of(op, width=width)
    if name == "recurrent":
        return viz.recurrent(op, width=width)
    return viz.unroll(op, 2, width=width, nested="expand")  # every op, so every blob


@fuzz_settings(weight=1)
@given(
    chosen=st.lists(names, min_size=len(ROLES), max_size=len(ROLES), unique=True),
    view=st.sampled_from(["ssa", "scratches", "recurrent", "unroll"]),
    width=st.sampled_from([None, "page"]),
)
def test_every_blob_is_one_node_showing_its_name(chosen, view, width):
    FUZZ.case()
    given_names = dict(zip(ROLES, chosen))
    outcome = in_family(cell_and_op, given_names)
    if outcome[0] == "error":
        return  # a name recurrent_net refuses: its error is the answer
    cell, op = outcome[1]
    drawn = in_family(lambda: pipe(_view(view, cell, op, width), "svg"))
    FUZZ.check(
        drawn[0] == "ok",
        "mismatches",
        "%s (width %s) of names %r failed: %s" % (view, width, given_names, drawn[1]),
    )
    texts = node_texts(drawn[1])
    for role, name in given_names.items():
        shown = any(t == name or t.startswith(name + "@") for t in texts)
        FUZZ.check(
            shown,
            "mismatches",
            "%s (width %s): blob %r (%s) is not a node; nodes: %r"
            % (view, width, name, role, texts),
        )
