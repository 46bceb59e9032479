"""How often ``steadybench history regressions`` calls unchanged code changed, and how often it
finds a real step; and how fast the history store records and reads.

Simulated series (seeded): each record holds k executions whose log-times are normal with the
given spread; "contaminated" slows 8% of the executions by 10–100% (a busy machine). Prints the
share of flat series with a reported change (false alarms) and the share of series whose step
is found at the right record, at the default 95% confidence. Then times adding 1,000 records to
a SQLite history and reading one benchmark's series back.

    python benchmarks/history_regressions.py
"""

from __future__ import annotations

import math
import tempfile
import time
from pathlib import Path

import numpy as np

from steadybench.history.git import GitInfo
from steadybench.history.regressions import find_changes
from steadybench.history.store import HistoryStore, Point


def point(i: int, execs: list[float]) -> Point:
    return Point(i, "", f"{i:040x}", "main", False, None, "m", "b", "s", float(np.median(execs)),
                 None, None, None, tuple(execs))


def executions(rng: np.random.Generator, level: float, k: int, sd: float,
               contaminated: bool) -> list[float]:
    x = np.exp(rng.normal(math.log(level), sd, k))
    if contaminated:
        bad = rng.random(k) < 0.08
        x[bad] *= rng.uniform(1.1, 2.0, int(bad.sum()))
    return list(x)


def rates(contaminated: bool, trials: int = 300) -> None:
    rng = np.random.default_rng(11 if contaminated else 10)
    sd = 0.01
    false = sum(bool(find_changes([point(i, executions(rng, 1.0, 5, sd, contaminated))
                                   for i in range(int(rng.integers(5, 61)))]).changes)
                for _ in range(trials))
    last = sum([c.index for c in find_changes(
        [point(i, executions(rng, 1.2 if i == 2 else 1.0, 4, sd, contaminated))
         for i in range(3)]).changes] == [2] for _ in range(trials))
    small = sum(20 in [c.index for c in find_changes(
        [point(i, executions(rng, 1.03 if i >= 20 else 1.0, 5, sd, contaminated))
         for i in range(30)]).changes] for _ in range(trials))
    label = "8% of executions slowed 10-100%" if contaminated else "clean"
    print(f"{label:34} flat 5-60 records, change reported: {false / trials:6.1%}   "
          f"+20% at the 3rd of 3 found: {last / trials:6.1%}   "
          f"+3% at the 21st of 30 found: {small / trials:6.1%}")


def store_speed(n: int = 1000) -> None:
    doc = {"schema_version": 1, "environment": {"hostname": "bench"},
           "benchmarks": [{"name": f"b{j}", "implementation": f"b{j}",
                           "estimate": {"value": 1.0},
                           "processes": [{"value": 1.0}] * 10} for j in range(10)]}
    with tempfile.TemporaryDirectory() as tmp, \
            HistoryStore.open(str(Path(tmp) / "h.sqlite")) as store:
        start = time.perf_counter()
        for _ in range(n):
            store.add(doc, git=GitInfo(note="bench"))
        added = time.perf_counter() - start
        start = time.perf_counter()
        points = store.series("b3")
        read = time.perf_counter() - start
        start = time.perf_counter()
        find_changes(points)
        analysed = time.perf_counter() - start
    print(f"store: {n / added:,.0f} records/s added (10 benchmarks each, one transaction per "
          f"record); series of {len(points)} points read in {read * 1e3:.1f} ms, change points "
          f"in {analysed * 1e3:.0f} ms")


if __name__ == "__main__":
    rates(False)
    rates(True)
    store_speed()
