"""Builders of Results for the plot, report and browser tests (no tests in this module)."""

from __future__ import annotations

import struct
from typing import Any

import numpy as np

from steadybench.model.results import CaseResult, Results
from steadybench.processors import finalize_case

HOSTILE = "<script>alert(\"x\")</script> '$\\frac{a$' & <b>bold</b>"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def png_size(data: bytes) -> tuple[int, int]:
    """(width, height) from the IHDR chunk of a PNG file."""
    assert data[:8] == PNG_MAGIC, "not a PNG file"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def make_case(name: str = "bench", *, n: int = 120, warmup: int = 5, seed: int = 0,
              mean: float = 1e-3, implementation: str = "impl", params: dict | None = None,
              monitors: bool = True, finalize: bool = True) -> CaseResult:
    """A case with warm-up runs, one removed outlier run, one failed run and, with
    ``monitors``, cpu_freq / temperature / loadavg columns."""
    rng = np.random.default_rng(seed)
    case = CaseResult(benchmark=name, implementation=implementation,
                      params={"size": 10} if params is None else params)
    for i in range(n + warmup):
        values: dict[str, Any] = {"wall_time": float(mean * (1 + 0.03 * rng.standard_normal()))}
        if monitors:
            values["cpu_freq"] = 2000.0 + 100 * np.sin(i / 10)
            values["temperature"] = 50.0 + 0.01 * i
            values["loadavg"] = 0.5 + 0.1 * rng.random()
        case.add_run("warmup" if i < warmup else "ok", values)
    if n > 4:
        case.metrics["wall_time"][warmup + 2] = mean * 3
        case.status[warmup + 2] = "removed"
        case.outlier[warmup + 2] = True
    case.add_run("failed", {})
    if finalize:
        finalize_case(case)
    case.stop_reason = f"{n} runs done"
    return case


def make_results(names: tuple[str, ...] = ("alpha", "beta"), *, seed: int = 0,
                 scale: float = 1.0, **kw: Any) -> Results:
    cases = [make_case(name, seed=seed + i, mean=1e-3 * (i + 1) * scale, **kw)
             for i, name in enumerate(names)]
    return Results(suite="suite", cases=cases,
                   environment={"cpu": {"model": "Test CPU", "cores": 2}, "os": "Linux"},
                   context={"preset": "quiet", "applied": ["governor=performance"],
                            "skipped": ["turbo: no sysfs file"]})


def fit_extra(n: int = 20, outlier: int | None = 6) -> dict[str, Any]:
    """A straight-line fit as the differential method records it (002 Fig. 3)."""
    x = list(range(1, n + 1))
    y = [40e-9 * v + 18e-9 for v in x]
    dropped = []
    if outlier is not None:
        y[outlier] += 300e-9
        dropped = [outlier]
    return {"kind": "line", "x": x, "x_label": "executions", "y": y, "dropped": dropped,
            "slope": 40e-9, "intercept": 18e-9, "slope_ci": [39.5e-9, 40.5e-9],
            "confidence": 0.95, "r2": 0.9999, "loglog": {"slope": 1.0}}


def sweep_extra() -> dict[str, Any]:
    sizes = [10, 100, 1000, 10_000, 100_000]
    mean = [2e-8 * s * np.log2(s) for s in sizes]  # base 2, as the complexity fit
    return {"sizes": sizes, "mean": mean, "stddev": [m * 0.05 for m in mean],
            "geomean": [m * 0.98 for m in mean], "geostdev": [1.05] * 5,
            "r2": [0.999, 0.998, 0.999, 0.9995, 0.999],  # one per size, as sweep_table
            "complexity": {"best": "O(n log n)", "coefficient": 2e-8,
                           "candidates": {"O(n)": 0.97, "O(n log n)": 0.999}}}


