"""Adjusting p-values when many benchmarks are tested at once.

Without a correction, a suite of 200 unchanged benchmarks tested at 95% reports about ten false
changes. Holm (1979) controls the family-wise error rate (the chance of any false change);
Benjamini & Hochberg (1995) control the false discovery rate (the expected fraction of reported
changes that are false). Both return adjusted p-values with R's ``p.adjust`` semantics, so a
benchmark is significant when its adjusted p-value is below 1 − confidence.
"""

from __future__ import annotations

from collections.abc import Sequence

CORRECTIONS = ("holm", "bh", "none")


def holm(pvalues: Sequence[float]) -> list[float]:
    """Holm's step-down adjustment: p̃(i) = max_{j≤i} min(1, (m−j+1)·p(j)) (R ``p.adjust``)."""
    import numpy as np  # here, not at the top: the command line imports CORRECTIONS

    p = np.asarray(pvalues, dtype=float)
    m = p.size
    if m == 0:
        return []
    order = np.argsort(p, kind="stable")
    adjusted = np.minimum(1.0, np.maximum.accumulate((m - np.arange(m)) * p[order]))
    out = np.empty(m)
    out[order] = adjusted
    return out.tolist()


def benjamini_hochberg(pvalues: Sequence[float]) -> list[float]:
    """Benjamini–Hochberg step-up: p̃(i) = min_{j≥i} min(1, m·p(j)/j) (R ``p.adjust``, "BH")."""
    import numpy as np

    p = np.asarray(pvalues, dtype=float)
    m = p.size
    if m == 0:
        return []
    order = np.argsort(p, kind="stable")[::-1]  # largest first
    ranks = m - np.arange(m)  # rank of each in ascending order
    adjusted = np.minimum(1.0, np.minimum.accumulate(m * p[order] / ranks))
    out = np.empty(m)
    out[order] = adjusted
    return out.tolist()


def adjust(pvalues: Sequence[float], method: str) -> list[float]:
    """Adjusted p-values by ``method``: ``holm``, ``bh`` or ``none``."""
    if method == "holm":
        return holm(pvalues)
    if method == "bh":
        return benjamini_hochberg(pvalues)
    if method == "none":
        return [float(v) for v in pvalues]
    raise ValueError(f"unknown correction {method!r} (choose from {', '.join(CORRECTIONS)})")
