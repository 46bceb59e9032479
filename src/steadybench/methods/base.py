"""The measurement-method interface the runner calls, and the ``direct`` method.

A method decides how one *sample* is taken: how many executions of the measured code, which
clock reads surround them, and how the samples of a case become the reported estimate. The
runner calls, for one case:

1. ``prepare(implementation, clock)`` once, after ``setup(params)``: calibration goes here;
2. ``sample(implementation, clock) -> (elapsed_ns, executions)`` once per run, innermost of all
   meters; the runner records ``elapsed_ns / executions`` seconds as the run's ``wall_time``;
3. ``finish(case)`` after the processors ran: fill ``case.estimate`` with at least ``value``,
   ``ci_low``, ``ci_high`` and ``confidence`` (and method-specific fields), and ``case.method``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any

from ..model.execution import Execution
from ..stats.robust import robust_sd

if TYPE_CHECKING:
    from ..model.estimate import Estimate
    from ..model.implementation import Implementation
    from ..model.results import CaseResult

Clock = Callable[[], int]


class Method:
    """Base class of measurement methods."""

    name = "method"
    #: True when samples hold different numbers of executions; the runner then also records
    #: the raw ``elapsed`` seconds and ``executions`` of each sample.
    variable_executions = False
    #: method figures (besides the value) that each execution reports and that get their own
    #: interval across executions (``initsplit``: T_i and epsilon; ``linefit``: the overhead)
    execution_figures: tuple[str, ...] = ()

    def prepare(self, implementation: Implementation, clock: Clock) -> None:
        """Calibrate for this case (called once, after set-up)."""

    def sample(self, implementation: Implementation, clock: Clock) -> tuple[int, int]:
        raise NotImplementedError

    def sample_warmup(self, implementation: Implementation, clock: Clock) -> tuple[int, int]:
        """One warm-up sample (left out of the estimate). By default the same as
        :meth:`sample`; methods that cycle through a schedule (``linefit``, ``initsplit``)
        override it so that warm-up never uses up the schedule's first points (the round
        ``N = M = 1`` of ``initsplit`` is the one that separates T_e from T_i, ``002`` §5)."""
        return self.sample(implementation, clock)

    def finish(self, case: CaseResult) -> None:
        """Set ``case.estimate``, the case's one :class:`~steadybench.model.estimate.Estimate`.

        Subclasses override :meth:`estimate` (the value from this case's samples); this wraps
        it with the level it stands on: across executions when the case ran in ≥ 2
        independent worker processes (``case.processes``), else across runs of one execution
        (see :func:`build_estimate`).
        """
        case.method = self.name
        case.estimate = build_estimate(case, self.estimate(case), self.name)
        warn_if_unstable(case)

    def estimate(self, case: CaseResult) -> dict[str, Any]:
        """The estimate of this case (default: mean per-execution time and its CI)."""
        return estimate_from_stats(case)

    def options(self) -> dict[str, Any]:
        """The method's settings, recorded with the results."""
        return {}

    def __getstate__(self) -> dict[str, Any]:
        """Pickled state: settings and calibration, without private working objects (compiled
        timing code, the measured callable), so a worker process can send its calibrated method
        back to the parent."""
        return {k: v for k, v in vars(self).items() if not k.startswith("_")}

    def __setstate__(self, state: dict[str, Any]) -> None:
        vars(self).update(state)


#: a headline whose deciding spread (CoV) is above this is flagged "may be unstable", as pyperf
#: does when the standard deviation is above 10 % of the mean
UNSTABLE_COV = 0.10


@dataclass(frozen=True)
class MethodEstimate:
    """A method's own estimate from the case's samples (what :meth:`Method.estimate` gives, as
    a mapping): the headline figures, and the method's other figures (``overhead``, ``r2``,
    ``executions``...) which become :attr:`Estimate.fields`.

    ``own_spread`` is True when the method gave its own ``within_cov`` (``None`` included:
    a fit method's spread from sweep to sweep, or none); otherwise the spread comes from the
    executions or the case's summary.
    """

    value: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    confidence: float | None = None
    statistic: str | None = None
    error: str | None = None
    within_cov: float | None = None
    own_spread: bool = False
    figures: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def read(cls, own: MethodEstimate | Mapping[str, Any]) -> MethodEstimate:
        """``own`` as a record: a method's mapping gives each named field its key, and every
        other key is a figure."""
        if isinstance(own, MethodEstimate):
            return own
        named = [f.name for f in fields(cls) if f.name not in ("own_spread", "figures")]
        return cls(**{name: own.get(name) for name in named},
                   own_spread="within_cov" in own,
                   figures={k: v for k, v in own.items() if k not in named})


def build_estimate(case: CaseResult, given: MethodEstimate | Mapping[str, Any],
                   method: str) -> Estimate:
    """The case's :class:`Estimate` from the method's own figures ``given`` (from the case's
    samples; see :class:`MethodEstimate`) and, when the case ran in several executions, the
    per-execution values.

    With ≥ 2 executions that gave a value, the headline is the median of the per-execution
    values with its order-statistic interval (the mean with a Student-t interval when there are
    too few executions for that interval), the executions being the independent observations
    (Kalibera & Jones, ISMM 2013, §3; Touati et al., source ``003`` §2; see
    :func:`steadybench.stats.summary.across_executions`). With one execution it is the method's
    own value and interval, at the level of runs.
    """
    from ..model.estimate import LEVEL_EXECUTIONS, LEVEL_RUNS, Estimate

    own = MethodEstimate.read(given)
    figures = dict(own.figures)
    statistic = own.statistic or ("mean" if method in ("direct", "batch") else method)
    confidence = own.confidence or (case.ci or {}).get("confidence")
    unit = case.units.get("wall_time", case.unit) if case.units else case.unit
    executions = [p for p in case.processes if p.ok]
    within = [p.within_cov for p in executions if p.within_cov is not None]
    if len(executions) >= 2:
        from ..stats.summary import across_executions

        level = confidence or 0.95
        values = [float(p.value) for p in executions]  # type: ignore[arg-type]
        spread = across_executions(values, level)
        figures["execution_values"] = values
        figures["between_sd"] = spread.sd
        figures["interval_scope"] = f"across {len(executions)} independent executions"
        _figures_across_executions(figures, executions, level)
        calls = [p.calls_per_sample for p in executions]
        if any(c is not None for c in calls):
            figures["executions"] = calls  # calibrated in each execution
        return Estimate(
            value=spread.centre, ci_low=spread.low, ci_high=spread.high, confidence=level,
            unit=unit, method=method, statistic=f"{spread.statistic} of execution {statistic}s",
            level=LEVEL_EXECUTIONS, n_executions=len(executions), n_runs=case.n,
            within_cov=_median(within), between_cov=spread.cov, fields=figures,
            error=own.error)
    if own.own_spread:  # the method's own spread (fit methods: from sweep to sweep)
        within = [] if own.within_cov is None else [own.within_cov]
    elif not within and case.stats.get("cov") is not None:
        within = [case.stats["cov"]]
    if own.value is not None:
        figures.setdefault("interval_scope", INTERVAL_ONE_EXECUTION)
    error = own.error
    if own.value is None and error is None:
        error = "; ".join(case.errors) or "no successful runs"
    return Estimate(
        value=own.value, ci_low=own.ci_low, ci_high=own.ci_high,
        confidence=confidence, unit=unit, method=method, statistic=statistic,
        level=LEVEL_RUNS, n_executions=max(len(executions), 1 if case.n else 0),
        n_runs=case.n, within_cov=_median(within), fields=figures, error=error)


#: what an interval from one execution covers (``Estimate.fields["interval_scope"]``)
INTERVAL_ONE_EXECUTION = ("within one execution only: the samples of one process, which share "
                          "its memory layout and state; measure in ≥ 2 independent executions "
                          "(processes) for an interval that covers the next one")


def _figures_across_executions(figures: dict[str, Any], executions: list[Execution],
                               confidence: float) -> None:
    """Give each per-execution figure (``execution_figures`` of the method, in each entry's
    ``figures``) the centre and interval across executions, as the value has: the pooled fit's
    figure and its interval describe the runs, not the executions."""
    from ..stats.summary import across_executions

    names: list[str] = []
    for p in executions:
        names += [n for n in p.figures if n not in names]
    for name in names:
        values = [p.figures[name] for p in executions if p.figures.get(name) is not None]
        if len(values) < 2:
            continue
        spread = across_executions(values, confidence)
        figures[name] = spread.centre
        figures[f"{name}_ci"] = [spread.low, spread.high]
        figures[f"{name}_executions"] = values


def warn_if_unstable(case: CaseResult) -> None:
    """Warn when the headline's spread makes it meaningless, as pyperf's "may be unstable":
    the spread its interval rests on is above :data:`UNSTABLE_COV`, or the interval of a time
    reaches zero or below."""
    est = case.estimate
    if est is None or not est.ok:
        return
    messages = []
    spread, what = _execution_spread(est)
    if est.independent and spread is not None and spread > UNSTABLE_COV:
        messages.append(f"the {est.n_executions} executions differ by {spread:.0%} "
                        f"({what}, above {UNSTABLE_COV:.0%})")
    elif not est.independent and est.within_cov is not None and est.within_cov > UNSTABLE_COV:
        messages.append(f"the runs vary by {est.within_cov:.0%} (CoV, above {UNSTABLE_COV:.0%})")
    if est.ci_low is not None and est.ci_low <= 0 < est.value:  # type: ignore[operator]
        messages.append("the interval reaches zero or below")
    if messages:
        text = ("may be unstable: " + "; ".join(messages)
                + ": use a quieter machine (steadybench system tune, --preset managed), more "
                "processes, or longer runs")
        if text not in case.warnings:
            case.warnings.append(text)


def headline_spread(est: Any) -> float | None:
    """The spread the headline's interval rests on, the one "may be unstable" judges: between
    the executions (:func:`_execution_spread`) when the headline is across executions, else
    the runs' CoV within the one execution. The results table's ``CoV`` column shows it, so
    the column, the interval and the warning speak of the same thing."""
    if est is None or not est.ok:
        return None
    return _execution_spread(est)[0] if est.independent else est.within_cov


def _execution_spread(est: Any) -> tuple[float | None, str]:
    """How far the executions behind a headline differ, measured the way the headline is
    made: for a median of executions the robust CoV (1.4826·MAD/median, the SD's equivalent
    under normality), so that one slow execution among 25, which does not move the median,
    does not call the median unstable; for a mean, the CoV."""
    values = est.fields.get("execution_values") if est.fields else None
    if values and str(est.statistic).startswith("median") and len(values) >= 3:
        centre = _median(values)
        if centre:
            return robust_sd(values, centre) / abs(centre), "robust CoV, 1.4826·MAD/median"
    return est.between_cov, "CoV"


def _median(values: list[float]) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


def estimate_from_stats(case: CaseResult) -> dict[str, Any]:
    """The default estimate: the mean per-execution time and its CI from the summary."""
    ci = case.ci or {}
    return {
        "value": case.stats.get("mean"),
        "ci_low": ci.get("low"),
        "ci_high": ci.get("high"),
        "confidence": ci.get("confidence"),
    }


class DirectMethod(Method):
    """One execution per sample, timed by a clock read on each side (source ``000``).

    Simple and what users expect, but each sample includes the cost of one clock read (the
    systematic error ε of Moreno and Fischmeister §3), which the other methods remove.
    """

    name = "direct"

    def prepare(self, implementation: Implementation, clock: Clock) -> None:
        from .unroll import refuse_async

        refuse_async(self.name, implementation)

    def sample(self, implementation: Implementation, clock: Clock) -> tuple[int, int]:
        run = implementation.run
        t0 = clock()
        run()
        t1 = clock()
        return t1 - t0, 1
