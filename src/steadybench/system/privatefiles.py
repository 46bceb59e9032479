"""Files only their owner can forge: the restore journals and the tuning lock.

Issue 12, item 3: ``system reset`` runs as root and trusted any journal it found. Now:

- the state directory is created 0700 and must belong to the invoking user (to root when run as
  root); one owned by somebody else is refused, never used;
- journals are written 0600 through a temporary file opened ``O_CREAT|O_EXCL|O_NOFOLLOW`` and
  renamed into place (a rename replaces a planted symlink, it never writes through it);
- a journal is read only when it is a regular file (opened ``O_NOFOLLOW|O_NONBLOCK``, then
  checked with ``fstat``: a symlink, a FIFO or a directory is refused and never blocks), owned by
  root or by the current user, and not writable by group or others.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from pathlib import Path

from .. import fileio
from ..errors import SystemControlError
from .writer import file_kind

#: the largest journal read (a few hundred bytes per tuned file; a bigger one is not ours)
MAX_JOURNAL_BYTES = 1 << 20


class RefusedFile(SystemControlError):
    """A journal refused for its owner, mode or type (the message says why)."""


def trusted_owners() -> set[int]:
    """The owners whose journals this process may use: root and itself."""
    return {0, os.geteuid()}


def ensure_private_dir(path: Path, strict: bool = True) -> Path:
    """Create ``path`` (0700) if missing and check it is a directory, not a symlink, owned by
    this user (``strict``; the default state directory) or by root or this user (a folder the
    user named with ``--journal``). A strict directory that is open to others is made 0700."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(FileExistsError):
            os.mkdir(path, 0o700)
        st = os.lstat(path)
    except OSError as exc:
        raise SystemControlError(f"cannot create the state directory {path}: "
                                 f"{exc.strerror or exc}") from exc
    if not stat.S_ISDIR(st.st_mode):
        raise SystemControlError(f"{path} is {file_kind(st.st_mode)}, not a directory: "
                                 "journals are not kept there")
    owners = {os.geteuid()} if strict else trusted_owners()
    if st.st_uid not in owners:
        raise SystemControlError(
            f"directory {path} belongs to uid {st.st_uid}, not to you (uid {os.geteuid()}): "
            "journals are kept only in a directory of your own (set XDG_STATE_HOME)")
    if strict and st.st_mode & 0o077:
        try:
            os.chmod(path, 0o700, follow_symlinks=False)
        except OSError as exc:
            raise SystemControlError(f"cannot make {path} private: "
                                     f"{exc.strerror or exc}") from exc
    return path


def write_private(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically, mode 0600, fsynced (file and directory)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                     0o600)
    except OSError as exc:
        raise SystemControlError(f"cannot write {path}: {exc.strerror or exc}") from exc
    try:
        try:
            os.fchmod(fd, 0o600)
            fileio._write_all(fd, data)  # the one place bytes reach the disk
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(exc, OSError):
            raise SystemControlError(f"cannot write {path}: {exc.strerror or exc}") from exc
        raise
    with contextlib.suppress(OSError):
        dfd = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)


def trust_problem(st: os.stat_result) -> str | None:
    """Why a file with this ``stat`` may not be used as a journal, or None."""
    if not stat.S_ISREG(st.st_mode):
        return f"it is {file_kind(st.st_mode)}, not a regular file"
    if st.st_uid not in trusted_owners():
        return f"it belongs to uid {st.st_uid}, neither root nor you (uid {os.geteuid()})"
    if st.st_mode & 0o022:
        who = {0o022: "group and others", 0o020: "its group", 0o002: "others"}[
            st.st_mode & 0o022]
        return f"it is writable by {who} (mode {stat.S_IMODE(st.st_mode):04o})"
    if st.st_size > MAX_JOURNAL_BYTES:
        return f"it is {st.st_size} bytes, too big for a journal"
    return None


def read_private(path: Path) -> bytes:
    """The bytes of the journal ``path`` after the checks of :func:`trust_problem`.

    Raises FileNotFoundError when it does not exist, :class:`RefusedFile` when it may not be
    used, SystemControlError when it cannot be read.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        raise
    except OSError as exc:
        with contextlib.suppress(OSError):
            st = os.lstat(path)
            if stat.S_ISLNK(st.st_mode):
                raise RefusedFile(f"journal {path} refused: it is a symbolic link "
                                  "(not followed)") from None
        raise SystemControlError(f"cannot read journal {path}: {exc.strerror or exc}") from exc
    try:
        problem = trust_problem(os.fstat(fd))
        if problem:
            raise RefusedFile(f"journal {path} refused: {problem}; nothing of it was restored")
        chunks = []
        total = 0
        while chunk := os.read(fd, 65536):
            chunks.append(chunk)
            total += len(chunk)
            if total > MAX_JOURNAL_BYTES:
                raise RefusedFile(f"journal {path} refused: more than {MAX_JOURNAL_BYTES} bytes")
        return b"".join(chunks)
    except OSError as exc:
        raise SystemControlError(f"cannot read journal {path}: {exc.strerror or exc}") from exc
    finally:
        os.close(fd)
