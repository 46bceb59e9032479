"""Runner actions (Rancid §V-A, ModularBenchmarkRunner): code run at the four stages.

An action is called with the :class:`RunContext` of the case; :meth:`Action.close` is called once
when the case ends, on every exit path, so actions that change something (a file, the
machine) put it back there. The provided actions are Rancid's: print, sleep, warm-up,
cool-down, file write, composite and conditional. Write your own by subclassing
:class:`Action` or by passing any ``callable(ctx)``.
"""

from __future__ import annotations

import contextlib
import enum
import math
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from ..errors import ConfigurationError

if TYPE_CHECKING:
    from ..model.implementation import Implementation
    from ..model.parameters import Parameters
    from ..model.results import CaseResult
    from .stop import RunState


class Stage(enum.Enum):
    """When an action runs: Rancid's four stages of a runner (§V-A)."""

    BEFORE_BENCHMARK = "before_benchmark"
    BEFORE_RUN = "before_run"
    AFTER_RUN = "after_run"
    AFTER_BENCHMARK = "after_benchmark"


@dataclass
class RunContext:
    """What an action can see and use.

    ``implementation`` is None when the measured code is an external command (``exec``,
    ``iters``), which has no in-process implementation.
    """

    implementation: Implementation | None
    params: Parameters
    case: CaseResult
    state: RunState
    clock: Callable[[], int]
    sleep: Callable[[float], None]
    run_index: int = -1  # -1 before the first run
    warmup: bool = False
    notes: dict[str, Any] = field(default_factory=dict)

    def now(self) -> float:
        """Seconds on the runner's clock."""
        return self.clock() / 1e9

    def warn(self, message: str) -> None:
        if message not in self.case.warnings:
            self.case.warnings.append(message)


class Action:
    """Base class of runner actions."""

    def __call__(self, ctx: RunContext) -> None:
        raise NotImplementedError

    def close(self, ctx: RunContext) -> None:
        """Undo whatever the action changed; called once at the end of the case."""

    def describe(self) -> str:
        return type(self).__name__


class FunctionAction(Action):
    """Wraps a plain ``callable(ctx)`` as an action."""

    def __init__(self, fn: Callable[[RunContext], None]) -> None:
        self.fn = fn

    def __call__(self, ctx: RunContext) -> None:
        self.fn(ctx)

    def describe(self) -> str:
        return getattr(self.fn, "__name__", "function")


def as_action(action: Action | Callable[[RunContext], None]) -> Action:
    if isinstance(action, Action):
        return action
    if callable(action):
        return FunctionAction(action)
    raise ConfigurationError(f"an action must be callable, got {type(action).__name__}")


class PrintAction(Action):
    """Print a message (a string, or ``callable(ctx) -> str``)."""

    def __init__(self, message: str | Callable[[RunContext], str], stream: IO[str] | None = None):
        self.message = message
        self.stream = stream

    def __call__(self, ctx: RunContext) -> None:
        text = self.message(ctx) if callable(self.message) else self.message
        print(text, file=self.stream or sys.stderr, flush=True)


class SleepAction(Action):
    """Sleep for a fixed time (Rancid Fig. 14 sleeps one second before each benchmark)."""

    def __init__(self, seconds: float) -> None:
        if seconds < 0:
            raise ConfigurationError(f"sleep time must not be negative, got {seconds}")
        self.seconds = seconds

    def __call__(self, ctx: RunContext) -> None:
        ctx.sleep(self.seconds)

    def describe(self) -> str:
        return f"sleep {self.seconds:g} s"


Reading = Callable[[], float]


def _read(reading: Reading) -> tuple[float | None, str | None]:
    """Call a sensor reading; return (value, None) or (None, why it failed)."""
    try:
        value = float(reading())
    except Exception as exc:  # a sensor may fail in any way; it must never hang the run
        return None, f"{type(exc).__name__}: {exc}"
    if math.isnan(value):
        return None, "reading is not a number"
    return value, None


