"""The host as a level of the hierarchy: host → execution → run.

For a case measured on several hosts (``--every-host``), the per-execution values of each host
are one group. Following Kalibera & Jones ("Rigorous benchmarking in reasonable time", ISMM
2013, §4: variance components of a nested random-effects model, estimated level by level),
with ``h`` hosts and ``n_i`` executions on host ``i``:

* within hosts: ``S²_e``, the pooled variance of the per-execution values around their host's
  mean (``Σ_i Σ_j (x_ij − x̄_i)² / (N − h)``);
* between hosts: ``S²_h``, the variance of the host means; the host's own variance component
  is ``σ²_h = S²_h − S²_e / n̄`` (``n̄`` the harmonic mean of the ``n_i``; 0 when negative), the
  spread between hosts that the executions' noise does not explain;
* the headline across hosts is the mean of the host means with a Student-t interval on
  ``h − 1`` degrees of freedom: the hosts are the replicated level.

For a balanced design ``n̄·S²_h / S²_e`` is one-way ANOVA's F statistic (tests check it against
``scipy.stats.f_oneway``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from ..model.execution import execution_values as _values
from ..model.results import CaseResult, Results


@dataclass(frozen=True)
class HostValue:
    """One case on one host."""

    host: str
    value: float | None
    ci_low: float | None
    ci_high: float | None
    executions: list[float]
    n_runs: int

    @property
    def mean(self) -> float | None:
        return sum(self.executions) / len(self.executions) if self.executions else None


@dataclass(frozen=True)
class HostBreakdown:
    """A case across hosts: each host's value and the spread between hosts next to within."""

    label: str
    key: tuple[str, str, str]
    hosts: list[HostValue] = field(default_factory=list)
    #: pooled variance of per-execution values within hosts (S²_e), seconds²
    within_var: float | None = None
    #: variance of the host means (S²_h), seconds²
    between_var: float | None = None
    #: the host variance component σ²_h = max(0, S²_h − S²_e / n̄), seconds²
    host_component: float | None = None
    #: mean of the host means, and its t interval across hosts
    value: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    confidence: float = 0.95

    @property
    def within_cov(self) -> float | None:
        """√S²_e relative to the value: the spread of executions on one host."""
        return _relative(self.within_var, self.value)

    @property
    def between_cov(self) -> float | None:
        """√σ²_h relative to the value: the spread the hosts add on top."""
        return _relative(self.host_component, self.value)

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["key"] = list(self.key)
        out["within_cov"] = self.within_cov
        out["between_cov"] = self.between_cov
        return out


def _relative(variance: float | None, value: float | None) -> float | None:
    if variance is None or not value:
        return None
    return math.sqrt(max(variance, 0.0)) / abs(value)


def host_of(case: CaseResult) -> str | None:
    """The host a case ran on (``case.extra["host"]``), or None on one machine."""
    host = case.extra.get("host")
    return str(host) if host is not None else None


def execution_values(case: CaseResult) -> list[float]:
    """The case's per-execution values (one per independent execution that gave one)."""
    return _values(case.processes)


def components(groups: Sequence[Sequence[float]]) -> tuple[float | None, float | None,
                                                           float | None]:
    """(S²_e, S²_h, σ²_h) of values grouped by host (module docstring)."""
    groups = [list(g) for g in groups if len(g) > 0]
    h = len(groups)
    total = sum(len(g) for g in groups)
    means = [sum(g) / len(g) for g in groups]
    within = None
    if total - h > 0:
        within = sum((x - m) ** 2 for g, m in zip(groups, means) for x in g) / (total - h)
    between = None
    if h >= 2:
        grand = sum(means) / h
        between = sum((m - grand) ** 2 for m in means) / (h - 1)
    component = None
    if between is not None:
        if within is None:
            component = between
        else:
            n_bar = h / sum(1.0 / len(g) for g in groups)
            component = max(0.0, between - within / n_bar)
    return within, between, component


