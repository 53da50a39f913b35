"""One entry point for the benchmarks: `python -m bench [SUITE ...] [--runs N] [--quick]`.

    python -m bench                      # list the suites and the scheduler shapes
    python -m bench scheduler --shape basic-5k --runs 3
    python -m bench scheduler --quick    # every pre-filled shape at --scale 0.1, one run
    python -m bench all --quick          # every suite, small, one run each: under two minutes on 2 cores
    python -m bench api preemption --runs 3

Every suite runs against a real server (in-process or a `minik3s server` process, as its module
does) and reports the median of `--runs` runs (default 3; with `--quick` 1) with the spread, next to the machine:
CPU count and model, Python version and the 1/5/15-minute load average before and after each
run (the machine may be shared: compare figures only at the same load). Results go to stdout as
a table and to `bench/results/suite-<suite>.json`.

- `scheduler`: issue 14's pre-filled-queue shapes (bench.bench_scheduler.run_prefilled), each next
  to the real kube-scheduler v1.33.3's figure for the same shape (anchor) and as a ratio, with the
  longest watch gap and the watch lag p99 of the burst.
- the other suites run their module (`python -m bench.bench_<name>`) as a child process, `--runs`
  times unless the module repeats itself (then it is given `--runs`), and report the median of
  every number the module's JSON holds, path by path.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import os
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.common import machine

RESULTS = Path(__file__).parent / "results"

# short names for bench_scheduler.PREFILLED's shapes
SHAPES = {
    "basic-5k": "SchedulingBasic/5000Nodes",
    "spread-5k": "TopologySpreading/5000Nodes",
    "antiaffinity-5k": "SchedulingPodAntiAffinity/5000Nodes",
    "basic-500": "SchedulingBasic/500Nodes",
}


@dataclass(frozen=True, slots=True)
class Delegated:
    """A suite that is one bench module run as a child process."""

    module: str
    about: str
    # the module takes --runs and reports medians itself
    own_runs: bool
    quick: tuple[str, ...] = ()
    args: tuple[str, ...] = ()


DELEGATED: dict[str, Delegated] = {
    "scheduler-ci": Delegated("bench.bench_scheduler", "scheduler_perf's CI variants at 5,000 nodes, pods created "
                              "during the run (SchedulingBasic, SchedulingPodAntiAffinity, TopologySpreading)",
                              own_runs=True, args=("--performance",), quick=("--nodes", "1000", "--init-pods", "200", "--measured-pods", "500")),
    "scheduler-ci-no-hostname": Delegated(
        "bench.bench_scheduler", "SchedulingPodAntiAffinity's CI variant (5,000 nodes) on nodes without "
        "kubernetes.io/hostname, as upstream's node template makes them (the term's topology then matches no node)",
        own_runs=True, args=("--performance", "--no-hostname", "--workload", "SchedulingPodAntiAffinity"),
        quick=("--nodes", "1000", "--init-pods", "200", "--measured-pods", "500")),
    "preemption": Delegated("bench.bench_preemption", "PreemptionBasic (500 nodes, 3 victims per preemptor)",
                            own_runs=True, quick=("--nodes", "100")),
    "gang": Delegated("bench.bench_gang", "GangScheduling 5000Nodes_1000Gangs (gangs of 3)", own_runs=True,
                      quick=("--nodes", "500", "--gangs", "100")),
    "api": Delegated("bench.bench_api", "durable creates/s (HTTP with wrk, in-process), watch lag with 100 "
                     "watchers", own_runs=True, quick=("--seconds", "2", "--inproc-pods", "1000", "--status-patches", "500")),
    "unschedulable": Delegated("bench.bench_unschedulable", "Unschedulable: 9-CPU pods injected at 5/s beside a "
                               "SchedulingBasic batch (5,000 nodes, 10,000 measured); slowdown vs none, target <= 10 %",
                               own_runs=True, quick=("--nodes", "300", "--init-pods", "10", "--measured-pods", "1000")),
    "churn": Delegated("bench.bench_churn", "SchedulingWithMixedChurn: a node, a 9-CPU pod and a Service created, "
                       "then deleted, every second beside a SchedulingBasic batch (5,000 nodes, 10,000 measured)",
                       own_runs=True, quick=("--nodes", "300", "--measured-pods", "1000")),
    "e2e": Delegated("bench.bench_e2e", "end to end, whole server with 1,000 simulated kubelets: creation -> Running "
                     "p50/p99 of bare pods and a Deployment (SLO p99 <= 5 s)", own_runs=True,
                     quick=("--nodes", "200", "--pods", "100", "--replicas", "150")),
    "fleet": Delegated("bench.bench_kubelet_fleet", "simulated kubelets at 1,000 and 5,000 nodes: registration, idle "
                       "CPU and heartbeat writes/s, bound -> Running", own_runs=False,
                       quick=("--nodes", "500", "--idle-seconds", "3", "--pods", "200")),
    "deployment": Delegated("bench.bench_deployment", "a 1,000-replica Deployment available on 100 nodes",
                            own_runs=False, quick=("--replicas", "200", "--nodes", "20")),
    "descheduler": Delegated("bench.bench_descheduler", "one descheduling cycle, 500 nodes x 20 pods",
                             own_runs=True, quick=("--nodes", "100")),
    "api-scale": Delegated("bench.bench_api_scale", "LIST of 50,000 pods (JSON, paged, kubectl's Table), restart "
                           "with 5,000 nodes + 50,000 pods, peak RSS", own_runs=True,
                           quick=("--nodes", "200", "--pods", "2000")),
    "startup": Delegated("bench.bench_startup", "embedded cluster start to ready", own_runs=True,
                         quick=("--cold-runs", "1")),
}


def load_average() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def median_tree(runs: list[Any]) -> Any:
    """The median of every number at the same path across runs (dicts by key, lists by index);
    anything else is taken from the first run. Worked example: [{"a": 1, "b": [3]}, {"a": 3,
    "b": [5]}, {"a": 2, "b": [4]}] -> {"a": 2, "b": [4]}."""
    first = runs[0]
    if isinstance(first, bool) or not isinstance(first, (int, float, dict, list)):
        return first
    if isinstance(first, (int, float)):
        nums = [r for r in runs if isinstance(r, (int, float)) and not isinstance(r, bool)]
        return round(statistics.median(nums), 3) if len(nums) == len(runs) else first
    if isinstance(first, dict):
        return {k: median_tree([r[k] for r in runs if isinstance(r, dict) and k in r]) for k in first}
    if all(isinstance(r, list) and len(r) == len(first) for r in runs):
        return [median_tree([r[i] for r in runs]) for i in range(len(first))]
    return first


# ---------------------------------------------------------------------------- scheduler


def run_scheduler(shapes: list[str], *, runs: int, scale: float, metrics: bool, watchers: int = 0) -> dict[str, Any]:
    from bench.bench_scheduler import PREFILLED, make_workload_counts, run_prefilled

    results = []
    for short in shapes:
        shape = SHAPES[short]
        name, nodes, init, measured, anchor = PREFILLED[shape]
        wl = make_workload_counts(name, max(1, int(nodes * scale)), int(init * scale), max(1, int(measured * scale)),
                                  hostname=True)
        per_run = []
        for i in range(runs):
            before = load_average()
            r = asyncio.run(run_prefilled(wl, percentage=None, profile=None, metrics=metrics, watchers=watchers))
            r["load_average_before"] = before
            r["load_average_after"] = load_average()
            logging.getLogger("bench").warning("%s run %d/%d: %s pods/s (load %s)", short, i + 1, runs,
                                               r["throughput_average"], r["load_average_after"])
            per_run.append(r)
        tp = [r["throughput_average"] for r in per_run]
        med = median_tree(per_run)
        results.append({
            "suite": "scheduler", "shape": short, "workload": shape, "nodes": wl.nodes, "init_pods": wl.init_pods,
            "measured_pods": wl.measured_pods, "scale": scale, "scheduler_metrics": metrics,
            "service_account_admission": True,  # pods carry the token volume, as `minik3s server` admits them
            "anchor_kube_scheduler": anchor if scale == 1.0 else None,
            "ratio": round(statistics.median(tp) / anchor, 2) if scale == 1.0 else None,
            "pods_per_second_median": statistics.median(tp), "pods_per_second_spread": [min(tp), max(tp)],
            "median": med, "runs": per_run,
        })
    print(f"\n{'shape':16} {'pods/s median [min, max]':>26} {'anchor':>7} {'ratio':>6} {'watch gap max':>14} "
          f"{'lag p99':>8} {'loop CPU/pod':>13} {'load 1m':>8}")
    for r in results:
        m = r["median"]
        lo, hi = r["pods_per_second_spread"]
        anchor_s = f"{r['anchor_kube_scheduler']:.0f}" if r["anchor_kube_scheduler"] else "-"
        print(f"{r['shape']:16} {r['pods_per_second_median']:>10.1f} [{lo:.0f}, {hi:.0f}]".ljust(44)
              + f"{anchor_s:>7} {r['ratio'] if r['ratio'] is not None else '-':>6} "
              f"{m['watch_max_gap_ms']:>11.0f} ms {m['watch_lag_p99_ms']:>5.0f} ms "
              f"{m['cpu_loop_us_per_pod']:>10.0f} µs {m['load_average_after'][0]:>8}")
        if watchers:
            print(f"{'':16} {watchers} HTTP watchers: lag p50 {m['watchers_lag_p50_ms']:.0f} ms, "
                  f"p99 {m['watchers_lag_p99_ms']:.0f} ms, max {m['watchers_lag_max_ms']:.0f} ms; longest silence "
                  f"{m['watchers_max_gap_ms']:.0f} ms; events missing {m['watchers_missing_events']:.0f}")
    if scale != 1.0:
        print(f"(--scale {scale}: counts scaled, so no anchor applies)")
    return {"results": results}


# ---------------------------------------------------------------------------- delegated


def run_delegated(name: str, suite: Delegated, *, runs: int, quick: bool, passthrough: list[str]) -> dict[str, Any]:
    args = [*suite.args, *(suite.quick if quick else ()), *passthrough]
    repeats = 1
    if suite.own_runs:
        args += ["--runs", str(runs)]
    else:
        repeats = runs
    outputs = []
    for i in range(repeats):
        before = load_average()
        start = time.time()
        cmd = [sys.executable, "-m", suite.module, *args]
        print(f"$ {' '.join(cmd[1:])}   (run {i + 1}/{repeats}, load {before})", flush=True)
        proc = subprocess.run(cmd, cwd=Path(__file__).parent.parent, check=False)
        if proc.returncode != 0:
            raise SystemExit(f"{suite.module} failed with exit code {proc.returncode}")
        written = [p for p in RESULTS.glob("*.json") if p.stat().st_mtime >= start and not p.name.startswith("suite-")]
        for p in sorted(written):
            outputs.append({"file": p.name, "load_average_before": before, "load_average_after": load_average(),
                            "result": json.loads(p.read_text())})
    out: dict[str, Any] = {"suite": name, "module": suite.module, "args": args, "about": suite.about,
                           "runs": runs, "outputs": outputs}
    if repeats > 1 and outputs:
        out["median"] = median_tree([o["result"] for o in outputs])
    return out


# ---------------------------------------------------------------------------- main


def list_suites() -> None:
    print("suites (python -m bench SUITE ... [--runs N] [--quick]):")
    print(f"  {'scheduler':14} issue 14's pre-filled-queue shapes, next to kube-scheduler v1.33.3; "
          f"--shape {', '.join(SHAPES)}")
    for name, s in DELEGATED.items():
        print(f"  {name:14} {s.about} ({s.module})")


def main() -> None:
    p = argparse.ArgumentParser(prog="python -m bench", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("suites", nargs="*", help=f"scheduler, {', '.join(DELEGATED)}, or all; none: list them")
    p.add_argument("--runs", type=int, default=None,
                   help="runs per measurement (medians reported); default 3, with --quick 1")
    p.add_argument("--quick", action="store_true",
                   help="a smoke run of every suite in under two minutes on 2 cores: small sizes (scheduler: "
                        "--scale 0.1; other suites: their quick arguments), one run unless --runs says otherwise")
    p.add_argument("--shape", action="append", choices=sorted(SHAPES), help="scheduler shapes (default: all)")
    p.add_argument("--scale", type=float, default=None, help="scheduler: multiply every count (default 1, quick 0.1)")
    p.add_argument("--no-scheduler-metrics", action="store_true",
                   help="scheduler: run without the Prometheus scheduler metrics (to measure their cost)")
    p.add_argument("--watchers", type=int, default=0,
                   help="scheduler: HTTP watch streams on the measured pods during each burst (a child "
                        "process; 20 of them measure event lag and the longest silence)")
    p.add_argument("--log-level", default="WARNING")
    args, passthrough = p.parse_known_args()
    logging.basicConfig(level=args.log_level)
    if not args.suites:
        list_suites()
        return
    names = list(args.suites)
    if names == ["all"]:
        names = ["scheduler", *DELEGATED]
    unknown = [n for n in names if n != "scheduler" and n not in DELEGATED]
    if unknown:
        p.error(f"unknown suite(s) {', '.join(unknown)}; known: scheduler, {', '.join(DELEGATED)}")
    if args.runs is None:
        args.runs = 1 if args.quick else 3
    if args.runs < 1:
        p.error("--runs must be >= 1")
    with contextlib.suppress(ImportError):
        import uvloop

        uvloop.install()
    RESULTS.mkdir(exist_ok=True)
    for name in names:
        suite_start = time.monotonic()
        report: dict[str, Any] = {"suite": name, "machine": machine(), "load_average_start": load_average(),
                                  "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        if name == "scheduler":
            scale = args.scale if args.scale is not None else (0.1 if args.quick else 1.0)
            report.update(run_scheduler(args.shape or list(SHAPES), runs=args.runs, scale=scale,
                                        metrics=not args.no_scheduler_metrics, watchers=args.watchers))
        else:
            report.update(run_delegated(name, DELEGATED[name], runs=args.runs, quick=args.quick,
                                        passthrough=passthrough))
        report["load_average_end"] = load_average()
        report["elapsed_seconds"] = round(time.monotonic() - suite_start, 1)
        path = RESULTS / f"suite-{name}.json"
        path.write_text(json.dumps(report, indent=2))
        m = report["machine"]
        print(f"[{name}] {report['elapsed_seconds']} s; {m['cpus']} CPUs ({m['cpu']}), Python {m['python']}, load "
              f"{report['load_average_start']} -> {report['load_average_end']}; written {path}")


if __name__ == "__main__":
    main()
