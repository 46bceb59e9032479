"""What a backend is: the contract between the driver and a place where executions run.

A backend measures one execution of its cases per :meth:`Backend.execute` call. The driver
(:func:`steadybench.execution.driver.run_executions`) tells it, in an
:class:`ExecutionRequest`, which execution this is, how much of the case's hard time limit is
left, the per-run countermeasures (the before-run and after-run stages) and where to report
progress; the backend returns one :class:`Outcome` per case, and must

* stop the execution when the time left has passed (the raw case then says so, or ``error``
  does);
* on Ctrl-C (``KeyboardInterrupt``), stop the execution, keep what it measured, and return it
  with ``interrupt`` set instead of raising: the driver merges it and re-raises;
* contain whatever the measured code does (an exception, ``sys.exit``, a crash) in ``error`` or
  in the raw case's errors.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from ..model.execution import ProcessLayout, RunSpread

if TYPE_CHECKING:
    from ..model.results import CaseResult
    from ..runner.actions import Action


@dataclass(frozen=True)
class ExecutionRequest:
    """One execution the driver asks for.

    ``time_left`` is what remains of the case's hard time limit (seconds) when it starts;
    ``progress(runs)`` says how many measured runs the execution has made so far;
    ``before_run``/``after_run`` are the per-run countermeasures every run of it must get.
    """

    index: int
    planned: int
    time_left: float
    progress: Callable[[int], None] | None = None
    before_run: Sequence[Action] = ()
    after_run: Sequence[Action] = ()


@dataclass
class Outcome:
    """What one execution of one case gave, as the backend saw it (the driver turns it into
    the case's :class:`~steadybench.model.execution.Execution` record when merging)."""

    index: int
    #: the execution's raw case (its runs), None when it gave none (a crash, a kill)
    case: CaseResult | None = None
    #: the execution's calibrated method (it makes the execution's own estimate), if any
    method: Any = None
    error: str | None = None
    #: the user's traceback frames behind ``error``
    frames: list[str] = field(default_factory=list)
    interrupted: bool = False
    #: the Ctrl-C this execution received: the driver merges, then re-raises it
    interrupt: BaseException | None = None
    layout: ProcessLayout | None = None
    spread: RunSpread | None = None
    host: str | None = None
    counts: Mapping[str, float] | None = None
    #: measured runs seen so far (progress)
    runs_seen: int = 0

    @property
    def failed(self) -> bool:
        """The execution gave no successful run (later ones would most likely do the same)."""
        return self.case is None or self.case.n == 0


class Backend(Protocol):
    """A place where executions run (module docstring). ``isolation`` describes it in the
    case's ``extra["executions"]``; ``cases`` is how many cases one execution measures (one,
    or several interleaved commands for ``exec``)."""

    isolation: str

    @property
    def cases(self) -> int: ...

    def execute(self, request: ExecutionRequest) -> Sequence[Outcome]:
        """Run one execution; one outcome per case, in the order of the driver's cases."""
        ...
