"""Every module of the package has its docstrings on an API page (docs/api/*.md).

A module nobody can find in the reference is a module a learner cannot read
about. Left out: the package's ``__main__`` modules (the command lines, whose
``--help`` is their documentation) and ``proto.caffe2_pb2`` (generated from
``caffe2.proto`` at set-up, never committed).
"""

import glob
import os
import re

import caffe2rnn

PACKAGE_DIR = os.path.dirname(os.path.abspath(caffe2rnn.__file__))
ROOT = os.path.dirname(PACKAGE_DIR)
NOT_DOCUMENTED = {"caffe2rnn", "caffe2rnn.__main__", "caffe2rnn.compat.__main__",
                  "caffe2rnn.proto.caffe2_pb2"}  # fmt: skip


def package_modules():
    found = set()
    for folder, _, files in os.walk(PACKAGE_DIR):
        for name in files:
            if name.endswith(".py"):
                path = os.path.relpath(os.path.join(folder, name), ROOT)[: -len(".py")]
                found.add(path.replace(os.sep, ".").replace(".__init__", ""))
    return found


def documented_modules():
    found = set()
    for page in glob.glob(os.path.join(ROOT, "docs", "api", "*.md")):
        with open(page, encoding="utf-8") as handle:
            found |= set(re.findall(r"automodule:: (\S+)", handle.read()))
    return found


def test_every_module_is_on_an_api_page():
    missing = sorted(package_modules() - documented_modules() - NOT_DOCUMENTED)
    assert not missing, "add these modules to a page of docs/api/: %s" % missing


def test_every_documented_module_exists():
    gone = sorted(documented_modules() - package_modules())
    assert not gone, "docs/api/ documents modules that no longer exist: %s" % gone
