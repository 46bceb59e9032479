"""The ``pin`` countermeasure: run the benchmark on chosen CPUs (isolated, else the fastest
cluster).

Its preset builder and the action it adds, in one module (pyperf keeps one ``Operation``
per setting the same way); registered as ``pin`` in
:data:`steadybench.registry.countermeasures`.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from typing import Any, ClassVar

from ...errors import ConfigurationError, SystemControlError
from ...runner.actions import Action, RunContext
from ...runner.runner import Stage
from ..actions import (
    fastest_cpus,
    machine_extra,
    record_cost,
)
from ..readers import read_isolated
from ..sysfs import format_cpulist, parse_cpulist
from .base import Built, Countermeasure, PresetMachine, Skip, option_number


class PinAction(Action):
    """Pin this process (and the programs it starts) to ``cpus`` (Rancid §IV-A3).

    Only the CPUs this process may use (``os.sched_getaffinity``) are used: the set is
    intersected with them. When nothing is left, or ``sched_setaffinity`` refuses, pinning is
    *skipped* with the reason (a warning of the case and ``machine.pin_skipped``), never a
    failed case; the ``fallback`` action (Rancid §IV-A3: a compute-intensive warm-up right
    before each measured run, so the scheduler moves the process to a fast core) then runs
    before each run instead (:class:`PinFallbackAction`).

    With ``rotate=True`` add the same action to ``BEFORE_RUN`` as well: each run is then pinned
    to one core of the set in turn. ``close`` restores the original affinity.
    """

    def __init__(self, cpus: list[int], rotate: bool = False,
                 setaffinity: Callable[[int, Any], None] | None = None,
                 getaffinity: Callable[[int], set[int]] | None = None) -> None:
        if not cpus:
            raise ConfigurationError("pin: the CPU set is empty")
        self.cpus = sorted(cpus)
        self.rotate = rotate
        self.setaffinity = setaffinity or os.sched_setaffinity
        self.getaffinity = getaffinity or os.sched_getaffinity
        self._saved: set[int] | None = None
        #: why pinning was skipped (None while it works)
        self.skipped: str | None = None

    def _skip(self, ctx: RunContext, reason: str) -> None:
        self.skipped = reason
        ctx.warn(f"pin: skipped ({reason}); a warm-up before each run takes over")
        machine_extra(ctx)["pin_skipped"] = reason

    def __call__(self, ctx: RunContext) -> None:
        if self.skipped is not None:
            return
        if self._saved is None:
            try:
                self._saved = set(self.getaffinity(0))
            except OSError as exc:
                self._skip(ctx, f"cannot read this process's affinity: {exc.strerror}")
                return
        usable = [c for c in self.cpus if c in self._saved]
        if not usable:
            self._skip(ctx, f"CPUs {format_cpulist(self.cpus)} are not among those this process "
                            f"may use ({format_cpulist(sorted(self._saved))})")
            return
        if ctx.run_index < 0 or not self.rotate:
            target = usable
        else:
            target = [usable[ctx.run_index % len(usable)]]
        try:
            self.setaffinity(0, target)
        except OSError as exc:
            self._skip(ctx, f"cannot pin to CPUs {format_cpulist(target)}: {exc.strerror}")
            return
        info = machine_extra(ctx)
        info["pinned"] = format_cpulist(usable)
        if len(usable) < len(self.cpus):
            info["pin_restricted"] = (f"CPUs {format_cpulist(sorted(set(self.cpus) - set(usable)))}"
                                      " left out: not in this process's affinity")

    def close(self, ctx: RunContext) -> None:
        saved, self._saved = self._saved, None
        if saved is not None and self.skipped is None:
            with contextlib.suppress(OSError):
                self.setaffinity(0, saved)

    def describe(self) -> str:
        rot = ", one core per run in turn" if self.rotate else ""
        return f"pin to CPUs {format_cpulist(self.cpus)}{rot}"


class PinFallbackAction(Action):
    """Before each run, ``warmup`` — only while ``pin`` is skipped (see :class:`PinAction`)."""

    def __init__(self, pin: PinAction, warmup: Action) -> None:
        self.pin = pin
        self.warmup = warmup

    def __call__(self, ctx: RunContext) -> None:
        if self.pin.skipped is not None:
            self.warmup(ctx)

    def close(self, ctx: RunContext) -> None:
        self.warmup.close(ctx)

    def describe(self) -> str:
        return f"when pinning is impossible: {self.warmup.describe()}"


class SpinWarmUpAction(Action):
    """A compute-intensive warm-up of ``seconds`` on the runner's clock before each run.

    Rancid §IV-A3: where the affinity cannot be set, "add a compute-intensive warm-up execution
    right before running measured benchmarks", so the scheduler sees a busy process and keeps
    it on (or moves it to) a fast core. The time is a cost of the countermeasure
    (``costs.spin_warmup``).
    """

    def __init__(self, seconds: float = 0.05) -> None:
        if not seconds > 0:
            raise ConfigurationError(f"spin warm-up must last a positive time, got {seconds}")
        self.seconds = float(seconds)

    def __call__(self, ctx: RunContext) -> None:
        clock = ctx.clock
        start = clock()
        end = start + int(self.seconds * 1e9)
        rounds = 0
        while clock() < end:
            rounds += 1
        record_cost(ctx, "spin_warmup", (clock() - start) / 1e9, rounds)

    def describe(self) -> str:
        return f"spin {self.seconds:g} s before each run"


class Pin(Countermeasure):
    """Pin to the isolated or fastest CPUs (before the benchmark, or each run with rotate).

    Only CPUs this process may use are chosen (``os.sched_getaffinity``). When none of them is
    suitable, or pinning fails at run time, pinning is skipped with the reason and a spin
    warm-up of ``fallback_spin`` seconds before each run takes over (Rancid §IV-A3).
    """

    options: ClassVar[dict[str, Any]] = {"cpus": None, "rotate": False, "fallback_spin": 0.05}

    def build(self, machine: PresetMachine, o: dict[str, Any]) -> Built:
        if not hasattr(os, "sched_setaffinity"):
            raise Skip("os.sched_setaffinity is not available on this platform")
        spin = option_number(o, "fallback_spin", "pin")
        allowed = machine.affinity
        if o["cpus"] is not None:
            try:
                cpus = parse_cpulist(str(o["cpus"]))
            except ValueError as exc:
                raise ConfigurationError(f"[pin] cpus: {exc}") from exc
            how = "chosen in the preset"
        else:
            isolated = [c for c in read_isolated(machine.root)["isolated"] if c in allowed]
            if isolated:
                cpus, how = isolated, "isolated CPUs"
            else:
                try:
                    cpus, how = fastest_cpus(machine.root, allowed)
                    best, _ = fastest_cpus(machine.root)
                    if not set(best) & allowed:
                        how += (f"; the fastest CPUs {format_cpulist(best)} are not among those "
                                f"this process may use ({format_cpulist(sorted(allowed))})")
                except SystemControlError as exc:
                    return self._skip(machine, f"{exc}: the machine's CPUs "
                                               f"are not among those this process may use "
                                               f"({format_cpulist(sorted(allowed))})", spin)
        usable = [c for c in cpus if c in allowed]
        if not usable:
            return self._skip(machine, f"CPUs {format_cpulist(cpus)} are not among those this "
                                       f"process may use ({format_cpulist(sorted(allowed))})",
                              spin)
        if len(usable) < len(cpus):
            how += (f"; {format_cpulist(sorted(set(cpus) - set(usable)))} left out, not in this "
                    "process's affinity")
        machine.pinned = usable
        action = PinAction(usable, rotate=bool(o["rotate"]), **machine.root.affinity_calls())
        machine.pin = action
        stages: list[tuple[Stage, Action]] = [(Stage.BEFORE_BENCHMARK, action)]
        if o["rotate"]:
            stages.append((Stage.BEFORE_RUN, action))
        if spin > 0:
            stages.append((Stage.BEFORE_RUN, PinFallbackAction(action, SpinWarmUpAction(spin))))
        return stages, f"{action.describe()} ({how})"

    @staticmethod
    def _skip(machine: PresetMachine, reason: str, spin: float) -> Built:
        machine.pin_skipped = reason
        if spin <= 0:
            raise Skip(reason)
        raise Skip(f"{reason}; a warm-up before each run takes over (warmup)")
