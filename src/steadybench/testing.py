"""Test helpers: a deterministic virtual clock, and simulated benchmark histories.

:class:`SimulatedClock` stands in for ``time.perf_counter_ns`` so that timing code can be tested
without depending on the speed of the machine. Every read returns the current virtual time
(plus optional noise) and then advances it by ``read_cost_ns``; a simulated workload "takes
time" by calling :meth:`SimulatedClock.advance`. A start–workload–end measurement therefore
reads ``work + read_cost_ns``: the systematic error ε of Moreno and Fischmeister (§3) equals
``read_cost_ns``.

Spikes are interrupts (``002`` §4.1: "a timer or I/O interrupt that occurs while executing the
function"): an interrupt *takes time*. A spike advances the virtual time by its length before
the value is read, so every later reading is later too; it never makes time run backwards. An
interval ending at that read is longer by the spike; the next interval is not shorter. (Only
``jitter_ns`` is noise of the reading itself.)
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np


class SimulatedClock:
    """A virtual nanosecond clock with a fixed read cost, Gaussian jitter and random spikes.

    Args:
        read_cost_ns: virtual time that passes during each read (after the value is taken).
        jitter_ns: standard deviation of Gaussian noise added to each reading (noise of the
            reading, not time: the clock itself does not move).
        spike_prob: probability that an interrupt happens just before a reading: the virtual
            time advances by the spike's length, then the value is read.
        spike_ns: length of a spike, or ``(low, high)`` for lengths drawn uniformly between
            the two (interrupts differ in length).
        seed: seed of the noise generator; the same seed gives the same readings.

    ``spikes`` counts the spikes so far and ``spike_total_ns`` their total length.
    """

    def __init__(
        self,
        read_cost_ns: int = 0,
        jitter_ns: float = 0.0,
        spike_prob: float = 0.0,
        spike_ns: int | Sequence[float] = 0,
        seed: int = 0,
        start_ns: int = 1_000_000_000,
    ) -> None:
        low, high = (spike_ns, spike_ns) if np.isscalar(spike_ns) else tuple(spike_ns)  # type: ignore[misc]
        if read_cost_ns < 0 or jitter_ns < 0 or low < 0 or high < low \
                or not 0 <= spike_prob <= 1:
            raise ValueError("SimulatedClock: costs, jitter and spikes must be non-negative")
        self.read_cost_ns = int(read_cost_ns)
        self.jitter_ns = float(jitter_ns)
        self.spike_prob = float(spike_prob)
        self.spike_range = (float(low), float(high))
        self.spike_ns = int(round(high))
        self.now_ns = int(start_ns)
        self.reads = 0
        self.spikes = 0
        self.spike_total_ns = 0
        self._rng = np.random.default_rng(seed)

    def __call__(self) -> int:
        if self.spike_prob and self._rng.random() < self.spike_prob:
            low, high = self.spike_range
            length = int(round(low if high == low else self._rng.uniform(low, high)))
            self.now_ns += length  # the interrupt ran: time passed before the read
            self.spikes += 1
            self.spike_total_ns += length
        value = self.now_ns
        if self.jitter_ns:
            value += int(round(self._rng.normal(0.0, self.jitter_ns)))
        self.now_ns += self.read_cost_ns
        self.reads += 1
        return value

    def advance(self, ns: float) -> None:
        """Let ``ns`` nanoseconds of virtual time pass (a simulated workload or sleep)."""
        if ns < 0:
            raise ValueError("cannot advance a clock backwards")
        self.now_ns += int(round(ns))

    def sleep(self, seconds: float) -> None:
        """A ``time.sleep`` replacement that advances virtual time instead of waiting."""
        self.advance(seconds * 1e9)

    def workload(self, ns: float) -> Callable[[], None]:
        """A zero-argument callable that takes ``ns`` of virtual time each call."""

        def work() -> None:
            self.advance(ns)

        return work


def time_function(work: Callable[[], Any], clock: Callable[[], int]) -> Callable[[int], float]:
    """``work`` as the time function of a user-timed benchmark (method ``usertimed``,
    pyperf's ``bench_time_func``): ``f(loops)`` runs ``work`` ``loops`` times and returns the
    seconds ``clock`` (nanoseconds) saw them take."""

    def timed(loops: int) -> float:
        t0 = clock()
        for _ in range(loops):
            work()
        return (clock() - t0) / 1e9

    return timed


# --------------------------------------------------------------------------- simulated histories
#: the shapes of a simulated history's level without a step (issue 25's drift-only series)
HISTORY_KINDS = ("flat", "drift", "walk")


@dataclass(frozen=True)
class HistoryNoise:
    """How the records of a simulated history scatter: each record is ``executions``
    executions whose ln(time) spread by ``spread`` around the record's level, and the whole
    record is shifted by a run effect of ``run_effect`` (the machine moves every execution of
    one run together, issue 25 item 1). The defaults are the figures the issue and the docs
    state (executions 2.5 %, a run effect of 1 %), a record noise of 1.67 %; a default ``run``
    on the development VM (25 executions, 3.6 % spread, load 1) scattered by 0.88 % per record
    (``docs/comparison.md``)."""

    executions: int = 5
    spread: float = 0.025
    run_effect: float = 0.01

    @property
    def record_sd(self) -> float:
        """The standard deviation of a record's level (the median of its executions' ln time
        plus the run effect), the median's variance by a seeded simulation."""
        return float(np.sqrt(self.spread ** 2 * _median_variance(self.executions)
                             + self.run_effect ** 2))

    def scaled_to(self, record_sd: float) -> HistoryNoise:
        """The same shape (executions, ratio of run effect to spread) with this record noise."""
        return HistoryNoise(self.executions, self.spread * record_sd / self.record_sd,
                           self.run_effect * record_sd / self.record_sd)


