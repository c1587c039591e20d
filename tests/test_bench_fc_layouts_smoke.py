"""benchmarks/bench_fc_layouts.py in its quick form: it times every layout,
prints the rule's pick for each shape, and the reproduce line."""

import importlib.util
import os

BENCH = os.path.join(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks", "bench_fc_layouts.py"
)
THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def test_quick_run_prints_every_layout_and_the_rules_pick(capsys):
    saved = {v: os.environ.get(v) for v in THREAD_VARS}
    spec = importlib.util.spec_from_file_location("bench_fc_layouts", BENCH)
    bench = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(bench)
    finally:
        for var, value in saved.items():
            if value is None:
                os.environ.pop(var, None)
            else:
                os.environ[var] = value
    bench.main(["--quick", "--rounds", "1"])
    out = capsys.readouterr().out
    assert "8x32x128" in out and "16x128x512" in out
    assert "(w.xT)T" in out and "x.WT" in out and "reproduce:" in out
