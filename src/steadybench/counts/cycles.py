"""The ``cycles`` measure: estimated cycles from cachegrind's instruction and cache-miss counts.

Instructions alone miss what memory costs: a loop that walks a large array executes as many
instructions whether its data is in the first-level cache or in RAM. Itamar Turner-Trauring
("Consistent benchmarking in CI environments", pythonspeed.com, 2019) combines cachegrind's
counts into one figure with fixed weights for where each memory access was served:

    cycles ≈ L1 hits + 5 × LL hits + 30 × RAM accesses

where, from cachegrind's events (every instruction fetch and every data read or write is one
memory access):

* RAM accesses = last-level misses: ``ILmr + DLmr + DLmw``;
* LL hits = first-level misses that the last level served: ``I1mr + D1mr + D1mw − RAM``;
* L1 hits = all accesses ``Ir + Dr + Dw`` less the two above.

The weights are typical latencies in cycles of an x86 core (a few cycles for L1, around twenty
for the last level, a hundred or more for RAM, scaled down because out-of-order cores overlap
misses); they are a model, not a measurement of any machine, so a ``cycles`` figure compares
code with code under the same model and never converts to seconds. The raw counts are kept
beside it (:class:`CycleEstimate`). iai-callgrind's "estimated cycles" is the same idea.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from .valgrind import CountFailure, Counts

#: the weight of an access served by the first-level cache, by the last level, by RAM
L1_WEIGHT, LL_WEIGHT, RAM_WEIGHT = 1, 5, 30


@dataclass(frozen=True)
class CycleEstimate:
    """The estimate and the parts it is made of (all counts of memory accesses)."""

    cycles: int
    l1_hits: int
    ll_hits: int
    ram: int

    def to_dict(self) -> dict[str, int]:
        return asdict(self)


def estimate_cycles(counts: Counts) -> CycleEstimate:
    """The weighted sum of :mod:`this module <steadybench.counts.cycles>` for one run's counts
    (which must come from a run with the cache simulation on)."""
    if not counts.cache_simulated:
        raise CountFailure("estimated cycles need cachegrind's cache simulation "
                           "(--cache-sim=yes); these counts have instructions only", "output")
    ram = counts.ILmr + counts.DLmr + counts.DLmw  # type: ignore[operator]
    ll_hits = counts.I1mr + counts.D1mr + counts.D1mw - ram  # type: ignore[operator]
    l1_hits = counts.Ir + counts.Dr + counts.Dw - ll_hits - ram  # type: ignore[operator]
    cycles = L1_WEIGHT * l1_hits + LL_WEIGHT * ll_hits + RAM_WEIGHT * ram
    return CycleEstimate(cycles, l1_hits, ll_hits, ram)
