"""The ``settle`` countermeasure: after a recent boot, wait until the machine has settled.

Its preset builder and the action it adds, in one module (pyperf keeps one ``Operation``
per setting the same way); registered as ``settle`` in
:data:`steadybench.registry.countermeasures`.
"""

from __future__ import annotations

from typing import Any, ClassVar

from ...runner.actions import Action, RunContext
from ...runner.runner import Stage
from ..actions import machine_extra
from ..readers import read_load
from ..sysfs import SysRoot
from .base import Built, Countermeasure, PresetMachine, Skip, option_number


class SettleAfterBootAction(Action):
    """After a recent boot, wait until ``min_uptime`` s (at most ``max_wait`` s) (§IV-C)."""

    def __init__(self, root: SysRoot, min_uptime: float = 300.0, max_wait: float = 60.0) -> None:
        self.root = root
        self.min_uptime = min_uptime
        self.max_wait = max_wait

    def __call__(self, ctx: RunContext) -> None:
        uptime = read_load(self.root)["uptime_s"]
        if uptime is None or uptime >= self.min_uptime:
            return
        wait = min(self.min_uptime - uptime, self.max_wait)
        ctx.sleep(wait)
        machine_extra(ctx)["settle_waited_s"] = wait
        if uptime + wait < self.min_uptime:
            ctx.warn(f"machine booted {uptime:.0f} s before the benchmark; waited {wait:g} s, "
                     f"not the {self.min_uptime:g} s it should settle for")

    def describe(self) -> str:
        return f"settle until {self.min_uptime:g} s after boot (wait at most {self.max_wait:g} s)"


class Settle(Countermeasure):
    """After a recent boot, wait until the machine has settled (before the benchmark)."""

    options: ClassVar[dict[str, Any]] = {"max_wait": 60.0}

    def build(self, machine: PresetMachine, o: dict[str, Any]) -> Built:
        if read_load(machine.root)["uptime_s"] is None:
            raise Skip("/proc/uptime unreadable")
        action = SettleAfterBootAction(machine.root, machine.rules.min_uptime,
                                       option_number(o, "max_wait", "settle"))
        return [(Stage.BEFORE_BENCHMARK, action)], action.describe()
