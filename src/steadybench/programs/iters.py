"""The ITERS protocol: a regression over iteration counts (source ``004``, Criterion's method).

The program under test takes an iteration count, runs its workload that many times in a tight
loop, and prints ``BATCHTIME: <seconds>`` (the total loop time) and optionally
``SELFTIMED: <seconds>`` (per iteration). steadybench sweeps the count — start at 1, double
until BATCHTIME passes a small threshold, then grow geometrically (×1.2, +1) until the time
budget is spent — and fits BATCHTIME = slope·iters + intercept by least squares: the slope is
the mean time of one iteration, the intercept the overhead shared by every count (timer reads,
set-up inside the timed region). This is the line fitting of Moreno and Fischmeister (source
``002`` §4) applied to whole programs, with its robust refit (§4.1), plus the geometric variant
of ``004`` (a line through the logarithms: y = e^b·x^m).

Where the count goes: at ``{iters}`` in the command, or — the convention of ``004``,
``benchrunner ITERS Quicksort Seq 2000`` — as the first argument when there is no placeholder.

The sweep is the shared run loop (:mod:`steadybench.runner.loop`) around an
:class:`ItersExecutor`: one step is one run of the program at the current count, so stop
conditions (the time budget, or any condition such as ``Runs(n)``), warm-up, the hard time and
run limits, per-run countermeasures and progress behave as in every other command.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import ConfigurationError, MeasurementError
from ..methods.base import Method, build_estimate
from ..methods.linefit import fit_record
from ..model.results import PRIMARY_METRIC, CaseResult
from ..processors import finalize_case
from ..runner.actions import FunctionAction
from ..runner.loop import (
    Executor,
    LoopSettings,
    OnFailure,
    ProgressCallback,
    RunFailure,
    RunLoop,
    Sample,
)
from ..runner.stop import ElapsedTime, RunState, StopCondition
from ..stats.regression import (
    DEFAULT_OUTLIER_THRESHOLD,
    slope_is_positive,
)
from ..stats.summary import check_confidence
from .commands import Command
from .process import CommandRunner

ITERS_UNITS = {
    PRIMARY_METRIC: "s", "iters": "", "batchtime": "s", "selftimed": "s", "process_time": "s",
    "user_time": "s", "sys_time": "s", "max_rss": "B",
}

_LINE = re.compile(r"^\s*(BATCHTIME|SELFTIMED)\s*:\s*(.*?)\s*$")


class ProtocolError(MeasurementError):
    """A program broke the ITERS protocol (bad output, non-zero exit, timeout)."""


@dataclass(frozen=True)
class ItersOutput:
    """What one run of a protocol program printed."""

    batchtime: float
    selftimed: float | None


def _describe(command: str, iters: int) -> str:
    return f"command {command!r} with iters={iters}"


def parse_iters_output(text: str, command: str = "", iters: int = 0) -> ItersOutput:
    """Read ``BATCHTIME`` (required, exactly once) and ``SELFTIMED`` (optional) from ``text``.

    Other lines are ignored. A missing, repeated, non-numeric, non-finite or negative value is a
    :class:`ProtocolError` naming the command, the iteration count and the offending line.
    """
    found: dict[str, tuple[float, str]] = {}
    for raw in text.splitlines():
        m = _LINE.match(raw)
        if not m:
            continue
        key, value = m.group(1), m.group(2)
        where = _describe(command, iters)
        if key in found:
            raise ProtocolError(f"{where}: {key} printed twice "
                                f"({found[key][1].strip()!r} and {raw.strip()!r})")
        try:
            number = float(value)
        except ValueError:
            raise ProtocolError(f"{where}: {key} is not a number: {raw.strip()!r}") from None
        if not math.isfinite(number):
            raise ProtocolError(f"{where}: {key} is not finite: {raw.strip()!r}")
        if number < 0:
            raise ProtocolError(f"{where}: {key} is negative: {raw.strip()!r}")
        found[key] = (number, raw)
    if "BATCHTIME" not in found:
        lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
        seen = f"; its last output line was {lines[-1][:200]!r}" if lines else \
            "; it printed nothing"
        raise ProtocolError(f"{_describe(command, iters)}: no 'BATCHTIME: <seconds>' line{seen}")
    selftimed = found.get("SELFTIMED")
    return ItersOutput(found["BATCHTIME"][0], selftimed[0] if selftimed else None)


def iters_argv(command: Command, iters: int, values: dict[str, Any] | None = None) -> list[str]:
    """The argument list for one count: ``{iters}`` replaced, or the count as first argument."""
    values = dict(values or {})
    if "iters" in command.placeholders():
        values["iters"] = iters
        return command.render(values)
    args = command.render(values)
    return [args[0], str(iters), *args[1:]]


@dataclass
class ItersOptions:
    """Settings of one ITERS sweep (see ``docs/programs.md``).

    Args:
        max_time: time budget of the sweep in seconds (whole process runs counted): the stop
            condition when ``stop`` is not given.
        threshold: BATCHTIME in seconds below which the count doubles; above it, it grows by
            ``growth`` (×1.2) plus one.
        min_points: points measured at least, whatever the stop condition.
        max_points: points measured at most (the hard run limit).
        max_iters: largest count ever asked for.
        confidence: level of the slope's confidence intervals.
        bootstrap: resamples of the bootstrap CI of the slope (0 disables it).
        seed: seed of the bootstrap.
        outlier_threshold: robust refit threshold (× median absolute deviation; ``inf``: none).
        stop: the stop condition of the sweep (e.g. ``Runs(20)``, or what ``--runs``,
            ``--target-cov``... build); None: ``ElapsedTime(max_time)``.
        warmup: runs of the program (at the first count) made first and left out of the fit.
        time_limit: hard limit in seconds on one sweep, whatever the stop condition.
    """

    max_time: float = 3.0
    threshold: float = 1e-3
    growth: float = 1.2
    min_points: int = 8
    max_points: int = 500
    max_iters: int = 10**12
    confidence: float = 0.95
    bootstrap: int = 2000
    seed: int | None = 0
    outlier_threshold: float = DEFAULT_OUTLIER_THRESHOLD
    stop: StopCondition | None = None
    warmup: int = 0
    time_limit: float = 600.0

    def __post_init__(self) -> None:
        if not self.max_time > 0:
            raise ConfigurationError(f"--max-time must be positive, got {self.max_time}")
        if not self.threshold >= 0:
            raise ConfigurationError(f"--threshold must not be negative, got {self.threshold}")
        if not self.growth > 1:
            raise ConfigurationError(f"growth factor must exceed 1, got {self.growth}")
        if self.min_points < 3:
            raise ConfigurationError(f"--min-points must be at least 3, got {self.min_points}")
        if self.max_points < self.min_points:
            raise ConfigurationError("--max-points must be at least --min-points")
        if self.bootstrap < 0:
            raise ConfigurationError(f"--bootstrap must not be negative, got {self.bootstrap}")
        check_confidence(self.confidence)
        if self.warmup < 0:
            raise ConfigurationError(f"--warmup must not be negative, got {self.warmup}")
        if not self.time_limit > 0:
            raise ConfigurationError(f"--time-limit must be positive, got {self.time_limit}")

    def stop_condition(self) -> StopCondition:
        """``stop``, or the time budget ``ElapsedTime(max_time)``."""
        return self.stop if self.stop is not None else ElapsedTime(self.max_time)

    def loop_settings(self) -> LoopSettings:
        """The run loop's settings: the stop condition, not consulted before ``min_points``
        points; at most ``max_points`` points and ``time_limit`` seconds."""
        return LoopSettings(stop=self.stop_condition(), warmup=self.warmup,
                            min_runs=self.min_points, time_limit=self.time_limit,
                            max_runs=self.max_points)


def next_iters(current: int, batchtime: float, options: ItersOptions,
               budget_left: float | None = None) -> int:
    """The count after ``current``: doubled while BATCHTIME is under the threshold, else
    ``floor(current × growth) + 1`` (Criterion's geometric schedule).

    ``budget_left`` (seconds of the budget not yet spent) bounds the growth by what the
    program's own BATCHTIME says the budget allows: the next count's predicted BATCHTIME
    (``batchtime / current`` per iteration) stays within it (the last count may be smaller
    than the one before); once the budget is spent (points still under ``min_points``) the
    count grows by one, so that the points keep distinct counts. A
    program whose BATCHTIME is tiny against its run time (start-up outside the timed region)
    otherwise doubles on to ``max_iters`` (issue 27 item 2)."""
    if batchtime < options.threshold:
        grown = min(current * 2, options.max_iters)
    else:
        grown = min(int(current * options.growth) + 1, options.max_iters)
    if budget_left is not None and batchtime > 0:
        if budget_left <= 0:  # points under min_points, past the budget: distinct counts
            return min(current + 1, options.max_iters)
        allowed = budget_left / (batchtime / current)
        grown = max(1, min(grown, int(allowed)))
    return grown


#: a sweep whose BATCHTIMEs add up to less than this share of its programs' run time is
#: reported: most of each run is outside the timed region
BATCHTIME_SHARE_FLOOR = 0.05
#: BATCHTIME longer than the whole process by more than this share (and 1 ms) is reported
BATCHTIME_OVER_RUN = 0.01


def batchtime_agreement(case: CaseResult) -> str | None:
    """One line when the program's BATCHTIME and its run time (the whole process's wall time)
    disagree, None when they agree: BATCHTIME longer than the process that printed it (its
    clock or unit is wrong), or all BATCHTIMEs together a small share of the run time (a
    start-up or set-up outside the timed region: the budget goes there, and only BATCHTIME
    sets the counts)."""
    pairs = [(b, w, i) for b, w, i in zip(case.values("batchtime"), case.values("process_time"),
                                          case.values("iters"))
             if b is not None and w is not None and math.isfinite(b) and math.isfinite(w)]
    if not pairs:
        return None
    over = [(b, w, i) for b, w, i in pairs if b > w * (1 + BATCHTIME_OVER_RUN) + 1e-3]
    if over:
        b, w, i = max(over, key=lambda p: p[0] / max(p[1], 1e-12))
        return (f"BATCHTIME is longer than the program's whole run at {len(over)} of "
                f"{len(pairs)} points (iters {int(i)}: {b:.3g} s > {w:.3g} s): the program's "
                "clock or unit is wrong")
    batch, run = sum(p[0] for p in pairs), sum(p[1] for p in pairs)
    if run > 0 and batch < BATCHTIME_SHARE_FLOOR * run:
        return (f"BATCHTIME is {100 * batch / run:.2g}% of the program's run time "
                f"({batch:.3g} s of {run:.3g} s): most of each run is outside the timed "
                "region (start-up or set-up); the counts follow BATCHTIME, the budget is "
                "spent on the rest")
    return None


class ItersExecutor(Executor):
    """One run of a protocol program at the current count; the count follows the sweep's
    schedule (:func:`next_iters`) from one measured run to the next (warm-up runs stay at the
    first count). A timeout, a non-zero exit status or output that breaks the protocol is a
    failed run, which ends the sweep."""

    def __init__(self, command: Command, runner: CommandRunner, options: ItersOptions,
                 values: dict[str, Any] | None = None) -> None:
        self.command = command
        self.runner = runner
        self.options = options
        self.values = dict(values or {})
        self.iters = 1
        #: the loop's state (set once the loop exists): the time spent, for the hard limit
        self.state: RunState | None = None

    def run_timeout(self) -> tuple[float | None, bool]:
        """The timeout of the next run, and whether it is what is left of the hard time limit
        (shorter than the runner's ``--timeout``): a program that never ends is killed there."""
        user = getattr(self.runner, "timeout", None)
        spent = self.state.elapsed if self.state is not None else 0.0
        left = max(self.options.time_limit - spent, 1e-3)
        if user is not None and user <= left:
            return user, False
        return left, True

    def budget_left(self) -> float:
        """Seconds left of the budget (``max_time`` when it is the stop condition, the hard
        time limit otherwise), for :func:`next_iters`."""
        o = self.options
        budget = o.max_time if o.stop is None else o.time_limit
        spent = self.state.elapsed if self.state is not None else 0.0
        return min(budget, o.time_limit) - spent

    def prepare(self) -> None:
        self.runner.resolve(iters_argv(self.command, 1, self.values))

    def sample(self, warmup: bool = False) -> Sample:
        iters = self.iters
        argv = self.runner.resolve(iters_argv(self.command, iters, self.values))
        timeout, at_limit = self.run_timeout()
        # the runner applies its own --timeout; only a shorter one is passed
        run = self.runner.run(argv, timeout=timeout) if at_limit else self.runner.run(argv)
        row: dict[str, float | None] = {
            "iters": float(iters), "process_time": run.wall_ns / 1e9,
            "user_time": run.user_time, "sys_time": run.sys_time,
            "max_rss": None if run.max_rss is None else float(run.max_rss),
        }
        where = _describe(self.command.text, iters)
        if run.timed_out:
            if at_limit:
                return Sample.failed(f"{where}: still running at the hard time limit of "
                                     f"{self.options.time_limit:g} s (process group killed)",
                                     row)
            return Sample.failed(f"{where}: timed out after {timeout:g} s (process group "
                                 "killed)", row)
        if not run.ok:
            tail = run.stderr_excerpt(max_lines=3)
            return Sample.failed(f"{where}: {run.describe_failure()}"
                                 + (f"; stderr: {tail}" if tail else ""), row)
        try:
            out = parse_iters_output(run.stdout or "", self.command.text, iters)
        except ProtocolError as exc:
            return Sample.failed(str(exc), row)
        row.update(batchtime=out.batchtime, selftimed=out.selftimed)
        if not warmup:
            self.iters = next_iters(iters, out.batchtime, self.options,
                                    self.budget_left() - run.wall_ns / 1e9)
        # wall_time = BATCHTIME / iters
        return Sample(out.batchtime * 1e9, iters, row)

    def on_failure(self, failure: RunFailure) -> OnFailure:
        return OnFailure.STOP


def sweep_iters(command: Command, runner: CommandRunner, options: ItersOptions,
                values: dict[str, Any] | None = None, case: CaseResult | None = None,
                progress: ProgressCallback | None = None,
                before_run: Callable[[], None] | None = None,
                after_run: Callable[[], None] | None = None) -> CaseResult:
    """Run the sweep for one command (and parameter ``values``); return the raw case.

    Every point becomes one run of the case (``iters``, ``batchtime``, ``selftimed``, the
    process's own wall time and resource usage; ``wall_time`` = BATCHTIME/iters). The sweep
    goes on until the stop condition of ``options`` holds (after at least ``min_points``
    points) or a hard limit is reached. A run that fails or breaks the protocol ends the sweep:
    it is recorded as a failed run and its message in ``case.errors`` (the points so far are
    kept). ``before_run`` and ``after_run`` (machine countermeasures) are called around every
    run, ``progress``
    with (case, state) as in every run loop. Ctrl-C marks the case interrupted and re-raises.
    Call :func:`finish_iters_case` after.
    """
    values = dict(values or {})
    if case is None:
        case = CaseResult(benchmark=command.name, implementation=command.name,
                          params=dict(values), method="iters")
    case.units.update(ITERS_UNITS)
    case.extra["command"] = command.text
    runner.resolve(iters_argv(command, 1, values))  # fails at once on a bad command
    case.extra["iters_position"] = ("placeholder {iters}" if "iters" in command.placeholders()
                                    else "first argument")
    executor = ItersExecutor(command, runner, options, values)
    actions = [FunctionAction(lambda ctx: before_run())] if before_run is not None else []
    after = [FunctionAction(lambda ctx: after_run())] if after_run is not None else []
    loop = RunLoop(executor, case, options.loop_settings(), clock=runner.clock,
                   before_run=actions, after_run=after, progress=progress)
    executor.state = loop.state
    try:
        loop.run()
    finally:
        case.extra["time_spent"] = loop.state.elapsed
    return case


# ---------------------------------------------------------------------------- the fit
def _hc3(dx: np.ndarray, sxx: np.ndarray, resid: np.ndarray, lev: np.ndarray) -> np.ndarray:
    """HC3 standard error of the least-squares slope (MacKinnon & White 1985): each residual
    inflated by 1/(1 − h_i), its leverage."""
    return np.sqrt(np.sum((dx * resid / (1.0 - lev)) ** 2, axis=-1)) / sxx


def bootstrap_slope_ci(x: Sequence[float], y: Sequence[float], confidence: float = 0.95,
                       resamples: int = 2000, seed: int | None = 0) -> tuple[float, float] | None:
    """Wild bootstrap-t interval of the least-squares slope (Davidson & Flachaire, "The wild
    bootstrap, tamed at last", J. Econometrics 2008; Wu 1986).

    BATCHTIME's noise grows with the count, so the Student-t interval (equal noise) and the
    pairs bootstrap's percentile interval (it covered 82–92 % at a nominal 95 % on 8–10
    points, issue 25 item 7) both run short. Here the fit stays at the observed counts; each
    resample is y* = ŷ + v_i·e_i/(1 − h_i) with Rademacher signs v_i, and the slope is
    studentized by its HC3 standard error (:func:`_hc3`) in the original fit and in every
    resample: the interval is [b − q_{1−α/2}·se, b − q_{α/2}·se], q the quantiles of
    (b* − b)/se*. None with fewer than 3 points or without resamples.
    """
    xa = np.asarray(x, dtype=float)
    ya = np.asarray(y, dtype=float)
    n = xa.size
    if n < 3 or resamples <= 0:
        return None
    dx = xa - xa.mean()
    sxx = float(dx @ dx)
    if sxx <= 0:
        return None
    slope = float(dx @ (ya - ya.mean())) / sxx
    fitted = ya.mean() + slope * dx
    resid = ya - fitted
    lev = np.minimum(1.0 / n + dx * dx / sxx, 1.0 - 1e-9)
    se = float(_hc3(dx, sxx, resid, lev))
    if not se > 0:
        return slope, slope
    rng = np.random.default_rng(seed)
    stats_t = []
    chunk = 1000
    for start in range(0, resamples, chunk):
        v = rng.choice((-1.0, 1.0), size=(min(chunk, resamples - start), n))
        ys = fitted + v * resid / (1.0 - lev)
        b = (ys - ys.mean(axis=1, keepdims=True)) @ dx / sxx
        r = ys - ys.mean(axis=1, keepdims=True) - b[:, None] * dx
        se_b = _hc3(dx, sxx, r, lev)
        good = se_b > 0
        stats_t.append((b[good] - slope) / se_b[good])
    t = np.concatenate(stats_t)
    if t.size < 10:
        return None
    alpha = 1.0 - confidence
    q_lo, q_hi = np.quantile(t, [alpha / 2, 1 - alpha / 2])
    # never narrower than the HC3 t-interval with n − 2 df (Long & Ervin 2000): with few
    # points the Rademacher distribution has few distinct values and runs short
    from ..stats.student import t_quantile

    q = t_quantile(1 - alpha / 2, n - 2)
    q_lo, q_hi = min(q_lo, -q), max(q_hi, q)
    return float(slope - q_hi * se), float(slope - q_lo * se)


def fit_iters(iters: Sequence[float], batchtime: Sequence[float], confidence: float = 0.95,
              bootstrap: int = 2000, seed: int | None = 0,
              outlier_threshold: float = DEFAULT_OUTLIER_THRESHOLD) -> dict[str, Any]:
    """The fit of ``004``: BATCHTIME on iters, the robust fit of ``002`` §4.1 (the one
    :func:`~steadybench.stats.regression.robust_fit` that ``linefit`` and ``initsplit`` use),
    wild bootstrap-t CI, log-log variant.

    Returns the plain-JSON structure stored in ``case.extra["fit"]`` (see the module docs):
    ``slope`` and ``intercept`` in seconds, ``slope_ci`` (wild bootstrap-t interval, or the
    Student-t one when the bootstrap cannot run), ``slope_ci_t``, ``r2``, ``residual_std``,
    ``dropped`` indices and the ``loglog`` fit of the kept points.
    """
    x = np.asarray(iters, dtype=float)
    y = np.asarray(batchtime, dtype=float)
    record, robust = fit_record("iters", x.tolist(), y.tolist(), confidence,
                                outlier_threshold, x_label="iters",
                                order=list(range(x.size)))
    fit = robust.fit
    kept = np.asarray(robust.kept, dtype=int)
    boot = bootstrap_slope_ci(x[kept], y[kept], confidence, bootstrap, seed)
    slope_ci = list(boot) if boot else [fit.slope_ci[0], fit.slope_ci[1]]
    method = "wild bootstrap-t (Rademacher, HC3)" if boot else "student-t"
    bounds = robust.slope_bounds()
    if bounds is not None:
        # Not one line: the interval of the kept points looks more precise than the data are.
        slope_ci = [min(slope_ci[0], bounds[0]), max(slope_ci[1], bounds[1])]
        method += (", widened to the slopes of the other readings of the points (they are not "
                   "straight)")
    record.update(
        y_label="BATCHTIME (s)",
        slope_ci=slope_ci,
        slope_ci_method=method,
        slope_ci_t=[fit.slope_ci[0], fit.slope_ci[1]],
        bootstrap_resamples=bootstrap if boot else 0,
        n=fit.n,
    )
    return record


def per_iteration_stddev(fit: dict[str, Any], threshold: float) -> float | None:
    """Spread of the per-iteration time: sample standard deviation of
    ``(BATCHTIME − intercept) / iters`` over the kept points whose BATCHTIME reached
    ``threshold`` (where the intercept's share, and the noise divided by a small count, are
    small); over all kept points when fewer than two reached it."""
    dropped = set(fit["dropped"])
    pts = [(x, y) for i, (x, y) in enumerate(zip(fit["x"], fit["y"])) if i not in dropped]
    big = [(x, y) for x, y in pts if y >= threshold]
    use = big if len(big) >= 2 else pts
    if len(use) < 2:
        return None
    per = [(y - fit["intercept"]) / x for x, y in use]
    return float(np.std(per, ddof=1))


class ItersMethod(Method):
    """The ``finish`` hook that turns a case of ITERS points into the slope estimate."""

    name = "iters"

    def __init__(self, options: ItersOptions) -> None:
        self.opts = options

    def finish(self, case: CaseResult) -> None:
        case.method = self.name
        case.estimate = build_estimate(case, self.estimate(case), self.name)

    def estimate(self, case: CaseResult) -> dict[str, Any]:
        """The slope of BATCHTIME on iters and its interval (the method's own figures; fills
        ``case.extra["fit"]``)."""
        x = case.values("iters")
        y = case.values("batchtime")
        if len(x) < 3 or len(set(x)) < 2:
            if not case.errors:
                case.warnings.append(f"only {len(x)} ITERS point(s): no fit")
            return {"value": None, "confidence": self.opts.confidence, "statistic": "slope",
                    "error": f"only {len(x)} ITERS point(s): no fit", "points": len(x)}
        try:
            fit = fit_iters(x, y, self.opts.confidence, self.opts.bootstrap, self.opts.seed,
                            self.opts.outlier_threshold)
        except MeasurementError as exc:
            case.errors.append(f"fit failed: {exc}")
            return {"value": None, "confidence": self.opts.confidence, "statistic": "slope",
                    "error": f"fit failed: {exc}", "points": len(x)}
        fit["stddev"] = per_iteration_stddev(fit, self.opts.threshold)
        case.extra["fit"] = fit
        if fit["dropped"]:
            case.warnings.append(
                f"robust fit dropped {len(fit['dropped'])} point(s) far off the line (more than "
                f"{fit['threshold']:g} × the median absolute deviation from the final line: "
                f"iters {[int(x[i]) for i in fit['dropped']]})")
        for reason in fit.get("warnings") or ():
            case.warnings.append(f"{reason}; the slope is uncertain (see the fit plot)")
        if not slope_is_positive(fit["slope"], x, y):
            # Never publish a non-positive time as the cost of an iteration (issue 3's rule for
            # every fit); the points stay in extra["fit"] so the plot shows what happened.
            message = (
                f"{case.extra.get('command', case.benchmark)}: the fitted time per iteration is "
                f"not positive ({fit['slope']:.3g} s): BATCHTIME does not grow with iters — check "
                "that the program runs its workload ITERS times, or raise --max-time or the work "
                "per iteration")
            case.errors.append(message)
            return {"value": None, "confidence": self.opts.confidence, "statistic": "slope",
                    "error": message, "slope": fit["slope"], "intercept": fit["intercept"],
                    "points": len(x)}
        return {
            "value": fit["slope"],
            "ci_low": fit["slope_ci"][0],
            "ci_high": fit["slope_ci"][1],
            "confidence": fit["confidence"],
            "statistic": "slope",
            "slope": fit["slope"],
            "intercept": fit["intercept"],
            "intercept_ci": fit["intercept_ci"],
            "r2": fit["r2"],
            "residual_std": fit["residual_std"],
            "ci_method": fit["slope_ci_method"],
            "points": len(x),
            "dropped": len(fit["dropped"]),
            "straight": fit["straight"],
        }

    def options(self) -> dict[str, Any]:
        o = self.opts
        return {"max_time": o.max_time, "threshold": o.threshold, "growth": o.growth,
                "min_points": o.min_points, "max_points": o.max_points,
                "bootstrap": o.bootstrap, "outlier_threshold": o.outlier_threshold,
                "stop": o.stop_condition().describe(), "warmup": o.warmup,
                "time_limit": o.time_limit}


def finish_iters_case(case: CaseResult, options: ItersOptions) -> CaseResult:
    """Summary statistics of the per-point times, then the fit (``finalize_case``)."""
    case.extra["iters_options"] = ItersMethod(options).options()
    disagreement = batchtime_agreement(case)
    if disagreement and disagreement not in case.warnings:
        case.warnings.append(disagreement)
    return finalize_case(case, (), ItersMethod(options), options.confidence)
