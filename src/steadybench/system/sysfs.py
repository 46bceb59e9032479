"""Access to the ``sys`` and ``proc`` trees under a movable filesystem root.

Rancid (Afonso & Almeida, §II-A and §IV-C) reads processor frequencies and temperatures from
"device-dependent paths in the underlying Linux file system" (sysfs). Every reader and writer of
:mod:`steadybench.system` goes through a :class:`SysRoot`, whose root defaults to ``/`` and can be
moved (``--root DIR`` / ``STEADYBENCH_ROOT``), so tests use a fake tree built in a temporary
directory and users can inspect a copied system image. Reads never raise for a missing or
unreadable file: they return ``None`` and the caller explains what is missing.

Reads are bounded (issue 27 item 10): only a regular file is read (opened ``O_NONBLOCK``, so a
FIFO never blocks and a device such as ``/dev/zero`` is never read), at most
:data:`MAX_READ_BYTES` (a larger file reads as unreadable, never fills memory), and only when
the file resolves inside the root, and a name under ``sys/`` or ``proc/`` inside that same
tree (a governor linked to ``/etc/passwd`` is not read; sysfs and procfs links stay in their
own tree).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import SystemControlError

CPU_DIR = "sys/devices/system/cpu"

#: the most one read of a machine file returns: sysfs attributes hold at most a page, and the
#: largest procfs files read (``cpuinfo``, ``interrupts``) stay far below it on thousands of CPUs
MAX_READ_BYTES = 4 * 2**20
#: CPU numbers a CPU list may name: Linux's NR_CPUS is at most 8192 (16 times that, for room)
MAX_CPUS = 1 << 17
#: the trees whose links must stay inside them
_OWN_TREES = ("sys", "proc")


def read_regular_file(path: str | os.PathLike[str], limit: int = MAX_READ_BYTES,
                      single_link: bool = False) -> bytes | None:
    """The bytes of the regular file ``path``, or None when it is missing, unreadable, not a
    regular file (a FIFO, a device: checked before opening, and on the open file, which is
    opened ``O_NONBLOCK``), larger than ``limit`` bytes, or (``single_link``) one of several
    hard links to the same file."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return None
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except (OSError, ValueError):
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or (single_link and st.st_nlink != 1):
            return None  # swapped since the check, or another name of an outside file
        chunks, size = [], 0
        while size <= limit:
            chunk = os.read(fd, min(1 << 16, limit + 1 - size))
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)
            size += len(chunk)
        return None
    except OSError:
        return None
    finally:
        os.close(fd)


class SysRoot:
    """A filesystem root holding ``sys`` and ``proc``.

    Args:
        root: directory standing for ``/``; must exist.

    A remote target (:class:`steadybench.targets.sysroot.RemoteSysRoot`) is a subclass: the
    methods below marked as hooks are where it reads and writes the device instead.
    """

    #: whether reads and writes happen on another machine (a ``--target``)
    remote = False
    #: whether the benchmarked programs run on this machine (pinning, priority, warm-up here)
    local_process = True

    def __init__(self, root: str | os.PathLike[str] = "/") -> None:
        path = Path(root)
        if not path.is_dir():
            raise SystemControlError(f"root {root}: not a directory")
        self.root = path.resolve()

    def __repr__(self) -> str:
        return f"SysRoot({str(self.root)!r})"

    @property
    def is_real(self) -> bool:
        """True when this is the machine's own ``/``."""
        return str(self.root) == "/"

    def path(self, rel: str) -> Path:
        """The path of ``rel`` (written as if absolute, leading slash optional) under the root."""
        return self.root / rel.lstrip("/")

    def rel(self, path: str | os.PathLike[str]) -> str:
        """``path`` written relative to the root with a leading slash (for messages)."""
        try:
            return "/" + str(Path(path).relative_to(self.root))
        except ValueError:
            return str(path)

    def exists(self, rel: str) -> bool:
        return self.path(rel).exists()

    def inside(self, rel: str) -> bool:
        """Whether ``rel`` resolves inside the root, and inside ``sys``/``proc`` when it is
        named there."""
        path = self.path(rel)
        real = Path(os.path.realpath(path))
        top = rel.lstrip("/").split("/", 1)[0]
        base = self.root / top if top in _OWN_TREES else self.root
        return real == base or base in real.parents

    def read_bytes(self, rel: str) -> bytes | None:
        """The bytes of a regular file inside the root, at most :data:`MAX_READ_BYTES`; None
        when it is missing, unreadable, not a regular file, too large, linked out, or a hard
        link (sysfs and procfs files have one name; a second one was planted)."""
        if not self.inside(rel):
            return None
        return read_regular_file(self.path(rel), single_link=True)

    def read(self, rel: str) -> str | None:
        """The stripped text of a file, or None when it is missing or unreadable."""
        data = self.read_bytes(rel)
        if data is None:
            return None
        return data.decode("utf-8", errors="replace").strip()

    def read_int(self, rel: str) -> int | None:
        """An integer file (sysfs style), or None when missing, unreadable or not an integer."""
        text = self.read(rel)
        if text is None:
            return None
        try:
            return int(text.split()[0])
        except (IndexError, ValueError):
            return None

    def listdir(self, rel: str) -> list[str]:
        try:
            return sorted(os.listdir(self.path(rel)))
        except OSError:
            return []

    # hooks a remote target overrides (steadybench.targets.sysroot)
    def is_dir(self, rel: str) -> bool:
        return self.path(rel).is_dir()

    def identity(self, rel: str) -> str:
        """The resolved path of ``rel``: equal for two names of the same file."""
        return str(self.path(rel).resolve())

    def may_write(self, rel: str, can_write: Callable[[Path], bool]) -> bool:
        return can_write(self.path(rel))

    def process_root(self) -> SysRoot:
        """Where the ``/proc`` of the processes that write journals is read (this root)."""
        return self

    def journal_dir(self) -> Path | None:
        """Where this root's journals are kept (None: the default state directory)."""
        return None

    def architecture(self) -> str:
        """The machine's architecture (``uname -m``)."""
        import platform

        return platform.machine()

    def affinity_calls(self) -> dict[str, Callable[..., Any]]:
        """``setaffinity``/``getaffinity`` for :class:`~.actions.PinAction` (none: this
        process's own)."""
        return {}


