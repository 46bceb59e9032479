"""The restore journal: every original value is saved before anything is written.

Tools that tune a machine for benchmarking often leave it tuned when they crash. steadybench
writes the original bytes of a sysfs/procfs file to a journal (atomically, with an fsync) *before*
it writes the new value, so ``steadybench system reset`` can put every file back byte for byte
after an exception, a signal, a crash or a ``kill -9``. A journal lists only files under the
root's ``/sys`` and ``/proc/sys``; :meth:`Journal.load` refuses any other path, so a corrupt or
tampered journal cannot make the tool write elsewhere.

File format (JSON): ``{"format": "steadybench-journal", "version": 1, "root": ..., "pid": ...,
"created": ..., "entries": [{"path": "/sys/...", "original_b64": ..., "new_b64": ...,
"setting": ...}]}``; entries are in the order the files were written and are restored in reverse.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import signal
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import SteadybenchError, SystemControlError
from ..fileio import atomic_write_text
from ..model.results import now_iso
from .sysfs import SysRoot

FORMAT = "steadybench-journal"
VERSION = 1
TUNE_JOURNAL = "tune.json"
#: only files under these directories (relative to the root) may be journaled and written
ALLOWED_PREFIXES = ("/sys/", "/proc/sys/")

Writer = Callable[[Path, bytes], None]


def state_dir() -> Path:
    """``$XDG_STATE_HOME/steadybench``, else ``~/.local/state/steadybench``."""
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"),
                                                             ".local", "state")
    return Path(base) / "steadybench"


def default_journal_path() -> Path:
    """Where ``steadybench system tune`` keeps its journal."""
    return state_dir() / TUNE_JOURNAL


def run_journal_path(pid: int | None = None) -> Path:
    """The journal of a tuned benchmark run (one per process, so runs and ``tune`` never mix)."""
    return state_dir() / f"run-{os.getpid() if pid is None else pid}.json"


def write_file(path: Path, data: bytes) -> None:
    """Write a sysfs/procfs file in place (such files cannot be replaced by a rename)."""
    with open(path, "wb", buffering=0) as handle:
        handle.write(data)


def _check_rel(rel: str) -> str:
    if not isinstance(rel, str) or ".." in Path(rel).parts or \
            not rel.startswith(ALLOWED_PREFIXES):
        raise SystemControlError(f"journal entry {rel!r} is not a file under /sys or /proc/sys")
    return rel


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


@dataclass
class Journal:
    """The original values of the files changed under ``root``, kept in the file ``path``."""

    path: Path
    root: SysRoot
    entries: list[Entry] = field(default_factory=list)
    pid: int = field(default_factory=os.getpid)
    created: str = field(default_factory=now_iso)

    # ------------------------------------------------------------------ file
    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Journal:
        """Read a journal; a missing, unreadable or corrupt one raises SystemControlError."""
        path = Path(path)
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            raise SystemControlError(f"no restore journal at {path}") from None
        except OSError as exc:
            raise SystemControlError(f"cannot read journal {path}: {exc.strerror}") from exc
        try:
            data = json.loads(raw.decode("utf-8"))  # not UTF-8: a ValueError, corrupt
            if data.get("format") != FORMAT:
                raise ValueError("not a steadybench journal")
            if data.get("version") != VERSION:
                raise ValueError(f"unknown journal version {data.get('version')!r}")
            root = SysRoot(data["root"])
            entries = [Entry(_check_rel(e["path"]),
                             base64.b64decode(e["original_b64"], validate=True),
                             base64.b64decode(e.get("new_b64", ""), validate=True),
                             str(e.get("setting", ""))) for e in data["entries"]]
            return cls(path, root, entries, int(data.get("pid", 0)), str(data.get("created", "")))
        except SystemControlError as exc:
            raise SystemControlError(f"journal {path} is corrupt: {exc}") from exc
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise SystemControlError(f"journal {path} is corrupt ({exc}); nothing was restored. "
                                     "Check the files it names by hand, then delete it") from exc

    @classmethod
    def open(cls, path: str | os.PathLike[str], root: SysRoot) -> Journal:
        """Load the journal at ``path`` if it exists (its originals win), else start a new one."""
        path = Path(path)
        if path.exists():
            journal = cls.load(path)
            if journal.root.root != root.root:
                raise SystemControlError(
                    f"journal {path} belongs to root {journal.root.root}, not {root.root}; "
                    "run `steadybench system reset` for that root first")
            return journal
        return cls(path, root)

    def save(self) -> None:
        data = {"format": FORMAT, "version": VERSION, "root": str(self.root.root),
                "pid": self.pid, "created": self.created,
                "entries": [e.to_dict() for e in self.entries]}
        try:
            atomic_write_text(self.path, json.dumps(data, indent=1) + "\n")
        except SteadybenchError as exc:
            raise SystemControlError(f"cannot save the restore journal: {exc}") from exc

    def remove(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()

    # ------------------------------------------------------------------ changes
    def has(self, rel: str) -> bool:
        return any(e.path == rel for e in self.entries)

    def record(self, rel: str, original: bytes, new: bytes, setting: str = "") -> None:
        """Save the original of ``rel`` (unless already saved) and flush the journal to disk."""
        _check_rel(rel)
        if not self.has(rel):
            self.entries.append(Entry(rel, original, new, setting))
        self.save()

    def restore(self, write: Writer = write_file, remove: bool = True) -> list[str]:
        """Write every original back, newest change first; remove the journal when all succeed.

        Returns the paths restored. When some fail, the others are still restored, the journal
        keeps only the failed entries, and SystemControlError names them.
        """
        restored: list[str] = []
        failed: list[tuple[Entry, str]] = []
        for entry in reversed(self.entries):
            try:
                write(self.root.path(entry.path), entry.original)
                restored.append(entry.path)
            except OSError as exc:
                failed.append((entry, exc.strerror or str(exc)))
        if failed:
            self.entries = [e for e, _ in reversed(failed)]
            self.save()
            detail = "; ".join(f"{e.path}: {why}" for e, why in failed)
            raise SystemControlError(f"could not restore {len(failed)} file(s) ({detail}); "
                                     f"the journal {self.path} keeps them")
        self.entries = []
        if remove:
            self.remove()
        return restored


def find_journals(directory: Path | None = None) -> list[Path]:
    """The journals in the state directory, newest first."""
    directory = directory or state_dir()
    try:
        paths = [p for p in directory.iterdir()
                 if p.suffix == ".json" and (p.name == TUNE_JOURNAL or p.name.startswith("run-"))]
    except OSError:
        return []
    return sorted(paths, key=lambda p: p.stat().st_mtime, reverse=True)


def pid_alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


GUARDED_SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP")
                        if hasattr(signal, name))


@contextlib.contextmanager
def signals_blocked() -> Iterator[None]:
    """Hold SIGINT/SIGTERM/SIGHUP back while a group of writes (or restores) runs, so a signal
    cannot cut it in half; a signal that arrived meanwhile is delivered at the end."""
    mask = getattr(signal, "pthread_sigmask", None)
    if mask is None:
        yield
        return
    old = mask(signal.SIG_BLOCK, GUARDED_SIGNALS)
    try:
        yield
    finally:
        mask(signal.SIG_SETMASK, old)
