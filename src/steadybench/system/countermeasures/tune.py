"""The ``tune`` countermeasure: fix the CPU frequency (performance governor or minimum raised to
maximum), boost off; journaled and restored.

Its preset builder and the action it adds, in one module (pyperf keeps one ``Operation``
per setting the same way); registered as ``tune`` in
:data:`steadybench.registry.countermeasures`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, ClassVar

from ...errors import SystemControlError
from ...runner.actions import Action, RunContext
from ...runner.runner import Stage
from .. import signals
from ..actions import (
    RESTORE_ATTEMPTS,
    machine_extra,
    record_cost,
)
from ..journal import Journal, run_journal_path
from ..lock import TuningLock
from ..sysfs import SysRoot
from ..tuning import (
    MIN_FREQ_SETTINGS,
    CanWrite,
    apply_plan,
    check_targets,
    default_can_write,
    make_plan,
    not_permitted,
)
from ..writer import Writer, write_file, write_setting
from .base import Built, Countermeasure, PresetMachine, Skip, frequency_fixed_by


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
        info = machine_extra(ctx)
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
        machine_extra(ctx)["restore_failed"] = message

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
        record_cost(ctx, "keep_min_freq", ctx.now() - start, again)

    def describe(self) -> str:
        return "re-apply the raised minimum frequencies before each run"


class Tune(Countermeasure):
    """Governor and boost, devfreq devices (GPU, memory bus), restored at the end (before the
    benchmark); the raised minimum frequencies are re-checked before every run (§IV-A1)."""

    options: ClassVar[dict[str, Any]] = {"governor": "performance", "boost_off": True,
                                         "devfreq": True, "keep_min_freq": True}

    def build(self, machine: PresetMachine, o: dict[str, Any]) -> Built:
        governor = str(o["governor"] or "")
        explicit = "governor" in machine.preset.options.get("tune", {})
        devfreq = bool(o["devfreq"])
        plan = make_plan(machine.root, governor, bool(o["boost_off"]),
                         explicit_governor=explicit, devfreq=devfreq)
        cpu_unavailable = any(u["name"] == "governor" for u in plan.unavailable)
        if not plan.changes:
            if plan.already and not cpu_unavailable:
                machine.governor_set = True
                machine.frequency_fixed_by = "settings already in place"
                return [], "already tuned: " + "; ".join(plan.already)
            raise Skip("; ".join(u["reason"] for u in plan.unavailable) or "nothing to change")
        denied = not_permitted(machine.root, plan, machine.can_write)
        if denied:
            raise Skip(f"needs root: not permitted to write {', '.join(denied)}")
        machine.governor_set = not cpu_unavailable and any(
            c.setting in ("governor", "min_freq") for c in plan.changes) or (
            not cpu_unavailable and any("governor already" in a or "minimum frequency already"
                                        in a for a in plan.already if a.startswith("CPU")))
        machine.frequency_fixed_by = frequency_fixed_by(plan)
        machine.planned.update({c.path: c.new for c in plan.changes})
        action = TuneAction(machine.root, governor, bool(o["boost_off"]),
                            can_write=machine.can_write, explicit_governor=explicit,
                            devfreq=devfreq)
        stages: list[tuple[Stage, Action]] = [(Stage.BEFORE_BENCHMARK, action)]
        detail = "; ".join(c.describe() for c in plan.changes)
        if o["keep_min_freq"] and any(c.setting in ("min_freq", "devfreq_min_freq")
                                      for c in plan.changes):
            keep = KeepMinFreqAction(action)
            stages.append((Stage.BEFORE_RUN, keep))
            detail += f"; {keep.describe()}"
        return stages, f"{action.describe()}: {detail}"
