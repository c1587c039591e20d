"""The sdist carries the kernel sources and no generated files; the wheel built
from it has compiled kernels that import from where it is installed.

Builds with the project's own environment (``--no-isolation``: no network), the
way a user without internet would: ``python -m build`` makes the sdist, then the
wheel *from that sdist*; ``pip install --target`` puts the wheel in a temporary
directory; a fresh interpreter (outside the repository) imports the compiled
kernels and the generated protobuf module from there. Deselect with
``-m "not packaging"``.
"""

import glob
import os
import subprocess
import sys
import tarfile
import zipfile

import pytest

pytestmark = [pytest.mark.packaging, pytest.mark.slow]

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
KERNELS = sorted(os.path.basename(p)[:-4] for p in glob.glob(os.path.join(ROOT, "_ext", "*.pyx")))


def run(*cmd, **kw):
    out = subprocess.run(cmd, capture_output=True, text=True, **kw)
    assert out.returncode == 0, "%s failed:\n%s\n%s" % (cmd, out.stdout[-3000:], out.stderr[-3000:])
    return out


@pytest.fixture(scope="module")
def dists(tmp_path_factory):
    pytest.importorskip("build")
    if os.environ.get("CAFFE2RNN_NO_CYTHON"):
        pytest.skip("CAFFE2RNN_NO_CYTHON is set: the wheel would have no kernels")
    out = tmp_path_factory.mktemp("dist")
    env = dict(os.environ, CAFFE2RNN_PORTABLE="1")  # a wheel for any CPU of the arch
    run(sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), ROOT, env=env)
    (sdist,) = glob.glob(str(out / "*.tar.gz"))
    (wheel,) = glob.glob(str(out / "*.whl"))
    return sdist, wheel, out


def test_sdist_carries_every_kernel_source_and_nothing_generated(dists):
    sdist = dists[0]
    with tarfile.open(sdist) as tar:
        names = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
    sources = {
        os.path.relpath(p, ROOT) for p in glob.glob(os.path.join(ROOT, "_ext", "*.p[yx][xd]"))
    }
    assert sources and sources <= names, sources - names
    assert "caffe2rnn/proto/caffe2.proto" in names and "setup.py" in names
    generated = [n for n in names if n.endswith((".c", ".so", ".o", "caffe2_pb2.py"))]
    assert generated == []
    # every twin the kernels import is there too
    assert {"caffe2rnn/kernels/%s.py" % k for k in KERNELS} <= names


def test_wheel_from_the_sdist_has_compiled_kernels_that_import(dists, tmp_path):
    _, wheel, _ = dists
    with zipfile.ZipFile(wheel) as whl:
        names = whl.namelist()
    for kernel in KERNELS:
        assert any(n.startswith("caffe2rnn/_ext/%s." % kernel) and n.endswith(".so") for n in names)
    assert "caffe2rnn/proto/caffe2_pb2.py" in names
    site = tmp_path / "site"
    run(
        sys.executable,
        "-m",
        "pip",
        "install",
        "-q",
        "--no-deps",
        "--no-index",
        "--target",
        str(site),
        wheel,
    )
    code = (
        "import caffe2rnn, caffe2rnn._ext.lstm_unit as k\n"
        "from caffe2rnn import kernels\n"
        "from caffe2rnn.proto import caffe2_pb2\n"
        "print(caffe2rnn.__file__); print(k.__file__); print(kernels.active())\n"
        "print(caffe2_pb2.NetDef(name='n').name)\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "CAFFE2RNN_KERNELS")}
    env["PYTHONPATH"] = str(site)
    out = run(sys.executable, "-c", code, cwd=str(tmp_path), env=env).stdout.split()
    assert all(p.startswith(str(site)) for p in out[:2]), out
    assert out[2:] == ["cython", "n"]
