"""The optimizers of :mod:`caffe2rnn.optimizer` (Caffe2's
``caffe2.python.optimizer``), one family per module: :mod:`.base` (what all
share: learning rate, iteration counter, blob names), :mod:`.sgd`,
:mod:`.adaptive` (Adagrad, Adam, RmsProp, Ftrl), :mod:`.yellowfin`, and
:mod:`.building` (``build_*`` over a whole model, gradient clipping,
learning-rate injection). Import them from :mod:`caffe2rnn.optimizer`.
"""