def breakdown(cases: Sequence[CaseResult], confidence: float = 0.95) -> list[HostBreakdown]:
    """One breakdown per case key measured on at least two hosts, in first-seen order."""
    from scipy import stats

    grouped: dict[tuple[str, str, str], list[CaseResult]] = {}
    for case in cases:
        if host_of(case) is not None:
            grouped.setdefault(case.key, []).append(case)
    out = []
    for key, members in grouped.items():
        if len({host_of(c) for c in members}) < 2:
            continue
        hosts = []
        for case in sorted(members, key=lambda c: host_of(c) or ""):
            est = case.estimate
            hosts.append(HostValue(host=host_of(case) or "", value=est.value if est else None,
                                   ci_low=est.ci_low if est else None,
                                   ci_high=est.ci_high if est else None,
                                   executions=execution_values(case), n_runs=case.n))
        groups = [hv.executions for hv in hosts if hv.executions]
        within, between, component = components(groups)
        means = [sum(g) / len(g) for g in groups]
        value = low = high = None
        if means:
            value = sum(means) / len(means)
        if len(means) >= 2 and between is not None:
            half = (stats.t.ppf(0.5 + confidence / 2, len(means) - 1)
                    * math.sqrt(between / len(means)))
            low, high = value - half, value + half
        out.append(HostBreakdown(label=members[0].label, key=key, hosts=hosts,
                                 within_var=within, between_var=between,
                                 host_component=component, value=value, ci_low=low,
                                 ci_high=high, confidence=confidence))
    return out


@dataclass(frozen=True)
class HostLoad:
    """What one host did in a run: its cases, busy time, and cases it lost."""

    host: str
    cases: int
    busy_s: float
    lost_attempts: int


def host_loads(results: Results) -> list[HostLoad]:
    """Per host: how many cases it returned, its busy seconds, the attempts it lost."""
    loads: dict[str, list[float]] = {}
    lost: dict[str, int] = {}
    for case in results.cases:
        fleet = case.extra.get("fleet") or {}
        host = host_of(case)
        if host is not None:
            entry = loads.setdefault(host, [0, 0.0])
            entry[0] += 1
            entry[1] += max(0.0, float(fleet.get("ended", 0)) - float(fleet.get("started", 0)))
        for attempt in fleet.get("lost_attempts") or ():
            lost[attempt["host"]] = lost.get(attempt["host"], 0) + 1
    names = sorted(set(loads) | set(lost))
    return [HostLoad(host=h, cases=int(loads.get(h, [0, 0.0])[0]),
                     busy_s=float(loads.get(h, [0, 0.0])[1]), lost_attempts=lost.get(h, 0))
            for h in names]


def host_section_lines(results: Results) -> list[str]:
    """The per-host section of the console (and of the report's text): the hosts' load, then
    each case across hosts with the spread between hosts next to within."""
    from ..output.format import format_seconds

    loads = host_loads(results)
    if not loads:
        return []
    lines = ["hosts:"]
    for load in loads:
        lost = f", lost {load.lost_attempts} attempt(s)" if load.lost_attempts else ""
        lines.append(f"  {load.host}: {load.cases} case(s), busy {load.busy_s:.2f} s{lost}")
    confidence = float((results.context or {}).get("confidence") or 0.95)
    for item in breakdown(results.cases, confidence):
        lines.append(f"  {item.label} across {len(item.hosts)} hosts: "
                     + (format_seconds(item.value) if item.value is not None else "n/a")
                     + (f" [{format_seconds(item.ci_low)}, {format_seconds(item.ci_high)}]"
                        if item.ci_low is not None else ""))
        within = f"{item.within_cov:.1%}" if item.within_cov is not None else "n/a"
        between = f"{item.between_cov:.1%}" if item.between_cov is not None else "n/a"
        lines.append(f"    spread between hosts {between}, within a host {within}")
        for hv in item.hosts:
            shown = format_seconds(hv.value) if hv.value is not None else "failed"
            lines.append(f"    {hv.host}: {shown} ({len(hv.executions)} executions)")
    return lines


def record_hosts(results: Results) -> None:
    """Record the per-host breakdown and loads in the results' context (``fleet``), so every
    file written from the results carries them."""
    fleet = results.context.setdefault("fleet", {})
    fleet["hosts_breakdown"] = [b.to_dict() for b in breakdown(results.cases)]
    fleet["host_loads"] = [asdict(load) for load in host_loads(results)]


def print_host_section(results: Results) -> None:
    """Print :func:`host_section_lines` to standard error."""
    import click

    from ..output.sanitize import terminal_text

    for line in host_section_lines(results):
        click.echo(terminal_text(line), err=True)
