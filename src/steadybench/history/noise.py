"""Run-to-run noise of each benchmark on each machine, learned from the history, and the test it
allows when a result holds one execution.

Samples inside one process do not show how much a fresh process differs (``DESIGN.md``, "The
measurement hierarchy"), so ``compare`` calls a side with one execution inconclusive. The
history often knows that spread already: every record of the benchmark on the same machine that
ran several executions, and every commit measured more than once, shows how much independent
executions of unchanged code differ. This module pools them:

* the noise is the standard deviation σ of ln(time) between executions, pooled over groups of
  executions of the same code (one record's executions; the single-execution records of one
  clean commit): σ² = Σ (k_g − 1)·s_g² / Σ (k_g − 1), with Σ (k_g − 1) degrees of freedom (the
  pooled variance of a one-way layout, e.g. Montgomery, *Design and Analysis of Experiments*,
  §3.3); logarithms make it a relative spread, so it carries over between versions whose times
  differ;
* with σ known to ν degrees of freedom, two sides of n_B and n_N executions differ in mean
  log-time by d with standard error σ·√(1/n_B + 1/n_N); d / SE follows Student's t with ν
  degrees of freedom under "no change" (the two-sample t-test with the variance estimated from
  outside data: the same construction as the pooled t-test, Welch 1947 not being needed as the
  variance is common by assumption). The ratio BASE/NEW gets the interval exp(d ± t·SE).

The assumption, stated: the code compared has the same run-to-run spread, on that machine, as the
recorded versions of the benchmark.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..compare.known_noise import known_noise_protocol as known_noise_protocol

if TYPE_CHECKING:
    from .store import HistoryStore, Point

#: fewest pooled degrees of freedom for the noise to be used
MIN_DF = 4


@dataclass(frozen=True)
class Noise:
    """The run-to-run spread of one benchmark on one machine: σ of ln(time) with ``df``
    degrees of freedom, from ``groups`` groups of executions in ``records`` records."""

    label: str
    machine: str | None
    sigma: float
    df: int
    groups: int
    records: int

    @property
    def cov(self) -> float:
        """The spread as a coefficient of variation (≈ σ for small σ)."""
        return math.sqrt(math.exp(self.sigma ** 2) - 1.0)

    def describe(self) -> str:
        where = f" on {self.machine}" if self.machine else ""
        return (f"run-to-run noise from history{where}: {self.cov:.2%} between executions "
                f"({self.df} degrees of freedom, {self.records} records)")


def noise_from_points(points: Sequence[Point], label: str = "",
                      machine: str | None = None) -> Noise | None:
    """Pool the spread of ln(time) over groups of executions of the same code (see the module
    docs); None when fewer than :data:`MIN_DF` degrees of freedom are available."""
    groups: list[list[float]] = []
    single_by_commit: dict[str, list[float]] = {}
    records = set()
    from ..cpu_pressure import busy_test

    busy = busy_test()
    for p in points:
        if busy(p.cpu_pressure):  # measured on a busy machine: its spread is the contention's
            continue
        values = [v for v in p.executions if v > 0 and math.isfinite(v)]
        if len(values) >= 2:
            groups.append([math.log(v) for v in values])
            records.add(p.record_id)
        elif len(values) == 1 and p.commit and p.dirty is False:
            single_by_commit.setdefault(p.commit, []).append(math.log(values[0]))
            records.add(p.record_id)
    groups.extend(g for g in single_by_commit.values() if len(g) >= 2)
    total, df = 0.0, 0
    for g in groups:
        mean = sum(g) / len(g)
        total += sum((x - mean) ** 2 for x in g)
        df += len(g) - 1
    if df < MIN_DF:
        return None
    return Noise(label=label, machine=machine, sigma=math.sqrt(total / df), df=df,
                 groups=len(groups), records=len(records))


def run_to_run_noise(store: HistoryStore, label: str, machine: str | None = None) -> Noise | None:
    """The noise of benchmark ``label`` on ``machine`` (every machine when None) from the
    store's records."""
    return noise_from_points(store.series(label, machine=machine), label, machine)


NoiseLookup = Callable[[Any], "Noise | None"]


def history_noise_lookup(url: str | None, environment: dict[str, Any] | None,
                         only_if_exists: bool = True) -> tuple[NoiseLookup | None, str | None]:
    """A function giving the noise of a compared sample (by its label) on the machine of
    ``environment``, for :class:`steadybench.compare.protocol.CompareOptions`; with a note when
    the history could not be read. Without an explicit URL the project's default store is used
    only when it already exists."""
    from .backends import HistoryError, default_path
    from .record import current_machine
    from .store import HistoryStore

    if url is None and only_if_exists and not default_path().exists():
        return None, None
    try:
        store = HistoryStore.open(url, create=False)
    except HistoryError as exc:
        return None, f"run-to-run noise from history not used: {exc}"
    machine = current_machine(environment) if environment else None
    cache: dict[str, Noise | None] = {}

    def lookup(sample: Any) -> Noise | None:
        label = sample.label
        if label not in cache:
            try:
                # this machine's noise only: another machine's spread says nothing here
                cache[label] = run_to_run_noise(store, label, machine)
            except HistoryError:
                cache[label] = None
        return cache[label]

    return lookup, None


def run_noise_lookup(url: str | None, environment: dict[str, Any] | None,
                     only_if_exists: bool = True) -> NoiseLookup | None:
    """A function giving the spread between runs of a compared sample (by its label) on the
    machine of ``environment``, learned from the records of the history (each record one run:
    its median log-time, :func:`steadybench.compare.between.from_levels`), else from the runs
    ``run`` kept (:func:`steadybench.history.last_run.noise_lookup`); None when neither
    exists. Feeds :attr:`steadybench.compare.protocol.CompareOptions.run_noise`."""
    from ..compare.between import from_levels
    from ..cpu_pressure import busy_test
    from .backends import HistoryError, default_path
    from .last_run import noise_lookup
    from .record import current_machine
    from .store import HistoryStore

    kept = noise_lookup(environment)
    store = None
    if url is not None or not only_if_exists or default_path().exists():
        try:
            store = HistoryStore.open(url)
        except HistoryError:
            store = None
    if store is None and kept is None:
        return None
    machine = current_machine(environment) if environment else None
    cache: dict[str, Any] = {}

    def lookup(sample: Any) -> Any:
        label = sample.label
        if label not in cache:
            found = None
            if store is not None:
                try:
                    points = store.series(label, machine=machine)
                    busy = busy_test()
                    found = from_levels([record_level(p) for p in points
                                         if not busy(p.cpu_pressure)],
                                        "this machine (history)")
                except HistoryError:
                    found = None
            cache[label] = found or (kept(sample) if kept is not None else None)
        return cache[label]

    return lookup


def record_level(p: Any) -> float:
    """A record's level: the median log-time of its executions (one slowed execution does not
    move it), else the log of its value. ``p`` is a :class:`~steadybench.history.store.Point`.
    Used by the between-record noise here and by :mod:`.regressions`."""
    import statistics

    logs = [math.log(v) for v in p.executions if v > 0]
    # statistics.median: the same value as numpy's, without its overhead on a few numbers
    return float(statistics.median(logs)) if logs else math.log(p.value)
