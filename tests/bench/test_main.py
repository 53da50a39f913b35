"""`python -m bench`: the suite list, argument errors, and the per-path medians it reports."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from bench.__main__ import DELEGATED, SHAPES, median_tree
from bench.bench_scheduler import node_counts

ROOT = Path(__file__).resolve().parents[2]


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "bench", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=60, check=False)


def test_without_arguments_it_lists_every_suite_and_shape() -> None:
    out = run()
    assert out.returncode == 0, out.stderr
    for name in ("scheduler", *DELEGATED):
        assert f"  {name} " in out.stdout
    for shape in SHAPES:
        assert shape in out.stdout


def test_unknown_suite_and_bad_runs_are_usage_errors() -> None:
    out = run("nosuch")
    assert out.returncode == 2
    assert "unknown suite(s) nosuch" in out.stderr
    out = run("scheduler", "--runs", "0")
    assert out.returncode == 2
    assert "--runs must be >= 1" in out.stderr
    out = run("scheduler", "--shape", "huge")
    assert out.returncode == 2
    assert "invalid choice" in out.stderr


def test_median_tree_takes_the_median_of_each_number_by_path() -> None:
    runs = [
        {"pods": 100, "lat": [1.0, 9.0], "name": "a", "ok": True, "nested": {"x": 5}},
        {"pods": 300, "lat": [3.0, 7.0], "name": "b", "ok": False, "nested": {"x": 1}},
        {"pods": 200, "lat": [2.0, 8.0], "name": "c", "ok": True, "nested": {"x": 3}},
    ]
    assert median_tree(runs) == {"pods": 200, "lat": [2.0, 8.0], "name": "a", "ok": True, "nested": {"x": 3}}
    # lists of different lengths cannot be lined up: the first run's is kept
    assert median_tree([[1, 2], [3]]) == [1, 2]


def test_quick_runs_every_suite_small_and_once() -> None:
    written = ROOT / "bench" / "results" / "suite-descheduler.json"
    written.unlink(missing_ok=True)  # what is read below is this run's, not an earlier one's
    out = run("descheduler", "--quick")
    assert out.returncode == 0, out.stderr
    assert "[descheduler]" in out.stdout
    report = json.loads(written.read_text())
    assert report["runs"] == 1
    assert report["args"][:2] == list(DELEGATED["descheduler"].quick)
    assert report["elapsed_seconds"] > 0


def test_upstreams_ci_variants_run_at_5000_nodes_unless_told() -> None:
    assert node_counts(None, performance=True) == [5000]
    assert node_counts(None, performance=False) == [500, 5000]
    assert node_counts("100,200", performance=True) == [100, 200]


def test_scheduler_bench_medians_list_valued_figures_element_by_element() -> None:
    """`python -m bench.bench_scheduler --runs N` reports GC collections per generation, a list:
    its median is taken per generation (a round() of the whole list crashed the report)."""
    from bench.bench_scheduler import _median

    runs = [{"pods_per_second": 900.0, "gc_collections_by_generation": [40, 3, 0]},
            {"pods_per_second": 1000.0, "gc_collections_by_generation": [44, 5, 1]},
            {"pods_per_second": 1100.0, "gc_collections_by_generation": [42, 4, 0]}]
    assert _median(runs) == {"pods_per_second": 1000.0, "gc_collections_by_generation": [42, 4, 0]}
