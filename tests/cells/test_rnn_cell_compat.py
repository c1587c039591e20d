"""Caffe2 code of mid-2017 imports the cell API through ``caffe2.python``."""

import pytest

from caffe2rnn import compat, eras


@pytest.fixture
def installed():
    compat.install()
    yield
    compat.uninstall()


def test_caffe2_cell_modules_are_caffe2rnns(installed):
    from caffe2.python import gru_cell, rnn_cell
    from caffe2.python.modeling.parameter_sharing import ParameterSharing
    from caffe2.python.rnn_cell import LSTM, LSTMWithAttention

    import caffe2rnn.gru_cell
    import caffe2rnn.modeling.parameter_sharing
    import caffe2rnn.rnn_cell

    assert rnn_cell is caffe2rnn.rnn_cell and gru_cell is caffe2rnn.gru_cell
    assert ParameterSharing is caffe2rnn.modeling.parameter_sharing.ParameterSharing
    assert LSTM is caffe2rnn.rnn_cell.LSTM
    assert LSTMWithAttention.__name__ == "LSTMWithAttention"
    with eras.use("E6"):
        from caffe2.python.rnn_cell import LayerNormLSTM, LSTMWithAttention

        assert LSTMWithAttention.__name__ == "LSTMWithAttentionLengths" and LayerNormLSTM
    with pytest.raises(ImportError):
        from caffe2.python.rnn_cell import LayerNormLSTM  # noqa: F401 - E5 has none
