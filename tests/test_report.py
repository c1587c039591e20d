"""caffe2rnn.demo.report (HTML + Markdown), caffe2rnn.viz.plots and caffe2rnn.demo.progress."""

import base64
import io
import re

import pytest

from caffe2rnn.demo.progress import Progress
from caffe2rnn.demo.report import Report
from caffe2rnn.viz import plots

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)


def sample_report(tmp_path):
    (tmp_path / "img").mkdir()
    png = tmp_path / "img" / "dot.png"
    png.write_bytes(PNG)
    svg = tmp_path / "img" / "box.svg"
    svg.write_text('<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"></svg>')
    report = Report("A <title>", "subtitle with `code`")
    report.heading("Section & more")
    report.paragraph("Uses `RecurrentNetwork` and **bold** <b>not html</b>.", status=True)
    report.table(["name", "value"], [("loss", "1.25"), ("kernel", "cython")])
    report.figure(str(png), "a `dot`")
    report.figure(str(svg), "a box")
    report.link(str(tmp_path / "img" / "graph.dot"), "DOT text")
    report.preformatted("def f(x):\n    return x < 1 & 2\n", "after 3 steps")
    report.paragraph("Failed", status=False)
    return report


def test_html_is_self_contained_and_escaped(tmp_path):
    page = sample_report(tmp_path).html(str(tmp_path))
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    assert "<title>A &lt;title&gt;</title>" in page
    assert "<h2>Section &amp; more</h2>" in page
    assert (
        '<p class="ok">Uses <code>RecurrentNetwork</code> and <b>bold</b> '
        "&lt;b&gt;not html&lt;/b&gt;.</p>"
    ) in page
    assert '<p class="failed">Failed</p>' in page
    assert '<td>loss</td><td class="num">1.25</td>' in page
    images = re.findall(r'<img src="data:([^;]+);base64,([^"]+)"', page)
    assert [mime for mime, _ in images] == ["image/png", "image/svg+xml"]
    assert base64.b64decode(images[0][1]) == PNG
    assert '<a href="img/graph.dot">DOT text</a>' in page
    assert "<pre>def f(x):\n    return x &lt; 1 &amp; 2</pre>" in page


def test_markdown_links_files_relative_to_the_report(tmp_path):
    text = sample_report(tmp_path).markdown(str(tmp_path))
    assert text.startswith("# A <title>\n\nsubtitle with `code`\n")
    assert "| name | value |\n|---|---|\n| loss | 1.25 |\n| kernel | cython |" in text
    assert "![a `dot`](img/dot.png)" in text and "[DOT text](img/graph.dot)" in text
    assert "after 3 steps:\n\n```\ndef f(x):\n    return x < 1 & 2\n```" in text


def test_write_and_bad_figure(tmp_path):
    report = sample_report(tmp_path)
    html_path, md_path = report.write(str(tmp_path / "out"))
    assert html_path.endswith("out/report.html") and md_path.endswith("out/report.md")
    assert "](../img/dot.png)" in (tmp_path / "out" / "report.md").read_text()
    with pytest.raises(ValueError, match="must be .png, .svg or .jpg"):
        report.figure("plot.pdf")


@pytest.mark.skipif(not plots.have_matplotlib(), reason="matplotlib is not installed")
def test_loss_plot_writes_png_and_svg(tmp_path):
    losses = [3.0 / (1 + 0.1 * i) for i in range(50)]
    paths = plots.loss_plot(
        str(tmp_path / "loss"), [("loss", losses, losses)], references=[("baseline", 2.5)]
    )
    assert paths == [str(tmp_path / "loss.png"), str(tmp_path / "loss.svg")]
    assert (tmp_path / "loss.png").read_bytes().startswith(b"\x89PNG")
    svg = (tmp_path / "loss.svg").read_text()
    assert "<svg" in svg and "baseline" in svg  # text stays text (svg.fonttype none)


class Terminal(io.StringIO):
    def isatty(self):
        return True


def test_progress_in_a_log_prints_a_line_every_tenth():
    log = io.StringIO()
    bar = Progress(100, "train", stream=log, width=10)
    for step in range(1, 101):
        bar.update(step, 1.0 / step)
    lines = log.getvalue().splitlines()
    assert len(lines) == 10 and "\r" not in log.getvalue()
    assert lines[0].startswith("train      [#.........]  10/100  loss 0.1000  ")
    assert lines[-1].startswith("train      [##########] 100/100  loss 0.0100  ")
    assert " took " in lines[-1] and " eta " in lines[0]


def test_progress_on_a_terminal_redraws_one_line():
    tty = Terminal()
    bar = Progress(5, "train", stream=tty, width=5)
    for step in range(1, 4):
        bar.update(step, 2.0)
    bar.write("a sample")
    bar.update(5, 1.0)
    out = tty.getvalue()
    assert out.count("\r") == 4 and out.endswith("\n")
    assert "\na sample\n\r" in out  # the sample on its own line, then the bar again
