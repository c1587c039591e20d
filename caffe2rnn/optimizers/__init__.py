"""The optimizers of :mod:`caffe2rnn.optimizer` (Caffe2's
``caffe2.python.optimizer``), one family per module:

* :mod:`caffe2rnn.optimizers.base`: what all share (learning rate, iteration
  counter, blob names);
* :mod:`caffe2rnn.optimizers.sgd`; :mod:`caffe2rnn.optimizers.adaptive`
  (Adagrad, Adam, RmsProp, Ftrl); :mod:`caffe2rnn.optimizers.yellowfin`;
* :mod:`caffe2rnn.optimizers.building`: ``build_*`` over a whole model,
  gradient clipping, learning-rate injection.

Import them from :mod:`caffe2rnn.optimizer`.
"""
