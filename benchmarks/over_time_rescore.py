"""Re-score recorded real runs of ``benchmarks/over_time.py`` offline, with and without the
heavy-tail guard (:class:`steadybench.compare.between.HeavyTail`).

``over_time.py``'s real part leaves a directory ``/tmp/over-time-*`` with ``a{i}.json`` and
``b{i}.json`` for every pair i (even i: identical code; odd i: B 5 % slower). This script
replays each pair through the project's own functions as the live run judged it: the kept
levels are the ln(median)s of A_0..A_i (A_i is saved before B_i runs; a run on a busy machine
is not kept, as :func:`steadybench.history.last_run.save` does), the noise
:func:`~steadybench.compare.between.from_levels` of them (or the default floor with fewer than
``MIN_RUNS``), the test :func:`~steadybench.compare.between.across_time` (A_i, B_i) at 95 %.
``compare A.json B.json`` and the change line both go through that function, so one score
stands for both.

Printed per set: identical pairs called different, 5 % pairs called slower, wrong direction,
and (with the guard) pairs called inconclusive; what a test that holds its level could be
expected to score with the standard errors of that set's comparisons (``_expected.py``); then
the totals.

    python benchmarks/over_time_rescore.py                       # every recorded set in /tmp
    python benchmarks/over_time_rescore.py /tmp/over-time-74v8z4dl /tmp/over-time-mhrjdv5a
    python benchmarks/over_time_rescore.py --statistics  # would another run level agree more?

``--statistics`` asks whether a run's level other than the median of its executions would make
runs of identical code agree: for each set, the spread between the base runs (their standard
deviation and :func:`~steadybench.compare.between.robust_spread`, in ln time) when a run's level
is the median, the 10th or 25th percentile, the minimum, the median of the fast group (the
executions within 15 % of the fastest; Chen & Revels 2016 argue that on time-shared machines
noise only adds time) or the mean of the shortest half (the shorth).
"""

from __future__ import annotations

import argparse
import glob
import json
import math
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from _expected import expected_lines

from steadybench.compare.between import DEFAULT, across_time, from_levels, robust_spread
from steadybench.cpu_pressure import is_busy
from steadybench.history.last_run import KEEP_LEVELS

CONFIDENCE = 0.95


@dataclass(frozen=True)
class Score:
    """One set's verdicts in one way of judging (``guard`` on or off)."""

    identical: int
    differ: int
    slower_pairs: int
    found: int
    wrong: int
    inconclusive: int
    busy: int

    def text(self) -> str:
        return (f"identical called different {self.differ} of {self.identical}; 5 % found "
                f"{self.found} of {self.slower_pairs}; wrong direction {self.wrong}; "
                f"inconclusive {self.inconclusive}" + (f"; busy {self.busy}" if self.busy
                                                       else ""))


def _case(path: Path) -> tuple[np.ndarray, float | None]:
    bench = json.loads(path.read_text())["benchmarks"][0]
    values = np.asarray(bench["estimate"]["fields"]["execution_values"], dtype=float)
    return values, bench.get("cpu_pressure")


def verdicts(folder: Path) -> list[tuple[str, str, str, float, float]]:
    """(kind, verdict without the guard, verdict with it, the comparison's standard error and
    degrees of freedom) for each pair of ``folder``."""
    out = []
    levels: list[float] = []
    i = 0
    while (folder / f"a{i}.json").exists() and (folder / f"b{i}.json").exists():
        a, pressure_a = _case(folder / f"a{i}.json")
        b, pressure_b = _case(folder / f"b{i}.json")
        if not is_busy(pressure_a):
            levels = [*levels, math.log(float(np.median(a)))][-KEEP_LEVELS:]
        kind = "identical" if i % 2 == 0 else "slower"
        i += 1
        if is_busy(pressure_a) or is_busy(pressure_b):
            out.append((kind, "busy", "busy", math.nan, math.nan))
            continue
        at = across_time(a, b, from_levels(levels) or DEFAULT)
        plain = ("faster" if at.difference > 0 else "slower") if at.differs(CONFIDENCE) \
            else "no difference"
        guarded = "inconclusive" if at.vetoed(CONFIDENCE) else plain
        out.append((kind, plain, guarded, at.se, at.df))
    return out


