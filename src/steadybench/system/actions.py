"""Countermeasures as runner actions (Rancid §IV-A and §IV-C, built on ``runner.actions``).

Each class is a :class:`~steadybench.runner.actions.Action`; attach it with
``runner.add_action(Stage.X, action)`` or through a preset (:mod:`.presets`). What each needs and
changes:

- :class:`TuneAction` (before the benchmark): governor ``performance`` / minimum frequency to
  maximum, boost off; journaled, under the machine's tuning lock, restored in ``close`` on
  every exit path, with SIGINT, SIGTERM and SIGHUP handlers installed for the duration so a
  signal unwinds through the restore and a signal during the restore waits for its end.
- :class:`PinAction` (before the benchmark, and before each run with ``rotate``):
  ``os.sched_setaffinity`` to the chosen CPUs (default: isolated CPUs, else the fastest cluster);
  the original affinity is put back in ``close``.
- :class:`MachineCoolDownAction` (before each run, first): hysteresis wait on a temperature.
- :class:`FrequencyWarmUpAction` (before each run, after cool-down): spin until the pinned cores
  reach their maximum frequency, bounded.
- :class:`QuietMachineAction` (before the benchmark): bounded wait for low load.
- :class:`SettleAfterBootAction`, :class:`PowerSupplyAction` (before the benchmark).
- :class:`GcAction` (before each run): collector off while measuring, collections between runs.
- :class:`PriorityAction` (before the benchmark): raise the scheduling priority where permitted.

A preset names countermeasures, not actions: each name is a
:class:`~steadybench.system.presets.Countermeasure` in the
:data:`steadybench.registry.countermeasures` registry that checks the machine and builds these
actions; a plug-in adds its own the same way (``docs/extending.md``).
"""

from __future__ import annotations

import contextlib
import gc
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import ConfigurationError, SystemControlError
from ..runner.actions import Action, CoolDownAction, RunContext, WarmUpAction
from . import signals
from .advice import Rules
from .journal import Journal, run_journal_path
from .lock import TuningLock
from .readers import cpufreq_dir, read_cpus, read_load, read_power, read_thermal, top_processes
from .signals import Terminated  # noqa: F401 - importable from here, as before
from .sysfs import SysRoot, format_cpulist
from .tuning import (
    MIN_FREQ_SETTINGS,
    CanWrite,
    apply_plan,
    check_targets,
    default_can_write,
    make_plan,
    not_permitted,
)
from .writer import Writer, write_file, write_setting

#: how often :meth:`TuneAction.close` runs the (idempotent) restore when interrupted
RESTORE_ATTEMPTS = 3


def _machine_extra(ctx: RunContext) -> dict[str, Any]:
    return ctx.case.extra.setdefault("machine", {})


