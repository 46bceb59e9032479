"""pytest-benchmark's JSON (``--benchmark-json``, ``--benchmark-save``): written from steadybench
results, and read into ``compare`` and the history so existing baselines are not lost.

The layout is pytest-benchmark's own (``pytest_benchmark/plugin.py``
``pytest_benchmark_generate_json``, ``stats.py`` ``Metadata.as_dict`` and ``Stats.fields``): a
top-level object with ``machine_info``, ``commit_info``, ``benchmarks``, ``datetime`` and
``version``; each benchmark has ``group``, ``name``, ``fullname``, ``params``, ``param``,
``extra_info``, ``options`` and ``stats`` (``min``, ``max``, ``mean``, ``stddev``, ``rounds``,
``median``, ``iqr``, ``q1``, ``q3``, ``iqr_outliers``, ``stddev_outliers``, ``outliers``,
``ld15iqr``, ``hd15iqr``, ``ops``, ``total``, ``data``, ``iterations``), times in seconds.

**Reading.** pytest-benchmark measures every round in the one pytest process, so a file is one
execution per benchmark: its rounds are the values and its median the single per-execution
value. ``compare`` then says "one execution" unless the history knows the benchmark's run-to-run
noise on that machine (:mod:`steadybench.history.noise`).
"""

from __future__ import annotations

import json
import math
import platform
import statistics
from pathlib import Path
from typing import Any

from ..model.estimate import Estimate
from ..model.results import Results
from .common import case_label, imported_case, one_execution_estimate

#: the pytest-benchmark version whose layout is written (its ``version`` field)
WRITTEN_VERSION = "5.1.0"


