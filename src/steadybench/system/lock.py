"""One tuning of a machine at a time: an ``flock``-ed lock file (issue 12, item 2).

Two tuned runs that overlap restore out of order: run A saves ``powersave`` and sets
``performance``; run B saves ``performance`` and sets ``schedutil``; A ends and writes
``powersave``; B ends and writes ``performance``, which is where the machine stays. So whoever
changes a machine's settings (a tuned run for its whole length, ``system tune`` while it
writes, ``system reset`` while it restores) holds that machine's lock first; a second one
refuses with a line naming the holder, or waits for it with ``--wait-lock``. Runs that change
nothing take no lock and are never blocked.

The lock is ``flock(LOCK_EX)`` on a file: the kernel releases it when its holder dies, even by
``kill -9``, so it never goes stale. For the real machine, run as root, the file is
``/run/steadybench/tune.lock`` (one for every root user, whatever ``$HOME`` says); otherwise it is
in the private state directory, one file per root (a fake tree in the tests has its own). The
holder writes its PID, command line and start time into the file for the message of the
refused. On release the holder deletes the file while still holding it; one that gets the lock
of a deleted file notices (the inode under the name differs) and tries again, so two can never
hold it together.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import stat
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

from ..errors import SystemControlError
from ..model.results import now_iso
from . import journal as _journal
from .privatefiles import ensure_private_dir, trusted_owners
from .sysfs import SysRoot

LOCK_NAME = "tune.lock"
#: the system-wide place of the real machine's lock (root only)
SYSTEM_LOCK_DIR = Path("/run/steadybench")

#: locks this process holds: path -> [file descriptor, count] (acquire is re-entrant)
_HELD: dict[Path, list[int]] = {}


class LockBusy(SystemControlError):
    """Another process holds the tuning lock (the message names it)."""


def lock_path(root: SysRoot) -> Path:
    """The lock file of the machine at ``root`` (see the module docstring)."""
    if root.is_real and os.geteuid() == 0 and SYSTEM_LOCK_DIR.parent.is_dir():
        return SYSTEM_LOCK_DIR / LOCK_NAME
    if root.is_real:
        return _journal.state_dir() / LOCK_NAME
    digest = hashlib.sha256(str(root.root).encode()).hexdigest()[:16]
    return _journal.state_dir() / f"tune-{digest}.lock"


def _command_line() -> str:
    from ..redact import redact_argv

    words = [Path(sys.argv[0]).name if sys.argv and sys.argv[0] else "python",
             *redact_argv(sys.argv[1:])]
    text = " ".join(words)
    return text if len(text) <= 200 else text[:197] + "..."


def _printable(text: str) -> str:
    return "".join(c if c.isprintable() else "?" for c in text)


def describe_holder(fd: int) -> str:
    """Who holds the lock, from what it wrote in the file."""
    try:
        info = json.loads(os.pread(fd, 4096, 0).decode("utf-8"))
        return (f"pid {int(info['pid'])} ({_printable(str(info['command']))}), "
                f"since {_printable(str(info['since']))}")
    except (OSError, ValueError, KeyError, TypeError):
        return "a process that has not said who it is yet"


def _open_lock(path: Path) -> int:
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK,
                 0o600)
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode) or st.st_uid not in trusted_owners():
        os.close(fd)
        raise SystemControlError(f"lock file {path} is not a regular file of root or yours: "
                                 "remove it")
    return fd


def _still_named(fd: int, path: Path) -> bool:
    try:
        named = os.lstat(path)
    except FileNotFoundError:
        return False
    mine = os.fstat(fd)
    return (named.st_dev, named.st_ino) == (mine.st_dev, mine.st_ino)


class TuningLock:
    """The tuning lock of the machine at ``root`` (re-entrant within a process).

    Use :meth:`acquire` / :meth:`release`, or ``with lock.held(wait=...)``.
    """

    def __init__(self, root: SysRoot, path: Path | None = None) -> None:
        self.root = root
        self.path = path or lock_path(root)
        self._count = 0

    @property
    def is_held(self) -> bool:
        return self._count > 0

    def acquire(self, wait: bool = False, on_wait: Callable[[str], None] | None = None) -> bool:
        """Take the lock; when another process holds it, raise :class:`LockBusy` naming it, or
        with ``wait`` block until it is free (``on_wait`` is told once who is waited for).
        Returns whether it had to wait (what was read of the machine before may be stale)."""
        held = _HELD.get(self.path)
        if held is not None:
            held[1] += 1
            self._count += 1
            return False
        folder = self.path.parent
        ensure_private_dir(folder, strict=True)
        told = False
        while True:
            try:
                fd = _open_lock(self.path)
            except OSError as exc:
                raise SystemControlError(f"cannot open the tuning lock {self.path}: "
                                         f"{exc.strerror or exc}") from exc
            try:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    message = (f"another tuned run holds the tuning lock of root {self.root.root}"
                               f": {describe_holder(fd)}")
                    if not wait:
                        raise LockBusy(f"{message}; wait for it to end, or pass --wait-lock "
                                       f"(lock file {self.path})") from None
                    if not told and on_wait is not None:
                        on_wait(f"waiting: {message}")
                    told = True
                    fcntl.flock(fd, fcntl.LOCK_EX)
                if not _still_named(fd, self.path):  # the holder deleted it: try again
                    os.close(fd)
                    continue
                os.ftruncate(fd, 0)
                os.pwrite(fd, json.dumps({"pid": os.getpid(), "command": _command_line(),
                                          "since": now_iso()}).encode("utf-8"), 0)
            except BaseException:
                os.close(fd)
                raise
            _HELD[self.path] = [fd, 1]
            self._count += 1
            return told

    def release(self) -> None:
        """Undo one :meth:`acquire`; the last one deletes the lock file and unlocks it."""
        if self._count <= 0:
            return
        self._count -= 1
        held = _HELD.get(self.path)
        if held is None:
            return
        held[1] -= 1
        if held[1] > 0:
            return
        del _HELD[self.path]
        fd = held[0]
        try:
            if _still_named(fd, self.path):
                with contextlib.suppress(OSError):
                    os.unlink(self.path)
        finally:
            os.close(fd)  # closing the last descriptor releases the flock

    def holder(self) -> str | None:
        """Who holds the lock now, from what the holder wrote in the file (its PID, alive), or
        None when nobody seems to. Takes nothing, tests no lock (a test lock could make a run
        starting at that instant refuse) and creates no file: for messages only."""
        if _HELD.get(self.path) is not None:
            return None  # this process
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
        except OSError:
            return None
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return None
            try:
                pid = int(json.loads(os.pread(fd, 4096, 0).decode("utf-8"))["pid"])
                if pid <= 0:
                    return None
                os.kill(pid, 0)
            except PermissionError:
                pass  # alive, another user's
            except (OSError, ValueError, KeyError, TypeError):
                return None
            return describe_holder(fd)
        finally:
            os.close(fd)

    @contextlib.contextmanager
    def held(self, wait: bool = False,
             on_wait: Callable[[str], None] | None = None) -> Iterator[TuningLock]:
        self.acquire(wait, on_wait)
        try:
            yield self
        finally:
            self.release()