class WarmUpAction(Action):
    """Run a workload until a reading reaches a target, bounded by a timeout (Rancid §IV-A1).

    Typical use: with no root to set the governor, spin until the CPU frequency reaches its
    maximum. ``workload`` defaults to the implementation's ``run`` (an external command has
    none: give a workload, or the warm-up is skipped with a warning). A reading that fails ends
    the warm-up with a warning; the timeout passing also gives a warning.
    """

    def __init__(
        self,
        reading: Reading,
        target: float,
        timeout: float = 10.0,
        workload: Callable[[], Any] | None = None,
        name: str = "reading",
    ) -> None:
        if timeout <= 0:
            raise ConfigurationError(f"warm-up timeout must be positive, got {timeout}")
        self.reading = reading
        self.target = target
        self.timeout = timeout
        self.workload = workload
        self.name = name

    def __call__(self, ctx: RunContext) -> None:
        work = self.workload or (ctx.implementation.run if ctx.implementation else None)
        if work is None:
            ctx.warn("warm-up: no workload to run (an external command); warm-up skipped")
            return
        start = ctx.now()
        rounds = 0
        while True:
            value, error = _read(self.reading)
            if error:
                ctx.warn(f"warm-up: cannot read {self.name} ({error}); warm-up skipped")
                return
            if value >= self.target:  # type: ignore[operator]
                ctx.notes["warmup_rounds"] = rounds
                return
            if ctx.now() - start >= self.timeout:
                ctx.warn(
                    f"warm-up: {self.name} reached {value:g}, not {self.target:g}, "
                    f"within {self.timeout:g} s"
                )
                return
            work()
            rounds += 1

    def describe(self) -> str:
        return f"warm up until {self.name} >= {self.target:g} (at most {self.timeout:g} s)"


def _stderr_line(line: str) -> None:
    """A progress line on standard error (the worker processes inherit it)."""
    with contextlib.suppress(OSError, ValueError):
        print(line, file=sys.stderr, flush=True)


class CoolDownAction(Action):
    """Wait while a reading (a temperature) is above ``threshold`` until it falls to ``base``.

    Hysteresis as in Rancid §IV-A2: nothing happens below ``threshold``; above it, poll every
    ``poll`` seconds until the reading is at or below ``base``. A missing or unreadable sensor
    is reported once and never waited on.

    Bounded in total (issue 27 item 1: a sensor stuck at 85 °C made every run of a case wait
    its full 120 s, silently): all the waits of one case share ``timeout`` seconds; a wait says
    what it waits for and how long it has waited (``say``, every ``report_every`` s:
    ``cooling: temperature 85°C > 60°C, 40 s of 120 s``); when the case's budget is spent the
    action warns once, records ``extra["cooldown"][name]["gave_up"]`` in the case, and no longer
    waits in that case.
    """

    def __init__(
        self,
        reading: Reading,
        threshold: float,
        base: float | None = None,
        timeout: float = 60.0,
        poll: float = 0.5,
        name: str = "sensor",
        unit: str = "",
        say: Callable[[str], None] | None = None,
        report_every: float = 10.0,
    ) -> None:
        base = threshold if base is None else base
        if base > threshold:
            raise ConfigurationError(
                f"cool-down base {base:g} is above the threshold {threshold:g}"
            )
        if not (0 < timeout < float("inf")) or not (0 < poll < float("inf")):
            raise ConfigurationError("cool-down timeout and poll interval must be positive "
                                     "and finite")
        self.reading = reading
        self.threshold = threshold
        self.base = base
        self.timeout = timeout
        self.poll = poll
        self.name = name
        self.unit = unit
        self.say = say or _stderr_line
        self.report_every = report_every
        self.waited = 0.0

    def __call__(self, ctx: RunContext) -> None:
        record = ctx.case.extra.get("cooldown", {}).get(self.name)
        if record is not None and record["gave_up"]:
            return  # warned once: no more waiting in this case
        value, error = _read(self.reading)
        if error:
            ctx.warn(f"cool-down: cannot read {self.name} ({error}); not waiting on it")
            return
        if value <= self.threshold:  # type: ignore[operator]
            return
        if record is None:
            record = ctx.case.extra.setdefault("cooldown", {})[self.name] = {
                "waited_s": 0.0, "gave_up": False, "limit_s": self.timeout}
        u = self.unit
        start = ctx.now()
        budget = self.timeout - record["waited_s"]
        said_at: float | None = None
        while value > self.base:  # type: ignore[operator]
            waited = ctx.now() - start
            if said_at is None or waited - said_at >= self.report_every:
                self.say(f"cooling: {self.name} {value:g}{u} > {self.base:g}{u}, "
                         f"{record['waited_s'] + waited:.0f} s of {self.timeout:g} s")
                said_at = waited
            if waited >= budget:
                record["gave_up"] = True
                record["last_value"] = value
                ctx.warn(f"cool-down: {self.name} still {value:g}{u} after {self.timeout:g} s "
                         f"of waiting in this case (wanted <= {self.base:g}{u}); the rest of "
                         "the case runs without waiting")
                break
            ctx.sleep(min(self.poll, max(budget - waited, 0.0)) or self.poll)
            value, error = _read(self.reading)
            if error:
                ctx.warn(f"cool-down: {self.name} became unreadable ({error}); stopped waiting")
                break
        waited = ctx.now() - start
        record["waited_s"] = round(record["waited_s"] + waited, 6)
        self.waited += waited
        ctx.notes["cooldown_waited"] = ctx.notes.get("cooldown_waited", 0.0) + waited

    def describe(self) -> str:
        return (f"cool down when {self.name} > {self.threshold:g} until <= {self.base:g} "
                f"(at most {self.timeout:g} s in all per case)")


