"""The comparison of ``steadybench compare`` (and ``history compare``, the pytest plugin's
``--steadybench-compare``) as typed, frozen results.

:func:`steadybench.compare.core.compare_sets` returns a :class:`Comparison` (made from the
comparison document it builds, the JSON that ``--json`` writes); :meth:`Comparison.from_dict`
reads such a document (or a file written earlier) into:

* :class:`Comparison`: the inputs, the :class:`ComparisonSettings` it was made with, one
  :class:`BenchmarkComparison` per matched pair, the warnings and the suite summary;
* :class:`BenchmarkComparison`: one pair's ratio BASE/NEW (the medians' ratio and the
  interval's own estimate), its :class:`RatioInterval`, the verdict, the test and its p-values,
  the confidence level, each side's :class:`SideSummary` (n executions, mean, median...),
  and where the noise between runs came from.

The table, the Markdown and CSV writers and the CI gate read attributes of these, never keys.
``to_dict()`` gives back the document key for key, in the same order, keys this module does
not model (each protocol's details, the sides' estimates) included, so the JSON of ``compare
--json`` is unchanged and older files load.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from .packed import PackedRows

_EMPTY: Mapping[str, Any] = MappingProxyType({})


def _float(value: Any) -> float | None:
    return None if value is None or isinstance(value, bool) else float(value)


def _frozen(value: Any) -> Mapping[str, Any] | None:
    return None if value is None else MappingProxyType(dict(value))


def _view(data: Mapping[str, Any], owned: bool) -> Mapping[str, Any]:
    """A read-only view of ``data``: over ``data`` itself when the caller hands it over
    (``owned``: a document just made, nothing else will change it; a comparison of 10^6
    benchmarks then holds each row once, not twice, at its peak), else over a copy."""
    return MappingProxyType(data if owned and type(data) is dict else dict(data))


def _back(source: Mapping[str, Any], modelled: Mapping[str, Any]) -> dict[str, Any]:
    """The dict a result was read from, key for key and in its order, with the modelled keys'
    typed values written back; a result made in code (no source) gives its modelled keys."""
    if not source:
        return {k: v for k, v in modelled.items() if v is not None}
    return {k: modelled.get(k, v) for k, v in source.items()}


def _without_rows(doc: Mapping[str, Any]) -> dict[str, Any]:
    """The document kept as a comparison's source, its ``benchmarks`` emptied: the rows are
    read into :class:`BenchmarkComparison` (each keeps its own), and ``to_dict`` writes them
    from there, so the document's rows need not stay alive too (a comparison of 10^6
    benchmarks held every row twice; issue 27 item 13). The key keeps its place."""
    out = dict(doc)
    if "benchmarks" in out:
        out["benchmarks"] = ()
    return out


@dataclass(frozen=True)
class RatioInterval:
    """The interval of the ratio BASE/NEW at ``confidence`` (above 1: NEW is faster)."""

    low: float
    high: float
    confidence: float | None
    #: the level the interval really has (the rank interval's is discrete)
    achieved_confidence: float | None
    method: str
    #: the ratio the interval is of (Hodges–Lehmann, or the medians' under the between-run
    #: model); None when the interval has no estimate of its own
    estimate: float | None = None
    _source: Mapping[str, Any] = field(default_factory=lambda: _EMPTY, repr=False, compare=False)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None, owned: bool = False
                  ) -> RatioInterval | None:
        if not data or data.get("low") is None or data.get("high") is None:
            return None
        return cls(float(data["low"]), float(data["high"]), _float(data.get("confidence")),
                   _float(data.get("achieved_confidence")), str(data.get("method") or ""),
                   _float(data.get("estimate")), _view(data, owned))

    def to_dict(self) -> dict[str, Any]:
        return _back(self._source, {
            "low": self.low, "high": self.high, "confidence": self.confidence,
            "achieved_confidence": self.achieved_confidence, "method": self.method,
            "estimate": self.estimate})

    def holds_one(self) -> bool:
        """True when no direction is shown: the interval contains a ratio of 1."""
        return self.low <= 1.0 <= self.high


@dataclass(frozen=True)
class SideSummary:
    """One side of a pair in the unit the test used (independent executions, or runs)."""

    n: int
    mean: float | None
    median: float | None
    min: float | None
    stdev: float | None
    _source: Mapping[str, Any] = field(default_factory=lambda: _EMPTY, repr=False, compare=False)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None, owned: bool = False) -> SideSummary:
        data = data or {}
        return cls(int(data.get("n") or 0), _float(data.get("mean")),
                   _float(data.get("median")), _float(data.get("min")),
                   _float(data.get("stdev")), _view(data, owned))

    def to_dict(self) -> dict[str, Any]:
        return _back(self._source, {
            "n": self.n, "mean": self.mean, "median": self.median, "min": self.min,
            "stdev": self.stdev})


@dataclass(frozen=True)
class BenchmarkComparison:
    """One matched pair: BASE against NEW."""

    name: str
    unit: str
    #: what the test took as its observations ("executions", "runs, one process each"...)
    test_unit: str
    base: SideSummary
    new: SideSummary
    #: median(BASE)/median(NEW) (above 1: NEW is faster); mean(BASE)/mean(NEW); the minima's
    #: ratio only with --show-min
    ratio: float | None
    ratio_mean: float | None
    ratio_min: float | None
    interval: RatioInterval | None
    #: "faster", "slower", "no significant difference", "inconclusive", "unchanged within ±X"
    verdict: str
    #: the protocol the verdict is from ("median" or "mean") and its test
    verdict_by: str
    test: str
    #: the level the verdict is stated at (None: auto found no level)
    confidence: float | None
    confidence_mode: str
    #: each protocol's level ("mean", "median")
    protocol_confidence: Mapping[str, float | None]
    mean_significant: bool
    median_significant: bool
    p_value: float | None
    p_adjusted: float | None
    #: where the interval lies against the threshold's band (steadybench.compare.protocol.
    #: band_decision)
    band: str | None
    threshold: float
    warnings: tuple[str, ...]
    #: the variation between runs the test used, when the sides are separate runs
    run_noise: Mapping[str, Any] | None
    confidence_note: str | None
    _source: Mapping[str, Any] = field(default_factory=lambda: _EMPTY, repr=False, compare=False)

    @classmethod
    def from_dict(cls, row: Mapping[str, Any], owned: bool = False) -> BenchmarkComparison:
        pc = row.get("protocol_confidence") or {}
        return cls(
            name=str(row.get("name", "?")), unit=str(row.get("unit") or "s"),
            test_unit=str(row.get("test_unit") or ""),
            base=SideSummary.from_dict(row.get("base"), owned),
            new=SideSummary.from_dict(row.get("new"), owned),
            ratio=_float(row.get("speedup")), ratio_mean=_float(row.get("speedup_mean")),
            ratio_min=_float(row.get("speedup_min")),
            interval=RatioInterval.from_dict(row.get("speedup_ci"), owned),
            verdict=str(row.get("verdict", "")), verdict_by=str(row.get("verdict_by", "median")),
            test=str(row.get("test") or "—"), confidence=_float(row.get("confidence")),
            confidence_mode=str(row.get("confidence_mode", "fixed")),
            protocol_confidence=MappingProxyType({k: _float(v) for k, v in pc.items()}),
            mean_significant=bool(row.get("mean_significant", False)),
            median_significant=bool(row.get("median_significant", False)),
            p_value=_float(row.get("p_value")), p_adjusted=_float(row.get("p_adjusted")),
            band=row.get("band"), threshold=float(row.get("threshold") or 0.0),
            warnings=tuple(str(w) for w in row.get("warnings") or ()),
            run_noise=_frozen(row.get("run_noise")),
            confidence_note=row.get("confidence_note"), _source=_view(row, owned))

    def to_dict(self) -> dict[str, Any]:
        src = self._source
        return _back(src, {
            "name": self.name, "unit": self.unit, "test_unit": self.test_unit,
            "base": self.base.to_dict(), "new": self.new.to_dict(), "speedup": self.ratio,
            "speedup_mean": self.ratio_mean,
            "speedup_min": self.ratio_min if "speedup_min" in src else None,
            "speedup_ci": None if self.interval is None else self.interval.to_dict(),
            "verdict": self.verdict, "verdict_by": self.verdict_by, "test": self.test,
            "confidence": self.confidence, "confidence_mode": self.confidence_mode,
            "protocol_confidence": dict(self.protocol_confidence),
            "mean_significant": self.mean_significant,
            "median_significant": self.median_significant, "p_value": self.p_value,
            "p_adjusted": self.p_adjusted, "band": self.band, "threshold": self.threshold,
            "warnings": list(self.warnings),
            "run_noise": None if self.run_noise is None else dict(self.run_noise),
            "confidence_note": self.confidence_note})

    @property
    def estimate(self) -> float | None:
        """The ratio printed: the interval's own estimate when it has one (an interval is shown
        beside what it is an interval of), else the medians' ratio."""
        if self.interval is not None and self.interval.estimate is not None:
            return self.interval.estimate
        return self.ratio

    @property
    def moved(self) -> bool:
        """True when the verdict is a change (faster or slower)."""
        return self.verdict in ("faster", "slower")


