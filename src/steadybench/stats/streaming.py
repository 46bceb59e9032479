"""Streaming mean and variance in O(1) memory.

The update is Welford's recurrence as popularised by Knuth (TAOCP vol. 2, §4.2.2), the one the
harness of source document ``000`` uses to run a test a million times without storing the
samples. Two accumulators merge with the pairwise formula of Chan, Golub and LeVeque (1979), so
independent processes or threads can be combined exactly.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any


@dataclass
class StreamingStats:
    """Count, mean, sum of squared deviations (M2), minimum and maximum of a stream."""

    n: int = 0
    mean: float = 0.0
    m2: float = 0.0
    min: float = math.inf
    max: float = -math.inf

    def push(self, x: float) -> None:
        """Add one value (Welford: mean += d/n; M2 += d·(x − new mean))."""
        n = self.n + 1
        delta = x - self.mean
        mean = self.mean + delta / n
        self.m2 += delta * (x - mean)
        self.mean = mean
        self.n = n
        if x < self.min:
            self.min = x
        if x > self.max:
            self.max = x

    def extend(self, values: Any) -> StreamingStats:
        for x in values:
            self.push(float(x))
        return self

    def merge(self, other: StreamingStats) -> StreamingStats:
        """Combine two accumulators (Chan et al.): a new one, the inputs unchanged."""
        if other.n == 0:
            return StreamingStats(self.n, self.mean, self.m2, self.min, self.max)
        if self.n == 0:
            return StreamingStats(other.n, other.mean, other.m2, other.min, other.max)
        n = self.n + other.n
        delta = other.mean - self.mean
        mean = self.mean + delta * other.n / n
        m2 = self.m2 + other.m2 + delta * delta * self.n * other.n / n
        return StreamingStats(n, mean, m2, min(self.min, other.min), max(self.max, other.max))

    @property
    def variance(self) -> float | None:
        """Sample variance (n − 1 in the denominator); undefined (None) below two values."""
        if self.n < 2:
            return None
        return max(self.m2, 0.0) / (self.n - 1)

    @property
    def stdev(self) -> float | None:
        var = self.variance
        return None if var is None else math.sqrt(var)

    @property
    def total(self) -> float:
        return self.mean * self.n

    def to_dict(self) -> dict[str, Any]:
        empty = self.n == 0
        return {
            "n": self.n,
            "mean": None if empty else self.mean,
            "m2": self.m2,
            "min": None if empty else self.min,
            "max": None if empty else self.max,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> StreamingStats:
        n = int(data["n"])
        if n == 0:
            return cls()
        return cls(
            n, float(data["mean"]), float(data["m2"]), float(data["min"]), float(data["max"])
        )
