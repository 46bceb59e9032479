"""The ``cooldown`` countermeasure: before each run, wait until a temperature is back down
(hysteresis).

Its preset builder and the action it adds, in one module (pyperf keeps one ``Operation``
per setting the same way); registered as ``cooldown`` in
:data:`steadybench.registry.countermeasures`.
"""

from __future__ import annotations

from typing import Any, ClassVar

from ...errors import SystemControlError
from ...runner.actions import CoolDownAction, RunContext
from ...runner.runner import Stage
from ..actions import (
    record_cost,
    temperature_reading,
)
from ..sysfs import SysRoot
from .base import (
    Built,
    Countermeasure,
    PresetMachine,
    Skip,
    option_number,
    sensor_names,
    sensor_units,
)


class MachineCoolDownAction(CoolDownAction):
    """Cool-down on the machine's temperature sensors (Rancid §IV-A2, hysteresis).

    Before a run, if the hottest chosen sensor is above ``upper`` °C, poll every ``poll`` s until
    it falls to ``lower`` °C or ``max_wait`` s pass. Must come before the frequency warm-up
    (Rancid §IV-C), which heats the chip again.
    """

    def __init__(self, root: SysRoot, upper: float = 70.0, lower: float = 60.0,
                 sensors: list[str] | None = None, max_wait: float = 120.0,
                 poll: float = 1.0, units: dict[str, str] | None = None) -> None:
        super().__init__(temperature_reading(root, sensors, units), threshold=upper, base=lower,
                         timeout=max_wait, poll=poll,
                         name="temperature" if not sensors else ",".join(sensors), unit="°C")

    def __call__(self, ctx: RunContext) -> None:
        start = ctx.now()
        super().__call__(ctx)
        record_cost(ctx, "cooldown", ctx.now() - start)


class CoolDown(Countermeasure):
    """Wait for the chip to cool (before each run, first)."""

    options: ClassVar[dict[str, Any]] = {"upper": None, "lower": None, "sensors": None,
                                         "max_wait": 120.0, "poll": 1.0, "units": None}

    def build(self, machine: PresetMachine, o: dict[str, Any]) -> Built:
        sensors = sensor_names(o, "cooldown")
        units = sensor_units(o, "cooldown")
        try:
            temperature_reading(machine.root, sensors, units)()
        except SystemControlError as exc:
            raise Skip(f"{exc} (/sys/class/thermal, /sys/class/hwmon)") from None
        upper = (machine.rules.max_temperature if o["upper"] is None
                 else option_number(o, "upper", "cooldown"))
        lower = upper - 10.0 if o["lower"] is None else option_number(o, "lower", "cooldown")
        action = MachineCoolDownAction(machine.root, upper, lower, sensors,
                                       option_number(o, "max_wait", "cooldown") or 120.0,
                                       option_number(o, "poll", "cooldown") or 1.0, units)
        return [(Stage.BEFORE_RUN, action)], action.describe()
