"""The time stepper shows what a move of its slider changes next to the slider.

In backward mode the rows a step reads and writes are rows of the gradient
tensors; in the page layout those tensors come first in each frame, and the
controls (slider, direction, caption) stay at the top of the window while the
frame scrolls under them. The last row of each state gradient says it is
zeroed before the loop, and a state gradient nothing is added into says why.
"""

import os
import re
import sys

import pytest

from caffe2rnn.viz import examples
from caffe2rnn.viz.stepper import frames, stepper_html

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(__file__)), "docs"))
from browser import Browser, missing_reason  # noqa: E402  (tests/docs/browser.py)

pytestmark = pytest.mark.needs_dot


@pytest.fixture(scope="module")
def lstm_frames():
    return frames(examples.rnn_cell_lstm(), 3, width="page")


def test_backward_frames_say_the_last_row_is_zeroed_and_why_a_tensor_gets_no_sum(lstm_frames):
    svg = lstm_frames["backward"][0]["svg"]
    assert svg.count("zeroed before the loop") == 2  # hidden and cell state gradients
    # the cell state's outputs are not in outputs_with_grads = [0]: nothing is added
    assert "+= nothing: lstm/cell_t_all, lstm/cell_t_last get no gradient" in svg
    assert "outputs_with_grads = [0]" in svg


def test_backward_frames_show_the_tensors_before_the_steps(lstm_frames):
    svg = lstm_frames["backward"][0]["svg"]
    assert svg.index("lstm/lstm/hidden_t_prev_states_grad") < svg.index("backward, timestep t = 2")


def test_a_backward_frame_draws_only_the_step_that_runs(lstm_frames):
    """One step box per frame, the one the slider is on, under its tables: with all T
    boxes a frame was ~2000 pt tall and the box and its rows never on screen together."""
    for frame in lstm_frames["backward"]:
        svg = frame["svg"]
        assert re.findall(r"backward, timestep t = (\d)", svg) == [str(frame["t"])]
        assert svg.index("lstm/i2h_grad") < svg.index("backward, timestep t =")
        assert float(re.search(r'height="([0-9.]+)pt"', svg).group(1)) < 1000


def test_page_frames_break_names_after_a_slash_never_inside_a_name(lstm_frames):
    """`lstm/lstm/hidden_t_ prev_states` read as two names: a line of a frame never ends
    in '_' (a break inside a name), and every long name breaks at a '/'."""
    for direction in ("forward", "backward"):
        for frame in lstm_frames[direction]:
            texts = [t.strip() for t in re.findall(r"<text[^>]*>([^<]*)</text>", frame["svg"])]
            assert texts
            assert not [t for t in texts if t.endswith("_")], (direction, frame["t"])


def test_the_frame_title_sits_in_the_controls_not_under_them(lstm_frames):
    """The title a frame's drawing had at its top is shown in the sticky controls, so
    it cannot scroll under them; the drawing starts with the tables."""
    starts = {"forward": "which row each step reads", "backward": "the gradient tensors row by"}
    for direction, start in starts.items():
        frame = lstm_frames[direction][0]
        assert frame["title"].startswith(start)
        assert "RecurrentNetwork" not in re.sub(r"<title>[^<]*</title>", "", frame["svg"])
    page = stepper_html(examples.rnn_cell_lstm(), 2, width="page")
    sticky = page[page.index('class="c2r-sticky"') : page.index('class="c2r-frame"')]
    assert 'class="c2r-frame-title"' in sticky
    assert json_titles(page)["backward"][0].startswith(starts["backward"])


def json_titles(page):
    import json

    found = re.search(r"var titles = (\{.*?\});", page, re.S)
    return json.loads(found.group(1))


def test_the_controls_stay_in_view_and_the_rows_are_near_them(tmp_path):
    reason = missing_reason()
    if reason:
        pytest.skip(reason)
    page = tmp_path / "stepper.html"
    filler = "<p>%s</p>" % ("text " * 400)
    page.write_text(
        "<!doctype html><html><head><meta charset='utf-8'><title>stepper</title></head>"
        "<body style='width: 720px'>%s%s%s</body></html>"
        % (filler, stepper_html(examples.rnn_cell_lstm(), 3, width="page"), filler * 3)
    )
    rows = (
        "Array.from(document.querySelectorAll('.c2r-frame:not([hidden]) g[id^=\"a_hl_\"]'))"
        ".map(function(g){return g.getBoundingClientRect().top;})"
    )
    with Browser(1280, 900) as browser:
        browser.open(str(page))
        browser.click(".c2r-stepper input[value=backward]")
        top = "document.querySelector('.c2r-stepper').getBoundingClientRect().top + window.scrollY"
        for extra in (0, 500):
            browser.evaluate("window.scrollTo(0, %s + %d)" % (top, extra))
            controls = browser.evaluate(
                "(function(){var r = document.querySelector('.c2r-sticky')"
                ".getBoundingClientRect(); return [r.top, r.bottom];})()"
            )
            assert controls[0] >= 0 and controls[1] < 300, controls  # still in view
        browser.evaluate("window.scrollTo(0, %s)" % top)
        tops = browser.evaluate(rows)
        assert tops and min(tops) < 600, "the rows the step touches are far below the slider"
        # the step box and the rows it touches fit on one screen under the controls
        span = browser.evaluate(
            "(function(){var f = document.querySelector('.c2r-frame:not([hidden])');"
            "var rows = Array.from(f.querySelectorAll('g[id^=\"a_hl_\"]'))"
            ".map(function(g){return g.getBoundingClientRect().top;});"
            "var box = Array.from(f.querySelectorAll('g.node')).filter(function(g){"
            "return /backward, timestep t =/.test(g.textContent);});"
            "var sticky = document.querySelector('.c2r-sticky').getBoundingClientRect();"
            "return [box.length, box[0].getBoundingClientRect().bottom - Math.min.apply(null,"
            " rows), window.innerHeight - sticky.height];})()"
        )
        assert span[0] == 1 and span[1] <= span[2], span
        title = browser.evaluate("document.querySelector('.c2r-frame-title').textContent")
        assert title.startswith("the gradient tensors row by row")


def test_the_output_gradient_arrow_reaches_every_row_it_is_added_into(lstm_frames):
    """GO (lstm/hidden_t_all_grad) is added into rows 1 … T of the hidden state's
    gradient, one row before each step: one arrow a row, not one into row 1."""
    svg = lstm_frames["backward"][0]["svg"]
    arrows = re.findall(r'class="edge accumulate">\s*<title>io/lstm/hidden_t_all_grad', svg)
    assert len(arrows) == 3


def test_the_page_stepper_shows_blob_names_not_dot_ids_as_tooltips():
    """A browser shows an inline SVG's <title> as the tooltip; dot's ids there are noise."""
    page = stepper_html(examples.rnn_cell_lstm(), 3, width="page")
    titles = re.findall(r"<title>([^<]*)</title>", page)
    assert titles, "the stepper's frames have no titles at all"
    assert "<!--" not in page  # dot's comments go too
    for title in titles:
        # dot's ids: graph names, record ports (":w"), the "tensor/" and "io/" node prefixes
        assert not re.search(r"timeline_|_tensor\d|:[nsew]\b|^(tensor|io|bstep)\W", title), title
        assert "->" not in title, title  # edges read "a → b"
    assert any("\u2192" in t for t in titles)  # at least one edge, as "from → to"
    assert any(t.endswith("hidden_t_prev_states") for t in titles)  # a node titled by its blob
