"""Every benchmark times the BLAS kernels the CPU itself would pick.

OpenBLAS chooses its kernels when it loads, from the CPU it finds — unless
``OPENBLAS_CORETYPE`` names one (``OPENBLAS_L2_SIZE`` overrides the cache
size it plans for). Some machines set them as a workaround for old OpenBLAS
builds; this project's development machines force ``Haswell`` (AVX2) kernels
on an AVX-512 CPU. A user's machine has no such variable, so a benchmark that
kept them would time another library than the one its readers run.

So each benchmark, when run as a script, calls :func:`use_the_cpus_own_kernels`
before NumPy is imported (NumPy's OpenBLAS reads the variables once, when
NumPy loads it): the variables are removed from the benchmark's own process
— if NumPy is loaded already, the script starts again without them — and
:func:`header` names the kernel OpenBLAS then runs (through threadpoolctl)
and what was unset. Tests import the benchmarks' functions without running
this, and CI never runs it: there the variables go on protecting old builds.

``--forced-blas`` (any benchmark) keeps the variables, to measure what
forcing the kernel costs.
"""

import os
import sys

#: The variables that override OpenBLAS's own choice of kernel.
FORCING = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")
#: Carries what was unset across the restart (``VAR=value`` pairs, ``;``-separated).
_UNSET = "CAFFE2RNN_BENCH_UNSET_BLAS"
#: A benchmark argument: keep the variables (and drop the argument).
KEEP = "--forced-blas"


def use_the_cpus_own_kernels():
    """Unset :data:`FORCING` in this process before NumPy loads OpenBLAS
    (restarting the script if NumPy is loaded already); with ``--forced-blas``
    among the arguments, keep them and remove that argument."""
    if KEEP in sys.argv:
        sys.argv.remove(KEEP)
        return
    found = {var: os.environ[var] for var in FORCING if var in os.environ}
    if not found:
        return
    note = ";".join("%s=%s" % item for item in found.items())
    if "numpy" in sys.modules:  # too late for this process: start again without them
        env = {k: v for k, v in os.environ.items() if k not in FORCING}
        env[_UNSET] = note
        sys.stdout.flush()
        os.execve(sys.executable, [sys.executable] + sys.argv, env)
    for var in found:
        del os.environ[var]
    os.environ[_UNSET] = note


def blas():
    """The BLAS NumPy runs: library, version, kernel and threads (threadpoolctl)."""
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return "threadpoolctl not installed (pip install threadpoolctl to see the BLAS kernel)"
    infos = [i for i in threadpool_info() if i.get("user_api") == "blas"]
    return (
        "; ".join(
            "%s %s, kernel %s, %s thread(s)"
            % (i.get("internal_api"), i.get("version"), i.get("architecture"), i.get("num_threads"))
            for i in infos
        )
        or "no BLAS found by threadpoolctl"
    )


def header():
    """One line for a benchmark's header: the BLAS kernel in use, and whether
    it is the CPU's own choice or one the environment forces."""
    forced = ["%s=%s" % (var, os.environ[var]) for var in FORCING if var in os.environ]
    if forced:
        how = "forced by %s" % ", ".join(forced)
    elif os.environ.get(_UNSET):
        how = "the CPU's own choice; unset for this run: %s" % os.environ[_UNSET].replace(";", ", ")
    else:
        how = "the CPU's own choice"
    return "BLAS: %s (%s)" % (blas(), how)
