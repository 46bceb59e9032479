"""Processors over Results (Rancid §V-A, ResultsProcessor).

A processor reads and may change a list of cases: filters mark runs (their per-run status)
instead of deleting them, so nothing measured is lost; analyzers add entries to
``case.analyses``. The manager runs *online* processors on each case as soon as it finishes and
*global* processors on all cases of a benchmark once it is complete, in the order added.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ..model.results import PRIMARY_METRIC, RUN_OK, RUN_REMOVED, RUN_WARMUP, CaseResult
from ..stats import summary as st
from ..stats.outliers import tukey_fences
from ..stats.streaming import StreamingStats


class Processor:
    """Base class: override :meth:`process_case` (or :meth:`process` for cross-case work)."""

    def process(self, cases: Sequence[CaseResult]) -> None:
        for case in cases:
            self.process_case(case)

    def process_case(self, case: CaseResult) -> None:
        raise NotImplementedError

    def describe(self) -> str:
        return type(self).__name__


def _needs_samples(case: CaseResult, who: str) -> bool:
    if case.keep_samples:
        return True
    msg = f"{who}: raw samples were not kept (streaming mode); skipped"
    if msg not in case.warnings:
        case.warnings.append(msg)
    return False


def _refresh_stream(case: CaseResult) -> None:
    """Rebuild the streaming accumulators from the ok runs after a filter changed statuses."""
    case.stream = {name: StreamingStats().extend(case.values(name)) for name in case.metrics}


# ---------------------------------------------------------------------------- filters
class WarmupFilter(Processor):
    """Mark the first ``k`` ok runs as warm-up (Rancid's WarmUpIterationsFilter)."""

    def __init__(self, k: int) -> None:
        self.k = int(k)

    def process_case(self, case: CaseResult) -> None:
        if not _needs_samples(case, "warm-up filter"):
            return
        left = self.k
        for i, status in enumerate(case.status):
            if left <= 0:
                break
            if status == RUN_OK:
                case.status[i] = RUN_WARMUP
                left -= 1
        _refresh_stream(case)


class WindowFilter(Processor):
    """Keep only the last ``n`` ok runs; earlier ones become ``removed``.

    Rancid's WindowIterationsFilter.
    """

    def __init__(self, n: int) -> None:
        self.n = int(n)

    def process_case(self, case: CaseResult) -> None:
        if not _needs_samples(case, "window filter"):
            return
        ok = [i for i, s in enumerate(case.status) if s == RUN_OK]
        for i in ok[: max(len(ok) - self.n, 0)]:
            case.status[i] = RUN_REMOVED
        _refresh_stream(case)


class InvalidRunsRemover(Processor):
    """Delete failed runs from the run table (Rancid's InvalidRunsRemover).

    With a :class:`~steadybench.meters.SuccessfulRunsMeter`, runs whose ``success`` value is 0
    are failed too.
    """

    def process_case(self, case: CaseResult) -> None:
        if not case.keep_samples:
            return
        success = case.metrics.get("success")
        keep = [
            i
            for i, s in enumerate(case.status)
            if s != "failed" and not (success is not None and success[i] == 0.0)
        ]
        starts = case.extra.get("execution_starts")
        if isinstance(starts, list):  # each execution begins where its first kept run is now
            case.extra["execution_starts"] = sorted({sum(1 for i in keep if i < s)
                                                     for s in starts if isinstance(s, int)})
        case.status = [case.status[i] for i in keep]
        case.outlier = [case.outlier[i] for i in keep]
        for name, column in case.metrics.items():
            case.metrics[name] = type(column)(column.typecode, (column[i] for i in keep))


class ResultsRemover(Processor):
    """Delete a metric (or an analysis) from the results (Rancid's ResultsRemover)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def process_case(self, case: CaseResult) -> None:
        case.metrics.pop(self.name, None)
        case.stream.pop(self.name, None)
        case.units.pop(self.name, None)
        case.analyses.pop(self.name, None)


class TukeyOutlierFilter(Processor):
    """Flag runs outside Tukey's fences Q1 − k·IQR, Q3 + k·IQR (Rancid §IV-B).

    The fences are those of each execution's own ok runs: executions differ in level (each is
    a fresh process with its own layout, Kalibera & Jones 2013), so fences over the pooled runs
    would flag whole slow executions rather than the odd runs within one. The analysis keeps
    the widest low and high fence of any execution.

    ``action="mark"`` (default) only flags them, so ``n`` is unchanged; ``"remove"`` also sets
    their status to ``removed`` so they leave the statistics.
    """

    def __init__(self, k: float = 1.5, action: str = "mark", metric: str = PRIMARY_METRIC) -> None:
        if action not in ("mark", "remove"):
            raise ValueError(f"outlier action must be 'mark' or 'remove', not {action!r}")
        self.k, self.action, self.metric = float(k), action, metric

    def process_case(self, case: CaseResult) -> None:
        if not _needs_samples(case, "outlier filter"):
            return
        column = case.metrics.get(self.metric)
        if column is None:
            return
        flagged = 0
        lows: list[float] = []
        highs: list[float] = []
        for start, end in case.execution_spans():
            values = [column[i] for i in range(start, end) if case.status[i] == RUN_OK]
            fences = tukey_fences(values, self.k) if values else None
            if fences is None:
                continue
            low, high = fences
            lows.append(low)
            highs.append(high)
            for i in range(start, end):
                if case.status[i] == RUN_OK and not low <= column[i] <= high:
                    case.outlier[i] = True
                    flagged += 1
                    if self.action == "remove":
                        case.status[i] = RUN_REMOVED
        if not lows:
            return
        case.analyses["outliers"] = {
            "k": self.k,
            "low": min(lows),
            "high": max(highs),
            "count": flagged,
            "action": self.action,
            "per": "execution",
        }
        if self.action == "remove":
            _refresh_stream(case)


# ---------------------------------------------------------------------------- analyzers
class Analyzer(Processor):
    """Stores ``fn(values)`` of a metric's ok runs in ``case.analyses[key]``.

    ``stream_fn``, when given, computes the same from a streaming accumulator, so the analyzer
    also works when raw samples were not kept; otherwise the value is None there.
    """

    def __init__(
        self,
        key: str,
        fn: Callable[[list[float]], Any],
        metric: str = PRIMARY_METRIC,
        stream_fn: Callable[[StreamingStats], Any] | None = None,
    ) -> None:
        self.key, self.fn, self.metric, self.stream_fn = key, fn, metric, stream_fn

    def process_case(self, case: CaseResult) -> None:
        key = self.key if self.metric == PRIMARY_METRIC else f"{self.metric}.{self.key}"
        if case.keep_samples:
            values = case.values(self.metric)
            case.analyses[key] = self.fn(values) if values else None
        elif self.stream_fn is not None and self.metric in case.stream:
            acc = case.stream[self.metric]
            case.analyses[key] = self.stream_fn(acc) if acc.n else None
        else:
            case.analyses[key] = None


def _pick(stat: str) -> Callable[[list[float]], Any]:
    return lambda values: st.describe(values)[stat]


def MeanAnalyzer(metric: str = PRIMARY_METRIC) -> Analyzer:  # noqa: N802 - reads like a class
    return Analyzer("mean", _pick("mean"), metric, lambda s: s.mean)


def MedianAnalyzer(metric: str = PRIMARY_METRIC) -> Analyzer:  # noqa: N802
    return Analyzer("median", _pick("median"), metric)


def MinAnalyzer(metric: str = PRIMARY_METRIC) -> Analyzer:  # noqa: N802
    return Analyzer("min", min, metric, lambda s: s.min)


def MaxAnalyzer(metric: str = PRIMARY_METRIC) -> Analyzer:  # noqa: N802
    return Analyzer("max", max, metric, lambda s: s.max)


def SumAnalyzer(metric: str = PRIMARY_METRIC) -> Analyzer:  # noqa: N802
    import math

    return Analyzer("sum", math.fsum, metric, lambda s: s.total)


def StdevAnalyzer(metric: str = PRIMARY_METRIC) -> Analyzer:  # noqa: N802
    return Analyzer("stdev", _pick("stdev"), metric, lambda s: s.stdev)


def CovAnalyzer(metric: str = PRIMARY_METRIC) -> Analyzer:  # noqa: N802
    return Analyzer("cov", _pick("cov"), metric, lambda s: st.cov(s.mean, s.stdev))


def QuartilesAnalyzer(metric: str = PRIMARY_METRIC) -> Analyzer:  # noqa: N802
    def quartiles(values: list[float]) -> dict[str, float | None]:
        d = st.describe(values)
        return {"q1": d["q1"], "median": d["median"], "q3": d["q3"], "iqr": d["iqr"]}

    return Analyzer("quartiles", quartiles, metric)


def PercentilesAnalyzer(
    percentiles: Sequence[float] = (1, 5, 50, 95, 99),  # noqa: N802
    metric: str = PRIMARY_METRIC,
) -> Analyzer:
    import numpy as np

    def pct(values: list[float]) -> dict[str, float]:
        return {
            f"p{p:g}": float(v) for p, v in zip(percentiles, np.percentile(values, percentiles))
        }

    return Analyzer("percentiles", pct, metric)


def HistogramAnalyzer(bins: int | str = "auto", metric: str = PRIMARY_METRIC) -> Analyzer:  # noqa: N802
    """Bin counts and edges (numpy's ``histogram``; "auto" picks Sturges or Freedman–Diaconis)."""
    import numpy as np

    def hist(values: list[float]) -> dict[str, list[float]]:
        counts, edges = np.histogram(values, bins=bins)
        return {"counts": counts.tolist(), "edges": edges.tolist()}

    return Analyzer("histogram", hist, metric)


def CiMeanAnalyzer(confidence: float = 0.95, metric: str = PRIMARY_METRIC) -> Analyzer:  # noqa: N802
    def ci(values: list[float]) -> dict[str, Any] | None:
        interval = st.ci_mean(values, confidence)
        return interval.to_dict() if interval else None

    def ci_stream(s: StreamingStats) -> dict[str, Any] | None:
        if s.stdev is None:
            return None
        interval = st.ci_mean_from_moments(s.mean, s.stdev, s.n, confidence)
        return interval.to_dict() if interval else None

    return Analyzer("ci_mean", ci, metric, ci_stream)


def CiMedianAnalyzer(confidence: float = 0.95, metric: str = PRIMARY_METRIC) -> Analyzer:  # noqa: N802
    def ci(values: list[float]) -> dict[str, Any] | None:
        interval = st.ci_median(values, confidence)
        return interval.to_dict() if interval else None

    return Analyzer("ci_median", ci, metric)


class SummaryAnalyzer(Processor):
    """The summary every case carries: ``case.stats`` and ``case.ci`` (of the mean).

    The manager runs it after the user's processors, so it describes the runs that survived
    them. Also records the distribution-free CI of the median in ``analyses["ci_median"]``.
    """

    def __init__(self, confidence: float = 0.95) -> None:
        self.confidence = st.check_confidence(confidence)

    def process_case(self, case: CaseResult) -> None:
        if case.keep_samples:
            values = case.values(PRIMARY_METRIC)
            case.stats = st.describe(values)
            interval = st.ci_mean(values, self.confidence)
            median_ci = st.ci_median(values, self.confidence) if values else None
            case.analyses["ci_median"] = median_ci.to_dict() if median_ci else None
        else:
            stream = case.stream.get(PRIMARY_METRIC, StreamingStats())
            case.stats = st.describe_stream(stream)
            interval = (
                st.ci_mean_from_moments(stream.mean, stream.stdev, stream.n, self.confidence)
                if stream.stdev is not None
                else None
            )
        case.ci = interval.to_dict() if interval else None
        n = case.n
        if n == 0 and not case.errors:
            case.warnings.append("no successful runs: statistics are undefined")
        elif n == 1 and case.method != "count":  # a count's interval is its line fit's
            case.warnings.append("one run only: spread and confidence interval are undefined")


def finalize_case(
    case: CaseResult,
    processors: Sequence[Processor] = (),
    method: Any = None,
    confidence: float = 0.95,
) -> CaseResult:
    """Run ``processors``, then the summary, then the method's estimate: the standard ending of
    every case, whoever produced it (the runner, ``exec``, ``iters``...).

    Without a method the case's :class:`~steadybench.model.estimate.Estimate` is the one of
    ``direct``: the mean per-execution time and its interval (across executions when the case
    ran in several), built like every method's by :func:`~steadybench.methods.base.build_estimate`
    (its ``method`` is ``case.method``, e.g. ``exec``, or ``direct`` when unset).
    """
    for processor in processors:
        processor.process([case])
    SummaryAnalyzer(confidence).process_case(case)
    if method is not None:
        method.finish(case)
    elif case.estimate is None:
        from ..methods.base import build_estimate, estimate_from_stats

        own = {**estimate_from_stats(case), "statistic": "mean"}
        case.estimate = build_estimate(case, own, case.method or "direct")
    return case
