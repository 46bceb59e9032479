"""``steadybench system reset``: restore the journals, trusting none blindly (issue 12).

Every journal of the state directory, or the ones named, is restored newest first, byte for
byte (:meth:`~steadybench.system.journal.Journal.restore`). What is refused or skipped, and
why, is in :func:`reset`; the rules themselves live in :mod:`.privatefiles` (owner and mode),
:mod:`.allowlist` (which files), :mod:`.writer` (no symlinks followed), :mod:`.process` (PID
reuse) and :mod:`.lock` (one tuning of a machine at a time).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import SystemControlError
from .journal import Journal, is_run_journal, scan_journals
from .lock import TuningLock
from .process import liveness
from .signals import protected
from .sysfs import SysRoot
from .writer import Writer, write_file


def _lock_for(locks: dict[Path, TuningLock], root: SysRoot, wait: bool,
              on_wait: Callable[[str], None] | None) -> None:
    if root.root not in locks:
        lock = TuningLock(root)
        lock.acquire(wait, on_wait)
        locks[root.root] = lock


def reset(journal_paths: list[Path] | None = None, *, root: SysRoot | None = None,
          write: Writer = write_file, wait_lock: bool = False,
          on_wait: Callable[[str], None] | None = None,
          directory: Path | None = None) -> dict[str, Any]:
    """Restore the journals given (default: every journal in the state directory, newest first,
    skipping those of runs still alive). Returns ``{"restored": [...], "skipped": [...],
    "orphans": [...], "failed": [...], "journals": [...]}``.

    - It holds the tuning lock of each root it restores (of ``root`` from the start when given):
      while a tuned run holds it, this raises :class:`~steadybench.system.lock.LockBusy`, or
      waits with ``wait_lock``. A run's journal disappears when that run restores it.
    - A file named like a journal that is not a regular file (a symlink, a FIFO, a directory)
      is listed under ``skipped`` and never opened.
    - A run journal whose PID is alive is skipped unless the process now holding that PID
      started at another time than the one recorded: then its run is gone, and the journal is
      restored and listed under ``orphans`` as well.
    - A journal named explicitly that cannot be used raises. Otherwise a journal that is
      refused (owner, mode), corrupt, written for another root or not fully restorable does not
      stop the others: it is listed under ``failed`` (and left in place).

    Signals are recorded while journals are restored and honoured at the end.
    """
    explicit = journal_paths is not None
    if explicit:
        paths, strays = list(journal_paths or []), []
    else:
        paths, strays = scan_journals(directory)
    report: dict[str, Any] = {"restored": [], "skipped": list(strays), "orphans": [],
                              "failed": [], "journals": [str(p) for p in paths]}
    locks: dict[Path, TuningLock] = {}
    try:
        if root is not None:
            _lock_for(locks, root, wait_lock, on_wait)
        with protected():
            for path in paths:
                _reset_one(Path(path), explicit, root, report, locks, write, wait_lock,
                           on_wait)
    finally:
        for lock in locks.values():
            lock.release()
    return report


def _reset_one(path: Path, explicit: bool, root: SysRoot | None, report: dict[str, Any],
               locks: dict[Path, TuningLock], write: Writer, wait_lock: bool,
               on_wait: Callable[[str], None] | None) -> None:
    try:
        journal = Journal.load(path)
        if root is not None and journal.root.root != root.root:
            raise SystemControlError(f"journal {path} was written for root "
                                     f"{journal.root.root}, not {root.root} "
                                     "(pass the same --root)")
    except SystemControlError as exc:
        if explicit:
            raise
        report["failed"].append(str(exc))
        return
    if not explicit and is_run_journal(path) and journal.pid != os.getpid():
        state = liveness(journal.root.process_root(), journal.pid, journal.start_time)
        if state == "alive":
            report["skipped"].append(f"{path}: run {journal.pid} is still running")
            return
        if state == "reused":
            report["orphans"].append(
                f"{path}: pid {journal.pid} now belongs to another process (not the one that "
                f"started at tick {journal.start_time}); its run is gone")
    _lock_for(locks, journal.root, wait_lock, on_wait)
    try:
        report["restored"].extend(journal.restore(write))
    except SystemControlError as exc:
        report["failed"].append(str(exc))
