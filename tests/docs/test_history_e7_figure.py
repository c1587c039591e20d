"""The figure of docs/concepts/history-e7.md says what E7 builds and runs.

``docs/make_e7_diagrams.py`` reads the two forms of ``LSTMUnit`` from the step
nets ``rnn_cell.LSTM`` builds under era E7 and the stepped / repeated entries
from a run; these tests pin what the figure then shows (Caffe2 2bf8d0cd4,
2018-01-26: ``sequence_lengths=0`` leaves the ``seq_lengths`` input out and
every row steps).
"""

import os
import re
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "docs"))

import make_e7_diagrams as e7  # noqa: E402


def test_lstm_unit_loses_its_fourth_input_without_lengths():
    forms = e7.lstm_unit_forms()
    with_inputs, with_flag = forms["with seq_lengths"]
    without_inputs, without_flag = forms["without"]
    assert with_inputs[3:] == ["seq_lengths", "timestep"] and with_flag == 1
    assert without_inputs[3:] == ["timestep"] and without_flag == 0
    assert with_inputs[:3] == without_inputs[:3]


def test_rows_step_until_their_length_only_with_lengths():
    stepped = e7.stepped_entries()
    T, lengths = e7.FIGURE_T, np.array(e7.FIGURE_LENGTHS)
    expected = np.arange(T)[:, None] < lengths[None, :]
    np.testing.assert_array_equal(stepped["with seq_lengths"], expected)
    assert stepped["without"].all()
    assert not expected.all()  # the figure shows a row that ends early


def test_the_figure_fits_the_column_and_its_labels_are_readable():
    svg = e7.fig_sequence_lengths().svg
    width = float(re.search(r'<svg[^>]*\bwidth="([\d.]+)"', svg).group(1))
    sizes = [float(s) for s in re.findall(r'<text[^>]*font-size="([\d.]+)"', svg)]
    assert width <= 688 and min(sizes) >= 9.5
    for label in ("sequence_lengths=1", "sequence_lengths=0", "seq_lengths", "= t\u22121"):
        assert label in svg
