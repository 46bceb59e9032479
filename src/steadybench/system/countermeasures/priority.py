"""The ``priority`` countermeasure: raise the scheduling priority where permitted.

Its preset builder and the action it adds, in one module (pyperf keeps one ``Operation``
per setting the same way); registered as ``priority`` in
:data:`steadybench.registry.countermeasures`.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from typing import Any, ClassVar

from ...errors import ConfigurationError
from ...runner.actions import Action, RunContext
from ...runner.runner import Stage
from ..actions import machine_extra
from .base import Built, Countermeasure, PresetMachine, Skip


class PriorityAction(Action):
    """Raise the scheduling priority (lower niceness) for the benchmark where permitted.

    Rancid §IV-A4 notes real-time priority is usually disallowed; a lower niceness is the
    portable part. Without permission this warns once and changes nothing; ``close`` restores.
    """

    def __init__(self, niceness: int = -10,
                 getpriority: Callable[[int, int], int] | None = None,
                 setpriority: Callable[[int, int, int], None] | None = None) -> None:
        self.niceness = niceness
        self.getpriority = getpriority or os.getpriority
        self.setpriority = setpriority or os.setpriority
        self._saved: int | None = None

    def __call__(self, ctx: RunContext) -> None:
        if self._saved is not None:
            return
        old = self.getpriority(os.PRIO_PROCESS, 0)
        if old <= self.niceness:
            return
        try:
            self.setpriority(os.PRIO_PROCESS, 0, self.niceness)
        except OSError as exc:
            ctx.warn(f"priority: cannot set niceness {self.niceness} ({exc.strerror}); unchanged")
            return
        self._saved = old
        machine_extra(ctx)["niceness"] = self.niceness

    def close(self, ctx: RunContext) -> None:
        saved, self._saved = self._saved, None
        if saved is not None:
            with contextlib.suppress(OSError):
                self.setpriority(os.PRIO_PROCESS, 0, saved)

    def describe(self) -> str:
        return f"niceness {self.niceness} while measuring"


class Priority(Countermeasure):
    """Lower the niceness where permitted (before the benchmark)."""

    options: ClassVar[dict[str, Any]] = {"niceness": -10}

    def build(self, machine: PresetMachine, o: dict[str, Any]) -> Built:
        if not machine.root.local_process:
            raise Skip("the programs run on the target, not in this process")
        niceness = o["niceness"]
        if isinstance(niceness, bool) or not isinstance(niceness, int) or \
                not -20 <= niceness <= 19:
            raise ConfigurationError(f"[priority] niceness must be an integer in -20..19, "
                                     f"got {niceness!r}")
        if not hasattr(os, "setpriority"):
            raise Skip("os.setpriority is not available on this platform")
        if os.geteuid() != 0:
            import resource

            soft = resource.getrlimit(resource.RLIMIT_NICE)[0]
            if soft == resource.RLIM_INFINITY or 20 - soft > niceness:
                raise Skip(f"not permitted to lower niceness to {niceness} "
                           "(needs root or RLIMIT_NICE)")
        action = PriorityAction(niceness)
        return [(Stage.BEFORE_BENCHMARK, action)], action.describe()
