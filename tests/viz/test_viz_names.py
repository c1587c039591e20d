"""Blob names reach the drawings intact: one node per blob, the name shown verbatim.

Graphviz reads ``a:b`` in an edge as node ``a``, port ``b``, so the drawings once
replaced ':' by '_' in node ids, which drew the two blobs ``a:b`` and ``a_b`` as
one node. And labels are DOT text: ``&amp;`` is an entity there and ``\\"`` an
escaped quote, so such names were shown changed. Node ids are now assigned by
the canvas (distinct things, distinct ids) and every label is escaped once.
"""

import pytest
from names import cell_and_op, node_texts

from caffe2rnn import viz
from caffe2rnn.viz.render import pipe

pytestmark = pytest.mark.needs_dot


def _views(cell, op):
    return {
        "ssa": viz.ssa(cell),
        "scratches": viz.scratches_of(op),
        "recurrent": viz.recurrent(op),
        "unroll": viz.unroll(op, 2),
    }


@pytest.mark.parametrize("view", ["ssa", "scratches", "recurrent", "unroll"])
@pytest.mark.parametrize("width", [None, "page"])
def test_blobs_a_colon_b_and_a_underscore_b_are_two_nodes(view, width):
    cell, op = cell_and_op({"a": "a:b", "b": "a_b"})
    graph = _views(cell, op)[view] if width is None else _page_views(cell, op)[view]
    texts = node_texts(pipe(graph))
    for name in ("a:b", "a_b"):
        assert any(t == name or t.startswith(name + "@") for t in texts), (name, texts)


@pytest.mark.parametrize("view", ["ssa", "scratches", "recurrent", "unroll"])
@pytest.mark.parametrize("width", [None, "page"])
def test_names_with_entities_and_escaped_quotes_are_shown_verbatim(view, width):
    names = {"w": "&amp;", "a": 'q\\"r', "b": "<b>x</b>", "h": "back\\nslash&lt;"}
    cell, op = cell_and_op(names)
    graph = _views(cell, op)[view] if width is None else _page_views(cell, op)[view]
    texts = node_texts(pipe(graph))
    for name in names.values():
        assert any(t == name or t.startswith(name + "@") for t in texts), (name, texts)


def _page_views(cell, op):
    return {
        "ssa": viz.ssa(cell, width="page"),
        "scratches": viz.scratches_of(op, width="page"),
        "recurrent": viz.recurrent(op, width="page"),
        # a page unroll draws each step as one box; expanded, every blob is drawn
        "unroll": viz.unroll(op, 2, width="page", nested="expand"),
    }
