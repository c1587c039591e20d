"""Turning a drawing into a file or a notebook figure, and what to do without ``dot``.

Every caffe2rnn drawing is a ``graphviz.Digraph``: its DOT text
(``graph.source``) needs nothing but Python. Laying it out needs Graphviz's
``dot`` program, which ``pip install graphviz`` does *not* install (it
installs only the Python bindings). Caffe2's ``net_drawer.GetGraphPngSafe``
hid a failure behind a 1×1 placeholder image; we say what is missing and how
to get it instead.
"""

import html
import os
import subprocess

import graphviz

from ..errors import DrawingError, GraphvizNotFoundError

INSTALL_HINT = (
    "Graphviz's `dot` program is not installed (pip's `graphviz` package is "
    "only the Python bindings). Install it with one of:\n"
    "  apt-get install graphviz        (Debian/Ubuntu)\n"
    "  brew install graphviz           (macOS)\n"
    "  conda install -c conda-forge graphviz\n"
    "The DOT text is still available as graph.source."
)

FORMATS = ("svg", "png", "pdf", "dot")


def pipe(graph, format="svg"):
    """The rendered bytes of ``graph`` (``format`` 'dot' needs no Graphviz)."""
    if format not in FORMATS:
        raise DrawingError(
            "cannot render format %r; expected one of %s" % (format, ", ".join(FORMATS))
        )
    if format == "dot":
        return graph.source.encode("utf-8")
    try:
        return graph.pipe(format=format)
    except graphviz.ExecutableNotFound:
        raise GraphvizNotFoundError(INSTALL_HINT) from None
    except (graphviz.CalledProcessError, subprocess.CalledProcessError) as error:
        raise DrawingError(
            "dot failed to lay out graph '%s': %s"
            % (graph.name, (error.stderr or b"").decode(errors="replace").strip())
        ) from None


def render(graph, path, format=None):
    """Write ``graph`` to ``path``; ``format`` defaults to the file's extension.

    Returns ``path``. Raises :class:`~caffe2rnn.errors.GraphvizNotFoundError`
    (with install instructions) when ``dot`` is missing, before writing
    anything.
    """
    if format is None:
        format = os.path.splitext(path)[1].lstrip(".").lower() or "svg"
    data = pipe(graph, format)
    directory = os.path.dirname(path)
    if directory:
        os.makedirs(directory, exist_ok=True)
    with open(path, "wb") as handle:
        handle.write(data)
    return path


class Figure:
    """Shows a drawing in Jupyter: the SVG, or the install hint and DOT text."""

    def __init__(self, graph):
        self.graph = graph

    def _repr_mimebundle_(self, include=None, exclude=None):
        try:
            return {"image/svg+xml": pipe(self.graph, "svg").decode("utf-8")}
        except GraphvizNotFoundError as error:
            return {
                "text/plain": "%s\n\n%s" % (error, self.graph.source),
                "text/html": "<p><b>%s</b></p><pre>%s</pre>"
                % (html.escape(str(error)).replace("\n", "<br/>"), html.escape(self.graph.source)),
            }


def show(graph):
    """``show(viz.ssa(net))`` as the last line of a notebook cell displays it."""
    return Figure(graph)
