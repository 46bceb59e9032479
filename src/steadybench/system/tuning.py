"""Tune the processor for benchmarking, and put it back exactly.

Rancid §III-A and §IV-A1: a varying processor frequency skews results; with root, switch the
governor to ``performance``; where that governor is missing, raise the minimum frequency to the
maximum (what the authors did for GPUs without a performance governor). This applies to the
CPUs (cpufreq) and to the devfreq devices, GPUs and memory buses. Boost/turbo makes the
frequency depend on temperature and on how many cores are busy, so it is switched off too.

Each setting is an object that says whether it is available on this machine, which files it
would change to what, and why (the organisation of pyperf's ``system tune``; the code is our
own). :func:`tune` checks permission for every file first (without it, it reports what it would
change and changes nothing), then for each file saves the original bytes to the
:class:`~steadybench.system.journal.Journal` and only then writes the new value; a write that
fails half way restores the files already written. :func:`reset` restores a journal.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import SystemControlError
from .allowlist import (
    BOOST_SWITCHES,
    DEVFREQ_GOVERNOR_FILE,
    DEVFREQ_MIN_FILE,
    GOVERNOR_FILE,
    MIN_FREQ_FILE,
    check_allowed,
)
from .devices import DEVFREQ_DIR, devfreq_kind, devfreq_names
from .journal import Journal
from .lock import TuningLock
from .readers import cpu_ids, cpufreq_dir
from .reset import reset
from .signals import protected
from .sysfs import CPU_DIR, SysRoot, format_cpulist
from .writer import Writer, resolve_target, write_file, write_setting

CanWrite = Callable[[Path], bool]

__all__ = ["CanWrite", "Change", "Plan", "apply_plan", "check_targets", "default_can_write",
           "make_plan", "not_permitted", "reset", "tune"]


def default_can_write(path: Path) -> bool:
    """Whether this process may write ``path`` (root, or a writable file in a fake tree)."""
    return os.access(path, os.W_OK)


@dataclass
class Change:
    """One file to write: ``path`` relative to the root (leading slash), old and new bytes."""

    setting: str
    path: str
    old: bytes
    new: bytes
    reason: str

    def describe(self) -> str:
        old = self.old.decode(errors="replace").strip()
        new = self.new.decode(errors="replace").strip()
        return f"{self.path}: {old} -> {new} ({self.reason})"


@dataclass
class Plan:
    """The changes tuning would make, and the settings it cannot apply (with why)."""

    changes: list[Change] = field(default_factory=list)
    unavailable: list[dict[str, str]] = field(default_factory=list)
    already: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"changes": [c.describe() for c in self.changes],
                "unavailable": self.unavailable, "already": self.already}


class Setting:
    """A tunable setting: :meth:`plan` adds its changes to a :class:`Plan`."""

    name = "setting"

    def plan(self, root: SysRoot, plan: Plan) -> None:
        raise NotImplementedError


def plan_min_to_max(root: SysRoot, plan: Plan, owner: str, setting: str, label: str, why: str,
                    min_file: str, max_file: str, show: Callable[[int], str]) -> None:
    """Where the wanted governor is missing: plan raising the minimum frequency in ``min_file``
    to the maximum in ``max_file`` (Rancid §IV-A1: a floor at the top pins the frequency under
    any governor), for CPU policies and devfreq devices alike. ``show`` formats a frequency."""
    old = root.read_bytes(min_file)
    low = root.read_int(min_file)
    top = root.read_int(max_file)
    if old is None or low is None or top is None:
        names = f"{min_file.rpartition('/')[2]}/{max_file.rpartition('/')[2]}"
        plan.unavailable.append({"name": owner, "reason": f"{why}, and {names} unreadable"})
        return
    if low >= top:
        plan.already.append(f"{label}: minimum frequency already at the maximum")
        return
    plan.changes.append(Change(setting, f"/{min_file}", old, f"{top}\n".encode(),
                               f"{why}: minimum frequency raised to the maximum {show(top)}"))


def _policy_dirs(root: SysRoot, cpus: list[int] | None) -> list[tuple[list[int], str]]:
    """cpufreq directories of the online CPUs (shared policies once), with their CPUs."""
    seen: dict[str, tuple[list[int], str]] = {}
    for cpu in cpu_ids(root) if cpus is None else cpus:
        if root.read_int(f"{CPU_DIR}/cpu{cpu}/online") == 0:
            continue
        rel = cpufreq_dir(root, cpu)
        if rel is None:
            continue
        real = root.identity(rel)
        if real in seen:
            seen[real][0].append(cpu)
        else:
            seen[real] = ([cpu], rel)
    return list(seen.values())


class CpuGovernor(Setting):
    """Set the cpufreq governor (default ``performance``) of every online CPU.

    When the governor is not available and it is the default ``performance``, the minimum
    scaling frequency is raised to the maximum instead (Rancid §IV-A1). A governor asked for
    by name that is not available is an error.
    """

    name = "governor"

    def __init__(self, governor: str = "performance", cpus: list[int] | None = None,
                 explicit: bool = False) -> None:
        self.governor = governor
        self.cpus = cpus
        self.explicit = explicit

    def plan(self, root: SysRoot, plan: Plan) -> None:
        policies = _policy_dirs(root, self.cpus)
        if not policies:
            plan.unavailable.append({
                "name": self.name,
                "reason": f"no cpufreq files under /{CPU_DIR}/cpu*/cpufreq (frequency scaling is "
                          "not exposed; on a virtual machine the host controls it)"})
            return
        for cpus, rel in policies:
            label = f"CPU {format_cpulist(cpus)}"
            current = root.read_bytes(f"{rel}/{GOVERNOR_FILE}")
            if current is None:
                plan.unavailable.append({"name": self.name,
                                         "reason": f"{label}: {rel}/{GOVERNOR_FILE} unreadable"})
                continue
            available = (root.read(f"{rel}/scaling_available_governors") or "").split()
            if current.decode(errors="replace").strip() == self.governor:
                plan.already.append(f"{label}: governor already {self.governor}")
                continue
            if self.governor in available:
                plan.changes.append(Change(self.name, f"/{rel}/{GOVERNOR_FILE}", current,
                                           f"{self.governor}\n".encode(),
                                           f"{label}: governor {self.governor}"))
                continue
            if self.explicit:
                raise SystemControlError(
                    f"{label}: governor {self.governor!r} is not available "
                    f"(available: {', '.join(available) or 'none listed'})")
            self._min_to_max(root, rel, label, plan, available)

    def _min_to_max(self, root: SysRoot, rel: str, label: str, plan: Plan,
                    available: list[str]) -> None:
        why = f"{label}: no {self.governor} governor (available: {' '.join(available) or 'none'})"
        plan_min_to_max(root, plan, self.name, "min_freq", label, why,
                        f"{rel}/{MIN_FREQ_FILE}", f"{rel}/scaling_max_freq",
                        lambda top: f"{top} kHz")


class Boost(Setting):
    """Switch boost/turbo off: ``cpufreq/boost`` → 0 and ``intel_pstate/no_turbo`` → 1."""

    name = "boost"

    def plan(self, root: SysRoot, plan: Plan) -> None:
        found = False
        for path, on, off in BOOST_SWITCHES:
            rel = path.lstrip("/")
            raw = root.read_bytes(rel)
            if raw is None:
                continue
            found = True
            value = root.read_int(rel)
            if value is None:
                plan.unavailable.append({"name": self.name,
                                         "reason": f"/{rel} does not hold a number"})
            elif value == on:
                plan.changes.append(Change(self.name, f"/{rel}", raw, off, "boost/turbo off"))
            else:
                plan.already.append(f"/{rel}: boost/turbo already off")
        if not found:
            plan.unavailable.append({
                "name": self.name,
                "reason": f"no /{CPU_DIR}/cpufreq/boost or intel_pstate/no_turbo file"})


class DevfreqGovernor(Setting):
    """Fix the frequency of devfreq devices: GPUs and memory buses (Rancid §III-A, §IV-A1).

    Each device gets the ``performance`` governor when it has one; otherwise its ``min_freq`` is
    raised to its ``max_freq`` (the authors' fix for the Mali GPUs of the XU3 and P8L, which had
    no performance governor). Frequencies are in Hz. ``kinds`` limits the devices (``gpu``,
    ``memory``, ``other``, from their names: :func:`~.devices.devfreq_kind`); ``devices`` names
    them. Because a governor may reset ``min_freq`` when the device gets hot (§IV-A1), a run
    re-checks it between runs (:class:`~.actions.KeepMinFreqAction`).
    """

    name = "devfreq"

    def __init__(self, governor: str = "performance", kinds: tuple[str, ...] | None = None,
                 devices: list[str] | None = None) -> None:
        self.governor = governor or "performance"
        self.kinds = kinds
        self.devices = devices

    def plan(self, root: SysRoot, plan: Plan) -> None:
        names = devfreq_names(root)
        if self.devices is not None:
            missing = [d for d in self.devices if d not in names]
            if missing:
                raise SystemControlError(f"no devfreq device {', '.join(missing)} under "
                                         f"/{DEVFREQ_DIR} (found: {', '.join(names) or 'none'})")
            names = [n for n in names if n in self.devices]
        if self.kinds is not None:
            names = [n for n in names if devfreq_kind(n) in self.kinds]
        if not names:
            plan.unavailable.append({"name": self.name,
                                     "reason": f"no devfreq device under /{DEVFREQ_DIR} (no GPU "
                                               "or memory-bus frequency control)"})
            return
        for dev in names:
            self._device(root, dev, plan)

    def _device(self, root: SysRoot, dev: str, plan: Plan) -> None:
        base = f"{DEVFREQ_DIR}/{dev}"
        label = f"devfreq {dev} ({devfreq_kind(dev)})"
        current = root.read_bytes(f"{base}/{DEVFREQ_GOVERNOR_FILE}")
        available = (root.read(f"{base}/available_governors") or "").split()
        if current is not None and current.decode(errors="replace").strip() == self.governor:
            plan.already.append(f"{label}: governor already {self.governor}")
            return
        if current is not None and self.governor in available:
            plan.changes.append(Change(self.name, f"/{base}/{DEVFREQ_GOVERNOR_FILE}", current,
                                       f"{self.governor}\n".encode(),
                                       f"{label}: governor {self.governor}"))
            return
        why = f"{label}: no {self.governor} governor (available: {' '.join(available) or 'none'})"
        plan_min_to_max(root, plan, self.name, "devfreq_min_freq", label, why,
                        f"{base}/{DEVFREQ_MIN_FILE}", f"{base}/max_freq",
                        lambda top: f"{top / 1e6:g} MHz")


#: the settings whose changes a governor may undo when the device gets hot (§IV-A1): re-checked
#: and re-applied between runs
MIN_FREQ_SETTINGS = ("min_freq", "devfreq_min_freq")


def make_plan(root: SysRoot, governor: str = "performance", boost_off: bool = True,
              cpus: list[int] | None = None, explicit_governor: bool = False,
              devfreq: bool = True, devfreq_kinds: tuple[str, ...] | None = None,
              devfreq_devices: list[str] | None = None) -> Plan:
    """The changes that tuning ``root`` would make (boost first, then CPU governors, then the
    devfreq devices: GPUs and memory buses)."""
    plan = Plan()
    settings: list[Setting] = []
    if boost_off:
        settings.append(Boost())
    if governor:
        settings.append(CpuGovernor(governor, cpus, explicit=explicit_governor))
    if devfreq:
        settings.append(DevfreqGovernor("performance", devfreq_kinds, devfreq_devices))
    for setting in settings:
        setting.plan(root, plan)
    for change in plan.changes:  # a setting may only write what the allow-list names
        check_allowed(change.path, f"setting {change.setting}: file")
    return plan


def not_permitted(root: SysRoot, plan: Plan, can_write: CanWrite = default_can_write) -> list[str]:
    """The files of ``plan`` this process may not write."""
    return [c.path for c in plan.changes if not root.may_write(c.path, can_write)]


def check_targets(root: SysRoot, plan: Plan) -> None:
    """Refuse ``plan`` before anything is written when one of its files is not on the allow-list
    as named or as resolved (a symlink out of the allowed files)."""
    for change in plan.changes:
        resolve_target(root, change.path)


def apply_plan(root: SysRoot, plan: Plan, journal: Journal,
               write: Writer = write_file) -> list[str]:
    """Write the changes, journaling each original first; restore everything on a failure.

    Signals are recorded while the writes happen and honoured afterwards
    (:func:`~steadybench.system.signals.protected`), so a Ctrl-C cannot leave a half-tuned
    machine without its journal entry. Returns the paths written.
    """
    check_targets(root, plan)
    written: list[str] = []
    with protected():
        for change in plan.changes:
            journal.record(change.path, change.old, change.new, change.setting)
            try:
                write_setting(root, change.path, change.new, write)
            except (OSError, SystemControlError) as exc:
                why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
                try:
                    journal.restore(write)
                except SystemControlError as again:
                    raise SystemControlError(
                        f"writing {change.path} failed ({why}); restoring the rest: {again}"
                    ) from exc
                raise SystemControlError(
                    f"writing {change.path} failed ({why}); the {len(written)} file(s) already "
                    "changed were restored") from exc
            written.append(change.path)
    return written


def tune(root: SysRoot, journal_path: str | os.PathLike[str], *, governor: str = "performance",
         boost_off: bool = True, cpus: list[int] | None = None, explicit_governor: bool = False,
         dry_run: bool = False, can_write: CanWrite | None = None,
         write: Writer = write_file, wait_lock: bool = False,
         on_wait: Callable[[str], None] | None = None, devfreq: bool = True) -> dict[str, Any]:
    """Tune ``root`` (see the module docstring). Returns a report dict:

    ``{"changed": [...], "would_change": [...], "not_permitted": [...], "unavailable": [...],
    "already": [...], "journal": path}``. Without permission for every file, nothing is written
    and ``not_permitted`` lists the files. The writes hold the machine's tuning lock: while a
    tuned run holds it, this raises :class:`~steadybench.system.lock.LockBusy` (or waits, with
    ``wait_lock``). The lock is taken *before* the machine is read (issue 27 item 11): read
    during another run, the machine looked tuned already, ``tune`` said "nothing to change",
    and that run's restore then undid what the user believed done. A dry run takes no lock;
    ``held_by`` then names the run whose settings it may be reading.
    """
    lock = TuningLock(root)
    with contextlib.ExitStack() as stack:
        if dry_run:
            held_by = lock.holder()
        else:
            stack.enter_context(lock.held(wait_lock, on_wait))
            held_by = None
        plan = make_plan(root, governor, boost_off, cpus, explicit_governor, devfreq)
        report: dict[str, Any] = {"changed": [],
                                  "would_change": [c.describe() for c in plan.changes],
                                  "not_permitted": [], "unavailable": plan.unavailable,
                                  "already": plan.already, "journal": str(journal_path),
                                  "held_by": held_by}
        if dry_run or not plan.changes:
            return report
        denied = not_permitted(root, plan, can_write or default_can_write)
        if denied:
            report["not_permitted"] = denied
            return report
        check_targets(root, plan)
        journal = Journal.open(journal_path, root)
        apply_plan(root, plan, journal, write)
    report["changed"] = report.pop("would_change")
    report["would_change"] = []
    return report
