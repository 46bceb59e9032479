"""The ``warmup`` countermeasure: before each run, spin until the pinned cores reach their maximum
frequency.

Its preset builder and the action it adds, in one module (pyperf keeps one ``Operation``
per setting the same way); registered as ``warmup`` in
:data:`steadybench.registry.countermeasures`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from ...errors import ConfigurationError, SystemControlError
from ...runner.actions import RunContext, WarmUpAction
from ...runner.runner import Stage
from ..actions import (
    current_affinity,
    frequency_reading,
    max_frequency,
    record_cost,
)
from ..sysfs import SysRoot
from .base import Built, Countermeasure, PresetMachine, Skip, option_number
from .pin import SpinWarmUpAction


class FrequencyWarmUpAction(WarmUpAction):
    """Spin until the pinned cores reach their maximum frequency, bounded (Rancid §IV-A1).

    For machines where the governor cannot be set: the busy loop makes the governor raise the
    frequency before the run. The target is ``fraction`` × the lowest ``scaling_max_freq`` of the
    cores; the workload is a spin of ``spin`` seconds on the runner's clock (or the benchmark's
    own code with ``spin=0``); ``max_wait`` bounds it so warming cannot heat the chip into
    throttling.
    """

    def __init__(self, root: SysRoot, cpus: Callable[[], list[int]] = current_affinity,
                 fraction: float = 0.95, max_wait: float = 2.0, spin: float = 0.01,
                 target_mhz: float | None = None) -> None:
        if not 0 < fraction <= 1:
            raise ConfigurationError(f"warm-up fraction must be in (0, 1], got {fraction}")
        self.root = root
        self.cpus = cpus
        self.fraction = fraction
        self.spin = spin
        top = target_mhz if target_mhz is not None else max_frequency(root, cpus())
        if top is None:
            raise SystemControlError("no readable scaling_max_freq: cannot warm up the frequency")
        super().__init__(frequency_reading(root, cpus), target=fraction * top, timeout=max_wait,
                         name="cpu frequency (MHz)")

    def __call__(self, ctx: RunContext) -> None:
        original = self.workload
        if self.spin > 0:
            clock, seconds = ctx.clock, self.spin

            def spin() -> None:
                end = clock() + int(seconds * 1e9)
                while clock() < end:
                    pass

            self.workload = spin
        inner = self.workload or (ctx.implementation.run if ctx.implementation else None)
        rounds = 0
        if inner is not None:
            def counted() -> None:
                nonlocal rounds
                rounds += 1
                inner()

            self.workload = counted
        start = ctx.now()
        try:
            super().__call__(ctx)
        finally:
            self.workload = original  # picklable again (a worker process receives it)
            record_cost(ctx, "warmup", ctx.now() - start, rounds)


class WarmUp(Countermeasure):
    """Spin the pinned cores up to their maximum frequency (before each run, after cool-down).

    Not needed when tune fixes the frequency, unless pinning is impossible: then the warm-up
    also stands in for pinning (Rancid §IV-A3), a frequency warm-up where the frequency can be
    read, else a fixed spin.
    """

    options: ClassVar[dict[str, Any]] = {"fraction": 0.95, "max_wait": 2.0, "spin": 0.01}

    def build(self, machine: PresetMachine, o: dict[str, Any]) -> Built:
        stands_in = machine.pin_skipped is not None
        if machine.governor_set and not stands_in:
            raise Skip(f"not needed: tune fixes the frequency ({machine.frequency_fixed_by})")
        if not machine.root.local_process:
            raise Skip("the spin runs in this process, not on the target")
        pinned = machine.pinned

        def cpus() -> list[int]:
            return pinned if pinned is not None else current_affinity()

        if not machine.has_cpufreq or max_frequency(machine.root, cpus()) is None:
            why = ("no cpufreq files: the frequency cannot be read" if not machine.has_cpufreq
                   else "no readable scaling_max_freq for the CPUs used")
            if not stands_in:
                raise Skip(why)
            spin = SpinWarmUpAction(max(option_number(o, "max_wait", "warmup") / 10.0, 0.01))
            return [(Stage.BEFORE_RUN, spin)], f"{spin.describe()} (pinning impossible; {why})"
        action = FrequencyWarmUpAction(machine.root, cpus, float(o["fraction"]),
                                       option_number(o, "max_wait", "warmup") or 2.0,
                                       option_number(o, "spin", "warmup"))
        suffix = " (pinning impossible)" if stands_in else ""
        return [(Stage.BEFORE_RUN, action)], action.describe() + suffix
