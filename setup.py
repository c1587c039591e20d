"""Build caffe2rnn: generate ``caffe2_pb2.py`` and compile the Cython kernels.

Every ``_ext/<name>.pyx`` becomes the extension ``caffe2rnn._ext.<name>``. A
failed or skipped Cython build (``CAFFE2RNN_NO_CYTHON=1``) is not fatal: the
package then runs its pure-Python kernel twins and says so once on import.
Compiler directives are set here for every kernel; ``CAFFE2RNN_CYTHON_DEBUG=1``
turns bounds and wrap-around checks back on to chase a memory error.

Compile flags: the package is always compiled on the machine that runs it, so
the kernels are built for that CPU (``-march=native``: AVX2/AVX-512 loops,
as NumPy picks at run time). ``-ffp-contract=off`` forbids fusing a multiply
and an add into one FMA, which rounds once instead of twice: the compiled
kernels must do exactly the IEEE operations of their NumPy twins to stay
bit-identical. ``CAFFE2RNN_PORTABLE=1`` builds for the baseline x86-64/ARM
instruction set instead (a wheel or a shared install used by other CPUs).

The LSTM kernels' row loops (``_ext/_lstm_math.pxi``) read and write up to a
dozen arrays; a vectorising compiler must first check at run time that the
written ones do not overlap the read ones, and GCC gives up on loops that
need more than ten such checks (``vect-max-version-for-alias-checks``), which
would leave them scalar — four to eight times slower. The kernels' contract
already refuses overlapping arrays, so with GCC the limit is raised; other
compilers get the same code, possibly unvectorised. ``-mprefer-vector-width=512``
lets GCC use the full AVX-512 width where ``-march=native`` found it (GCC
prefers 256-bit vectors on some CPUs that have it).
"""

import glob
import os
import subprocess
import sys

from setuptools import find_packages, setup
from setuptools.command.build_ext import build_ext
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "caffe2rnn", "proto"))
import build as proto_build  # noqa: E402  (caffe2rnn/proto/build.py)


def extensions():
    if os.environ.get("CAFFE2RNN_NO_CYTHON"):
        return []
    try:
        import numpy
        from Cython.Build import cythonize
    except ImportError as exc:
        print("caffe2rnn: not building Cython kernels (%s)" % exc)
        return []
    from setuptools import Extension

    debug = bool(os.environ.get("CAFFE2RNN_CYTHON_DEBUG"))
    directives = {
        "language_level": 3,
        "boundscheck": debug,
        "wraparound": debug,
        "initializedcheck": debug,
        "nonecheck": False,
        "cdivision": True,
    }
    flags = ["-O3", "-ffp-contract=off"]
    if not os.environ.get("CAFFE2RNN_PORTABLE"):
        flags.append("-march=native")
    exts = [
        Extension(
            "caffe2rnn._ext." + os.path.splitext(os.path.basename(path))[0],
            [path],
            include_dirs=[numpy.get_include(), "_ext"],
            extra_compile_args=flags,
            define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
        )
        for path in sorted(glob.glob("_ext/*.pyx"))
    ]
    return cythonize(exts, compiler_directives=directives, quiet=True, include_path=["_ext"])


class BuildPy(build_py):
    def run(self):
        proto_build.generate()
        super().run()


def is_gcc(command):
    """Whether the C compiler ``command`` (its argv) is GCC."""
    try:
        out = subprocess.run(
            [command[0], "--version"], capture_output=True, text=True, timeout=30
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return False
    return "Free Software Foundation" in out and "clang" not in out.lower()


class BuildExt(build_ext):
    """Generate the proto module too, and never fail the install on a compile error."""

    def build_extensions(self):
        if is_gcc(self.compiler.compiler_so):
            extra = ["--param=vect-max-version-for-alias-checks=64"]
            if not os.environ.get("CAFFE2RNN_PORTABLE"):
                extra.append("-mprefer-vector-width=512")
            for ext in self.extensions:
                ext.extra_compile_args = list(ext.extra_compile_args) + extra
        super().build_extensions()

    def run(self):
        proto_build.generate()
        # caffe2rnn/_ext/ is a git-ignored namespace package holding only
        # build outputs: an in-place build must create it before copying.
        os.makedirs(os.path.join(HERE, "caffe2rnn", "_ext"), exist_ok=True)
        try:
            super().run()
        except Exception as exc:  # pragma: no cover - depends on the machine
            print(
                "caffe2rnn: Cython kernels not built (%s); the pure-Python "
                "kernels will be used" % exc
            )


setup(
    packages=find_packages(include=["caffe2rnn", "caffe2rnn.*"]),
    package_data={"caffe2rnn.proto": ["caffe2.proto"]},
    ext_modules=extensions(),
    cmdclass={"build_py": BuildPy, "build_ext": BuildExt},
)
