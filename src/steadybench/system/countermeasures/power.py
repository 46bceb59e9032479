"""The ``power`` countermeasure: refuse or warn on battery power.

Its preset builder and the action it adds, in one module (pyperf keeps one ``Operation``
per setting the same way); registered as ``power`` in
:data:`steadybench.registry.countermeasures`.
"""

from __future__ import annotations

from typing import Any

from ...runner.actions import Action, RunContext
from ...runner.runner import Stage
from ..actions import machine_extra
from ..readers import read_power
from ..sysfs import SysRoot
from .base import Built, Countermeasure, PresetMachine, Skip


class PowerSupplyAction(Action):
    """Warn when the machine runs on battery (Rancid §IV-C)."""

    def __init__(self, root: SysRoot) -> None:
        self.root = root

    def __call__(self, ctx: RunContext) -> None:
        on_ac = read_power(self.root)["on_ac"]
        machine_extra(ctx)["on_ac"] = on_ac
        if on_ac is False:
            ctx.warn("on battery power: the frequency governor may save power; "
                     "connect the charger")

    def describe(self) -> str:
        return "warn on battery power"


class Power(Countermeasure):
    """Warn when the machine runs on battery (before the benchmark)."""

    def build(self, machine: PresetMachine, o: dict[str, Any]) -> Built:
        if not read_power(machine.root)["supplies"]:
            raise Skip("no power supply information under /sys/class/power_supply "
                       "(assumed mains)")
        action = PowerSupplyAction(machine.root)
        return [(Stage.BEFORE_BENCHMARK, action)], action.describe()
