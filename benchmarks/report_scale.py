"""Time and size of the HTML report for 100 benchmarks × 100,000 samples.

Run: ``.venv/bin/python benchmarks/report_scale.py [--cases 100] [--samples 100000]``.
Prints the time to build the Results, to write the report, the size of the HTML file, and
the time of the largest single plots. Figures depend on the machine; nothing is asserted.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from array import array
from pathlib import Path

import numpy as np

from steadybench.model.results import CaseResult, Results
from steadybench.output import plots as pl
from steadybench.output.report import write_report
from steadybench.processors import finalize_case


def build(cases: int, samples: int, seed: int = 0) -> Results:
    rng = np.random.default_rng(seed)
    out = Results(suite="scale", environment={"machine": "synthetic"})
    for i in range(cases):
        mean = 1e-6 * (1 + i)
        values = mean * rng.lognormal(0.0, 0.05, samples)
        values += np.linspace(0, 0.05 * mean, samples)  # a slow drift, as under heating
        case = CaseResult(f"bench{i:03d}", "impl", {"n": i})
        case.status = ["warmup"] * 20 + ["ok"] * (samples - 20)
        case.outlier = [False] * samples
        case.metrics = {"wall_time": array("d", values),
                        "cpu_freq": array("d", 2000 + 50 * np.sin(np.arange(samples) / 500)),
                        "temperature": array("d", 50 + np.arange(samples) * 1e-4)}
        finalize_case(case)
        out.cases.append(case)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cases", type=int, default=100)
    parser.add_argument("--samples", type=int, default=100_000)
    args = parser.parse_args()
    t0 = time.perf_counter()
    results = build(args.cases, args.samples)
    t1 = time.perf_counter()
    print(f"built {args.cases} cases × {args.samples} samples in {t1 - t0:.1f} s")
    with tempfile.TemporaryDirectory() as tmp:
        case = results.cases[0]
        for name, fn in (("timeseries", pl.plot_timeseries), ("histogram", pl.plot_histogram),
                         ("error evolution", pl.plot_error_evolution)):
            for fmt in ("png", "svg"):
                t = time.perf_counter()
                path = fn(case, Path(tmp) / f"one.{fmt}")
                print(f"  one {name} plot ({fmt}): {time.perf_counter() - t:.2f} s, "
                      f"{path.stat().st_size / 1024:.0f} KiB")
        t = time.perf_counter()
        path = write_report([results], Path(tmp) / "report.html")
        elapsed = time.perf_counter() - t
        size = path.stat().st_size
        print(f"report: {elapsed:.1f} s, {size / 1024 / 1024:.1f} MiB "
              f"({elapsed / args.cases:.2f} s and {size / args.cases / 1024:.0f} KiB per case)")


if __name__ == "__main__":
    main()
