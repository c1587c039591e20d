"""NetworkX as Caffe2's ``memonger`` (2017) expected it.

``caffe2/python/memonger.py`` and its test were written against NetworkX 1.x
(E5, 0cdd09da6) and 2.0 (E6, 042e8ede4, which tests ``nx.__version__ <
'2.0'``). NetworkX 2.4+ removed or changed what they call:

* ``nx.topological_sort(G, nbunch=None, reverse=False)`` returned a *list*,
  in the order of a depth-first search that starts from the nodes in
  ``nbunch`` order (else the graph's) and emits each node after all its
  successors, reversed; Caffe2's tests compare that exact order
  (``[2, 0, 1, 3]``). Today it is a generator in another (Kahn) order.
* ``nx.bellman_ford(G, source, weight)`` returned ``(pred, dist)`` with one
  predecessor per node (``None`` for the source).
* ``G.edges()``, ``G.successors(n)`` and ``G.predecessors(n)`` returned
  lists (memonger tests ``if not g.successors(n)``; its test compares
  ``g.edges()`` with a list); ``G.node`` was the node-attribute mapping
  (today ``G.nodes``).

:func:`install` gives those back, on NetworkX itself (the process's module),
only where 2017 code runs (:mod:`caffe2rnn.compat.environment2017`). The
topological sort is re-derived from that description, not copied.
"""


def _topological_sort_2017(graph, nbunch=None, reverse=False):
    """NetworkX 1.x's topological order (module docstring); a list."""
    import networkx as nx

    explored, on_path, finished = set(), set(), []
    for start in graph.nodes if nbunch is None else nbunch:
        if start in explored:
            continue
        stack = [start]
        while stack:
            node = stack[-1]
            if node in explored:
                stack.pop()
                continue
            on_path.add(node)
            fresh = []
            for succ in graph.successors(node) if graph.is_directed() else graph.neighbors(node):
                if succ in explored:
                    continue
                if succ in on_path:
                    raise nx.NetworkXUnfeasible("Graph contains a cycle.")
                fresh.append(succ)
            if fresh:
                stack.extend(fresh)
            else:
                explored.add(node)
                on_path.discard(node)
                finished.append(node)
                stack.pop()
    return finished if reverse else finished[::-1]


def _bellman_ford_2017(graph, source, weight="weight"):
    """``(pred, dist)`` with one predecessor per node, ``None`` for the source."""
    import networkx as nx

    preds, dist = nx.bellman_ford_predecessor_and_distance(graph, source, weight=weight)
    return {node: (p[0] if p else None) for node, p in preds.items()}, dist


def install():
    """Patch the imported NetworkX (if there is one) with the 2017 behaviour."""
    try:
        import networkx as nx
        from networkx.classes.reportviews import OutEdgeView
    except ImportError:
        return
    if getattr(nx, "_caffe2rnn_2017", False):
        return

    class OutEdgeView2017(OutEdgeView):
        """``G.edges()`` (called) is a list again; ``G.edges[u, v]`` still works."""

        def __call__(self, nbunch=None, data=False, *, default=None):
            return list(super().__call__(nbunch, data, default=default))

    def as_list(method):
        def listed(graph, node):
            return list(method(graph, node))

        listed.__doc__ = method.__doc__
        return listed

    nx.DiGraph.successors = as_list(nx.DiGraph.successors)
    nx.DiGraph.predecessors = as_list(nx.DiGraph.predecessors)
    nx.topological_sort = _topological_sort_2017
    nx.bellman_ford = _bellman_ford_2017
    nx.DiGraph.edges = property(OutEdgeView2017)
    if not hasattr(nx.Graph, "node"):
        nx.Graph.node = property(lambda graph: graph.nodes)
    nx._caffe2rnn_2017 = True
