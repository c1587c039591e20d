"""The "Caffe2 (caffe2rnn)" Jupyter kernels and ``$CAFFE2RNN_ERA``: what the
kernelspecs say, that ``import caffe2`` is caffe2rnn in a running kernel with
the 2017 environment, and that the era chosen holds for the whole session."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from caffe2rnn import eras
from caffe2rnn.compat import ERA_VARIABLE, environment2017, kernel

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_one_kernel_per_era_and_a_plain_one():
    specs = kernel.kernelspecs(python="/py")
    assert specs["caffe2rnn-caffe2"]["display_name"] == "Caffe2 (caffe2rnn)"
    assert specs["caffe2rnn-caffe2"]["env"] == {}
    for name, era in eras.ERAS.items():
        spec = specs["caffe2rnn-caffe2-" + name.lower()]
        assert spec["env"] == {ERA_VARIABLE: name}
        assert spec["display_name"] == "Caffe2 %s \u00b7 %s (caffe2rnn)" % (name, era.date[:7])
        assert spec["argv"] == ["/py", "-m", "caffe2rnn.compat.kernel", "-f", "{connection_file}"]
    assert len(specs) == len(eras.ERAS) + 1


def test_install_writes_kernel_json_files(tmp_path):
    folders = kernel.install_kernelspecs(prefix=str(tmp_path))
    assert len(folders) == len(eras.ERAS) + 1
    with open(tmp_path / "share/jupyter/kernels/caffe2rnn-caffe2-e6/kernel.json") as handle:
        spec = json.load(handle)
    assert spec["env"] == {ERA_VARIABLE: "E6"} and spec["argv"][0] == sys.executable


def _python(code, era=None):
    environment = dict(os.environ)
    environment.pop(ERA_VARIABLE, None)
    if era is not None:
        environment[ERA_VARIABLE] = era
    return subprocess.run(
        [sys.executable, "-c", code], env=environment, capture_output=True, text=True, cwd=ROOT
    )


ERA_REPORT = (
    "import caffe2rnn.compat as c; from caffe2rnn import eras; c.install(); "
    "print(eras.current().name, eras.named().name); c.uninstall(); "
    "print(eras.current().name, eras.named())"
)


@pytest.mark.parametrize("value, name", [("E6", "E6"), ("v2", "E4"), (" E3 ", "E3")])
def test_compat_install_honours_the_era_variable(value, name):
    result = _python(ERA_REPORT, era=value)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split("\n")[:2] == ["%s %s" % (name, name), "E5 None"]


def test_without_the_variable_nothing_changes():
    code = ERA_REPORT.replace("eras.named().name", "eras.named()")
    result = _python(code, era="")
    assert result.returncode == 0, result.stderr
    assert result.stdout.split("\n")[:2] == ["E5 None", "E5 None"]


def test_an_unknown_era_is_refused_naming_the_variable():
    result = _python("import caffe2rnn.compat as c; c.install()", era="E99")
    assert result.returncode != 0
    assert "$CAFFE2RNN_ERA='E99': unknown era 'E99'; known eras:" in result.stderr


def test_process_era_is_overridden_by_a_use_block_and_seen_by_threads():
    import threading

    previous = eras.set_process_era("E6")
    try:
        seen = []
        thread = threading.Thread(target=lambda: seen.append(eras.current().name))
        thread.start()
        thread.join()
        with eras.use("E4"):
            inner = eras.current().name
        assert (seen, inner, eras.current().name, eras.named().name) == (["E6"], "E4", "E6", "E6")
    finally:
        eras.set_process_era(previous)
    assert eras.current() is eras.DEFAULT and eras.named() is None


@pytest.mark.parametrize(
    "value, ndigits, expected",
    [
        (np.array([1.23456], np.float32), 2, np.array([1.23], np.float32)),
        (np.array([[2.5, -0.5]]), None, np.array([[2.0, -0.0]])),
        (np.float32(1.23456), 3, np.float32(1.235)),
        (2.675, 2, round(2.675, 2)),
        (7, None, 7),
    ],
)
def test_round_as_numpy_1_13_answered_it(value, ndigits, expected):
    result = environment2017.round2017(value, ndigits)
    assert type(result) is type(expected)
    np.testing.assert_array_equal(result, expected)


@pytest.mark.slow
def test_a_running_kernel_is_caffe2_in_its_era(tmp_path, monkeypatch):
    """Start the plain kernel with $CAFFE2RNN_ERA=E6 in Jupyter's environment and
    the E4 one: import caffe2 is caffe2rnn, the era holds across cells."""
    jupyter_client = pytest.importorskip("jupyter_client")
    pytest.importorskip("ipykernel")
    kernel.install_kernelspecs(prefix=str(tmp_path))
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "share" / "jupyter"))
    monkeypatch.setenv(ERA_VARIABLE, "E6")
    code = (
        "from caffe2.python import core\n"
        "import caffe2rnn, numpy as np\n"
        "from caffe2rnn import eras\n"
        "x = np.arange(6).reshape(2, 3)\n"
        "print(core.__name__, eras.current().name, np.float is float, round(np.array([1.26]), 1),"
        " x[[slice(0, 1), slice(1, 2)]].tolist())\n"
    )
    for name, era in (("caffe2rnn-caffe2", "E6"), ("caffe2rnn-caffe2-e4", "E4")):
        manager, client = jupyter_client.manager.start_new_kernel(kernel_name=name)
        try:
            outputs = []
            for source in (code, "print(eras.named().name)"):
                client.execute_interactive(
                    source,
                    timeout=60,
                    output_hook=lambda m: outputs.append(m["content"].get("text", "")),
                )
        finally:
            client.stop_channels()
            manager.shutdown_kernel(now=True)
        assert "".join(outputs) == "caffe2rnn.core %s True [1.3] [[1]]\n%s\n" % (era, era)
