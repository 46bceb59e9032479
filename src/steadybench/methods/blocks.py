"""Per-block execution times from execution counts (Moreno and Fischmeister, source ``002`` §5.1).

Round i runs a piece of code whose B blocks execute ``N_k^(i)`` times and takes ``T^(i)`` in
total, so ``Σ_k N_k^(i)·T_k = T^(i)`` (eq. 9); with more rounds than unknowns the system (eq.
10) is solved by least squares, each block time with a Student-t interval. Blocks whose count
columns are identical in every round (they always run together, like entry and exit blocks)
cannot be told apart: their columns are merged into one unknown, reported as a group (the sum
of their times). Blocks that never ran are reported and left out. If the system is still
singular, the error names the blocks whose times cannot be separated.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import ConfigurationError, MeasurementError
from ..stats.regression import null_space_columns, solve_least_squares
from ..stats.summary import check_confidence


@dataclass(frozen=True)
class BlockGroup:
    """One unknown of the block system: the blocks it stands for and their (summed) time."""

    blocks: tuple[str, ...]
    value: float
    se: float
    ci_low: float
    ci_high: float

    @property
    def name(self) -> str:
        return "+".join(self.blocks)

    def to_dict(self) -> dict[str, Any]:
        return {"blocks": list(self.blocks), "value": self.value, "se": self.se,
                "ci_low": self.ci_low, "ci_high": self.ci_high}


@dataclass(frozen=True)
class BlockSolution:
    """The solved block times: ``groups`` (merged where columns were identical), the blocks
    that ``never_ran``, and the fit's residual figures."""

    groups: tuple[BlockGroup, ...]
    never_ran: tuple[str, ...]
    rounds: int
    residual_std: float
    msd: float
    dof: int
    confidence: float

    def __getitem__(self, block: str) -> BlockGroup:
        for group in self.groups:
            if block in group.blocks or block == group.name:
                return group
        raise KeyError(block)

    def to_dict(self) -> dict[str, Any]:
        return {"groups": [g.to_dict() for g in self.groups], "never_ran": list(self.never_ran),
                "rounds": self.rounds, "residual_std": self.residual_std, "msd": self.msd,
                "dof": self.dof, "confidence": self.confidence}


def solve_blocks(counts: Sequence[Sequence[float]] | np.ndarray, totals: Sequence[float],
                 names: Sequence[str] | None = None, confidence: float = 0.95) -> BlockSolution:
    """Solve ``counts · T = totals`` for the block times ``T`` (``002`` §5.1, eqs. 9–10).

    Args:
        counts: one row per round, one column per block: how often each block executed.
        totals: the measured total time of each round (any unit; results are in that unit).
        names: block names (default ``b0, b1, …``).
        confidence: level of the intervals.
    """
    check_confidence(confidence)
    a = np.asarray(counts, dtype=float)
    t = np.asarray(totals, dtype=float).ravel()
    if a.ndim != 2 or a.shape[0] == 0 or a.shape[1] == 0:
        raise ConfigurationError("blocks: counts must be a non-empty table (rounds × blocks)")
    rounds, nblocks = a.shape
    labels = list(names) if names is not None else [f"b{j}" for j in range(nblocks)]
    if len(labels) != nblocks:
        raise ConfigurationError(f"blocks: {nblocks} count columns but {len(labels)} names")
    if t.size != rounds:
        raise ConfigurationError(f"blocks: {rounds} rounds of counts but {t.size} totals")
    if not (np.all(np.isfinite(a)) and np.all(np.isfinite(t))):
        raise ConfigurationError("blocks: counts and totals must be finite numbers")
    if np.any(a < 0):
        bad = sorted({labels[j] for j in np.nonzero(a < 0)[1]})
        raise ConfigurationError(f"blocks: negative execution counts for {', '.join(bad)}")
    never = tuple(labels[j] for j in range(nblocks) if not np.any(a[:, j]))
    groups: list[list[int]] = []
    for j in range(nblocks):
        if labels[j] in never:
            continue
        for group in groups:
            if np.array_equal(a[:, group[0]], a[:, j]):
                group.append(j)
                break
        else:
            groups.append([j])
    if not groups:
        raise MeasurementError("blocks: no block ever executed")
    group_names = ["+".join(labels[j] for j in g) for g in groups]
    reduced = a[:, [g[0] for g in groups]]
    if rounds <= len(groups):
        raise MeasurementError(
            f"blocks: {rounds} rounds for {len(groups)} unknowns ({', '.join(group_names)}); "
            "need more rounds than unknowns")
    dependent = null_space_columns(reduced)
    if dependent:
        desc = "; ".join("{" + ", ".join(group_names[j] for j in d) + "}" for d in dependent)
        raise MeasurementError(
            f"blocks: the system is singular; these blocks cannot be separated with these "
            f"rounds: {desc} (vary their counts independently, or measure without one of them)")
    sol = solve_least_squares(reduced, t, confidence, names=group_names)
    return BlockSolution(
        groups=tuple(
            BlockGroup(tuple(labels[j] for j in g), v, s, lo, hi)
            for g, v, s, (lo, hi) in zip(groups, sol.values, sol.se, sol.ci)),
        never_ran=never,
        rounds=rounds,
        residual_std=sol.residual_std,
        msd=sol.msd,
        dof=sol.dof,
        confidence=confidence,
    )
