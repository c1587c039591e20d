"""The recurrent cells behind :mod:`caffe2rnn.rnn_cell` (Caffe2's ``rnn_cell``).

One module per idea: :mod:`.base` (``RNNCell`` and running a cell over a
sequence), :mod:`.lstm` (``LSTMCell``, ``MILSTMCell``), :mod:`.wrappers`
(``DropoutCell``, ``MultiRNNCell``), :mod:`.attention_cell`
(``AttentionCell`` and the LSTM/MILSTM decoders with attention),
:mod:`.unrolled` (``UnrolledCell``), :mod:`.layers` (the ``LSTM``/``MILSTM``/
``LSTMWithAttention``/``layered_LSTM`` layer functions). Import them from
:mod:`caffe2rnn.rnn_cell`, as Caffe2 code does.
"""
