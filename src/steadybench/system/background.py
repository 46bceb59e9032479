"""Stopping named background processes for the benchmark (Rancid §III-D, §IV-A4).

Rancid kills non-critical Android applications before each benchmark and measures that
restarting them costs more than it gains when done repeatedly (Fig. 11); it also notes that
only root can stop system applications. steadybench *suspends* the named processes instead of
killing them: ``SIGSTOP`` before the benchmark, ``SIGCONT`` when it ends, so nothing restarts
and nothing is lost. Each stopped process is written to a journal (PID, start time, name)
*before* it is stopped, so ``steadybench system reset`` continues it after a ``kill -9``; the
start time guards against continuing another process that reused the PID.

Processes are found by their command name (``/proc/PID/comm``, else the name in
``/proc/PID/stat``) under the machine's root; the kernel cuts that name to 15 bytes, so a longer
name given matches on its first or last 15 characters. PID 1, this process and its parents are
never stopped. Stopping another user's process needs root (``EPERM`` is reported, the others go
on). The ``background`` countermeasure and, on this machine, ``apps``
(:mod:`steadybench.targets.apps`) both stop processes through :class:`StopProcessesAction`.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import ConfigurationError
from ..runner.actions import Action, RunContext
from . import signals
from .journal import Journal, run_journal_path
from .lock import TuningLock
from .process import start_time
from .sysfs import SysRoot

Kill = Callable[[int, int], None]

#: the kernel keeps this many bytes of a command name (``TASK_COMM_LEN`` − 1)
COMM_BYTES = 15


def matches(comm: str, names: list[str]) -> bool:
    """Whether the kernel name ``comm`` is one of ``names`` (cut as the kernel cuts them)."""
    return any(comm in (n, n[:COMM_BYTES], n[-COMM_BYTES:]) for n in names)


def protected_pids(root: SysRoot) -> set[int]:
    """PIDs never stopped: 1, this process and its parents (the shell that started it)."""
    pids = {1, os.getpid(), os.getppid()}
    pid = os.getppid()
    while pid > 1 and len(pids) < 64:
        text = root.read(f"proc/{pid}/stat")
        try:
            pid = int(text.rpartition(")")[2].split()[1]) if text else 0
        except (IndexError, ValueError):
            break
        pids.add(pid)
    return pids


def process_name(root: SysRoot, pid: int) -> str | None:
    """The command name of ``pid`` under ``root`` (``comm``, else the one in ``stat``)."""
    name = root.read(f"proc/{pid}/comm")
    if name:
        return name
    text = root.read(f"proc/{pid}/stat")
    if not text or "(" not in text:
        return None
    return text.partition("(")[2].rpartition(")")[0] or None


def find_processes(root: SysRoot, names: list[str],
                   exclude: set[int] | None = None) -> list[dict[str, Any]]:
    """The processes under ``root`` whose command name is one of ``names`` (see
    :func:`matches`): ``{pid, name, start_time}``, the :func:`protected_pids` excluded."""
    skip = protected_pids(root) | (exclude or set())
    found = []
    for entry in root.listdir("proc"):
        if not entry.isdigit() or int(entry) in skip:
            continue
        pid = int(entry)
        name = process_name(root, pid)
        if name is not None and matches(name, names):
            found.append({"pid": pid, "name": name, "start_time": start_time(root, pid)})
    return found


class StopProcessesAction(Action):
    """SIGSTOP the processes named ``names`` before the benchmark; SIGCONT them in ``close``.

    Journalled (see the module notes) in ``run-<pid>-processes.json``; the signal handlers of
    :mod:`.signals` are installed while processes are stopped, so SIGINT/SIGTERM unwind
    through ``close``. Names that match nothing are listed in ``machine.not_running``.

    Stopping processes changes the machine, so it holds the machine's tuning lock
    (:class:`~.lock.TuningLock`) while they are stopped, as tuning does: two steadybench runs
    stopping the same processes would otherwise resume each other's (the first to end sends
    SIGCONT while the other still measures), silently. The second one refuses in one line
    naming the holder, or waits for it with ``wait_lock``.
    """

    def __init__(self, root: SysRoot, names: list[str], kill: Kill = os.kill,
                 journal: str | os.PathLike[str] | None = None, wait_lock: bool = False,
                 lock: TuningLock | None = None) -> None:
        if not names or not all(isinstance(n, str) and n for n in names):
            raise ConfigurationError("background: name the processes to stop")
        self.root = root
        self.names = list(names)
        self.kill = kill
        self.journal_path = Path(journal) if journal else None
        self.wait_lock = wait_lock
        self.lock = lock or TuningLock(root)
        self._locked = False
        self._journal: Journal | None = None
        self._guarded = False

    def __call__(self, ctx: RunContext) -> None:
        if self._journal is not None:
            return
        info = ctx.case.extra.setdefault("machine", {})
        found = find_processes(self.root, self.names)
        info["not_running"] = [n for n in self.names
                                if not any(matches(p["name"], [n]) for p in found)]
        info["stopped_processes"] = []
        if not found:
            return
        self.lock.acquire(self.wait_lock)  # LockBusy names the holder
        self._locked = True
        self._guarded = signals.install()
        start = ctx.now()
        with signals.protected():
            journal = Journal.open(self.journal_path or run_journal_path(part="processes"),
                                   self.root)
            journal.claim()
            self._journal = journal
            for proc in found:
                entry = {"kind": "sigcont", "pid": proc["pid"],
                         "start_time": proc["start_time"], "name": proc["name"]}
                journal.record_undo(entry)
                try:
                    self.kill(proc["pid"], signal.SIGSTOP)
                except (ProcessLookupError, PermissionError) as exc:
                    # not stopped: nothing to undo for it
                    journal.undo = [u for u in journal.undo if u["pid"] != proc["pid"]]
                    journal.save()
                    if isinstance(exc, PermissionError):
                        ctx.warn(f"background: not permitted to stop {proc['name']} "
                                 f"({proc['pid']}); needs root")
                    continue
                info["stopped_processes"].append({"pid": proc["pid"], "name": proc["name"]})
        costs = info.setdefault("costs", {})
        costs["background"] = {"time_s": round(ctx.now() - start, 9),
                               "rounds": len(info["stopped_processes"]), "runs": 0,
                               "max_s": round(ctx.now() - start, 9)}

    def close(self, ctx: RunContext) -> None:
        journal, self._journal = self._journal, None
        try:
            if journal is not None:
                signals.restore_quietly(lambda: journal.restore(kill=self.kill), ctx,
                                        "background")
        finally:
            if self._guarded:
                self._guarded = False
                signals.uninstall()
            if self._locked:
                self._locked = False
                self.lock.release()

    def describe(self) -> str:
        return f"stop {', '.join(self.names)} while benchmarking (SIGSTOP, SIGCONT at the end)"
