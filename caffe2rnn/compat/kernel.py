"""The "Caffe2 (caffe2rnn)" Jupyter kernels: notebooks in which ``import caffe2`` is caffe2rnn.

Caffe2's own tutorials (``caffe2/python/tutorials/*.ipynb``) start with
``from caffe2.python import core, workspace``. In these kernels that line
already resolves to caffe2rnn (:func:`caffe2rnn.compat.install`), in the
2017 environment the pytest plugin gives Caffe2's test files
(:mod:`.environment2017`: NumPy's removed aliases, Hypothesis 3's API,
NetworkX 1.x, Python 2's itertools names), plus what only notebook cells
need: NumPy 1.13's list indices in the cells (:mod:`.numpy_indexing`) and
``round()`` of an array (:func:`.environment2017.round2017`). A notebook
opened from a Caffe2 checkout (the kernel starts in the notebook's folder)
gets that checkout for the modules caffe2rnn does not have
(:mod:`.checkout`; else ``$CAFFE2_SOURCE``'s).

**Eras.** An ``eras.use`` block ends with its cell; a kernel's era lasts
the whole session: the kernel reads ``$CAFFE2RNN_ERA``
(:data:`caffe2rnn.compat.ERA_VARIABLE`, any name of :mod:`caffe2rnn.eras`).
:func:`install_kernelspecs` writes one kernel per era, with the variable in
its environment ("Caffe2 E7 · 2018-03 (caffe2rnn)"...), and the plain
"Caffe2 (caffe2rnn)", which takes the variable from the environment Jupyter
was started in (E5, caffe2rnn's default, without it)::

    python -m caffe2rnn.compat.kernel install [--user | --sys-prefix | --prefix DIR]
    python -m caffe2rnn.compat.kernel -f CONNECTION_FILE     # what Jupyter runs

``make setup`` installs them into ``.venv`` (``--sys-prefix``), where the
``make lab`` JupyterLab finds them. How to open Caffe2's notebooks with
them: docs/caffe2-tutorials.md.
"""

import argparse
import json
import os
import shutil
import sys
import tempfile

#: The kernel whose era comes from Jupyter's environment (E5 without one).
KERNEL_NAME = "caffe2rnn-caffe2"
DISPLAY_NAME = "Caffe2 (caffe2rnn)"


def kernel_name(era=None):
    """The kernelspec name of ``era``'s kernel (``caffe2rnn-caffe2-e7``), or the plain one."""
    return KERNEL_NAME if era is None else "%s-%s" % (KERNEL_NAME, era.lower())


def kernelspecs(python=None):
    """``{kernel name: kernel.json contents}`` of every Caffe2 kernel: the plain
    one and one per era of :mod:`caffe2rnn.eras`, run by ``python`` (default:
    this interpreter)."""
    from .. import eras
    from . import ERA_VARIABLE

    python = python or sys.executable
    specs = {KERNEL_NAME: _spec(python, DISPLAY_NAME, {})}
    for era in sorted(eras.ERAS.values(), key=lambda e: e.date):
        display = "Caffe2 %s \u00b7 %s (caffe2rnn)" % (era.name, era.date[:7])
        specs[kernel_name(era.name)] = _spec(python, display, {ERA_VARIABLE: era.name})
    return specs


def _spec(python, display_name, env):
    return {
        "argv": [python, "-m", "caffe2rnn.compat.kernel", "-f", "{connection_file}"],
        "display_name": display_name,
        "language": "python",
        "env": env,
        "metadata": {"debugger": False},
    }


def install_kernelspecs(user=False, prefix=None, python=None):
    """Install every Caffe2 kernel (:func:`kernelspecs`) with Jupyter's
    ``KernelSpecManager``: for this user, under ``prefix`` (``sys.prefix``:
    the virtual environment), or system-wide. Returns the installed folders."""
    from jupyter_client.kernelspec import KernelSpecManager

    manager = KernelSpecManager()
    installed = []
    with tempfile.TemporaryDirectory() as scratch:
        for name, spec in kernelspecs(python).items():
            folder = os.path.join(scratch, name)
            os.makedirs(folder)
            with open(os.path.join(folder, "kernel.json"), "w") as handle:
                json.dump(spec, handle, indent=1)
            installed.append(manager.install_kernel_spec(folder, name, user=user, prefix=prefix))
            shutil.rmtree(folder)
    return installed


def prepare(shell=None, folder=None):
    """Make this process a Caffe2 notebook's: the import hook (with the Caffe2
    checkout ``folder`` lies in, else ``$CAFFE2_SOURCE``'s), the era of
    ``$CAFFE2RNN_ERA``, the 2017 environment; and for the IPython ``shell``
    (when given) NumPy 1.13's list indices in its cells and ``round`` of arrays."""
    from . import environment2017, install, numpy_indexing
    from .checkout import find_checkout

    folder = os.getcwd() if folder is None else folder
    install(find_checkout(os.path.join(folder, "notebook.ipynb")))
    environment2017.install()
    if shell is not None:
        numpy_indexing.install_helper()
        shell.ast_transformers.append(numpy_indexing.IndexTransformer())
        shell.user_ns["round"] = shell.user_ns_hidden["round"] = environment2017.round2017


def launch(argv=None):
    """Start the kernel (what Jupyter runs, with ``-f CONNECTION_FILE``)."""
    from ipykernel.kernelapp import IPKernelApp

    app = IPKernelApp.instance()
    app.initialize(argv)
    prepare(app.shell)
    app.start()


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] != ["install"]:
        launch(argv)
        return 0
    parser = argparse.ArgumentParser(
        prog="python -m caffe2rnn.compat.kernel install",
        description="Install the 'Caffe2 (caffe2rnn)' Jupyter kernels (one per era too).",
    )
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--user", action="store_true", help="for this user (~/.local/share/jupyter)")
    where.add_argument(
        "--sys-prefix", action="store_true", help="into this Python's environment (sys.prefix)"
    )
    where.add_argument("--prefix", help="under PREFIX/share/jupyter/kernels")
    options = parser.parse_args(argv[1:])
    prefix = sys.prefix if options.sys_prefix else options.prefix
    for folder in install_kernelspecs(user=options.user, prefix=prefix):
        print("installed", folder)
    return 0


if __name__ == "__main__":
    sys.exit(main())
