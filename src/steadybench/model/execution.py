"""The record of one independent execution: what ``case.processes`` holds.

A case measured as K independent executions (fresh processes, or K sessions of a command) keeps
one :class:`Execution` per execution beside its pooled runs. Every interval "across
executions" (Kalibera & Jones, ISMM 2013, §3) stands on these records' ``value``s, so they are
typed: readers use attributes (the record has no access by string key). The record is frozen;
the one place that makes it is :func:`steadybench.execution.merge.merge_executions`.

Files keep the keys they always had: :meth:`Execution.to_dict` writes the flat entry that
steadybench 0.x wrote (``index``, ``value``, ``ci_low`` ... and, for a spawned worker, ``pid``,
``hash_seed``, ``env_pad``, ``layout``, ``aslr_off``; for ``exec``, ``mean``, ``stdev``,
``median``, ``raw_mean``, ``startup``), and :meth:`Execution.from_dict` reads every shape
written so far (a bare ``{"index", "value"}`` from an ``ab`` history record included). Keys it
does not know are kept in :attr:`Execution.other` and written back unchanged.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any


def _number(value: Any) -> float | None:
    """A finite float, or None (a file may hold null, a string, a bool or NaN)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = float(value)
    return number if math.isfinite(number) else None


def _int(value: Any, default: int | None = None) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return default
    return int(value) if math.isfinite(value) else default


@dataclass(frozen=True)
class ProcessLayout:
    """The hidden factors of one spawned worker (:mod:`steadybench.runner.layout`)."""

    pid: int | None = None
    hash_seed: int = 0
    env_pad: int = 0
    #: "design", "fixed" or "random"
    layout: str = "random"
    #: ASLR was off for this execution (None: not known)
    aslr_off: bool | None = None

    KEYS = ("pid", "hash_seed", "env_pad", "layout", "aslr_off")

    def to_dict(self) -> dict[str, Any]:
        return {"pid": self.pid, "hash_seed": self.hash_seed, "env_pad": self.env_pad,
                "layout": self.layout, "aslr_off": self.aslr_off}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ProcessLayout | None:
        if not any(key in data for key in cls.KEYS):
            return None
        aslr = data.get("aslr_off")
        return cls(pid=_int(data.get("pid")), hash_seed=_int(data.get("hash_seed"), 0) or 0,
                   env_pad=_int(data.get("env_pad"), 0) or 0,
                   layout=str(data.get("layout") or "random"),
                   aslr_off=aslr if isinstance(aslr, bool) else None)


@dataclass(frozen=True)
class RunSpread:
    """Plain figures of one execution's successful runs (``exec`` records them: its value is
    the mean of the start-up-corrected times; ``raw_mean`` is before the correction)."""

    mean: float | None = None
    stdev: float | None = None
    median: float | None = None
    raw_mean: float | None = None
    #: the start-up cost subtracted from every run (seconds; 0 when not corrected)
    startup: float = 0.0

    KEYS = ("mean", "stdev", "median", "raw_mean", "startup")

    def to_dict(self) -> dict[str, Any]:
        return {"mean": self.mean, "stdev": self.stdev, "median": self.median,
                "raw_mean": self.raw_mean, "startup": self.startup}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RunSpread | None:
        if not any(key in data for key in cls.KEYS):
            return None
        return cls(mean=_number(data.get("mean")), stdev=_number(data.get("stdev")),
                   median=_number(data.get("median")), raw_mean=_number(data.get("raw_mean")),
                   startup=_number(data.get("startup")) or 0.0)


#: the keys every entry has, in the order files have them
_CORE_KEYS = ("index", "value", "ci_low", "ci_high", "confidence", "within_cov", "n",
              "calls_per_sample", "stop_reason", "interrupted", "error")