def score(found: list[tuple[str, str, str, float, float]], guard: bool) -> Score:
    col = 2 if guard else 1
    same = [v[col] for v in found if v[0] == "identical"]
    slow = [v[col] for v in found if v[0] == "slower"]
    return Score(len(same), sum(v in ("slower", "faster") for v in same), len(slow),
                 slow.count("slower"), slow.count("faster"),
                 sum(v[col] == "inconclusive" for v in found),
                 sum(v[col] == "busy" for v in found))


def _fast_group(values: np.ndarray) -> float:
    return float(np.median(values[values <= values.min() * 1.15]))


def _shorth(values: np.ndarray) -> float:
    v = np.sort(values)
    half = v.size // 2 + 1
    start = int(np.argmin(v[half - 1:] - v[:v.size - half + 1]))
    return float(np.mean(v[start:start + half]))


#: a run's level, each way of reading it from the run's execution values
RUN_STATISTICS = {
    "median": np.median,
    "10th percentile": lambda v: np.quantile(v, 0.10),
    "25th percentile": lambda v: np.quantile(v, 0.25),
    "minimum": np.min,
    "fast group": _fast_group,
    "shorth": _shorth,
}


def statistics_table(folder: Path) -> list[str]:
    """The base runs' spread (sd and robust spread of ln level) under each run statistic."""
    runs = []
    i = 0
    while (folder / f"a{i}.json").exists():
        runs.append(_case(folder / f"a{i}.json")[0])
        i += 1
    rows = []
    for name, statistic in RUN_STATISTICS.items():
        levels = np.log([float(statistic(v)) for v in runs])
        rows.append(f"  {name:16s} sd {np.std(levels, ddof=1):6.2%}  robust "
                    f"{robust_spread(list(levels)):6.2%}")
    return rows


def recorded_sets() -> list[Path]:
    """Every /tmp/over-time-* with 40 pairs' B results, oldest first."""
    found = [Path(d) for d in glob.glob("/tmp/over-time-*")
             if len(glob.glob(os.path.join(d, "b*.json"))) >= 40]
    return sorted(found, key=lambda d: d.stat().st_mtime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sets", nargs="*", type=Path,
                        help="recorded over_time.py directories (default: every "
                             "/tmp/over-time-* with 40 b*.json)")
    parser.add_argument("--statistics", action="store_true",
                        help="the base runs' spread under other run statistics (module docs)")
    args = parser.parse_args()
    sets = args.sets or recorded_sets()
    if not sets:
        raise SystemExit("no recorded sets: give over_time.py's directories")
    if args.statistics:
        for folder in sets:
            print(f"{folder.name}: spread of ln(run level) over its base runs")
            print("\n".join(statistics_table(folder)))
        return
    totals: dict[bool, list[Score]] = {False: [], True: []}
    for folder in sets:
        if not (folder / "a0.json").exists():
            print(f"{folder}: no a0.json, skipped")
            continue
        found = verdicts(folder)
        print(f"{folder.name} ({len(found)} pairs)")
        for guard in (False, True):
            s = score(found, guard)
            totals[guard].append(s)
            print(f"  {'with guard' if guard else 'no guard  '}: {s.text()}")
        slower = [(v[3], v[4]) for v in found if v[0] == "slower"]
        print("\n".join(expected_lines(slower, sum(v[0] == "identical" for v in found), 0.05)))
    for guard in (False, True):
        got = totals[guard]
        if got:
            total = Score(*(sum(getattr(s, f) for s in got) for f in Score.__dataclass_fields__))
            print(f"all sets, {'with guard' if guard else 'no guard  '}: {total.text()}")


if __name__ == "__main__":
    main()