class TuneAction(Action):
    """Tune the CPU for the benchmark and restore it exactly at its end (Rancid §IV-A1).

    Before the benchmark: plan the changes (:func:`~steadybench.system.tuning.make_plan`); if
    any file is not writable (no root), change nothing and warn. Otherwise take the machine's
    tuning lock (:mod:`.lock`; held by another process: :class:`~.lock.LockBusy`, or wait with
    ``wait_lock``), install the signal handlers of :mod:`.signals` for the duration, journal each
    original to ``journal`` (default ``run-<pid>.json`` in the state directory, recording this
    process's PID and start time) and write.

    ``close`` restores the journal with signals recorded, releases the lock, puts the signal
    handlers back and only then honours a signal that arrived meanwhile (issue 12, items 1 and
    7). A restore that fails (a cpufreq folder vanished) does not end the run (item 6): the
    journal keeps the files not restored, the case gets a warning and
    ``case.extra["machine"]["restore_failed"]`` says to run ``steadybench system reset``. After a
    ``kill -9``, ``steadybench system reset`` restores from the journal left behind.
    """

    def __init__(self, root: SysRoot, governor: str = "performance", boost_off: bool = True,
                 journal: str | os.PathLike[str] | None = None,
                 can_write: CanWrite = default_can_write, write: Writer = write_file,
                 explicit_governor: bool = False, wait_lock: bool = False,
                 devfreq: bool = True) -> None:
        self.root = root
        self.governor = governor
        self.boost_off = boost_off
        self.devfreq = devfreq
        #: (path, value) of the minimum frequencies raised, re-checked between runs
        self.min_freq_targets: list[tuple[str, bytes]] = []
        self.journal_path = Path(journal) if journal else None
        self.can_write = can_write
        self.write = write
        self.explicit_governor = explicit_governor
        self.wait_lock = wait_lock
        self._journal: Journal | None = None
        self._lock: TuningLock | None = None
        self._guarded = False

    def __call__(self, ctx: RunContext) -> None:
        if self._journal is not None:
            return
        plan = make_plan(self.root, self.governor, self.boost_off,
                         explicit_governor=self.explicit_governor, devfreq=self.devfreq)
        info = _machine_extra(ctx)
        info["tune_unavailable"] = [u["reason"] for u in plan.unavailable]
        if not plan.changes:
            info["tuned"] = []
            return
        denied = not_permitted(self.root, plan, self.can_write)
        if denied:
            ctx.warn(f"tune: not permitted to write {', '.join(denied)} (needs root); "
                     "nothing changed")
            info["tuned"] = []
            return
        check_targets(self.root, plan)
        lock = TuningLock(self.root)
        lock.acquire(self.wait_lock)
        self._lock = lock
        self._guarded = signals.install()
        try:
            with signals.protected():
                journal = Journal.open(self.journal_path or run_journal_path(
                    directory=self.root.journal_dir()), self.root)
                journal.claim()
                self._journal = journal
                info["tuned"] = apply_plan(self.root, plan, journal, self.write)
                self.min_freq_targets = [(c.path, c.new) for c in plan.changes
                                         if c.setting in MIN_FREQ_SETTINGS]
        except SystemControlError:
            self._journal = None  # apply_plan restored what it wrote
            self._release()
            raise

    def close(self, ctx: RunContext) -> None:
        caught: KeyboardInterrupt | None = None
        try:
            for _attempt in range(RESTORE_ATTEMPTS):
                try:
                    with signals.protected(deliver=False):
                        self._restore(ctx)
                    break
                except KeyboardInterrupt as exc:
                    # got in before the protected region began (or where handlers cannot be
                    # installed): the restore is idempotent, so run it again, then honour it
                    caught = caught or exc
            else:
                self._give_up(ctx)
            if caught is not None:
                raise caught
        finally:
            self._release()

    @property
    def active(self) -> bool:
        """True between the tuning and its restore."""
        return self._journal is not None

    def _restore(self, ctx: RunContext) -> None:
        self.min_freq_targets = []
        journal = self._journal
        if journal is None:
            return
        try:
            journal.restore(self.write)
        except SystemControlError as exc:
            self._failed(ctx, str(exc))
        self._journal = None

    def _give_up(self, ctx: RunContext) -> None:
        journal, self._journal = self._journal, None
        if journal is not None:
            self._failed(ctx, f"the restore was interrupted {RESTORE_ATTEMPTS} times; the "
                              f"journal {journal.path} keeps every file: run "
                              "`steadybench system reset`")

    @staticmethod
    def _failed(ctx: RunContext, message: str) -> None:
        ctx.warn(f"tune: {message}")
        _machine_extra(ctx)["restore_failed"] = message

    def _release(self) -> None:
        """Release the lock, then put the signal handlers back (honouring recorded signals)."""
        lock, self._lock = self._lock, None
        guarded, self._guarded = self._guarded, False
        try:
            if lock is not None:
                lock.release()
        finally:
            if guarded:
                signals.uninstall()

    def describe(self) -> str:
        parts = [f"governor {self.governor}"] if self.governor else []
        if self.boost_off:
            parts.append("boost off")
        if self.devfreq:
            parts.append("devfreq fixed")
        return "tune " + ", ".join(parts) + " (restored at the end)"


def _cost(ctx: RunContext, name: str, seconds: float, rounds: int = 0) -> None:
    """Add what countermeasure ``name`` cost before this run to
    ``case.extra["machine"]["costs"][name]``: total seconds, rounds (warm-up workloads,
    re-applied files...), how many runs it acted before, the longest single cost."""
    costs = _machine_extra(ctx).setdefault("costs", {})
    entry = costs.setdefault(name, {"time_s": 0.0, "rounds": 0, "runs": 0, "max_s": 0.0})
    entry["time_s"] = round(entry["time_s"] + seconds, 9)
    entry["rounds"] += int(rounds)
    if seconds > 0 or rounds:
        entry["runs"] += 1
    entry["max_s"] = max(entry["max_s"], round(seconds, 9))


