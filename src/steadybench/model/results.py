"""The Results tree (Rancid §V-A: MultiBenchmark → Benchmark → ParameterSet → Metric → Value).

A :class:`Results` holds one :class:`CaseResult` per (benchmark, implementation, parameter set).
Each case keeps the raw per-run values of every metric in columns aligned with a per-run status,
so filters mark runs instead of destroying them, plus streaming accumulators that hold even when
raw values are not kept (``keep_samples=False``). :meth:`Results.tree` gives the hierarchical
view of the paper; files store the flat list (see ``docs/results-schema.md``).
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from ..redact import redact_tree
from ..stats.streaming import StreamingStats
from .estimate import Estimate
from .execution import Execution

SCHEMA_VERSION = 1

#: Per-run statuses. Only ``ok`` runs enter the statistics.
RUN_OK = "ok"
RUN_FAILED = "failed"
RUN_WARMUP = "warmup"
RUN_REMOVED = "removed"
RUN_STATUSES = (RUN_OK, RUN_FAILED, RUN_WARMUP, RUN_REMOVED)

#: The metric every method records: seconds per execution of the measured code.
PRIMARY_METRIC = "wall_time"


def cpu_pressure_of(entry: dict[str, Any]) -> float | None:
    """A results entry's ``cpu_pressure`` when it is a share in [0, 1], else None (absent in
    files written before it was measured; anything else is not trusted)."""
    value = entry.get("cpu_pressure")
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if 0.0 <= value <= 1.0 else None


def _clean(value: float) -> float | None:
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else value


@dataclass
class CaseResult:
    """Everything measured and derived for one implementation at one parameter set."""

    benchmark: str
    implementation: str
    params: dict[str, Any] = field(default_factory=dict)
    unit: str = "s"
    method: str = "direct"
    keep_samples: bool = True
    #: per recorded run: one of RUN_STATUSES
    status: list[str] = field(default_factory=list)
    #: per recorded run: True when an outlier filter flagged it
    outlier: list[bool] = field(default_factory=list)
    #: metric name → one value per recorded run (NaN where the run gave none)
    metrics: dict[str, array] = field(default_factory=dict)
    units: dict[str, str] = field(default_factory=dict)
    #: metric name → accumulator over the ok measured runs (kept in every mode)
    stream: dict[str, StreamingStats] = field(default_factory=dict)
    stats: dict[str, float | None] = field(default_factory=dict)
    ci: dict[str, Any] | None = None
    stop_reason: str = ""
    warnings: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    interrupted: bool = False
    #: results of analyzers, by name
    analyses: dict[str, Any] = field(default_factory=dict)
    #: the case's headline, computed once by the method; every output shows it
    estimate: Estimate | None = None
    #: one record per independent execution when the case ran as several
    #: (:mod:`steadybench.model.execution`, made by :mod:`steadybench.execution`)
    processes: list[Execution] = field(default_factory=list)
    #: the share of the case's time the machine's CPU was contended (Linux PSI,
    #: :mod:`steadybench.cpu_pressure`); None when not measured
    cpu_pressure: float | None = None
    #: anything else a producer records (command line, program output tail, fits, ...)
    extra: dict[str, Any] = field(default_factory=dict)

    # ----------------------------------------------------------------- identity
    @property
    def param_name(self) -> str:
        return ",".join(f"{k}={v}" for k, v in self.params.items())

    @property
    def key(self) -> tuple[str, str, str]:
        """(benchmark, implementation, parameters) — how results files are matched."""
        return (self.benchmark, self.implementation, self.param_name)

    @property
    def label(self) -> str:
        parts = [self.benchmark]
        if self.implementation and self.implementation != self.benchmark:
            parts.append(self.implementation)
        if self.params:
            parts.append(f"[{self.param_name}]")
        return " ".join(parts)

    def execution_spans(self) -> list[tuple[int, int]]:
        """``(start, end)`` of each execution's runs in the pooled columns, in order (one span
        for a case run once, or read from a file that did not record where executions begin:
        ``extra["execution_starts"]``, written by :mod:`steadybench.execution.merge`)."""
        n = len(self.status)
        marks = self.extra.get("execution_starts")
        starts = sorted({0, *(s for s in marks if isinstance(s, int) and 0 < s < n)}) \
            if isinstance(marks, list) else [0]
        return [(a, b) for a, b in zip(starts, [*starts[1:], n]) if b > a]

    # ----------------------------------------------------------------- recording
    def add_run(self, status: str, values: dict[str, float | None]) -> None:
        """Append one run's values (only when raw samples are kept)."""
        index = len(self.status)
        self.status.append(status)
        self.outlier.append(False)
        metrics = self.metrics
        if len(values) != len(metrics) or not all(name in metrics for name in values):
            for name in values.keys() - metrics.keys():
                metrics[name] = array("d", [math.nan]) * index
        for name, column in metrics.items():
            value = values.get(name)
            column.append(math.nan if value is None else value)

    def trim_partial_run(self) -> None:
        """Drop a run recorded only in part. :meth:`add_run` appends to several columns; a
        Ctrl-C (or SIGTERM) raised between two appends leaves them of different lengths, and
        every later reading would fail. Called when a run loop is interrupted; cheap, and a
        no-op when the columns agree."""
        lengths = [len(self.status), len(self.outlier), *map(len, self.metrics.values())]
        if not self.keep_samples or len(set(lengths)) <= 1:
            return
        keep = min(lengths)
        del self.status[keep:]
        del self.outlier[keep:]
        for column in self.metrics.values():
            del column[keep:]

    def accumulate(self, values: dict[str, float | None]) -> None:
        """Feed one ok measured run into the streaming accumulators."""
        for name, value in values.items():
            if value is None:
                continue
            acc = self.stream.get(name)
            if acc is None:
                acc = self.stream[name] = StreamingStats()
            acc.push(float(value))

    # ----------------------------------------------------------------- reading
    @property
    def runs_recorded(self) -> int:
        return len(self.status)

    @property
    def n(self) -> int:
        """Successful measured runs counted in the statistics."""
        if self.keep_samples:
            return sum(1 for s in self.status if s == RUN_OK)
        primary = self.stream.get(PRIMARY_METRIC)
        return primary.n if primary else 0

    def count(self, status: str) -> int:
        return sum(1 for s in self.status if s == status)

    def values(self, metric: str = PRIMARY_METRIC, status: str | None = RUN_OK) -> list[float]:
        """Raw values of ``metric`` for runs with ``status`` (all runs when None), NaN skipped."""
        column = self.metrics.get(metric)
        if column is None:
            return []
        return [
            v
            for v, s in zip(column, self.status)
            if (status is None or s == status) and not math.isnan(v)
        ]

    @property
    def samples(self) -> list[float] | None:
        """Per-run seconds of the ok runs; None when raw samples were not kept."""
        return self.values(PRIMARY_METRIC) if self.keep_samples else None

    @property
    def failed(self) -> bool:
        return bool(self.errors) and self.n == 0

    @property
    def state(self) -> str:
        if self.interrupted:
            return "interrupted"
        return "failed" if self.errors else "ok"

    def __setattr__(self, name: str, value: Any) -> None:
        # ``processes`` always holds records; entries given as dicts (a file's JSON, code
        # written before the records) are read into them.
        if name == "processes":
            value = [Execution.coerce(p, i) for i, p in enumerate(value or ())]
        object.__setattr__(self, name, value)

    # ----------------------------------------------------------------- files
    def to_dict(self) -> dict[str, Any]:
        runs: dict[str, Any] | None = None
        if self.keep_samples:
            runs = {
                "status": list(self.status),
                "outlier": [i for i, flag in enumerate(self.outlier) if flag],
                "metrics": {k: [_clean(v) for v in col] for k, col in self.metrics.items()},
            }
        out: dict[str, Any] = {
            "name": self.benchmark,
            "implementation": self.implementation,
            "params": dict(self.params),
            "unit": self.unit,
            "method": self.method,
            "n": self.n,
        }
        if self.keep_samples:
            out["samples"] = self.samples
        out.update(
            stats=dict(self.stats),
            ci=self.ci,
            stop_reason=self.stop_reason,
            status=self.state,
            warnings=list(self.warnings),
            errors=list(self.errors),
            interrupted=self.interrupted,
            units=dict(self.units),
            runs=runs,
            stream={k: v.to_dict() for k, v in self.stream.items()},
            analyses=self.analyses,
            estimate=self.estimate.to_dict() if self.estimate is not None else None,
            processes=[e.to_dict() for e in self.processes],
            extra=redact_tree(self.extra),
        )
        if self.cpu_pressure is not None:
            out["cpu_pressure"] = self.cpu_pressure
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CaseResult:
        runs = data.get("runs")
        keep = runs is not None
        case = cls(
            benchmark=data["name"],
            implementation=data.get("implementation", data["name"]),
            params=dict(data.get("params") or {}),
            unit=data.get("unit", "s"),
            method=data.get("method", "direct"),
            keep_samples=keep,
            stats=dict(data.get("stats") or {}),
            ci=data.get("ci"),
            stop_reason=data.get("stop_reason", ""),
            warnings=list(data.get("warnings") or []),
            errors=list(data.get("errors") or []),
            interrupted=bool(data.get("interrupted", False)),
            units=dict(data.get("units") or {}),
            stream={k: StreamingStats.from_dict(v) for k, v in (data.get("stream") or {}).items()},
            analyses=data.get("analyses") or {},
            estimate=Estimate.from_dict(data.get("estimate")),
            processes=[Execution.from_dict(p, i)
                       for i, p in enumerate(data.get("processes") or []) if isinstance(p, dict)],
            extra=redact_tree(data.get("extra") or {}),
            cpu_pressure=cpu_pressure_of(data),
        )
        if runs is not None:
            case.status = list(runs["status"])
            flagged = set(runs.get("outlier") or [])
            case.outlier = [i in flagged for i in range(len(case.status))]
            case.metrics = {
                k: array("d", (math.nan if v is None else float(v) for v in col))
                for k, col in (runs.get("metrics") or {}).items()
            }
        elif "samples" in data and data["samples"] is not None:
            # A hand-made file with samples but no run table: every sample is an ok run.
            samples = [float(v) for v in data["samples"]]
            case.keep_samples = True
            case.status = [RUN_OK] * len(samples)
            case.outlier = [False] * len(samples)
            case.metrics = {PRIMARY_METRIC: array("d", samples)}
        return case


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


