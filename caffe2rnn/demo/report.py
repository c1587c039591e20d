"""A report written twice: self-contained HTML to project, Markdown to read as text.

A :class:`Report` is a list of blocks (headings, paragraphs, tables, figures,
preformatted text). :meth:`Report.write` renders it to ``report.html`` — one
file, its images inlined as ``data:`` URIs, so it can be mailed or opened from
a USB stick and shown to a class — and ``report.md``, whose figures are links
to the image files beside it. Inline markup in text is limited to ``code``
(backticks) and **bold** (double asterisks), the subset both renderers share.
"""

import base64
import html
import os
import re

_INLINE = re.compile(r"`([^`]+)`|\*\*([^*]+)\*\*")

_STYLE = """
body { font: 20px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; color: #1d1d1f;
       max-width: 1150px; margin: 2em auto; padding: 0 1.5em; }
h1 { font-size: 2.1em; margin-bottom: 0.2em; }
h2 { font-size: 1.5em; margin-top: 2em; border-bottom: 2px solid #d0d7de; }
h3 { font-size: 1.2em; margin-top: 1.5em; }
code, pre { font-family: "DejaVu Sans Mono", Menlo, Consolas, monospace; font-size: 0.85em; }
code { background: #eef1f4; padding: 0.05em 0.3em; border-radius: 4px; }
pre { background: #f6f8fa; border: 1px solid #d0d7de; border-radius: 6px; padding: 0.8em 1em;
      white-space: pre-wrap; overflow-wrap: anywhere; line-height: 1.35; }
table { border-collapse: collapse; margin: 1em 0; }
th, td { border: 1px solid #d0d7de; padding: 0.3em 0.8em; text-align: left; }
th { background: #eef1f4; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
figure { margin: 1.5em 0; }
figure img { max-width: 100%; height: auto; border: 1px solid #e5e8eb; background: #fff; }
figcaption { color: #57606a; font-size: 0.9em; }
.caption { color: #57606a; font-size: 0.9em; margin-bottom: 0.2em; }
.ok { color: #1a7f37; font-weight: 600; } .failed { color: #cf222e; font-weight: 600; }
"""

_MIME = {".png": "image/png", ".svg": "image/svg+xml", ".jpg": "image/jpeg"}


def _inline_html(text):
    out, last = [], 0
    for match in _INLINE.finditer(text):
        out.append(html.escape(text[last : match.start()]))
        code, bold = match.groups()
        out.append(
            "<code>%s</code>" % html.escape(code) if code else "<b>%s</b>" % html.escape(bold)
        )
        last = match.end()
    return "".join(out) + html.escape(text[last:])


def _is_number(cell):
    try:
        float(str(cell).rstrip("%").replace(" ms", "").replace(" s", ""))
    except ValueError:
        return False
    return True


class Report:
    """Blocks added in order; :meth:`write` renders them. Paths of figures are
    files on disk (they must exist when the report is written)."""

    def __init__(self, title, subtitle=""):
        self.title, self.subtitle, self.blocks = title, subtitle, []

    def heading(self, text, level=2):
        self.blocks.append(("heading", level, text))

    def paragraph(self, text, status=None):
        """A paragraph; ``status`` True/False colours it as a pass or a failure."""
        self.blocks.append(("paragraph", text, status))

    def table(self, header, rows):
        self.blocks.append(("table", list(header), [list(map(str, row)) for row in rows]))

    def figure(self, path, caption=""):
        """An image file (``.png``/``.svg``): inlined in HTML, linked in Markdown."""
        if os.path.splitext(path)[1].lower() not in _MIME:
            raise ValueError("a report figure must be .png, .svg or .jpg; got %s" % path)
        self.blocks.append(("figure", path, caption))

    def link(self, path, caption):
        """A file that cannot be shown inline (e.g. DOT text when Graphviz is missing)."""
        self.blocks.append(("link", path, caption))

    def preformatted(self, text, caption=""):
        self.blocks.append(("pre", text, caption))

    # -- rendering ---------------------------------------------------------

    def markdown(self, base_dir):
        lines = ["# " + self.title, ""]
        if self.subtitle:
            lines += [self.subtitle, ""]
        for kind, *args in self.blocks:
            if kind == "heading":
                lines += ["#" * args[0] + " " + args[1], ""]
            elif kind == "paragraph":
                lines += [args[0], ""]
            elif kind == "table":
                header, rows = args
                lines.append("| " + " | ".join(header) + " |")
                lines.append("|" + "---|" * len(header))
                lines += ["| " + " | ".join(row) + " |" for row in rows]
                lines.append("")
            elif kind in ("figure", "link"):
                path, caption = args
                target = os.path.relpath(path, base_dir)
                mark = "!" if kind == "figure" else ""
                lines += ["%s[%s](%s)" % (mark, caption or os.path.basename(path), target), ""]
            elif kind == "pre":
                text, caption = args
                lines += ([caption + ":", ""] if caption else []) + [
                    "```",
                    text.rstrip(),
                    "```",
                    "",
                ]
        return "\n".join(lines)

    def html(self, base_dir):
        parts = [
            "<!DOCTYPE html>",
            '<html lang="en"><head><meta charset="utf-8">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            "<title>%s</title><style>%s</style></head><body>" % (html.escape(self.title), _STYLE),
            "<h1>%s</h1>" % html.escape(self.title),
        ]
        if self.subtitle:
            parts.append('<p class="caption">%s</p>' % _inline_html(self.subtitle))
        for kind, *args in self.blocks:
            if kind == "heading":
                parts.append("<h%d>%s</h%d>" % (args[0], _inline_html(args[1]), args[0]))
            elif kind == "paragraph":
                text, status = args
                css = {True: ' class="ok"', False: ' class="failed"'}.get(status, "")
                parts.append("<p%s>%s</p>" % (css, _inline_html(text)))
            elif kind == "table":
                header, rows = args
                parts.append(
                    "<table><tr>%s</tr>" % "".join("<th>%s</th>" % _inline_html(h) for h in header)
                )
                for row in rows:
                    cells = (
                        '<td class="num">%s</td>' % _inline_html(c)
                        if _is_number(c)
                        else "<td>%s</td>" % _inline_html(c)
                        for c in row
                    )
                    parts.append("<tr>%s</tr>" % "".join(cells))
                parts.append("</table>")
            elif kind == "figure":
                path, caption = args
                with open(path, "rb") as f:
                    data = base64.b64encode(f.read()).decode("ascii")
                mime = _MIME[os.path.splitext(path)[1].lower()]
                parts.append(
                    '<figure><img src="data:%s;base64,%s" alt="%s">'
                    "<figcaption>%s</figcaption></figure>"
                    % (
                        mime,
                        data,
                        html.escape(caption or os.path.basename(path)),
                        _inline_html(caption),
                    )
                )
            elif kind == "link":
                path, caption = args
                parts.append(
                    '<p><a href="%s">%s</a></p>'
                    % (html.escape(os.path.relpath(path, base_dir)), _inline_html(caption))
                )
            elif kind == "pre":
                text, caption = args
                if caption:
                    parts.append('<p class="caption">%s</p>' % _inline_html(caption))
                parts.append("<pre>%s</pre>" % html.escape(text.rstrip()))
        parts.append("</body></html>")
        return "\n".join(parts) + "\n"

    def write(self, directory, name="report"):
        """Write ``name.html`` and ``name.md`` into ``directory``; return both paths."""
        os.makedirs(directory, exist_ok=True)
        paths = [os.path.join(directory, name + ext) for ext in (".html", ".md")]
        for path, text in zip(paths, (self.html(directory), self.markdown(directory))):
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
        return paths
