"""Harness overhead per run: steadybench's runner against a bare ``perf_counter_ns`` loop.

The bare loop is the harness of source ``000``: read the clock, call the function, read the
clock, update a streaming mean. steadybench's runner does the same plus its bookkeeping (meters,
stop-condition check, status column, progress). The difference per run is the cost the harness
adds to a benchmark's wall time (not to the measured time: the clock reads are innermost).

Run: ``.venv/bin/python benchmarks/harness_overhead.py [RUNS]``
"""

from __future__ import annotations

import sys
import time

from steadybench import Parameters, Runner, Runs
from steadybench.model import CallableImplementation
from steadybench.stats import StreamingStats


def noop() -> None:
    pass


def bare_loop(runs: int) -> float:
    """Seconds per run of clock–call–clock plus a Welford update."""
    clock = time.perf_counter_ns
    stats = StreamingStats()
    start = time.perf_counter()
    for _ in range(runs):
        t0 = clock()
        noop()
        t1 = clock()
        stats.push(t1 - t0)
    return (time.perf_counter() - start) / runs


def steadybench_loop(runs: int, keep_samples: bool) -> float:
    runner = Runner(Runs(runs), keep_samples=keep_samples, max_runs=runs + 1)
    start = time.perf_counter()
    case = runner.execute(CallableImplementation(noop, "noop"), Parameters())
    elapsed = time.perf_counter() - start
    assert case.n == runs, case.stop_reason
    return elapsed / runs


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 200_000
    best = {name: float("inf") for name in ("bare", "stream", "raw")}
    for _ in range(3):  # best of three rounds, to see the cost rather than the noise
        best["bare"] = min(best["bare"], bare_loop(runs))
        best["stream"] = min(best["stream"], steadybench_loop(runs, keep_samples=False))
        best["raw"] = min(best["raw"], steadybench_loop(runs, keep_samples=True))
    print(f"runs per round: {runs:,} (best of 3 rounds)")
    print(f"bare perf_counter_ns loop      : {best['bare'] * 1e9:8.1f} ns/run")
    for name, label in (
        ("stream", "steadybench runner, --stream"),
        ("raw", "steadybench runner, raw kept"),
    ):
        extra = (best[name] - best["bare"]) * 1e9
        print(
            f"{label:<31}: {best[name] * 1e9:8.1f} ns/run  (harness overhead {extra:+.1f} ns/run)"
        )


if __name__ == "__main__":
    main()
