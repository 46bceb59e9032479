"""The one estimate of a case: the figure every output shows.

A case's headline is computed once, by the measurement method at the end of the case
(:meth:`steadybench.methods.base.Method.finish`), and stored as an :class:`Estimate`. The
console, the JSON/CSV/XML/Markdown files, the HTML report and ``compare`` all read this object,
so they cannot disagree.

The estimate records the level of the measurement hierarchy its interval stands on
(``DESIGN.md``, "The measurement hierarchy"):

* ``level == "executions"``: the case ran in ≥ 2 independent executions (fresh worker
  processes). The value is the median of the per-execution values with its order-statistic
  interval (their mean and a Student-t interval when there are too few executions for that),
  which treats executions as the independent observations
  (Kalibera & Jones, "Rigorous benchmarking in reasonable time", ISMM 2013, §3; Touati et al.,
  source ``003`` §2).
* ``level == "runs"``: one execution. The interval describes that execution only: samples inside
  one process are not independent of each other, so it is too narrow for a claim about the code.

This module is light (no numpy or scipy): worker processes and ``--help`` import it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields
from typing import Any

#: the interval is across independent executions (fresh processes)
LEVEL_EXECUTIONS = "executions"
#: the interval is across samples of one execution
LEVEL_RUNS = "runs"


_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


def _field_names(cls: type) -> tuple[str, ...]:
    """A dataclass's field names, in order, looked up once per class (``dataclasses.fields``
    was a third of reading a results file of 10^6 benchmarks; issue 27 item 13)."""
    names = _FIELD_NAMES.get(cls)
    if names is None:
        names = _FIELD_NAMES[cls] = tuple(f.name for f in fields(cls))
    return names


@dataclass(frozen=True)
class Estimate:
    """A case's headline: the value, its interval, and what they stand on.

    Attributes:
        value: the estimate in ``unit`` per execution of the measured code (None when the
            method could not make a trustworthy one; ``error`` then says why).
        ci_low, ci_high: the confidence interval at ``confidence``.
        confidence: the interval's level, e.g. 0.95.
        unit: the unit of ``value`` (seconds unless a meter says otherwise).
        method: the measurement method that produced it.
        statistic: what ``value`` is, in words ("median", "mean", "slope", "mean of
            execution medians"...).
        level: :data:`LEVEL_EXECUTIONS` or :data:`LEVEL_RUNS` (see the module docs).
        n_executions: independent executions (worker processes) that gave a value.
        n_runs: samples (runs) counted, over all executions.
        within_cov: the spread of samples inside an execution, as a coefficient of variation
            (the median over executions).
        between_cov: the spread of the per-execution values, as a coefficient of variation
            (None with fewer than two executions).
        fields: method-specific figures (calls per sample, bias bound, fit quality...).
        error: why there is no value, when there is none.
    """

    value: float | None
    ci_low: float | None = None
    ci_high: float | None = None
    confidence: float | None = None
    unit: str = "s"
    method: str = ""
    statistic: str = ""
    level: str = LEVEL_RUNS
    n_executions: int = 1
    n_runs: int = 0
    within_cov: float | None = None
    between_cov: float | None = None
    fields: dict[str, Any] = field(default_factory=dict)
    error: str | None = None

    # ----------------------------------------------------------------- reading
    @property
    def ok(self) -> bool:
        """True when there is a finite value."""
        return self.value is not None and math.isfinite(self.value)

    @property
    def has_ci(self) -> bool:
        return self.ci_low is not None and self.ci_high is not None

    @property
    def half_width(self) -> float | None:
        """Half the width of the interval, in ``unit``."""
        if not self.has_ci:
            return None
        return (self.ci_high - self.ci_low) / 2  # type: ignore[operator]

    @property
    def relative_half_width(self) -> float | None:
        """Half-width over the value (0.02 means ±2 %)."""
        half = self.half_width
        if half is None or not self.ok or self.value == 0:
            return None
        return half / abs(self.value)  # type: ignore[arg-type]

    @property
    def independent(self) -> bool:
        """True when the interval is across independent executions."""
        return self.level == LEVEL_EXECUTIONS and self.n_executions >= 2

    def figure(self, name: str, default: Any = None) -> Any:
        """A method-specific figure by name (``default`` when absent)."""
        return self.fields.get(name, default)

    # ----------------------------------------------------------------- files
    def to_dict(self) -> dict[str, Any]:
        """The JSON form: the named attributes at the top, the method's figures under
        ``fields``."""
        out = {name: getattr(self, name) for name in _field_names(type(self))
               if name != "fields"}
        out["fields"] = dict(self.fields)
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> Estimate | None:
        """Read :meth:`to_dict` output back; an older flat dict (method figures beside
        ``value``) is read too, its unknown keys going to ``fields``."""
        if data is None:
            return None
        if isinstance(data, Estimate):
            return data
        names = _field_names(cls)
        known = {k: v for k, v in data.items() if k in names and k != "fields"}
        extra = {k: v for k, v in data.items() if k not in names}
        extra.update(data.get("fields") or {})
        known.setdefault("value", None)
        return cls(**known, fields=extra)

    @classmethod
    def failed(cls, error: str, method: str = "", unit: str = "s") -> Estimate:
        """No value: the method could not estimate; ``error`` says why."""
        return cls(value=None, method=method, unit=unit, error=error)
