"""Test helper: the seed texts of ``recurrent_net``, executed as they were written.

The seeds (the scraped 2017 texts of Caffe2's ``recurrent.py``) are read from
the folder named by ``$CAFFE2RNN_SEEDS``, never copied into this repository;
without it the tests that need them skip with that reason. :func:`seed_recurrent_net` executes one
version's text against :mod:`caffe2rnn.compat` — ``import caffe2...`` resolves
to this project — with only the Python 2 shims (``map`` returning a list,
``viewitems``/``viewkeys``), and returns the function it defines. Seed 002 is
one flattened line; ``deflatten`` (beside this file) rebuilds its source first.
"""

import os

from deflatten import deflatten, function_text

from caffe2rnn import compat

SEEDS = os.environ.get("CAFFE2RNN_SEEDS", "")

#: version → (seed file prefix, example number); 002 is handled apart.
EXAMPLES = {"v1": ("000_", 3), "v2": ("000_", 1), "v3": ("000_", 2), "newest": ("001_", 8)}

#: The imports the seed files had at the top of recurrent.py.
_PRELUDE = (
    "from caffe2.python import core\n"
    "from caffe2.python.scope import CurrentNameScope\n"
    "from future.utils import viewitems, viewkeys\n"
)
_PRELUDE_NAMES = ("core", "CurrentNameScope", "viewitems", "viewkeys")


def available():
    """True when ``$CAFFE2RNN_SEEDS`` names an existing folder."""
    return bool(SEEDS) and os.path.isdir(SEEDS)


def skip_reason():
    if not SEEDS:
        return "seed texts not configured: set CAFFE2RNN_SEEDS to their folder"
    return "seed texts not found at %s (CAFFE2RNN_SEEDS)" % SEEDS


def _read(prefix):
    name = next(f for f in sorted(os.listdir(SEEDS)) if f.startswith(prefix))
    with open(os.path.join(SEEDS, name), encoding="utf-8") as handle:
        return handle.read()


def example(prefix, number):
    """Example ``number`` of a scraped seed file, without its header lines."""
    text = _read(prefix)
    headers = ("Пример #%d", "示例#%d")
    start = max(text.find(h % number) for h in headers)
    if start < 0:
        raise ValueError("example %d not found in seed %s" % (number, prefix))
    body = text[start:].split("\n", 2)[2]  # drop "Example #n" and "0"
    ends = [body.find(h % (number + 1)) for h in headers] + [
        body.find(h % (number - 1)) for h in headers if number > 1
    ]
    ends = [e for e in ends if e >= 0]
    return body[: min(ends)] if ends else body


def source(version):
    """The Python source of ``version``'s ``recurrent_net`` from the seeds."""
    if version == "april":
        return deflatten(
            function_text(_read("002_"), "recurrent_net", "LSTM"), known_names=_PRELUDE_NAMES
        )
    prefix, number = EXAMPLES[version]
    return example(prefix, number)


def seed_recurrent_net(version):
    """Execute the seed text of ``version``; return its ``recurrent_net``."""
    compat.install()
    namespace = compat.py2_namespace(_workspace_seq=0)
    exec(compile(_PRELUDE + source(version), "<seed %s>" % version, "exec"), namespace)
    return namespace["recurrent_net"]
