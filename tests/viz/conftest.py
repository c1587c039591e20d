"""Reading caffe2rnn drawings back: nodes and edges of a ``graphviz.Digraph``.

The tests assert on the DOT statements the drawing functions emit (one per
``graph.body`` item), so they run without the ``dot`` binary.
"""

import re
from dataclasses import dataclass, field

import pytest

_ENDPOINT = r'("(?:[^"\\]|\\.)*"|[^\s":\[]+)((?::[\w]+)*)'
_EDGE = re.compile(r"^%s -> %s(?: \[(.*)\])?$" % (_ENDPOINT, _ENDPOINT), re.S)
_NODE = re.compile(r"^%s \[(.*)\]$" % _ENDPOINT, re.S)
_ATTR = re.compile(r'(\w+)=("(?:[^"\\]|\\.)*"|<.*?>(?= \w+=|$)|[^\s"]+)', re.S)


def _unquote(text):
    return text[1:-1].replace('\\"', '"') if text.startswith('"') else text


def _attrs(text):
    return {k: _unquote(v) for k, v in _ATTR.findall(text or "")}


@dataclass
class Dot:
    nodes: dict = field(default_factory=dict)  # id -> attrs
    edges: list = field(default_factory=list)  # (tail, head, attrs, tail_port, head_port)

    def with_class(self, cls):
        """Node ids whose ``class`` attribute contains ``cls``."""
        return {n for n, a in self.nodes.items() if cls in a.get("class", "").split()}

    def edges_of(self, cls):
        return [e for e in self.edges if e[2].get("class") == cls]

    def edge(self, tail, head):
        found = [e for e in self.edges if e[0] == tail and e[1] == head]
        assert found, "no edge %s -> %s" % (tail, head)
        return found[0][2]


def parse(graph):
    dot = Dot()
    for item in graph.body:
        item = item.strip()
        edge = _EDGE.match(item)
        if edge and edge.group(1).strip('"').startswith("legend/"):
            continue  # the legend's sample arrows are not part of the figure
        if edge:
            dot.edges.append(
                (
                    _unquote(edge.group(1)),
                    _unquote(edge.group(3)),
                    _attrs(edge.group(5)),
                    edge.group(2).lstrip(":"),
                    edge.group(4).lstrip(":"),
                )
            )
            continue
        node = _NODE.match(item)
        if node and not item.startswith(("node ", "edge ", "graph ")):
            dot.nodes[_unquote(node.group(1))] = _attrs(node.group(3))
    return dot


@pytest.fixture
def parse_dot():
    return parse
