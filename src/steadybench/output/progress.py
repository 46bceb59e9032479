"""Progress of interleaved jobs (``exec``): runs so far, the current estimate and an ETA.

On a terminal one transient status line is redrawn (rich); off a terminal a plain line is
printed at most every :data:`PLAIN_INTERVAL` seconds, so a CI log shows that the command is
alive without filling up. The ETA of a job is its budget left: the runs it still needs at its
mean run time, or the time it still needs (``--min-time``), whichever is larger; jobs run one
at a time (interleaved), so the session's ETA is the sum over the jobs.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

#: seconds between two plain progress lines off a terminal
PLAIN_INTERVAL = 10.0


@dataclass(frozen=True)
class Budget:
    """What a job needs before its stop rule can end it: ``runs`` measured runs and ``seconds``
    of its own time (either may be 0)."""

    runs: int = 0
    seconds: float = 0.0

    def left(self, runs: int, elapsed: float) -> float | None:
        """Seconds this job still needs (None before its first run, when its run time is
        unknown and runs are still needed)."""
        need_time = max(self.seconds - elapsed, 0.0)
        if runs >= self.runs:
            return need_time
        if runs == 0:
            return None if self.runs else need_time
        per_run = elapsed / runs
        return max(need_time, (self.runs - runs) * per_run)


class JobsProgress:
    """The progress callback of a session of ``total`` jobs, each with ``budget``."""

    def __init__(self, console: Any, total: int, budget: Budget,
                 describe: Callable[[Any], str] = lambda case: "",
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.console = console
        self.total = total
        self.budget = budget
        self.describe = describe
        self.clock = clock
        self._jobs: dict[int, tuple[str, int, float]] = {}
        self._status: Any = None
        self._last_plain = clock()

    def __call__(self, case: Any, state: Any) -> None:
        self._jobs[id(case)] = (case.label, int(state.runs), float(state.elapsed))
        line = self.line(case, state)
        if self.console.is_terminal:
            if self._status is None:
                self._status = self.console.status(line)
                self._status.start()
            else:
                self._status.update(line)
        elif self.clock() - self._last_plain >= PLAIN_INTERVAL:
            self._last_plain = self.clock()
            self.console.print(line, highlight=False)

    def eta(self) -> float | None:
        """Seconds left for every job: the jobs not started yet count with the budget's time
        (or with the mean of the started ones' per-run time)."""
        lefts = [self.budget.left(runs, elapsed) for _, runs, elapsed in self._jobs.values()]
        if any(v is None for v in lefts):
            return None
        started = len(self._jobs)
        total = sum(v for v in lefts if v is not None)
        if started < self.total:
            rates = [e / r for _, r, e in self._jobs.values() if r]
            per_run = sum(rates) / len(rates) if rates else 0.0
            per_job = max(self.budget.seconds, self.budget.runs * per_run)
            total += (self.total - started) * per_job
        return total

    def line(self, case: Any, state: Any) -> str:
        from .console import console_text
        from .loggers import eta_text

        runs = sum(r for _, r, _ in self._jobs.values())
        index = list(self._jobs).index(id(case)) + 1
        extra = self.describe(case)
        return (f"case {index} of {self.total}: {console_text(case.label)}, run {state.runs}"
                + (f", {extra}" if extra else "") + f" · {runs} runs in all · "
                f"ETA {eta_text(self.eta())}")

    def stop(self) -> None:
        if self._status is not None:
            self._status.stop()
            self._status = None
