"""The README's Python examples run as written and print what they promise."""

import contextlib
import io
import os
import re

import pytest

README = os.path.join(os.path.dirname(__file__), "..", "README.md")


def python_blocks():
    with open(README, encoding="utf-8") as f:
        text = f.read()
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


@pytest.mark.parametrize("index", range(len(python_blocks())))
def test_readme_example_runs(index):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(python_blocks()[index], "README.md[%d]" % index, "exec"), {})
    printed = out.getvalue()
    if 'FetchBlob("z")' in python_blocks()[index]:
        assert printed.rstrip().endswith("[0. 2. 4.]")
    if "LSTM(" in python_blocks()[index]:
        assert "'RecurrentNetwork'" in printed and "'RecurrentNetworkGradient'" in printed
    if "bugs.BUGS" in python_blocks()[index]:
        assert "B5 8e01e4c8b" in printed