@functools.lru_cache(maxsize=16)
def _median_variance(k: int) -> float:
    """The variance of the median of ``k`` standard normal values (seeded simulation)."""
    rng = np.random.default_rng(0)
    return float(np.var(np.median(rng.standard_normal((200_000, k)), axis=1)))


def history_level(rng: np.random.Generator, n: int, kind: str, step_at: int | None = None,
                  step: float = 0.05, drift: float = 0.03, walk: float = 0.003) -> np.ndarray:
    """The true ln level of ``n`` records: ``flat``; a linear ``drift`` (+3 % over the whole
    series); or a random ``walk`` (0.3 % per record); plus a ``step`` (5 %) from record
    ``step_at`` on when given. Issue 25's simulated histories."""
    if kind == "drift":
        level = np.linspace(0.0, np.log1p(drift), n)
    elif kind == "walk":
        level = np.cumsum(rng.normal(0.0, walk, n))
    elif kind == "flat":
        level = np.zeros(n)
    else:
        raise ValueError(f"unknown history kind {kind!r}: one of {', '.join(HISTORY_KINDS)}")
    if step_at is not None:
        level = level + np.where(np.arange(n) >= step_at, np.log1p(step), 0.0)
    return level


def simulated_history(rng: np.random.Generator, n: int, kind: str,
                      step_at: int | None = None, step: float = 0.05,
                      noise: HistoryNoise = HistoryNoise(), drift: float = 0.03,
                      walk: float = 0.003) -> list[Any]:
    """``n`` history records (:class:`~steadybench.history.store.Point`, oldest first, one
    commit each) of one benchmark whose level is :func:`history_level` and whose records
    scatter as ``noise`` says. Used by ``tests/test_over_time.py`` and
    ``benchmarks/over_time.py``."""
    from .history.store import Point

    level = history_level(rng, n, kind, step_at, step, drift, walk)
    shift = rng.normal(0.0, noise.run_effect, n)
    points = []
    for i in range(n):
        ex = np.exp(level[i] + shift[i] + rng.normal(0.0, noise.spread, noise.executions))
        points.append(Point(i, "", f"{i:040x}", "main", False, None, "m", "b", "s",
                            float(np.median(ex)), None, None, None, tuple(ex)))
    return points


#: the runs of the heavy-tail guard's simulations (tests/test_between_guard.py,
#: benchmarks/guard_cost.py): 25 executions with a spread of 0.02 in ln time, each run shifted
#: by a run effect of 0.01
GUARD_EXECUTIONS, GUARD_SPREAD, GUARD_RUN_EFFECT = 25, 0.02, 0.01


def simulated_run(rng: np.random.Generator, shift: float = 0.0) -> np.ndarray:
    """One run's execution times: ``exp(shift + run effect + each execution's own noise)``."""
    return np.exp(shift + rng.normal(0, GUARD_RUN_EFFECT)
                  + rng.normal(0, GUARD_SPREAD, GUARD_EXECUTIONS))


def run_level(values: np.ndarray) -> float:
    """A run's level as the kept runs hold it: the ln of its executions' median."""
    return float(np.log(np.median(values)))


@dataclass(frozen=True)
class GuardTally:
    """Of ``trials`` simulated comparisons across time: ``called`` by the t-test alone,
    ``vetoed`` by the heavy-tail guard among them, and ``share_alone`` those a rule on the share
    of earlier shifts alone (no minimum count) would have vetoed."""

    trials: int
    called: int
    vetoed: int
    share_alone: int


def guard_tally(rng: np.random.Generator, levels: int, trials: int, effect: float = 0.0,
                step: float = 0.0, confidence: float = 0.95) -> GuardTally:
    """Simulate ``trials`` comparisons of one more run (``effect`` slower, in ln) against the
    last of ``levels`` kept runs; with ``step``, the kept runs take a real step of that size
    (ln) at a random place and the new run stays on the stepped level."""
    from .compare.between import across_time, from_levels

    called = vetoed = share_alone = 0
    alpha = 1.0 - confidence
    for _ in range(trials):
        at_step = int(rng.integers(1, levels - 1)) if step else levels
        runs = [simulated_run(rng, step if i >= at_step else 0.0) for i in range(levels)]
        at = across_time(runs[-1], simulated_run(rng, step + effect),
                         from_levels([run_level(r) for r in runs]))
        differs = at.differs(confidence)
        called += differs
        vetoed += differs and at.vetoed(confidence)
        share_alone += differs and at.tail is not None and at.tail.share > alpha
    return GuardTally(trials, called, vetoed, share_alone)


#: a benchmark file whose profile has known shares: ``slow()`` and ``fast()`` do the same work,
#: and the benchmark calls ``slow()`` three times and ``fast()`` once, so ``slow()`` holds 0.75 of
#: the calls' cost and ``fast()`` 0.25 (tests/test_profiles.py checks a profile against these;
#: benchmarks/profile_fidelity.py measures how close profiles come)
SLOW_FAST = '''\
from steadybench import benchmark


def work(n):
    s = 0
    for i in range(n):
        s += i * i
    return s


def slow():
    return work(2000)


def fast():
    return work(2000)


def both():
    slow()
    slow()
    slow()
    fast()


@benchmark
def case():
    return both
'''
