"""Test helpers: a deterministic virtual clock.

:class:`SimulatedClock` stands in for ``time.perf_counter_ns`` so that timing code can be tested
without depending on the speed of the machine. Every read returns the current virtual time
(plus optional noise) and then advances it by ``read_cost_ns``; a simulated workload "takes
time" by calling :meth:`SimulatedClock.advance`. A start–workload–end measurement therefore
reads ``work + read_cost_ns``: the systematic error ε of Moreno and Fischmeister (§3) equals
``read_cost_ns``.
"""

from __future__ import annotations

import numpy as np


class SimulatedClock:
    """A virtual nanosecond clock with a fixed read cost, Gaussian jitter and random spikes.

    Args:
        read_cost_ns: virtual time that passes during each read (after the value is taken).
        jitter_ns: standard deviation of Gaussian noise added to each reading.
        spike_prob: probability that a reading carries an extra ``spike_ns`` (an interrupt).
        spike_ns: size of a spike.
        seed: seed of the noise generator; the same seed gives the same readings.
    """

    def __init__(
        self,
        read_cost_ns: int = 0,
        jitter_ns: float = 0.0,
        spike_prob: float = 0.0,
        spike_ns: int = 0,
        seed: int = 0,
        start_ns: int = 1_000_000_000,
    ) -> None:
        if read_cost_ns < 0 or jitter_ns < 0 or spike_ns < 0 or not 0 <= spike_prob <= 1:
            raise ValueError("SimulatedClock: costs, jitter and spikes must be non-negative")
        self.read_cost_ns = int(read_cost_ns)
        self.jitter_ns = float(jitter_ns)
        self.spike_prob = float(spike_prob)
        self.spike_ns = int(spike_ns)
        self.now_ns = int(start_ns)
        self.reads = 0
        self._rng = np.random.default_rng(seed)

    def __call__(self) -> int:
        value = self.now_ns
        if self.jitter_ns:
            value += int(round(self._rng.normal(0.0, self.jitter_ns)))
        if self.spike_prob and self._rng.random() < self.spike_prob:
            value += self.spike_ns
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

    def workload(self, ns: float):
        """A zero-argument callable that takes ``ns`` of virtual time each call."""

        def work() -> None:
            self.advance(ns)

        return work
