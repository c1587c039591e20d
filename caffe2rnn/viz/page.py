"""A page figure: parts laid out one by one by Graphviz, stacked top to bottom.

A drawing made for a text column is a column of *parts*: its title, its
panels (the forward and the backward side of a RecurrentNetwork op, one state
tensor's table...) and its legend. Laid out as one graph, Graphviz puts
unconnected parts side by side, and invisible edges that would stack them
drag whole panels sideways; its own packing of parts (``pack``) drops every
edge label in Graphviz 2.43. So :class:`PageGraph` lays each part out on its
own and stacks the results, centred:

* SVG: the parts' drawings in one ``<svg>``, each moved into place with a
  ``translate``; Graphviz's element ids get the part's prefix (``p1_node3``),
  ids the drawing set itself (the time stepper's ``a_hl_...``) stay;
* PNG and PDF: a small graph of image nodes, one per part (rendered as PNG
  first), laid out by Graphviz;
* DOT (``graph.source``) and any other format: all parts in one graph, which
  ``dot`` lays out as one (correct, only wider).
"""

import os
import re
import tempfile

import graphviz

from ..errors import DrawingError

#: Vertical gap between two parts, in points.
GAP = 6.0

_SIZE = re.compile(r'<svg\b[^>]*\bwidth="([\d.]+)pt"[^>]*\bheight="([\d.]+)pt"', re.S)
_AUTO_ID = re.compile(r'\bid="(a_)?((?:graph|node|edge|clust)\d+[^"]*)"')


class PageGraph(graphviz.Digraph):
    """A Digraph whose ``parts`` (Digraphs) are laid out one by one and stacked.

    Its own body is every part's statements in one graph (``source``, and
    what the tests read); :meth:`pipe` draws the stacked column.
    """

    def __init__(self, name, parts, graph_attr, node_attr, edge_attr):
        body = [line for part in parts for line in part.body]
        super().__init__(
            name, graph_attr=graph_attr, node_attr=node_attr, edge_attr=edge_attr, body=body
        )
        self.parts = list(parts)

    def pipe(self, format=None, renderer=None, formatter=None, neato_no_op=None, quiet=False,
             *, engine=None, encoding=None):  # fmt: skip
        format = format or self.format
        if format == "svg" and not (renderer or formatter):
            data = stack_svg([part.pipe(format="svg") for part in self.parts])
        elif format in ("png", "pdf") and not (renderer or formatter):
            data = self._stack_images(format)
        else:
            return super().pipe(
                format,
                renderer,
                formatter,
                neato_no_op,
                quiet,
                engine=engine,
                encoding=encoding,
            )
        return data.decode(encoding) if encoding else data

    def _stack_images(self, format):
        """The parts as PNG images in a column, drawn by Graphviz as ``format``."""
        dpi = 96 if format == "png" else 192  # sharper images inside a PDF
        with tempfile.TemporaryDirectory(prefix="caffe2rnn-page-") as directory:
            column = graphviz.Digraph(
                self.name,
                graph_attr={"rankdir": "TB", "nodesep": "0", "ranksep": "0.08", "pad": "0.05"},
                node_attr={"shape": "none", "label": "", "fixedsize": "true"},
            )
            names = []
            for i, part in enumerate(self.parts):
                path = os.path.join(directory, "part%d.png" % i)
                with open(path, "wb") as handle:
                    handle.write(_png(part, dpi))
                width, height = _png_size(path)
                names.append("part%d" % i)
                column.node(
                    names[-1],
                    image=path,
                    width="%.4f" % (width / dpi),
                    height="%.4f" % (height / dpi),
                    imagescale="true",
                )
            for upper, lower in zip(names, names[1:]):
                column.edge(upper, lower, style="invis")
            return column.pipe(format=format)


def _png(part, dpi):
    graph = part.copy()
    graph.graph_attr["dpi"] = str(dpi)
    return graph.pipe(format="png")


def _png_size(path):
    with open(path, "rb") as handle:
        head = handle.read(24)
    return int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")


def stack_svg(svgs):
    """One SVG of Graphviz SVGs ``svgs`` (bytes) one under the other, centred."""
    parts = []
    for i, svg in enumerate(svgs):
        text = svg.decode("utf-8")
        size = _SIZE.search(text)
        if size is None:
            raise DrawingError("Graphviz wrote an SVG without a size in points")
        start = text.index(">", text.index("<svg")) + 1
        inner = text[start : text.rindex("</svg>")]
        inner = _AUTO_ID.sub(r'id="\1p%d_\2"' % i, inner)
        parts.append((float(size.group(1)), float(size.group(2)), inner))
    width = max(w for w, _, _ in parts)
    height = sum(h for _, h, _ in parts) + GAP * (len(parts) - 1)
    out = [
        '<?xml version="1.0" encoding="UTF-8" standalone="no"?>\n'
        '<svg width="%gpt" height="%gpt" viewBox="0.00 0.00 %.2f %.2f" '
        'xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink">\n'
        '<g id="page" class="page">\n'
        '<polygon fill="white" stroke="transparent" points="0,0 %.2f,0 %.2f,%.2f 0,%.2f"/>\n'
        % (width, height, width, height, width, width, height, height)
    ]
    y = 0.0
    for i, (w, h, inner) in enumerate(parts):
        out.append(
            '<g id="part%d" class="part" transform="translate(%.2f %.2f)">%s</g>\n'
            % (i, (width - w) / 2, y, inner)
        )
        y += h + GAP
    out.append("</g>\n</svg>\n")
    return "".join(out).encode("utf-8")