class KeepMinFreqAction(Action):
    """Re-check the raised minimum frequencies before each run and write them again when the
    governor reset them (Rancid §IV-A1: the minimum frequency "must be set periodically
    because, when temperatures rise, it gets reset to default").

    Only the files the :class:`TuneAction` raised, while it is active (its journal holds their
    originals, so the restore at the end is unaffected). Each re-application is counted in the
    case's costs (``keep_min_freq``) and the first one of each file gives a warning.
    """

    def __init__(self, tune: TuneAction, write: Writer = write_file) -> None:
        self.tune = tune
        self.write = write

    def __call__(self, ctx: RunContext) -> None:
        if not self.tune.active or not self.tune.min_freq_targets:
            return
        start = ctx.now()
        again = 0
        for rel, value in self.tune.min_freq_targets:
            now = self.tune.root.read_bytes(rel.lstrip("/"))
            if now is None or now.strip() == value.strip():
                continue
            try:
                write_setting(self.tune.root, rel, value, self.write)
            except (OSError, SystemControlError) as exc:
                ctx.warn(f"min-freq: {rel} was reset to {now.decode(errors='replace').strip()} "
                         f"and cannot be written again ({exc})")
                continue
            again += 1
            ctx.warn(f"min-freq: {rel} had been reset to "
                     f"{now.decode(errors='replace').strip()}; raised again before the run")
        _cost(ctx, "keep_min_freq", ctx.now() - start, again)

    def describe(self) -> str:
        return "re-apply the raised minimum frequencies before each run"


# ---------------------------------------------------------------------------- affinity
def fastest_cpus(root: SysRoot, allowed: set[int] | None = None) -> tuple[list[int], str]:
    """The fastest cluster among the online (and ``allowed``) CPUs, and how it was chosen.

    Rancid §III-C/§IV-A3: on big.LITTLE CPUs pin to the big cluster. The cluster is the CPUs with
    the highest ``cpu_capacity``; without capacities, those with the highest maximum frequency
    (``cpuinfo_max_freq``); when all CPUs look alike, all of them.
    """
    cpus = [c for c in read_cpus(root) if c["online"] and (allowed is None or c["cpu"] in allowed)]
    if not cpus:
        raise SystemControlError("no online CPU is available for pinning")
    caps = {c["capacity"] for c in cpus if c["capacity"] is not None}
    if len(caps) > 1:
        best = max(caps)
        return [c["cpu"] for c in cpus if c["capacity"] == best], f"highest cpu_capacity {best}"
    freqs = {c.get("hw_max_mhz") for c in cpus if c.get("hw_max_mhz") is not None}
    if len(freqs) > 1:
        best_f = max(freqs)
        return ([c["cpu"] for c in cpus if c.get("hw_max_mhz") == best_f],
                f"highest maximum frequency {best_f:g} MHz")
    return [c["cpu"] for c in cpus], "all CPUs alike"


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
        _machine_extra(ctx)["pin_skipped"] = reason

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
        info = _machine_extra(ctx)
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
        _cost(ctx, "spin_warmup", (clock() - start) / 1e9, rounds)

    def describe(self) -> str:
        return f"spin {self.seconds:g} s before each run"


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


# ---------------------------------------------------------------------------- sensors
def temperature_reading(root: SysRoot, sensors: list[str] | None = None,
                        units: dict[str, str] | None = None) -> Callable[[], float]:
    """A reading (°C) of the hottest of ``sensors`` (names as ``system show`` lists them, or
    paths under the root); all readable sensors when None. ``units`` overrides the unit of
    named sensors (:func:`~.readers.read_thermal`). Raises when none is readable."""
    return _TemperatureReading(root, sensors, units)


def frequency_reading(root: SysRoot, cpus: Callable[[], list[int]]) -> Callable[[], float]:
    """A reading (MHz) of the slowest current frequency among ``cpus()``."""
    return _FrequencyReading(root, cpus)


class _TemperatureReading:
    """See :func:`temperature_reading` (readings are classes, not closures, so that worker
    processes can receive them with the countermeasures that use them)."""

    def __init__(self, root: SysRoot, sensors: list[str] | None,
                 units: dict[str, str] | None = None) -> None:
        self.root, self.sensors, self.units = root, sensors, units

    def __call__(self) -> float:
        found = read_thermal(self.root, self.units)
        if self.sensors:
            found = [s for s in found if s["name"] in self.sensors or s["path"] in self.sensors]
        values = [s["celsius"] for s in found if s["celsius"] is not None]
        if not values:
            errors = "; ".join(f"{s['name']}: {s['error']}" for s in found) or "none found"
            raise SystemControlError(f"no readable temperature sensor ({errors})")
        return max(values)


