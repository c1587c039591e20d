"""The helper functions behind :mod:`caffe2rnn.brew`, one module per family.

As in Caffe2 (``caffe2/python/helpers/``), each helper is a plain function
taking the model first; :mod:`caffe2rnn.brew` registers them and wraps every
call so it receives the model's ``arg_scope`` and the active
:func:`~caffe2rnn.helpers.arg_scope.arg_scope` keywords. Call them through
``brew`` (``brew.fc(model, ...)``), not from here.
"""
