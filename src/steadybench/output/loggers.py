"""Loggers (Rancid's ResultsLogger, §V-A): output results as they are produced.

A logger is told when the session starts, when each case starts and ends, how a running case
progresses, when a benchmark is complete and when everything is finished. The console logger
shows a live rich progress bar per case and a summary table at the end; the file loggers write
JSON, XML, CSV or Markdown at the end (atomically, and also after Ctrl-C, with what was done).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.progress import (
    BarColumn,
    Progress,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
)
from rich.table import Table

from ..model.results import CaseResult, Results
from .console import console_text, make_console
from .format import (
    UNDEFINED,
    case_estimate,
    confidence_text,
    estimate_ci_text,
    estimate_unit,
    estimate_value_text,
    format_params,
    format_percent,
    format_value,
)


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
        from .files import WRITERS

        if fmt not in WRITERS:
            raise ValueError(f"unknown format {fmt!r}; known: {', '.join(WRITERS)}")
        self.path = path
        self.fmt = fmt

    def finish(self, results: Results) -> None:
        from .files import WRITERS

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


def summary_table(cases: Sequence[CaseResult], title: str | None = None) -> Table:
    """The human-readable summary: one row per case. ``estimate`` and ``CI`` are the case's
    :class:`~steadybench.model.estimate.Estimate` (the figure every output shows); ``median``,
    ``CoV`` and ``min`` describe the samples."""
    table = Table(title=title, header_style="bold", title_justify="left")
    table.add_column("benchmark", overflow="fold", ratio=1)
    for name in ("n", "estimate", "CI", "conf.", "median", "CoV", "min"):
        table.add_column(name, justify="right", no_wrap=True)
    table.add_column("status", overflow="fold")
    for case in cases:
        stats = case.stats
        est = case_estimate(case)
        unit = estimate_unit(case)
        table.add_row(
            console_text(case.label),
            str(case.n),
            estimate_value_text(est),
            estimate_ci_text(est),
            confidence_text(est),
            format_value(stats.get("median"), unit),
            format_percent(stats.get("cov")),
            format_value(stats.get("min"), unit),
            status_markup(case),
        )
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
    """Live view: a progress bar per case, then a summary table and the warnings."""

    def __init__(self, console: Console | None = None, live: bool = True) -> None:
        self.console = console or make_console(stderr=True)
        self.live = live and self.console.is_terminal
        self._progress: Progress | None = None
        self._task: Any = None

    def start(self, results: Results, total_cases: int) -> None:
        self.console.print(f"[bold]{console_text(results.suite)}[/bold]: {total_cases} case(s)")
        if self.live:
            self._progress = Progress(
                SpinnerColumn(),
                TextColumn("{task.description}"),
                BarColumn(),
                TextColumn("{task.fields[runs]} runs"),
                TimeElapsedColumn(),
                console=self.console,
                transient=True,
            )
            self._progress.start()

    def case_start(self, benchmark: str, implementation: str, params: dict[str, Any]) -> None:
        label = benchmark if implementation == benchmark else f"{benchmark} / {implementation}"
        if params:
            label += f" [{format_params(params)}]"
        if self._progress is not None:
            self._task = self._progress.add_task(console_text(label), total=None, runs=0)
        else:
            self._label = label

    def progress(self, case: CaseResult, state: Any) -> None:
        if self._progress is not None and self._task is not None:
            self._progress.update(self._task, runs=state.runs)

    def case_end(self, case: CaseResult) -> None:
        if self._progress is not None and self._task is not None:
            self._progress.remove_task(self._task)
            self._task = None
        self.console.print(case_line(case))

    def finish(self, results: Results) -> None:
        if self._progress is not None:
            self._progress.stop()
            self._progress = None
        if results.cases:
            self.console.print(summary_table(results.cases))
        for case in results.cases:
            for warning in case.warnings:
                self.console.print(
                    f"[yellow]warning[/yellow] {console_text(case.label)}: {console_text(warning)}"
                )
        if results.interrupted:
            self.console.print("[yellow]interrupted: partial results[/yellow]")