class FileWriteAction(Action):
    """Write a value to a file, remembering the old content and restoring it at close.

    The old content is restored byte for byte on every exit path of the case (the runner calls
    :meth:`close` in a ``finally``).
    """

    def __init__(self, path: str | os.PathLike[str], value: str | bytes) -> None:
        self.path = Path(path)
        self.value = value.encode() if isinstance(value, str) else value
        self._saved: bytes | None = None

    def __call__(self, ctx: RunContext) -> None:
        if self._saved is None:
            try:
                self._saved = self.path.read_bytes()
            except OSError as exc:
                raise ConfigurationError(f"cannot read {self.path}: {exc.strerror}") from exc
        try:
            self.path.write_bytes(self.value)
        except OSError as exc:
            raise ConfigurationError(f"cannot write {self.path}: {exc.strerror}") from exc

    def close(self, ctx: RunContext) -> None:
        """Write the old content back. A failure is a warning of the case, not an exception:
        it must not end the run and lose the results of the other benchmarks (issue 12,
        item 6); the warning says what the file held."""
        saved, self._saved = self._saved, None
        if saved is None:
            return
        try:
            self.path.write_bytes(saved)
        except OSError as exc:
            old = saved[:200].decode("utf-8", errors="replace").strip()
            ctx.warn(f"could not restore {self.path} ({exc.strerror or exc}); it held {old!r}")

    def describe(self) -> str:
        return f"write {self.value!r} to {self.path}"


class CompositeAction(Action):
    """Several actions as one, in order; closed in reverse order."""

    def __init__(self, *actions: Action | Callable[[RunContext], None]) -> None:
        self.actions = [as_action(a) for a in actions]

    def __call__(self, ctx: RunContext) -> None:
        for action in self.actions:
            action(ctx)

    def close(self, ctx: RunContext) -> None:
        for action in reversed(self.actions):
            action.close(ctx)

    def describe(self) -> str:
        return " then ".join(a.describe() for a in self.actions)


class ConditionalAction(Action):
    """Run ``action`` when ``predicate(ctx)`` holds, else ``otherwise`` if given."""

    def __init__(
        self,
        predicate: Callable[[RunContext], bool],
        action: Action | Callable[[RunContext], None],
        otherwise: Action | Callable[[RunContext], None] | None = None,
    ) -> None:
        self.predicate = predicate
        self.action = as_action(action)
        self.otherwise = as_action(otherwise) if otherwise is not None else None

    def __call__(self, ctx: RunContext) -> None:
        if self.predicate(ctx):
            self.action(ctx)
        elif self.otherwise is not None:
            self.otherwise(ctx)

    def close(self, ctx: RunContext) -> None:
        self.action.close(ctx)
        if self.otherwise is not None:
            self.otherwise.close(ctx)