class _FrequencyReading:
    """See :func:`frequency_reading`."""

    def __init__(self, root: SysRoot, cpus: Callable[[], list[int]]) -> None:
        self.root, self.cpus = root, cpus

    def __call__(self) -> float:
        values = []
        for cpu in self.cpus():
            rel = cpufreq_dir(self.root, cpu)
            khz = self.root.read_int(f"{rel}/scaling_cur_freq") if rel else None
            if khz is not None:
                values.append(khz / 1000.0)
        if not values:
            raise SystemControlError("no readable scaling_cur_freq for the pinned CPUs")
        return min(values)


def max_frequency(root: SysRoot, cpus: list[int]) -> float | None:
    """The lowest ``scaling_max_freq`` (MHz) among ``cpus``: the frequency all of them can reach."""
    values = []
    for cpu in cpus:
        rel = cpufreq_dir(root, cpu)
        khz = root.read_int(f"{rel}/scaling_max_freq") if rel else None
        if khz is not None:
            values.append(khz / 1000.0)
    return min(values) if values else None


def current_affinity() -> list[int]:
    try:
        return sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return list(range(os.cpu_count() or 1))


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
        _cost(ctx, "cooldown", ctx.now() - start)


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
            _cost(ctx, "warmup", ctx.now() - start, rounds)


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
        info = _machine_extra(ctx)
        info["quiet_waited_s"] = round(ctx.now() - start, 3)
        info["busy_processes"] = list(seen.values())

    def describe(self) -> str:
        return (f"wait up to {self.max_wait:g} s for load <= {self.rules.max_load_per_cpu:g}/CPU "
                f"and no process > {self.rules.max_process_cpu:g} % CPU")


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
        _machine_extra(ctx)["settle_waited_s"] = wait
        if uptime + wait < self.min_uptime:
            ctx.warn(f"machine booted {uptime:.0f} s before the benchmark; waited {wait:g} s, "
                     f"not the {self.min_uptime:g} s it should settle for")

    def describe(self) -> str:
        return f"settle until {self.min_uptime:g} s after boot (wait at most {self.max_wait:g} s)"


class PowerSupplyAction(Action):
    """Warn when the machine runs on battery (Rancid §IV-C)."""

    def __init__(self, root: SysRoot) -> None:
        self.root = root

    def __call__(self, ctx: RunContext) -> None:
        on_ac = read_power(self.root)["on_ac"]
        _machine_extra(ctx)["on_ac"] = on_ac
        if on_ac is False:
            ctx.warn("on battery power: the frequency governor may save power; "
                     "connect the charger")

    def describe(self) -> str:
        return "warn on battery power"


class GcAction(Action):
    """Keep the garbage collector out of the measured runs (Rancid §IV-C; pyperf does the same).

    Add to ``BEFORE_RUN``. The first call makes a full collection and switches the collector
    off; it stays off while measuring and its original state is restored in ``close``. Before
    each later run, a collection is made only when the collector would have run by itself (a
    generation's allocation count has passed its threshold), and only of that generation.
    Collecting everything before every run would evict the caches, so each measured run would
    start cold: a 100-element sort measured 10× slower that way on the development machine.
    """

    def __init__(self) -> None:
        self._was_enabled: bool | None = None
        self.collections = 0

    def __call__(self, ctx: RunContext) -> None:
        if self._was_enabled is None:
            self._was_enabled = gc.isenabled()
            gc.collect()
            gc.disable()
            return
        due = [g for g, (count, limit) in enumerate(zip(gc.get_count(), gc.get_threshold()))
               if limit and count >= limit]
        if due:
            gc.collect(max(due))
            self.collections += 1

    def close(self, ctx: RunContext) -> None:
        if self._was_enabled:
            gc.enable()
        self._was_enabled = None

    def describe(self) -> str:
        return ("collector off while measuring; garbage collected between runs when due "
                "(a full collection before the first)")


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
        _machine_extra(ctx)["niceness"] = self.niceness

    def close(self, ctx: RunContext) -> None:
        saved, self._saved = self._saved, None
        if saved is not None:
            with contextlib.suppress(OSError):
                self.setpriority(os.PRIO_PROCESS, 0, saved)

    def describe(self) -> str:
        return f"niceness {self.niceness} while measuring"
