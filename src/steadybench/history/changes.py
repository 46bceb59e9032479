"""What a search of a benchmark's history finds: the direction words, one change point
(:class:`Change`) and one series' analysis (:class:`SeriesAnalysis`). Shared by the time finder
(:mod:`steadybench.history.regressions`) and the counts' finder
(:mod:`steadybench.counts.history`), so neither imports the other."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

SLOWER = "slower"
FASTER = "faster"


def confidence_text(confidence: float) -> str:
    """``97.1%``; never "100.0%" for a p-value that is small but not zero (``> 99.9%``)."""
    return "> 99.9%" if confidence > 0.999 else f"{confidence:.1%}"


@dataclass(frozen=True)
class Change:
    """One change point of one benchmark's series."""

    label: str
    machine: str
    #: index of the first point after the change, in the series
    index: int
    before_record: int
    after_record: int
    before_commit: str | None
    after_commit: str | None
    after_name: str | None
    magnitude: float
    direction: str
    confidence: float
    p_value: float
    n_before: int
    n_after: int
    before_median: float
    after_median: float
    unit: str

    @property
    def commit_range(self) -> str:
        """``before..after`` (git's range notation: the commits in ``after`` not in
        ``before``); record ids where there is no commit."""
        left = self.before_commit[:10] if self.before_commit else f"#{self.before_record}"
        right = self.after_commit[:10] if self.after_commit else f"#{self.after_record}"
        return f"{left}..{right}"

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "commit_range": self.commit_range}


@dataclass(frozen=True)
class SeriesAnalysis:
    """What was found in one series, and why nothing could be looked for when so."""

    label: str
    machine: str
    points: int
    sigma: float | None
    sigma_source: str
    changes: list[Change]
    note: str | None = None
    #: the trend removed, in ln(time) per record (the median of consecutive differences)
    trend: float = 0.0
    #: the random walk's spread per record in the record noise model
    walk: float = 0.0