def _quartiles(data: list[float]) -> tuple[float, float]:
    """Q1 and Q3 as pytest-benchmark computes them: for an even count the medians of the two
    halves (Wikipedia "Quartile", method 2), for an odd count method 3 (weights ¼ and ¾ between
    the neighbouring order statistics)."""
    d = sorted(data)
    n = len(d)
    if n == 1:
        return d[0], d[0]
    if n % 2 == 0:
        return statistics.median(d[: n // 2]), statistics.median(d[n // 2:])
    m, r = n // 4, n % 4
    if r == 1:
        return 0.25 * d[m - 1] + 0.75 * d[m], 0.75 * d[3 * m] + 0.25 * d[3 * m + 1]
    return 0.75 * d[m] + 0.25 * d[m + 1], 0.25 * d[3 * m + 1] + 0.75 * d[3 * m + 2]


def stats_of(data: list[float], iterations: int) -> dict[str, Any]:
    """pytest-benchmark's ``stats`` object for per-iteration times ``data`` (seconds)."""
    mean = statistics.fmean(data)
    stddev = statistics.stdev(data) if len(data) > 1 else 0.0
    q1, q3 = _quartiles(data)
    iqr = q3 - q1
    low_fence, high_fence = q1 - 1.5 * iqr, q3 + 1.5 * iqr
    inside = [v for v in data if low_fence <= v <= high_fence]
    iqr_outliers = len(data) - len(inside)
    stddev_outliers = sum(1 for v in data if abs(v - mean) > stddev) if stddev else 0
    return {
        "min": min(data), "max": max(data), "mean": mean, "stddev": stddev,
        "rounds": len(data), "median": statistics.median(data), "iqr": iqr, "q1": q1, "q3": q3,
        "iqr_outliers": iqr_outliers, "stddev_outliers": stddev_outliers,
        "outliers": f"{stddev_outliers};{iqr_outliers}",
        "ld15iqr": min(inside) if inside else min(data),
        "hd15iqr": max(inside) if inside else max(data),
        "ops": 1.0 / mean if mean > 0 else 0.0, "total": sum(data), "data": list(data),
        "iterations": iterations,
    }


def to_pytest_benchmark(results: Results) -> dict[str, Any]:
    """The pytest-benchmark document for ``results`` (cases in seconds; others left out)."""
    env = results.environment or {}
    py = env.get("python") or {}
    git = (results.context or {}).get("git") or {}
    benches = []
    for case in results.cases:
        est = Estimate.from_dict(case.estimate)
        if est is None or not est.ok or est.unit != "s":
            continue
        data = [v for v in case.values() if math.isfinite(v)] or [float(est.value)]  # type: ignore[arg-type]
        extra = case.extra or {}
        name = str(extra.get("pytest_name") or case.benchmark)
        benches.append({
            "group": extra.get("group"),
            "name": name,
            "fullname": str(extra.get("fullname") or case_label(case)),
            "params": dict(case.params) or None,
            "param": extra.get("param"),
            "extra_info": {**(extra.get("extra_info") or {}),
                           "steadybench_estimate": est.to_dict()},
            "options": {"method": case.method, "processes": len(case.processes) or 1},
            "stats": stats_of(data, int(est.figure("executions_per_sample", 1) or 1)),
        })
    return {
        "machine_info": {
            "node": env.get("hostname") or platform.node(),
            "processor": env.get("cpu_model") or platform.processor(),
            "machine": env.get("machine") or platform.machine(),
            "python_compiler": py.get("compiler", ""),
            "python_implementation": py.get("implementation", ""),
            "python_implementation_version": py.get("version", ""),
            "python_version": py.get("version", ""),
            "python_build": (py.get("build") or "").split(" ", 1),
            "release": env.get("kernel", ""),
            "system": env.get("system", ""),
            "cpu": {"brand_raw": env.get("cpu_model", ""), "count": env.get("cpu_count")},
        },
        "commit_info": {
            "id": git.get("commit") or "unversioned", "time": git.get("commit_time"),
            "author_time": git.get("commit_time"), "dirty": bool(git.get("dirty")),
            "project": git.get("project") or Path.cwd().name, "branch": git.get("branch"),
        },
        "benchmarks": benches,
        "datetime": results.created,
        "version": WRITTEN_VERSION,
    }


def to_pytest_benchmark_json(results: Results) -> str:
    return json.dumps(to_pytest_benchmark(results), indent=4, allow_nan=False) + "\n"


# ---------------------------------------------------------------------------- reading
def is_pytest_benchmark(data: Any) -> bool:
    return (isinstance(data, dict) and isinstance(data.get("benchmarks"), list)
            and ("machine_info" in data or "commit_info" in data))


def _environment(data: dict[str, Any]) -> dict[str, Any]:
    mi = data.get("machine_info") if isinstance(data.get("machine_info"), dict) else {}
    cpu = mi.get("cpu") if isinstance(mi.get("cpu"), dict) else {}
    return {
        "hostname": mi.get("node"), "cpu_model": cpu.get("brand_raw") or mi.get("processor"),
        "cpu_count": cpu.get("count"), "machine": mi.get("machine"),
        "system": mi.get("system"), "kernel": mi.get("release"),
        "python": {"implementation": mi.get("python_implementation"),
                   "version": mi.get("python_version")},
        "source": "pytest-benchmark",
    }


def read_pytest_benchmark(path: str | Path, data: dict[str, Any]) -> Results:
    """A pytest-benchmark file as steadybench results (one execution per benchmark); raises
    :class:`~steadybench.errors.SampleFormatError` for malformed entries."""
    from ..errors import SampleFormatError

    results = Results(suite=f"pytest-benchmark {Path(path).name}",
                      environment=_environment(data),
                      created=str(data.get("datetime") or ""))
    ci = data.get("commit_info") if isinstance(data.get("commit_info"), dict) else {}
    results.context = {"imported_from": "pytest-benchmark", "pytest_benchmark_version":
                       data.get("version"),
                       "git": {"commit": None if ci.get("id") in (None, "unversioned")
                               else ci.get("id"), "branch": ci.get("branch"),
                               "dirty": ci.get("dirty"), "commit_time": ci.get("time")}}
    for i, bench in enumerate(data["benchmarks"]):
        where = f"{path}: benchmarks[{i}]"
        if not isinstance(bench, dict) or not isinstance(bench.get("stats"), dict):
            raise SampleFormatError(f"{where}: no 'stats' object")
        stats = bench["stats"]
        raw = stats.get("data")
        if isinstance(raw, list) and raw:
            values = []
            for j, v in enumerate(raw):
                if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v) \
                        or v < 0:
                    raise SampleFormatError(f"{where}.stats.data[{j}]: not a valid time: {v!r}")
                values.append(float(v))
        else:
            median = stats.get("median")
            if isinstance(median, bool) or not isinstance(median, int | float) \
                    or not math.isfinite(median) or median < 0:
                raise SampleFormatError(f"{where}: no 'stats.data' and no valid 'stats.median'")
            values = [float(median)]
        name = str(bench.get("fullname") or bench.get("name") or f"benchmark {i + 1}")
        est = one_execution_estimate(values, "s", "median of rounds (pytest-benchmark)",
                                     method="pytest-benchmark")
        results.cases.append(imported_case(
            name, values, est,
            extra={"group": bench.get("group"), "pytest_name": bench.get("name"),
                   "fullname": bench.get("fullname"), "param": bench.get("param"),
                   "extra_info": bench.get("extra_info") or {},
                   "iterations": stats.get("iterations")}))
    if not results.cases:
        raise SampleFormatError(f"{path}: pytest-benchmark file with no benchmarks")
    return results