def with_executions(results: Results, k: int = 5) -> Results:
    """The runs of each case split into ``k`` executions (as worker processes would give),
    each with its median as the per-execution value: what ``compare`` tests."""
    for case in results.cases:
        values = np.asarray(case.samples, dtype=float)
        case.processes = [{"index": i, "value": float(np.median(chunk)), "n": int(chunk.size)}
                          for i, chunk in enumerate(np.array_split(values, k))]
    return results


# ---------------------------------------------------------------- one report of every kind
def ab_document() -> dict[str, Any]:
    """A document as ``steadybench ab --json`` writes it (ab/report.py ``to_document``)."""
    rng = np.random.default_rng(7)
    rounds = [{"index": i, "order": ["A", "B"] if i % 2 else ["B", "A"],
               "A": float(3e-5 * (1 + 0.02 * rng.standard_normal())),
               "B": float(2e-5 * (1 + 0.02 * rng.standard_normal())), "errors": {}}
              for i in range(24)]
    looks = [{"rounds": k, "ratio": 1.5, "low": 1.5 - 0.6 / k, "high": 1.5 + 0.6 / k,
              "level": 0.95, "decision": "continue" if k < 24 else "faster",
              "method": "repeated exact signed-rank interval"} for k in (12, 24)]
    return {"kind": "steadybench-ab", "tool": {"name": "steadybench", "version": "0"},
            "settings": {"confidence": 0.95, "threshold": 0.0, "max_rounds": 40,
                         "sides": "two-sided"},
            "variants": {"A": {"kind": "python", "description": "old.py"},
                         "B": {"kind": "python", "description": "new.py"}},
            "verdict": "faster", "interim": False, "reason": "decided at look 2",
            "summary": "B is 1.500× faster than A [1.475, 1.525] at 95%", "elapsed": 6.1,
            "result": looks[-1], "looks": looks, "rounds": rounds,
            "failures": {"A": [], "B": []}, "warnings": []}


def kind_inputs() -> dict[str, dict[str, Any]]:
    """Inputs of write_report for every kind of result, each with a phrase its summary must
    show: run (a group), exec and iters (two commands), sweep, compare, ab."""
    from steadybench.programs.sweep import sweep_table

    run = with_executions(Results(suite="strings", cases=[
        make_case("build", implementation="join", mean=1e-3, monitors=False, params={}),
        make_case("build", implementation="concat", mean=1.6e-3, seed=1, monitors=False,
                  params={})], environment={"os": "Linux", "cpu": {"model": "Test CPU"}}))
    commands = []
    for method in ("exec", "iters"):
        res = with_executions(make_results(("gzip -1 data", "gzip -9 data"), monitors=False,
                                           params={}))
        res.suite = method
        for case in res.cases:
            case.implementation = case.benchmark
            case.method = method
            if method == "iters":
                case.extra["fit"] = fit_extra()
        commands.append(res)
    sweep_cases = []
    for size in (8, 16, 32, 64, 128, 256):
        case = make_case("prog {size}", implementation="prog {size}", params={"size": size},
                         mean=2e-9 * size * np.log2(size), monitors=False, n=25)
        case.method = "iters"
        case.extra["fit"] = dict(fit_extra(), slope=2e-9 * size * np.log2(size),
                                 stddev=2e-11 * size, loglog={"factor": 2e-9 * size})
        sweep_cases.append(case)
    sweep = Results(suite="sweep", cases=sweep_cases,
                    context={"sweep": sweep_table(sweep_cases)})
    base = with_executions(make_results(("parse", "render"), seed=0, monitors=False))
    new = with_executions(make_results(("parse", "render"), seed=5, scale=0.625,
                                       monitors=False))
    return {
        "run": {"results": [run], "phrase": "join is 1."},
        "exec": {"results": [commands[0]], "phrase": "gzip -1 data is"},
        "iters": {"results": [commands[1]], "phrase": "gzip -1 data is"},
        "sweep": {"results": [sweep], "phrase": "time grows as O(n log n)"},
        "compare": {"results": [base, new], "compare": True, "phrase": "NEW is 1."},
        "ab": {"results": [], "ab": [ab_document()], "phrase": "B is 1.500× faster than A"},
    }
