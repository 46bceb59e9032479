"""The restore journal: every original value is saved before anything is written.

Tools that tune a machine for benchmarking often leave it tuned when they crash. steadybench
writes the original bytes of a tuned file to a journal (atomically, with an fsync) *before* it
writes the new value, so ``steadybench system reset`` can put every file back byte for byte
after an exception, a signal, a crash or a ``kill -9``.

A journal is trusted only as far as it must be (issue 12, items 3-5): it lives in a private
state directory and is written 0600 (:mod:`.privatefiles`); it is read only when it is a regular
file owned by root or the current user and writable by nobody else; it may name only the files
on the allow-list (:mod:`.allowlist`), each original at most a page long; and it records the
PID *and the start time* of the process that wrote it (:mod:`.process`), so a reused PID does
not make its journal look alive.

File format (JSON): ``{"format": "steadybench-journal", "version": 2, "root": ..., "pid": ...,
"start_time": ..., "created": ..., "entries": [{"path": "/sys/...", "original_b64": ...,
"new_b64": ..., "setting": ...}], "undo": [...]}``; entries are in the order the files were
written and are restored in reverse. ``undo`` (version 3) lists what is not a file: processes
stopped with SIGSTOP (``{"kind": "sigcont", "pid", "start_time", "name"}``: continued with
SIGCONT if the same process still holds the PID) and NVIDIA clocks locked through NVML
(``{"kind": "gpu_clocks", "index", "uuid", "mhz"}``: reset). Versions 1 (no ``start_time``)
and 2 (no ``undo``) are still read.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import signal
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import SystemControlError
from ..model.results import now_iso
from .allowlist import check_allowed
from .privatefiles import ensure_private_dir, read_private, write_private
from .process import pid_alive, start_time
from .sysfs import SysRoot, open_root
from .testhooks import restore_gate
from .writer import Writer, file_kind, write_file, write_setting

#: how an ``undo`` entry of each kind besides ``sigcont`` is undone: kind → ``"module:function"``
#: taking the entry and returning what was done (imported when a journal holds such an entry,
#: so the journal does not import the modules that write to it)
UNDO_HANDLERS: dict[str, str] = {"gpu_clocks": "steadybench.system.nvidia:undo_gpu_clocks"}

FORMAT = "steadybench-journal"
VERSION = 3
READABLE_VERSIONS = (1, 2, 3)
#: the kinds of ``undo`` entries (see the module notes)
UNDO_KINDS = ("sigcont", "gpu_clocks")
TUNE_JOURNAL = "tune.json"
RUN_PREFIX = "run-"
#: a sysfs attribute holds at most a page; a longer "original" is not one
MAX_VALUE_BYTES = 4096
#: how a restore failure begins when every setting was put back and only the journal stayed
RESTORED_BUT = "the machine was restored, but its journal"


def restore_heading(messages: list[str]) -> str:
    """The words an error line about restore failures starts with, true in each case: the
    settings were not all restored, or they were and only a journal could not be removed
    (a state directory made immutable during the run: issue 27 item 14)."""
    if messages and all(RESTORED_BUT in m for m in messages):
        return "machine settings restored, but a restore journal was left behind"
    return "machine settings not restored"

__all__ = ["Entry", "Journal", "Writer", "default_journal_path", "find_journals", "pid_alive",
           "run_journal_path", "scan_journals", "state_dir", "write_file"]


def state_dir() -> Path:
    """``$XDG_STATE_HOME/steadybench``, else ``~/.local/state/steadybench``."""
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"),
                                                             ".local", "state")
    return Path(base) / "steadybench"


def default_journal_path() -> Path:
    """Where ``steadybench system tune`` keeps its journal."""
    return state_dir() / TUNE_JOURNAL


def run_journal_path(pid: int | None = None, part: str = "",
                     directory: Path | None = None) -> Path:
    """The journal of a tuned benchmark run (one per process, so runs and ``tune`` never mix;
    ``part`` names a separate one for another countermeasure of the same run, e.g.
    ``processes``), in ``directory`` (a remote target's own folder) or the state directory."""
    suffix = f"-{part}" if part else ""
    return (directory or state_dir()) / \
        f"{RUN_PREFIX}{os.getpid() if pid is None else pid}{suffix}.json"


def is_journal_name(name: str) -> bool:
    """``tune.json`` or ``run-*.json``: the names ``system reset`` looks for."""
    return name == TUNE_JOURNAL or (name.startswith(RUN_PREFIX) and name.endswith(".json"))


def is_run_journal(path: Path) -> bool:
    return path.name.startswith(RUN_PREFIX)


def _check_rel(rel: Any) -> str:
    if not isinstance(rel, str) or ".." in Path(rel).parts:
        raise SystemControlError(f"journal entry {rel!r} is not a plain path")
    return check_allowed(rel, "journal entry")


def _value(text: Any, what: str) -> bytes:
    data = base64.b64decode(text, validate=True)
    if len(data) > MAX_VALUE_BYTES:
        raise ValueError(f"{what} of {len(data)} bytes (a sysfs value is at most "
                         f"{MAX_VALUE_BYTES})")
    return data


@dataclass
class Entry:
    path: str  # relative to the root, with a leading slash
    original: bytes
    new: bytes
    setting: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "setting": self.setting,
                "original_b64": base64.b64encode(self.original).decode("ascii"),
                "new_b64": base64.b64encode(self.new).decode("ascii"),
                "original": self.original.decode("utf-8", errors="replace").strip()}