@dataclass(frozen=True)
class ComparisonSettings:
    """The options the comparison was made with (``options`` in the JSON)."""

    #: None: --confidence auto
    confidence: float | None
    threshold: float
    equivalence: bool
    verdict_by: str
    show_min: bool
    correction: str
    _source: Mapping[str, Any] = field(default_factory=lambda: _EMPTY, repr=False, compare=False)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> ComparisonSettings:
        data = data or {}
        conf = data.get("confidence")
        return cls(None if conf in (None, "auto") else float(conf),
                   float(data.get("threshold") or 0.0), bool(data.get("equivalence", False)),
                   str(data.get("verdict_by", "median")), bool(data.get("show_min", False)),
                   str(data.get("correction", "none")), MappingProxyType(dict(data)))

    def to_dict(self) -> dict[str, Any]:
        return _back(self._source, {
            "confidence": "auto" if self.confidence is None else self.confidence,
            "threshold": self.threshold, "equivalence": self.equivalence,
            "verdict_by": self.verdict_by, "show_min": self.show_min,
            "correction": self.correction})


@dataclass(frozen=True)
class Comparison:
    """A whole comparison: every matched pair, the warnings and the suite's summary."""

    #: a tuple, or for a comparison just made, :class:`~steadybench.compare.packed.PackedRows`
    #: (the rows kept packed, each read when asked for)
    benchmarks: Sequence[BenchmarkComparison]  # PackedRows[BenchmarkComparison] too
    settings: ComparisonSettings
    #: the files compared and their kinds (base, new, base_kind, new_kind; or suite)
    inputs: Mapping[str, Any]
    warnings: tuple[str, ...]
    #: the overall gain and the accelerated proportion (steadybench.compare.suite), with more
    #: than one benchmark
    suite: Mapping[str, Any] | None
    #: what moved between the two sides' profiles, by benchmark label (the JSON of
    #: :class:`steadybench.profiles.compare.ProfilePair`), when both sides were profiled
    profiles: Mapping[str, Any] | None = None
    _source: Mapping[str, Any] = field(default_factory=lambda: _EMPTY, repr=False, compare=False)

    @classmethod
    def from_dict(cls, doc: Mapping[str, Any], owned: bool = False) -> Comparison:
        """The comparison document ``doc`` read; ``owned``: its rows are handed over (made
        just now by :func:`~steadybench.compare.core.compare_sets`), kept, not copied."""
        rows = doc.get("benchmarks") or ()
        return cls(rows if isinstance(rows, PackedRows)  # kept packed, read row by row
                   else tuple(BenchmarkComparison.from_dict(r, owned) for r in rows),
                   ComparisonSettings.from_dict(doc.get("options")),
                   MappingProxyType(dict(doc.get("inputs") or {})),
                   tuple(str(w) for w in doc.get("warnings") or ()),
                   _frozen(doc.get("suite")), _frozen(doc.get("profiles")),
                   MappingProxyType(_without_rows(doc)))

    def to_dict(self) -> dict[str, Any]:
        profiles = None if self.profiles is None else dict(self.profiles)
        out = _back(self._source, {
            "inputs": dict(self.inputs), "options": self.settings.to_dict(),
            "benchmarks": [b.to_dict() for b in self.benchmarks],
            "warnings": list(self.warnings),
            "suite": None if self.suite is None else dict(self.suite),
            "profiles": profiles})
        if profiles is not None:  # added after the document was made: written last
            out.setdefault("profiles", profiles)
        return out

    def with_warning(self, text: str) -> Comparison:
        """The same comparison with one more warning (e.g. a note on the history's noise)."""
        from dataclasses import replace

        return replace(self, warnings=(*self.warnings, text))

    def with_profiles(self, profiles: Mapping[str, Any]) -> Comparison:
        """The same comparison with what moved between the profiles (``profiles`` in the
        JSON)."""
        from dataclasses import replace

        return replace(self, profiles=_frozen(profiles))

    @property
    def verdicts(self) -> list[str]:
        """Every pair's verdict, in order (what ``--fail-on`` looks at)."""
        return self.column("verdict")

    def column(self, name: str) -> list[Any]:
        """One figure of every pair, in order, without reading each row when the rows are
        packed: ``verdict``, ``test_unit``, ``interval_method`` (None without an interval) or
        ``noise_text`` (the between-run noise's text, None without it)."""
        rows = self.benchmarks
        if isinstance(rows, PackedRows):
            return rows.column(name)
        if name == "interval_method":
            return [None if b.interval is None else b.interval.method for b in rows]
        if name == "noise_text":
            return [str(b.run_noise["text"]) if b.run_noise else None for b in rows]
        if name not in ("verdict", "test_unit"):
            raise KeyError(name)
        return [getattr(b, name) for b in rows]