@dataclass(frozen=True)
class Execution:
    """One independent execution of a case.

    ``value`` is the execution's own estimate (its median, mean, slope... as the case's method
    makes it) when it gave one; ``ci_low``/``ci_high`` its interval at ``confidence`` (the
    runs' interval, which describes this process only); ``within_cov`` the spread of its runs;
    ``n`` its successful measured runs; ``stop_reason`` why its run loop ended; ``error`` why it
    gave no value (killed at the hard limit, a crash, a failed run). ``layout`` is set for a
    spawned worker, ``spread`` for a command session, ``host`` on a fleet, ``counts`` when a
    backend counts events (instructions, cache misses...: name → count for the execution), and
    ``figures`` holds the method's other per-execution figures (``execution_figures``).
    """

    index: int
    value: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    confidence: float | None = None
    within_cov: float | None = None
    n: int = 0
    #: the calibrated calls per sample (an int; a list for fits)
    calls_per_sample: Any = None
    stop_reason: str = ""
    interrupted: bool = False
    error: str | None = None
    layout: ProcessLayout | None = None
    spread: RunSpread | None = None
    host: str | None = None
    counts: Mapping[str, float] | None = None
    figures: Mapping[str, float] = field(default_factory=dict)
    #: keys of a file's entry this version does not know, written back as read
    other: Mapping[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """The execution gave a finite value."""
        return self.value is not None and math.isfinite(self.value)

    def to_dict(self) -> dict[str, Any]:
        """The flat JSON entry (the keys files have always had)."""
        out: dict[str, Any] = {"index": self.index}
        if self.layout is not None:
            out.update(self.layout.to_dict())
        out.update(value=self.value, ci_low=self.ci_low, ci_high=self.ci_high,
                   confidence=self.confidence, within_cov=self.within_cov, n=self.n,
                   calls_per_sample=self.calls_per_sample, stop_reason=self.stop_reason,
                   interrupted=self.interrupted, error=self.error)
        if self.spread is not None:
            out.update(self.spread.to_dict())
        if self.host is not None:
            out["host"] = self.host
        if self.counts is not None:
            out["counts"] = dict(self.counts)
        if self.figures:
            out["figures"] = dict(self.figures)
        for key, value in self.other.items():
            out.setdefault(key, value)
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], index: int = 0) -> Execution:
        """An entry of a results file (any shape written so far); ``index`` when it has none."""
        known = set(_CORE_KEYS) | set(ProcessLayout.KEYS) | set(RunSpread.KEYS) | {
            "host", "counts", "figures"}
        core = {name: data.get(name) for name in _CORE_KEYS}
        counts, figures, host = data.get("counts"), data.get("figures"), data.get("host")
        return cls(
            index=_int(core["index"], index) or 0,
            **{name: _number(core[name]) for name in _number_fields()},
            n=_int(core["n"], 0) or 0,
            calls_per_sample=core["calls_per_sample"],
            stop_reason=str(core["stop_reason"] or ""),
            interrupted=bool(core["interrupted"] or False),
            error=str(core["error"]) if core["error"] is not None else None,
            layout=ProcessLayout.from_dict(data),
            spread=RunSpread.from_dict(data),
            host=str(host) if host is not None else None,
            counts={str(k): float(v) for k, v in counts.items() if _number(v) is not None}
            if isinstance(counts, Mapping) else None,
            figures={str(k): v for k, v in figures.items()}
            if isinstance(figures, Mapping) else {},
            other={k: v for k, v in data.items() if k not in known},
        )

    @classmethod
    def coerce(cls, item: Execution | Mapping[str, Any], index: int = 0) -> Execution:
        """``item`` as a record (a mapping is read with :meth:`from_dict`)."""
        return item if isinstance(item, Execution) else cls.from_dict(item, index)


def _number_fields() -> tuple[str, ...]:
    """The record's fields that hold a finite number or None (read with :func:`_number`)."""
    return tuple(f.name for f in fields(Execution) if f.type == "float | None")


def execution_values(executions: Any) -> list[float]:
    """The finite values of ``executions`` (records, or entries of a results file's JSON), in
    order: what an interval across executions stands on."""
    out = []
    for i, item in enumerate(executions or ()):
        if isinstance(item, Execution):
            record = item
        elif isinstance(item, Mapping):
            record = Execution.from_dict(item, i)
        else:
            continue
        if record.ok:
            out.append(float(record.value))  # type: ignore[arg-type]
    return out


#: the record's field names (for tests of the shape)
EXECUTION_FIELDS = tuple(f.name for f in fields(Execution))