def _check_undo(item: Any) -> dict[str, Any]:
    """An ``undo`` entry, validated (a journal could be forged: a PID must be a real process's,
    never 0, 1 or negative, which would signal a process group or init)."""
    if not isinstance(item, dict) or item.get("kind") not in UNDO_KINDS:
        raise ValueError(f"unknown undo entry {item!r}")
    if item["kind"] == "sigcont":
        pid = item.get("pid")
        if isinstance(pid, bool) or not isinstance(pid, int) or pid <= 1:
            raise ValueError(f"undo entry with PID {pid!r}")
        started = item.get("start_time")
        if started is not None and (isinstance(started, bool) or not isinstance(started, int)):
            raise ValueError(f"undo entry with start time {started!r}")
        return {"kind": "sigcont", "pid": pid, "start_time": started,
                "name": str(item.get("name", ""))[:64]}
    index = item.get("index")
    if isinstance(index, bool) or not isinstance(index, int) or index < 0:
        raise ValueError(f"undo entry with GPU index {index!r}")
    return {"kind": "gpu_clocks", "index": index, "uuid": str(item.get("uuid", ""))[:128],
            "mhz": item.get("mhz")}


Kill = Callable[[int, int], None]


@dataclass
class Journal:
    """The original values of the files changed under ``root``, kept in the file ``path``."""

    path: Path
    root: SysRoot
    entries: list[Entry] = field(default_factory=list)
    pid: int = field(default_factory=os.getpid)
    created: str = field(default_factory=now_iso)
    start_time: int | None = None
    undo: list[dict[str, Any]] = field(default_factory=list)

    # ------------------------------------------------------------------ file
    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Journal:
        """Read a journal; a missing, refused, unreadable or corrupt one raises
        SystemControlError (:class:`~.privatefiles.RefusedFile` for owner, mode or type)."""
        path = Path(path)
        try:
            raw = read_private(path)
        except FileNotFoundError:
            raise SystemControlError(f"no restore journal at {path}") from None
        try:
            data = json.loads(raw.decode("utf-8"))  # not UTF-8: a ValueError, corrupt
            if not isinstance(data, dict) or data.get("format") != FORMAT:
                raise ValueError("not a steadybench journal")
            if data.get("version") not in READABLE_VERSIONS:
                raise ValueError(f"unknown journal version {data.get('version')!r}")
            root = open_root(data["root"])
            entries = [Entry(_check_rel(e["path"]), _value(e["original_b64"], "original"),
                             _value(e.get("new_b64", ""), "new value"),
                             str(e.get("setting", ""))) for e in data["entries"]]
            started = data.get("start_time")
            if started is not None and (isinstance(started, bool) or not isinstance(started, int)):
                raise ValueError(f"start_time {started!r} is not an integer")
            undo = [_check_undo(u) for u in data.get("undo", [])]
            return cls(path, root, entries, int(data.get("pid", 0)), str(data.get("created", "")),
                       started, undo)
        except SystemControlError as exc:
            raise SystemControlError(f"journal {path} is corrupt: {exc}; nothing was "
                                     "restored") from exc
        except RecursionError:  # nested deeper than the parser goes: not a journal
            raise SystemControlError(f"journal {path} is corrupt (nested too deeply to be a "
                                     "journal); nothing was restored. Check the files it names "
                                     "by hand, then delete it") from None
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise SystemControlError(f"journal {path} is corrupt ({exc}); nothing was restored. "
                                     "Check the files it names by hand, then delete it") from exc

    @classmethod
    def open(cls, path: str | os.PathLike[str], root: SysRoot) -> Journal:
        """Load the journal at ``path`` if it exists (its originals win), else start a new one."""
        path = Path(path)
        if os.path.lexists(path):
            journal = cls.load(path)
            if journal.root.root != root.root:
                raise SystemControlError(
                    f"journal {path} belongs to root {journal.root.root}, not {root.root}; "
                    "run `steadybench system reset` for that root first")
            return journal
        return cls(path, root)

    def claim(self) -> None:
        """Record this process (PID and start time, read through the root's ``/proc``) as the
        one the journal belongs to."""
        self.pid = os.getpid()
        self.start_time = start_time(self.root.process_root(), self.pid)

    def save(self) -> None:
        data = {"format": FORMAT, "version": VERSION, "root": str(self.root.root),
                "pid": self.pid, "start_time": self.start_time, "created": self.created,
                "entries": [e.to_dict() for e in self.entries], "undo": self.undo}
        try:
            folder = self.path.parent
            ensure_private_dir(folder, strict=folder == state_dir() or self.root.remote)
            write_private(self.path, (json.dumps(data, indent=1) + "\n").encode("utf-8"))
        except SystemControlError as exc:
            raise SystemControlError(f"cannot save the restore journal: {exc}") from exc

    def remove(self) -> None:
        """Delete the journal. When its folder no longer allows it (made immutable or read-only
        during the run: issue 27 item 14) the journal is emptied in place if it can be (a
        journal with nothing to restore is harmless to a later run) and a SystemControlError
        says so: the caller's restore-failure path writes the results and exits non-zero."""
        try:
            self.path.unlink()
        except FileNotFoundError:
            return
        except OSError as exc:
            why = exc.strerror or str(exc)
            self.entries, self.undo = [], []
            try:
                self.save()
                left = "it was emptied (nothing left to restore)"
            except SystemControlError as again:
                left = f"it still lists the changes ({again})"
            raise SystemControlError(
                f"{RESTORED_BUT} {self.path} could not be removed "
                f"({why}); {left}: remove it by hand") from exc

    # ------------------------------------------------------------------ changes
    def has(self, rel: str) -> bool:
        return any(e.path == rel for e in self.entries)

    def record(self, rel: str, original: bytes, new: bytes, setting: str = "") -> None:
        """Save the original of ``rel`` (unless already saved) and flush the journal to disk."""
        _check_rel(rel)
        if not self.has(rel):
            self.entries.append(Entry(rel, original, new, setting))
        self.save()

    def record_undo(self, item: dict[str, Any]) -> None:
        """Save something to undo that is not a file (see the module notes), then flush."""
        item = _check_undo(item)
        if item not in self.undo:
            self.undo.append(item)
        self.save()

    def _undo_one(self, item: dict[str, Any], kill: Kill) -> str | None:
        """Undo one ``undo`` entry; return what was done (None: nothing left to do)."""
        if item["kind"] == "sigcont":
            from .process import start_time as started_at

            now = started_at(self.root, item["pid"])
            if now is None or (item["start_time"] is not None and now != item["start_time"]):
                return None  # the process is gone (or its PID is another's): nothing to resume
            try:
                kill(item["pid"], signal.SIGCONT)
            except ProcessLookupError:
                return None
            return f"process {item['pid']} ({item['name']}) continued"
        import importlib

        module, _, name = UNDO_HANDLERS[item["kind"]].partition(":")
        done: str | None = getattr(importlib.import_module(module), name)(item)
        return done

    def restore(self, write: Writer = write_file, remove: bool = True,
                kill: Kill = os.kill) -> list[str]:
        """Write every original back, newest change first; remove the journal when all succeed.

        Idempotent: the file on disk changes only at the end, so a restore cut short by anything
        can simply be run again. Returns the paths restored. When some fail, the others are
        still restored, the journal keeps only the failed entries, and SystemControlError names
        them and says to run ``steadybench system reset``.
        """
        restored: list[str] = []
        failed: list[tuple[Entry, str]] = []
        for index, entry in enumerate(reversed(self.entries)):
            restore_gate(index)
            try:
                write_setting(self.root, entry.path, entry.original, write)
                restored.append(entry.path)
            except OSError as exc:
                failed.append((entry, exc.strerror or str(exc)))
            except SystemControlError as exc:
                failed.append((entry, str(exc)))
        undo_failed: list[tuple[dict[str, Any], str]] = []
        for item in reversed(self.undo):
            try:
                done = self._undo_one(item, kill)
            except (OSError, SystemControlError) as exc:
                undo_failed.append((item, str(exc)))
                continue
            if done:
                restored.append(done)
        self.undo = [u for u, _ in reversed(undo_failed)]
        if undo_failed and not failed:
            detail = "; ".join(f"{u['kind']} {u.get('pid', u.get('index'))}: {why}"
                               for u, why in undo_failed)
            with contextlib.suppress(SystemControlError):
                self.save()
            raise SystemControlError(f"could not undo {len(undo_failed)} change(s) ({detail}); "
                                     f"the journal {self.path} keeps them: fix the cause, then "
                                     "run `steadybench system reset`")
        if failed:
            self.entries = [e for e, _ in reversed(failed)]
            kept = f"the journal {self.path} keeps them"
            try:
                self.save()
            except SystemControlError as exc:
                kept = f"the journal {self.path} is unchanged ({exc})"
            detail = "; ".join(f"{e.path}: {why}" for e, why in failed)
            raise SystemControlError(
                f"could not restore {len(failed)} file(s) ({detail}); {kept}: fix the cause, "
                "then run `steadybench system reset`")
        self.entries = []
        if remove:
            self.remove()
        return restored


def scan_journals(directory: Path | None = None) -> tuple[list[Path], list[str]]:
    """The journals in the state directory (regular files named like one), newest first, and
    one line for each file named like a journal that is not a regular file (a symlink, a FIFO,
    a directory): those are left alone, and never opened (``lstat`` only)."""
    directory = directory or state_dir()
    try:
        names = os.listdir(directory)
    except FileNotFoundError:
        return [], []
    except OSError as exc:
        return [], [f"{directory}: cannot list it ({exc.strerror or exc})"]
    found: list[tuple[float, Path]] = []
    strays: list[str] = []
    for name in sorted(names):
        if not is_journal_name(name):
            continue
        path = directory / name
        try:
            st = os.lstat(path)
        except OSError:
            continue
        if not stat.S_ISREG(st.st_mode):
            strays.append(f"{path}: {file_kind(st.st_mode)}, not a journal; left alone")
            continue
        found.append((st.st_mtime, path))
    found.sort(key=lambda item: item[0], reverse=True)
    return [p for _, p in found], strays


def find_journals(directory: Path | None = None) -> list[Path]:
    """The journals in the state directory, newest first (see :func:`scan_journals`)."""
    return scan_journals(directory)[0]