@dataclass
class Results:
    """All cases of one session, with the environment they were measured in."""

    suite: str = "steadybench"
    cases: list[CaseResult] = field(default_factory=list)
    environment: dict[str, Any] = field(default_factory=dict)
    #: how the session ran: preset, countermeasures applied and skipped, command line, ...
    context: dict[str, Any] = field(default_factory=dict)
    created: str = field(default_factory=now_iso)
    interrupted: bool = False
    schema_version: int = SCHEMA_VERSION

    def __iter__(self) -> Iterator[CaseResult]:
        return iter(self.cases)

    def __len__(self) -> int:
        return len(self.cases)

    @property
    def failed(self) -> list[CaseResult]:
        return [c for c in self.cases if c.errors]

    def benchmark_names(self) -> list[str]:
        return list(dict.fromkeys(c.benchmark for c in self.cases))

    def tree(self) -> dict[str, dict[str, dict[str, CaseResult]]]:
        """benchmark → implementation → parameter-set name → case (the paper's hierarchy)."""
        out: dict[str, dict[str, dict[str, CaseResult]]] = {}
        for case in self.cases:
            out.setdefault(case.benchmark, {}).setdefault(case.implementation, {})[
                case.param_name
            ] = case
        return out

    def find(
        self, benchmark: str, implementation: str | None = None, **params: Any
    ) -> CaseResult | None:
        """The first case matching the name, implementation and parameter values given."""
        for case in self.cases:
            if case.benchmark != benchmark:
                continue
            if implementation is not None and case.implementation != implementation:
                continue
            if all(case.params.get(k) == v for k, v in params.items()):
                return case
        return None

    def to_dict(self) -> dict[str, Any]:
        from .. import __version__

        return {
            "schema_version": self.schema_version,
            "tool": {"name": "steadybench", "version": __version__},
            "suite": self.suite,
            "created": self.created,
            "interrupted": self.interrupted,
            "environment": self.environment,
            "context": redact_tree(self.context),  # no credential is ever written
            "benchmarks": [case.to_dict() for case in self.cases],
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Results:
        return cls(
            suite=data.get("suite", "steadybench"),
            cases=[CaseResult.from_dict(b) for b in data.get("benchmarks", [])],
            environment=data.get("environment") or {},
            context=redact_tree(data.get("context") or {}),
            created=data.get("created", ""),
            interrupted=bool(data.get("interrupted", False)),
            schema_version=int(data.get("schema_version", SCHEMA_VERSION)),
        )
