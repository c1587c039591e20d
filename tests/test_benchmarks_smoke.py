"""The smaller benchmarks in their quick form, so they cannot rot:
bench_fc_layouts.py (every layout timed, the rule's pick, the reproduce line),
bench_executor_memory.py (the executor keeps less per step than the loop),
bench_executor_build.py, bench_fusion.py and bench_journal.py (what RunNet's
rollback journal copies)."""

import importlib.util
import os
import sys

BENCHMARKS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks")
THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def load(name):
    """Import benchmarks/<name>.py, putting back the thread variables it sets."""
    saved = {v: os.environ.get(v) for v in THREAD_VARS}
    spec = importlib.util.spec_from_file_location(name, os.path.join(BENCHMARKS, name + ".py"))
    bench = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(bench)
    finally:
        for var, value in saved.items():
            if value is None:
                os.environ.pop(var, None)
            else:
                os.environ[var] = value
        if BENCHMARKS in sys.path:
            sys.path.remove(BENCHMARKS)
    return bench


def test_quick_run_prints_every_layout_and_the_rules_pick(capsys):
    bench = load("bench_fc_layouts")
    bench.main(["--quick", "--rounds", "1"])
    out = capsys.readouterr().out
    assert "8x32x128" in out and "16x128x512" in out
    assert "(w.xT)T" in out and "x.WT" in out and "reproduce:" in out


def test_the_executor_keeps_less_per_step_than_the_loop():
    bench = load("bench_executor_memory")
    shape = (60, 4, 8, 8)
    off, on = (bench.kept_per_step(shape, mode) for mode in (False, True))
    assert 0 < on < off


def test_the_plan_building_benchmark_runs_and_prints_its_table(capsys, monkeypatch):
    bench = load("bench_executor_build")
    monkeypatch.setattr(bench, "runs", lambda T, on, later=1: (0.3, 0.2, 0.1))
    bench.main(["--quick"])
    out = capsys.readouterr().out
    assert "plan building" in out and "reproduce:" in out


def test_one_real_plan_building_measurement():
    bench = load("bench_executor_build")
    first, second, later = bench.runs(20, True, later=1)
    assert min(first, second, later) > 0


def test_the_fusion_benchmark_compares_equal_plans(capsys):
    bench = load("bench_fusion")
    bench.main(["--quick"])
    out = capsys.readouterr().out
    assert "fwd unfused" in out and "reproduce:" in out


def test_the_journal_benchmark_names_what_the_journal_copies(capsys):
    bench = load("bench_journal")
    bench.main(["--quick", "--rounds", "1"])
    out = capsys.readouterr().out
    # FC's output is copied for both nets; the gradient of the input only for fwd+bwd
    assert "bench_inference/i2h " in out and "bench_lstm/i2h_grad" in out
    assert "journal/run" in out and "reproduce:" in out
