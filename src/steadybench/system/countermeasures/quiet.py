"""The ``quiet`` countermeasure: a bounded wait for low load before the benchmark.

Its preset builder and the action it adds, in one module (pyperf keeps one ``Operation``
per setting the same way); registered as ``quiet`` in
:data:`steadybench.registry.countermeasures`.
"""

from __future__ import annotations

from typing import Any, ClassVar

from ...runner.actions import Action, RunContext
from ...runner.runner import Stage
from ..actions import machine_extra
from ..advice import Rules
from ..readers import (
    read_cpus,
    read_load,
    top_processes,
)
from ..sysfs import SysRoot
from .base import Built, Countermeasure, PresetMachine, Skip, option_number


class QuietMachineAction(Action):
    """Wait (bounded) until the machine is quiet, and record who was busy (Rancid §III-D).

    Quiet means: the 1-minute load average is at most ``rules.max_load_per_cpu`` per online CPU
    and no other process used more than ``rules.max_process_cpu`` % CPU over ``interval`` s. The
    load average is a one-minute mean, so it falls slowly; the per-process figure reacts at once.
    """

    def __init__(self, root: SysRoot, rules: Rules | None = None, max_wait: float = 10.0,
                 interval: float = 0.5, cpus: int | None = None) -> None:
        self.root = root
        self.rules = rules or Rules()
        self.max_wait = max_wait
        self.interval = interval
        self.cpus = cpus or sum(1 for c in read_cpus(root) if c["online"]) or 1

    def _busy(self, ctx: RunContext) -> tuple[list[str], list[dict[str, Any]]]:
        reasons = []
        load = read_load(self.root)["loadavg"]
        limit = self.rules.max_load_per_cpu * self.cpus
        if load is not None and load[0] > limit:
            reasons.append(f"load average {load[0]:g} > {limit:g}")
        procs = [p for p in top_processes(self.root, self.interval, sleep=ctx.sleep)
                 if p["cpu_pct"] > self.rules.max_process_cpu]
        reasons += [f"{p['name']} ({p['pid']}) {p['cpu_pct']:g} % CPU" for p in procs]
        return reasons, procs

    def __call__(self, ctx: RunContext) -> None:
        start = ctx.now()
        seen: dict[int, dict[str, Any]] = {}
        while True:
            reasons, procs = self._busy(ctx)
            for p in procs:
                seen[p["pid"]] = p
            if not reasons:
                break
            if ctx.now() - start >= self.max_wait:
                ctx.warn(f"quiet machine: still busy after {self.max_wait:g} s "
                         f"({'; '.join(reasons)})")
                break
            ctx.sleep(self.interval)
        info = machine_extra(ctx)
        info["quiet_waited_s"] = round(ctx.now() - start, 3)
        info["busy_processes"] = list(seen.values())

    def describe(self) -> str:
        return (f"wait up to {self.max_wait:g} s for load <= {self.rules.max_load_per_cpu:g}/CPU "
                f"and no process > {self.rules.max_process_cpu:g} % CPU")


class Quiet(Countermeasure):
    """Wait (bounded) for a quiet machine (before the benchmark)."""

    options: ClassVar[dict[str, Any]] = {"max_wait": 10.0, "interval": 0.5}

    def build(self, machine: PresetMachine, o: dict[str, Any]) -> Built:
        if read_load(machine.root)["loadavg"] is None:
            raise Skip("/proc/loadavg unreadable")
        action = QuietMachineAction(machine.root, machine.rules,
                                    option_number(o, "max_wait", "quiet"),
                                    option_number(o, "interval", "quiet") or 0.5)
        return [(Stage.BEFORE_BENCHMARK, action)], action.describe()
