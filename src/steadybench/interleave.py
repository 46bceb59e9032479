"""``steadybench.compare_interleaved(a, b)``: two pieces of code compared in interleaved
rounds, in-process.

Two separate :func:`~steadybench.measure.measure` calls are two separate moments of the
machine: a frequency change, a neighbour's load or a warming cache between them shows as a
difference of the code (issue 27 item 5: ``measure(g) / measure(f)`` with ``g = f`` gave 2.147
under load). :func:`compare_interleaved` measures ``a`` and ``b`` in alternation instead, as
``steadybench ab`` does on the command line: each round measures both, in an order drawn at
random, and the round's ratio ``b / a`` is taken while both saw the same machine (the
randomized, paired design of Abedi & Brecht, "Conducting Repeatable Experiments in Highly
Variable Cloud Computing Environments", ICPE 2017). The ratio reported is the geometric mean
of the rounds' ratios, with a Student-t interval on their logarithms (rounds − 1 degrees of
freedom): a drift that moves both within a round cancels, a drift between rounds only widens
the interval.

Assumption (named in the README): within one round the machine changes little compared with
the difference looked for; rounds are independent of each other.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .errors import ConfigurationError
from .measure import measure


@dataclass(frozen=True)
class Comparison:
    """The outcome of :func:`compare_interleaved`.

    ``ratio`` is ``b``'s time per execution over ``a``'s (above 1: ``b`` is slower), with its
    interval ``ci_low``..``ci_high`` at ``confidence``; ``a`` and ``b`` are each round's
    estimates (seconds per execution) and ``order`` the order each round ran them in
    (``"ab"`` or ``"ba"``).
    """

    ratio: float
    ci_low: float
    ci_high: float
    confidence: float
    a: tuple[float, ...]
    b: tuple[float, ...]
    order: tuple[str, ...]

    @property
    def rounds(self) -> int:
        return len(self.a)

    @property
    def significant(self) -> bool:
        """Whether the interval excludes 1 (no difference)."""
        return not self.ci_low <= 1.0 <= self.ci_high

    def describe(self, a: str = "a", b: str = "b") -> str:
        """In words: ``b takes 1.021× a's time [0.993, 1.050] (95%, 20 interleaved rounds)``."""
        return (f"{b} takes {self.ratio:.3f}× {a}'s time [{self.ci_low:.3f}, "
                f"{self.ci_high:.3f}] ({self.confidence:.0%}, {self.rounds} interleaved "
                f"rounds)")


def compare_interleaved(a: Callable[[], Any] | str, b: Callable[[], Any] | str, *,
                        rounds: int = 20, runs: int = 10, method: str = "linefit",
                        confidence: float = 0.95, seed: int | None = None,
                        clock: Callable[[], int] | str | None = None, warmup: int = 1,
                        **options: Any) -> Comparison:
    """Compare ``b`` with ``a`` in ``rounds`` interleaved rounds (see the module notes).

    Each round measures each of them with :func:`~steadybench.measure.measure` (``method``,
    ``runs`` samples after ``warmup``, ``clock``, the method's ``options``), in an order drawn
    from ``seed``. Raises ConfigurationError for fewer than 2 rounds, and what ``measure``
    raises when a piece of code fails.
    """
    from scipy import stats

    if isinstance(rounds, bool) or not isinstance(rounds, int) or rounds < 2:
        raise ConfigurationError(f"compare: rounds must be an integer of at least 2, got "
                                 f"{rounds!r}")
    if not 0 < confidence < 1:
        raise ConfigurationError(f"compare: confidence must be between 0 and 1, got "
                                 f"{confidence!r}")
    rng = random.Random(seed)
    values: dict[str, list[float]] = {"a": [], "b": []}
    order: list[str] = []
    code = {"a": a, "b": b}
    for _ in range(rounds):
        first = rng.choice("ab")
        order.append(first + ("b" if first == "a" else "a"))
        for which in order[-1]:
            m = measure(code[which], method, clock, runs=runs, warmup=warmup,
                        confidence=confidence, name=which, **options)
            values[which].append(m.value)
    if min(values["a"] + values["b"]) <= 0:
        raise ConfigurationError("compare: a round measured no time (a value of 0 or less); "
                                 "give more runs or a slower clock")
    logs = [math.log(vb / va) for va, vb in zip(values["a"], values["b"], strict=True)]
    mean = sum(logs) / rounds
    sd = math.sqrt(sum((x - mean) ** 2 for x in logs) / (rounds - 1))
    half = float(stats.t.ppf(0.5 + confidence / 2, rounds - 1)) * sd / math.sqrt(rounds)
    return Comparison(math.exp(mean), math.exp(mean - half), math.exp(mean + half), confidence,
                      tuple(values["a"]), tuple(values["b"]), tuple(order))
