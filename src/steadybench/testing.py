"""Test helpers: a deterministic virtual clock.

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

from collections.abc import Callable, Sequence
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
