"""``python -m caffe2rnn.compat PROGRAM.py ARGS...`` (see :mod:`caffe2rnn.compat`)."""

import sys

from . import main

sys.exit(main())
