"""The time stepper in a real browser: the slider moves, the highlighted rows follow.

Headless Chromium is driven over the DevTools protocol (tests/docs/browser.py):
keys pressed on the slider and clicks on the direction switch go through the
browser's own input handling. Skipped with the reason when Chromium or
websocket-client is missing.
"""

import pytest
from browser import Browser, missing_reason  # tests/docs/browser.py (on sys.path)

from caffe2rnn.viz import examples
from caffe2rnn.viz.stepper import frames, stepper_html

pytestmark = pytest.mark.needs_dot

VISIBLE_ROWS = (
    "Array.from(document.querySelectorAll('.c2r-frame:not([hidden]) g[id^=\"a_hl_\"]'))"
    ".map(function(g){return g.id;}).sort()"
)


def test_frames_highlight_the_rows_each_step_reads_and_writes():
    data = frames(examples.mul(), 3)
    assert [f["t"] for f in data["forward"]] == [0, 1, 2]
    assert [f["t"] for f in data["backward"]] == [2, 1, 0]
    first = data["forward"][1]
    assert "mul_main/recurrent/h_prev_states[1]" in first["reads"]
    assert "mul_main/recurrent/h_prev_states[2]" in first["writes"]
    assert 'id="a_hl_read_' in first["svg"] and 'id="a_hl_write_' in first["svg"]
    back = data["backward"][0]  # backward step t = 2 runs first
    assert "mul_main/recurrent/h_prev_states_grad[3]" in back["reads"]
    assert "mul_main/recurrent/h_prev_states_grad[2]" in back["writes"]


def _page(tmp_path, op, T):
    page = tmp_path / "stepper.html"
    page.write_text(
        "<!doctype html><html><head><meta charset='utf-8'><title>stepper</title></head>"
        "<body>%s</body></html>" % stepper_html(op, T)
    )
    return page


def test_moving_the_slider_changes_the_highlighted_rows(tmp_path):
    reason = missing_reason()
    if reason:
        pytest.skip(reason)
    page = _page(tmp_path, examples.lstm(), 3)
    with Browser() as browser:
        browser.open(str(page))
        seen = [browser.evaluate(VISIBLE_ROWS)]
        caption = [browser.evaluate("document.querySelector('.c2r-caption').textContent")]
        browser.click(".c2r-stepper input[type=range]")  # focus it (moves it to the middle)
        browser.press("Home", "Home", 36)
        for _ in range(2):
            before = browser.evaluate(VISIBLE_ROWS)
            browser.press("ArrowRight", "ArrowRight", 39)
            after = browser.evaluate(VISIBLE_ROWS)
            assert after and after != before
            seen.append(after)
            caption.append(browser.evaluate("document.querySelector('.c2r-caption').textContent"))
        assert caption[-1].startswith("forward pass, timestep t = 2")
        # t = 1 reads row 1 of the hidden states (table 0) and writes row 2
        assert "a_hl_read_0_r1" in seen[1] and "a_hl_write_0_r2" in seen[1]
        browser.click(".c2r-stepper input[value=backward]")
        text = browser.evaluate("document.querySelector('.c2r-caption').textContent")
        assert text.startswith(
            "backward pass, timestep t = 0"
        )  # slider at its end: t = 0 runs last
        rows = browser.evaluate(VISIBLE_ROWS)
        assert "a_hl_read_0_r1" in rows and "a_hl_write_0_r0" in rows
        assert browser.evaluate("document.querySelectorAll('.c2r-frame:not([hidden])').length") == 1
