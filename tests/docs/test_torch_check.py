"""The torch comparison the start page shows (caffe2rnn.cells.torch_check).

The site is built without torch, so docs/concepts/cells.md prints the record in
``docs/_data/torch_check.json``. These tests hold the record to its shape (every
section and number present, within tolerance, the padded rows as the page says)
and, wherever torch is importable, run the comparison again and check it agrees.
"""

import datetime
import json
import os
import sys

import pytest

from caffe2rnn.cells import torch_check

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RECORD = os.path.join(ROOT, "docs", "_data", "torch_check.json")


@pytest.fixture(scope="module")
def record():
    with open(RECORD, encoding="utf-8") as handle:
        return json.load(handle)


def test_the_record_has_every_section_and_number(record):
    for key in ("torch_version", "numpy_version", "python_version", "kernels", "command"):
        assert isinstance(record[key], str) and record[key], key
    datetime.datetime.strptime(record["recorded"], "%Y-%m-%d %H:%M UTC")
    assert record["kernels"] in ("python", "cython")
    assert record["command"] == torch_check.COMMAND
    assert record["sizes"] == torch_check.SIZES and record["seed"] == torch_check.SEED
    assert record["lengths"] == list(torch_check.LENGTHS)
    for section, names in torch_check.FIELDS.items():
        assert set(record[section]) == set(names), section
        for name in names:
            value = record[section][name]
            assert isinstance(value, float) and 0 <= value <= record["tolerance"], (section, name)
    assert record["padded rows"] == {"torch all zeros": True, "caffe2 repeats the last state": True}
    assert torch_check.passed(record)


def test_the_record_reads_as_the_page_prints_it(record):
    text = torch_check.describe(record)
    first = "torch %s, caffe2rnn's %s kernels" % (record["torch_version"], record["kernels"])
    assert text.startswith(first)
    assert "gradients:" in text and "weight_hh" in text and text.endswith("PASS (tolerance 1e-05)")
    assert torch_check.load(RECORD) == record


def test_a_difference_over_the_tolerance_fails_the_check(record):
    worse = json.loads(json.dumps(record))
    worse["gradients"]["weight_ih"] = 1e-3
    assert not torch_check.passed(worse)
    assert torch_check.describe(worse).endswith("FAIL (tolerance 1e-05)")


def test_without_torch_the_command_says_how_to_get_it(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "torch", None)  # import torch -> ImportError
    assert torch_check.main([]) == 2
    assert "pip install torch" in capsys.readouterr().out


def test_torch_agrees_now_as_it_did_when_recorded(record, tmp_path):
    pytest.importorskip("torch")
    now = torch_check.compare()
    assert torch_check.passed(now), torch_check.describe(now)
    assert now["padded rows"] == record["padded rows"]
    for section, names in torch_check.FIELDS.items():
        for name in names:  # float32 rounding: the same order, not the same bits
            assert now[section][name] <= max(10 * record[section][name], 1e-6), (section, name)
    path = tmp_path / "check.json"
    assert torch_check.main(["--record", str(path)]) == 0
    assert set(torch_check.load(str(path))) == set(record)
