"""Loggers (Rancid's ResultsLogger, §V-A): output results as they are produced.

A logger is told when the session starts, when each case starts and ends, how a running case
progresses, when a benchmark is complete and when everything is finished. The console logger
shows a live rich progress bar per case and a summary table at the end; the file loggers write
JSON, XML, CSV or Markdown at the end (atomically, and also after Ctrl-C, with what was done).
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.progress import (
    Progress,
    SpinnerColumn,
    TextColumn,
)
from rich.table import Table

from ..model.execution import execution_values
from ..model.results import CaseResult, Results
from .console import console_text, make_console, print_indented
from .format import (
    UNDEFINED,
    case_estimate,
    confidence_text,
    estimate_ci_text,
    estimate_unit,
    estimate_value_text,
    format_bytes,
    format_params,
    format_percent,
    format_value,
)
from .tables import Column, TableSpec


class Logger:
    """Base class; every hook is optional."""

    def start(self, results: Results, total_cases: int) -> None:
        """The session starts; ``total_cases`` cases will run."""

    def case_start(self, benchmark: str, implementation: str, params: dict[str, Any]) -> None:
        """A case starts."""

    def progress(self, case: CaseResult, state: Any) -> None:
        """A running case made progress (called at most about ten times a second)."""

    def case_end(self, case: CaseResult) -> None:
        """A case finished and its online processors ran."""

    def benchmark_end(self, benchmark: str, cases: Sequence[CaseResult]) -> None:
        """All cases of a benchmark finished and the global processors ran."""

    def finish(self, results: Results) -> None:
        """Everything finished (or was interrupted: ``results.interrupted``)."""


class FileLogger(Logger):
    """Writes the whole Results to ``path`` at the end with ``writer`` (see output.files)."""

    def __init__(self, path: str | os.PathLike[str], fmt: str) -> None:
        from .writers import WRITERS

        if fmt not in WRITERS:
            raise ValueError(f"unknown format {fmt!r}; known: {', '.join(WRITERS)}")
        self.path = path
        self.fmt = fmt

    def finish(self, results: Results) -> None:
        from .writers import WRITERS

        WRITERS[self.fmt](results, self.path)


def JsonLogger(path: str | os.PathLike[str]) -> FileLogger:  # noqa: N802 - reads like a class
    return FileLogger(path, "json")


def XmlLogger(path: str | os.PathLike[str]) -> FileLogger:  # noqa: N802
    return FileLogger(path, "xml")


def CsvLogger(path: str | os.PathLike[str]) -> FileLogger:  # noqa: N802
    return FileLogger(path, "csv")


def MarkdownLogger(path: str | os.PathLike[str]) -> FileLogger:  # noqa: N802
    return FileLogger(path, "markdown")


def status_markup(case: CaseResult) -> str:
    """The status cell of a summary table (rich markup; user text escaped, control characters
    shown)."""
    if case.errors:
        return f"[red]FAILED[/red] {console_text(case.errors[0])}"
    if case.interrupted:
        return "[yellow]interrupted[/yellow]"
    if case.stop_reason.startswith("hard limit"):
        return f"[yellow]{console_text(case.stop_reason)}[/yellow]"
    return "ok"


#: columns of a statistic that a parameter of the same name must not be confused with
STATISTIC_COLUMNS = ("n", "estimate", "CI", "conf.", "CoV", "min", "status")


def summary_spec(cases: Sequence[CaseResult], title: str | None = None) -> TableSpec:
    """The human-readable summary: one row per case. ``estimate`` and ``CI`` are the case's
    :class:`~steadybench.model.estimate.Estimate` (the figure every output shows); ``CoV`` is
    the spread that interval rests on, the one "may be unstable" judges (between executions,
    or the runs of one execution: :func:`~steadybench.methods.base.headline_spread`), not the
    pooled runs' CoV beside an interval across executions; ``min`` is the fastest run. The
    pooled median is not shown beside the estimate (a second median that disagrees with it).
    ``n`` is the column of measured runs; a parameter called ``n`` stays inside the name's
    brackets (``[n=100]``), never in that column. At 80 columns, ``conf.``, ``min`` and
    ``CoV`` are left out first."""
    from ..methods.base import headline_spread

    spec = TableSpec([Column("benchmark", justify="left"), Column("runs"),
                      Column("estimate"), Column("CI"), Column("conf.", drop=4),
                      Column("CoV", drop=2),
                      Column("min", drop=3), Column("status", justify="left", wrap=True)],
                     title=title)
    from .rates import rates_text

    with_rates = any((c.extra or {}).get("throughput") for c in cases)
    if with_rates:  # Google Benchmark's items/s, bytes/s, after the estimate they come from
        spec.columns.insert(4, Column("rate"))
    # run --track-memory: the median of the runs' peak Python heap
    with_memory = any(c.values("peak_memory") for c in cases)
    if with_memory:
        spec.columns.insert(len(spec.columns) - 1, Column("peak mem"))
    for case in cases:
        stats = case.stats
        est = case_estimate(case)
        unit = estimate_unit(case)
        row = [
            console_text(case.label),
            str(case.n),
            estimate_value_text(est),
            estimate_ci_text(est),
            confidence_text(est),
            format_percent(headline_spread(est)),
            format_value(stats.get("min"), unit),
            status_markup(case),
        ]
        if with_rates:
            row.insert(4, rates_text(case))
        if with_memory:
            row.insert(-1, format_bytes(_median(case.values("peak_memory"))))
        spec.add_row(*row)
    return spec


def _median(values: Sequence[float]) -> float | None:
    import statistics

    return statistics.median(values) if values else None


def summary_table(cases: Sequence[CaseResult], title: str | None = None) -> Table:
    """:func:`summary_spec` as a rich Table with every column (for callers that lay it out
    themselves)."""
    spec = summary_spec(cases, title)
    table = Table(title=title, header_style="bold", title_justify="left")
    for col in spec.columns:
        table.add_column(col.header, justify=col.justify, overflow="fold")
    for row in spec.rows:
        table.add_row(*row)
    return table


def case_line(case: CaseResult) -> str:
    """The line printed when a case ends (rich markup): its status, runs and estimate."""
    status = f"[red]failed: {console_text(case.errors[0])}[/red]" if case.errors else "done"
    est = case_estimate(case)
    what = (est.statistic or est.method) if est is not None else case.method
    ci, level = estimate_ci_text(est), confidence_text(est)
    if ci != UNDEFINED and level != UNDEFINED:
        ci += f" ({level} CI)"
    return (f"  {console_text(case.label)}: {status}, n={case.n}, {console_text(what)} "
            f"{estimate_value_text(est)} {ci}  [dim]({console_text(case.stop_reason)})[/dim]")


class ConsoleLogger(Logger):
    """Live view on the log console (stderr): case k of N, the current estimate and an ETA,
    then one line per finished case. The results go to the output console (stdout): the
    summary table in ``style`` and the relative summary of every group of variants.

    Off a terminal the live bar is replaced by the plain per-case lines. With ``console`` alone
    (tests, embedding) everything goes to that console.

    ``case_budget`` is the expected seconds per case (the stop rule's time budget, times the
    executions); the ETA uses it until cases have finished, then the mean time of the finished
    cases.
    """

    def __init__(self, console: Console | None = None, live: bool = True,
                 out: Console | None = None, style: str = "table",
                 case_budget: float | None = None) -> None:
        self.console = console or make_console(stderr=True)
        self.out = out or (console if console is not None else make_console())
        self.style = style
        self.live = live and self.console.is_terminal
        self.case_budget = case_budget
        self._progress: Progress | None = None
        self._task: Any = None
        self._total = 0
        self._done = 0
        self._started = 0.0
        self._case_started = 0.0
        self._confidence = 0.95

    def start(self, results: Results, total_cases: int) -> None:
        self._total = total_cases
        self._started = time.monotonic()
        self.console.print(f"[bold]{console_text(results.suite)}[/bold]: {total_cases} case(s)")
        if self.live:
            self._progress = Progress(
                SpinnerColumn(),
                TextColumn("{task.description}"),
                TextColumn("{task.fields[runs]} runs"),
                TextColumn("{task.fields[estimate]}"),
                TextColumn("[dim]{task.fields[eta]}[/dim]"),
                console=self.console,
                transient=True,
            )
            self._progress.start()

    def eta(self, case_elapsed: float) -> float | None:
        """Seconds left for the whole session: the cases still to run at the mean time of the
        finished ones (or the budget before any finished), plus what is left of this one."""
        per_case = ((time.monotonic() - self._started - case_elapsed) / self._done
                    if self._done else self.case_budget)
        if per_case is None:
            return None
        after = max(self._total - self._done - 1, 0)
        return max(per_case - case_elapsed, 0.0) + after * per_case

    def case_start(self, benchmark: str, implementation: str, params: dict[str, Any]) -> None:
        label = benchmark if implementation == benchmark else f"{benchmark} {implementation}"
        if params:
            label += f" [{format_params(params)}]"
        self._case_started = time.monotonic()
        position = f"case {self._done + 1} of {self._total}"
        if self._progress is not None:
            eta = self.eta(0.0)
            self._task = self._progress.add_task(
                f"{position}: {console_text(label)}", total=None, runs=0, estimate="",
                eta=f"ETA {eta_text(eta)}" if eta is not None else "")
        self._label = f"{position}: {label}"

    def progress(self, case: CaseResult, state: Any) -> None:
        if self._progress is not None and self._task is not None:
            eta = self.eta(time.monotonic() - self._case_started)
            self._progress.update(self._task, runs=state.runs, estimate=running_estimate(case,
                                                                                       state),
                                  eta=f"ETA {eta_text(eta)}" if eta is not None else "")

    def case_end(self, case: CaseResult) -> None:
        if self._progress is not None and self._task is not None:
            self._progress.remove_task(self._task)
            self._task = None
        self._done += 1
        position = f" [dim]· case {self._done} of {self._total}[/dim]" if self._total else ""
        self.console.print(case_line(case) + position)

    def finish(self, results: Results) -> None:
        from .groups import comparison_text
        from .tables import render

        if self._progress is not None:
            self._progress.stop()
            self._progress = None
        if results.cases:
            render(summary_spec(results.cases), self.out, self.style)
            for line in comparison_text(results.cases, self._confidence_of(results)):
                print_indented(self.out, line)
        from .warning_groups import grouped

        said = grouped([(case.label, w) for case in results.cases for w in case.warnings])
        for group in said:  # the same warning for several cases is said once
            self.console.print(f"[yellow]warning[/yellow] "
                               f"{console_text(group.subject(len(results.cases)))}: "
                               f"{console_text(group.text)}")
        if results.interrupted:
            self.console.print("[yellow]interrupted: partial results[/yellow]")

    @staticmethod
    def _confidence_of(results: Results) -> float:
        for case in results.cases:
            est = case_estimate(case)
            if est is not None and est.confidence:
                return float(est.confidence)
        return 0.95


def eta_text(seconds: float | None) -> str:
    """``75`` → ``"1 min 15 s"``; the dash when unknown."""
    if seconds is None:
        return UNDEFINED
    seconds = int(round(seconds))
    if seconds < 60:
        return f"{seconds} s"
    minutes, sec = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes} min {sec:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


def running_estimate(case: CaseResult, state: Any) -> str:
    """The current estimate of a running case: the runner's value so far (worker processes:
    the median of the finished executions), else the mean of the runs so far (in-process)."""
    import statistics

    so_far = getattr(state, "estimate", None)
    if so_far is not None:
        return f"≈ {format_value(so_far, estimate_unit(case))}"
    values = execution_values(case.processes)
    if values:
        return f"≈ {format_value(statistics.median(values), estimate_unit(case))}"
    stream = getattr(state, "stream", None)
    if stream is not None and getattr(stream, "n", 0):
        return f"≈ {format_value(stream.mean, estimate_unit(case))}"
    return ""