#: remote roots a journal may name, by how their text reads → ``"module:function"`` opening one
#: (the function takes the text and returns a :class:`SysRoot`). A key ending in ``://`` or
#: ``?`` is a prefix, any other an exact name. The opener is imported only when a journal names
#: such a root, so the system layer does not import :mod:`steadybench.targets`, which builds on
#: it; a package adding a kind of target adds its scheme with :func:`register_root_scheme`.
ROOT_SCHEMES: dict[str, str] = {
    "ssh://": "steadybench.targets:remote_root",
    "adb://": "steadybench.targets:remote_root",
    "adb?": "steadybench.targets:remote_root",
    "adb": "steadybench.targets:remote_root",
}


def register_root_scheme(key: str, opener: str) -> None:
    """Open roots whose text matches ``key`` (see :data:`ROOT_SCHEMES`) with ``opener``."""
    ROOT_SCHEMES[key] = opener


def root_opener(text: str) -> str | None:
    """The ``"module:function"`` that opens the root ``text`` names (None: a directory)."""
    for key, opener in ROOT_SCHEMES.items():
        if text == key or (key.endswith(("://", "?")) and text.startswith(key)):
            return opener
    return None


def open_root(text: str) -> SysRoot:
    """The root a journal names: a directory, or a remote target's text (``ssh://...``)."""
    import importlib

    opener = root_opener(text)
    if opener is None:
        return SysRoot(text)
    module, _, name = opener.partition(":")
    root: SysRoot = getattr(importlib.import_module(module), name)(text)
    return root


def parse_cpulist(text: str | None) -> list[int]:
    """Parse a kernel CPU list such as ``0-3,6,8-9`` (the format of ``online`` and ``isolated``).

    Raises ValueError on text that is not a CPU list, or that names a CPU at or beyond
    :data:`MAX_CPUS` (``0-999999999`` would list 10⁹ numbers); an empty string is the empty
    list.
    """
    if text is None:
        return []
    cpus: set[int] = set()
    for part in text.strip().split(","):
        part = part.strip()
        if not part:
            continue
        if "-" in part:
            lo_text, _, hi_text = part.partition("-")
            lo, hi = int(lo_text), int(hi_text.split(":")[0])
            if lo > hi or lo < 0:
                raise ValueError(f"bad CPU range {part!r}")
            if hi >= MAX_CPUS:
                raise ValueError(f"CPU range {part!r} goes beyond CPU {MAX_CPUS - 1}")
            cpus.update(range(lo, hi + 1))
        else:
            value = int(part)
            if value < 0 or value >= MAX_CPUS:
                raise ValueError(f"bad CPU number {part!r}")
            cpus.add(value)
    return sorted(cpus)


def format_cpulist(cpus: list[int] | set[int] | tuple[int, ...]) -> str:
    """The inverse of :func:`parse_cpulist`: ``[0, 1, 2, 5]`` → ``"0-2,5"``."""
    ordered = sorted(set(cpus))
    parts: list[str] = []
    i = 0
    while i < len(ordered):
        j = i
        while j + 1 < len(ordered) and ordered[j + 1] == ordered[j] + 1:
            j += 1
        parts.append(str(ordered[i]) if i == j else f"{ordered[i]}-{ordered[j]}")
        i = j + 1
    return ",".join(parts)
