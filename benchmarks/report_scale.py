"""Time and peak memory of the HTML report for many benchmarks with many samples.

Run: ``.venv/bin/python benchmarks/report_scale.py`` — measures, each in a fresh process,
100 benchmarks × 100,000 samples and 500 benchmarks × 10,000 samples (or one configuration
with ``--cases N --samples M``). Prints, per configuration: the time to build the Results, the
time to write the report, the size of the HTML file, and the peak resident memory of the
process and of the figure-drawing workers (``ru_maxrss``). Targets (issue 13): the 100 × 100k
report in ≤ 15 s and ≤ 1 GB. Figures depend on the machine; nothing is asserted.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from array import array
from pathlib import Path

import numpy as np

from steadybench.model.results import CaseResult, Results
from steadybench.output.report import write_report
from steadybench.processors import finalize_case

CONFIGS = ((100, 100_000), (500, 10_000))


def build(cases: int, samples: int, seed: int = 0) -> Results:
    """Synthetic results: log-normal runs with a slow drift, a few 50× slower runs, and CPU
    frequency and temperature columns, as a long managed run records them."""
    rng = np.random.default_rng(seed)
    out = Results(suite="scale", environment={"machine": "synthetic"})
    for i in range(cases):
        mean = 1e-6 * (1 + i)
        values = mean * rng.lognormal(0.0, 0.05, samples)
        values += np.linspace(0, 0.05 * mean, samples)  # a slow drift, as under heating
        values[rng.integers(0, samples, max(1, samples // 2000))] *= 50  # interruptions
        case = CaseResult(f"bench{i:03d}", "impl", {"n": i})
        case.status = ["warmup"] * 20 + ["ok"] * (samples - 20)
        case.outlier = [False] * samples
        case.metrics = {"wall_time": array("d", values),
                        "cpu_freq": array("d", 2000 + 50 * np.sin(np.arange(samples) / 500)),
                        "temperature": array("d", 50 + np.arange(samples) * 1e-4)}
        finalize_case(case)
        out.cases.append(case)
    return out


def _cpu() -> tuple[float, float]:
    """User + system CPU seconds of this process and of its finished children."""
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(
        resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, kids.ru_utime + kids.ru_stime


def _peak_mib(who: int) -> float:
    return resource.getrusage(who).ru_maxrss / 1024  # KiB on Linux


def measure(cases: int, samples: int) -> None:
    t0 = time.perf_counter()
    results = build(cases, samples)
    t1 = time.perf_counter()
    built_peak = _peak_mib(resource.RUSAGE_SELF)
    with tempfile.TemporaryDirectory() as tmp:
        t = time.perf_counter()
        cpu = _cpu()
        path = write_report([results], Path(tmp) / "report.html")
        elapsed = time.perf_counter() - t
        after = _cpu()
        own, workers = after[0] - cpu[0], after[1] - cpu[1]
        size = path.stat().st_size
    print(f"{cases} benchmarks × {samples} samples: built in {t1 - t0:.1f} s "
          f"(peak {built_peak:.0f} MiB)")
    print(f"  report: {elapsed:.1f} s, {size / 1024 / 1024:.1f} MiB of HTML "
          f"({elapsed / cases * 1000:.0f} ms and {size / cases / 1024:.0f} KiB per benchmark); "
          f"load average {os.getloadavg()[0]:.1f} on {len(os.sched_getaffinity(0))} cores")
    print(f"  CPU: {own:.1f} s in the process, {workers:.1f} s in the drawing workers "
          f"(on an idle machine the wall time is about {own:.1f} + {workers:.1f} / cores)")
    print(f"  peak memory: {_peak_mib(resource.RUSAGE_SELF):.0f} MiB in the process, "
          f"{_peak_mib(resource.RUSAGE_CHILDREN):.0f} MiB in the largest drawing worker; "
          f"workers: {os.environ.get('STEADYBENCH_REPORT_WORKERS', 'one per core')}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cases", type=int)
    parser.add_argument("--samples", type=int, default=100_000)
    args = parser.parse_args()
    if args.cases:
        measure(args.cases, args.samples)
        return
    print(f"cores available: {len(os.sched_getaffinity(0))}")
    for cases, samples in CONFIGS:  # each in its own process: separate peak memory
        subprocess.run([sys.executable, __file__, "--cases", str(cases), "--samples",
                        str(samples)], check=True)


if __name__ == "__main__":
    main()
