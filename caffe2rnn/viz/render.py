"""Turning a drawing into a file or a notebook figure, and what to do without ``dot``.

Every caffe2rnn drawing is a ``graphviz.Digraph``: its DOT text
(``graph.source``) needs nothing but Python. Laying it out needs Graphviz's
``dot`` program, which ``pip install graphviz`` does *not* install (it
installs only the Python bindings). Caffe2's ``net_drawer.GetGraphPngSafe``
hid a failure behind a 1×1 placeholder image; we say what is missing and how
to get it instead.
"""

import base64
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
    """Shows a drawing in Jupyter: the SVG, or the install hint and DOT text.

    A page-width drawing (``width="page"``, :mod:`~caffe2rnn.viz.sizing`) is
    shown at the width of the text and keeps its full-size drawing one click
    away: a "full size" switch under it opens the full layout, scrollable.
    """

    def __init__(self, graph):
        self.graph = graph

    def _repr_mimebundle_(self, include=None, exclude=None):
        try:
            svg = pipe(self.graph, "svg").decode("utf-8")
            full = getattr(self.graph, "full_size", None)
            if full is None:
                return {"image/svg+xml": svg}
            return {"image/svg+xml": svg, "text/html": page_html(svg, pipe(full(), "svg"))}
        except GraphvizNotFoundError as error:
            return {
                "text/plain": "%s\n\n%s" % (error, self.graph.source),
                "text/html": "<p><b>%s</b></p><pre>%s</pre>"
                % (html.escape(str(error)).replace("\n", "<br/>"), html.escape(self.graph.source)),
            }


def _data_uri(svg):
    data = svg.encode("utf-8") if isinstance(svg, str) else svg
    return "data:image/svg+xml;base64," + base64.b64encode(data).decode("ascii")


def page_html(svg, full_svg, alt="diagram"):
    """HTML of a page-width drawing with its full size behind a click.

    Both are ``<img>`` of the SVG (a notebook's sanitizer keeps them); the
    page one fits the text column, the full one sits in a closed
    ``<details>`` box that scrolls. On the docs site a click on the drawing
    also opens the full one in the zoom viewer (``docs/_static/caffe2rnn-zoom.js``).
    """
    alt = html.escape(alt, quote=True)
    return (
        '<figure class="c2r-figure" style="margin:0">'
        '<img class="c2r-diagram" alt="%s" src="%s" style="max-width:100%%;height:auto">'
        '<details class="c2r-full"><summary>full size (the same view, laid out without '
        "the page's limits; scroll to pan)</summary>"
        '<div style="overflow:auto;max-height:85vh">'
        '<img alt="%s, full size" src="%s" style="max-width:none">'
        "</div></details></figure>" % (alt, _data_uri(svg), alt, _data_uri(full_svg))
    )


def show(graph):
    """``show(viz.ssa(net))`` as the last line of a notebook cell displays it;
    ``show(viz.recurrent(op, width="page"))`` fits it to the text, full size
    one click away."""
    return Figure(graph)
