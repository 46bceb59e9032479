"""Writing files so that nothing the user had is lost, and reading the files a user names.

Every output file is written atomically: the text goes to a temporary file in the same
directory, is flushed to disk, and then replaces the target in one ``os.replace`` step, so an
interrupted write leaves either the old file or the new one, never half of one.

What an output path may name, and what happens (:func:`output_target` decides):

- nothing yet: a new file is created (mode ``0666`` less the umask);
- a regular file of the current user: it is replaced atomically and keeps its mode;
- a regular file of another user: as root it is replaced atomically and keeps its owner, group
  and mode; any other user is refused with one line (replacing it would make it theirs);
- a symbolic link owned by the current user or by root (``/dev/stdout``): followed, so the
  file it points to is written (atomically, in that file's folder) and the link stays a link;
  a link owned by another user is refused (it may have been planted to redirect the write);
- a character device (``/dev/null``, a terminal) or a FIFO: written through, in place, never
  replaced; a FIFO that no process reads is refused at once instead of blocking;
- a directory, a block device or a socket: refused.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import SteadybenchError

#: symbolic links followed at most, as the kernel does (ELOOP)
MAX_LINKS = 40

#: output files the command line asked for (checked by :func:`check_writable`) and the files
#: this process wrote: after an interrupt the command says which were not written, so a file
#: left from an earlier run is not taken for this one's (issue 27 item 16)
REQUESTED: list[str] = []
WRITTEN: set[str] = set()

#: what :func:`output_target` found: create or replace a file, or write through to a stream
NEW, FILE, STREAM = "new", "file", "stream"


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@dataclass(frozen=True)
class OutputTarget:
    """Where the bytes of an output go: ``kind`` is :data:`NEW`, :data:`FILE` (an existing
    regular file, whose ``stat`` is kept) or :data:`STREAM` (a device or FIFO written in
    place); ``path`` is the file to create or replace, symbolic links followed."""

    kind: str
    path: Path
    stat: os.stat_result | None = None


def _refuse(named: Path, reason: str) -> SteadybenchError:
    return SteadybenchError(f"cannot write {named}: {reason}")


def _check_links(named: Path) -> None:
    """Refuse ``named`` when it is, or leads through, a symbolic link owned by a user other
    than the current one and root."""
    path, me = named, os.geteuid()
    for _ in range(MAX_LINKS):
        try:
            st = os.lstat(path)
        except OSError:
            return  # missing (a new file), or a /proc magic link's target: nothing to follow
        if not stat.S_ISLNK(st.st_mode):
            return
        if st.st_uid not in (me, 0):
            raise _refuse(named, f"{path} is a symbolic link owned by another user "
                                 f"(uid {st.st_uid}); not followed")
        path = Path(os.path.join(os.path.dirname(path), os.readlink(path)))
    raise _refuse(named, "too many levels of symbolic links")


def _file_kind(mode: int) -> str:
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode):
        return "a character device"
    return "a special file"


def output_target(path: str | os.PathLike[str]) -> OutputTarget:
    """What writing ``path`` means (see the module's documentation); one clear
    :class:`SteadybenchError` when it must not be written."""
    named = Path(path)
    try:
        _check_links(named)
        final = Path(os.path.realpath(named)) if named.is_symlink() else named
        st = os.stat(named)
    except (FileNotFoundError, NotADirectoryError):
        return OutputTarget(NEW, final)
    except OSError as exc:  # e.g. a file name too long for the file system
        raise _refuse(named, exc.strerror or str(exc)) from None
    if stat.S_ISDIR(st.st_mode):
        raise _refuse(named, "it is a directory")
    if stat.S_ISCHR(st.st_mode) or stat.S_ISFIFO(st.st_mode):
        return OutputTarget(STREAM, named, st)
    if not stat.S_ISREG(st.st_mode):
        raise _refuse(named, f"it is {_file_kind(st.st_mode)}; refusing to write to it")
    me = os.geteuid()
    if st.st_uid != me and me != 0:
        raise _refuse(named, f"it belongs to another user (uid {st.st_uid}) and replacing it "
                             "would make it yours; remove it or choose another path")
    return OutputTarget(FILE, final, st)


def _write_all(fd: int, data: bytes | Iterable[bytes]) -> None:
    """Write every byte of ``data`` (bytes, or pieces of bytes made as they are written) to
    ``fd`` (the one place bytes reach the disk: tests inject a full disk here)."""
    for part in (data,) if isinstance(data, bytes | bytearray) else data:
        view = memoryview(part)
        while view:
            view = view[os.write(fd, view):]


def _write_through(named: Path, data: bytes | Iterable[bytes]) -> None:
    """Write ``data`` into a device or FIFO in place (never replaced, never created)."""
    try:
        fd = os.open(named, os.O_WRONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except OSError as exc:
        if exc.errno == errno.ENXIO:
            raise _refuse(named, "it is a FIFO that no process is reading") from None
        raise _refuse(named, exc.strerror or str(exc)) from None
    try:
        os.set_blocking(fd, True)
        _write_all(fd, data)
    except OSError as exc:
        raise _refuse(named, exc.strerror or str(exc)) from exc
    finally:
        os.close(fd)


def _keep_owner_and_mode(fd: int, old: os.stat_result | None) -> None:
    """Give the temporary file the mode a plain ``open()`` would (a new file), or the owner,
    group and mode of the file it replaces (set-id bits dropped)."""
    if old is None:
        os.fchmod(fd, 0o666 & ~_umask())
        return
    if old.st_uid != os.geteuid():  # only root gets here (output_target refuses the others)
        os.fchown(fd, old.st_uid, old.st_gid)
    elif old.st_gid != os.getegid():
        with contextlib.suppress(OSError):  # a group we are not in: the folder's or ours
            os.fchown(fd, -1, old.st_gid)
    os.fchmod(fd, stat.S_IMODE(old.st_mode) & ~(stat.S_ISUID | stat.S_ISGID))


def _replace(named: Path, target: OutputTarget, data: bytes | Iterable[bytes]) -> None:
    """Write ``data`` to a temporary file beside ``target.path`` and rename it over."""
    dest = target.path
    try:
        fd, tmp_name = tempfile.mkstemp(prefix=f".{dest.name}.", suffix=".tmp", dir=dest.parent)
    except OSError as exc:
        raise _refuse(named, exc.strerror or str(exc)) from exc
    try:
        try:
            _write_all(fd, data)
            _keep_owner_and_mode(fd, target.stat)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp_name, dest)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp_name)
        if isinstance(exc, OSError):
            raise _refuse(named, exc.strerror or str(exc)) from exc
        raise


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes | Iterable[bytes]) -> Path:
    """Write ``data`` to ``path`` atomically, in a folder that exists (none is created; devices
    and FIFOs are written through; see the module's documentation for links and owners)."""
    named = Path(path)
    target = output_target(named)
    if target.kind == STREAM:
        _write_through(named, data)
    else:
        _replace(named, target, data)
    WRITTEN.add(os.path.abspath(named))
    return named


def atomic_write_pieces(path: str | os.PathLike[str], pieces: Iterable[str]) -> Path:
    """:func:`atomic_write_text` of the text ``"".join(pieces)``, each piece encoded and
    written as it comes: a text of a gigabyte (the HTML report of 10^6 benchmarks) is never
    held whole (issue 27 item 13)."""
    return atomic_write_bytes(path, (p.encode("utf-8", errors="backslashreplace")
                                     for p in pieces))


def atomic_write_text(path: str | os.PathLike[str], text: str) -> Path:
    """Write ``text`` (UTF-8; a lone surrogate is written as ``\\udcxx``) to ``path``
    atomically."""
    return atomic_write_bytes(path, text.encode("utf-8", errors="backslashreplace"))


def read_user_text(path: str | os.PathLike[str],
                   error: type[SteadybenchError] = SteadybenchError) -> str:
    """The text of a file the user named, or ``error`` with one clear line saying why not.

    Only regular files are read: a FIFO would wait for a writer for ever, a device may never
    end (``/dev/zero``)."""
    p = Path(path)
    try:
        st = p.stat()
    except FileNotFoundError:
        raise error(f"{p}: no such file") from None
    except OSError as exc:
        raise error(f"{p}: cannot read ({exc.strerror or exc})") from None
    if stat.S_ISDIR(st.st_mode):
        raise error(f"{p}: is a directory, not a file")
    if not stat.S_ISREG(st.st_mode):
        raise error(f"{p}: is {_file_kind(st.st_mode)}, not a regular file")
    try:
        return p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise error(f"{p}: no such file") from None
    except IsADirectoryError:
        raise error(f"{p}: is a directory, not a file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise error(f"{p}: cannot read ({exc})") from None


def read_user_json(path: str | os.PathLike[str],
                   error: type[SteadybenchError] = SteadybenchError) -> object:
    """Parsed JSON of a file the user named; ``error`` names the line of a syntax error."""
    import json

    try:
        return json.loads(read_user_text(path, error))
    except json.JSONDecodeError as exc:
        raise error(f"{path}: not valid JSON (line {exc.lineno}: {exc.msg})") from None
    except RecursionError:
        raise error(f"{path}: JSON nested too deeply to read") from None
    except ValueError as exc:  # e.g. an integer with more digits than Python converts
        raise error(f"{path}: not valid JSON ({exc})") from None


def content_lines(text: str) -> list[tuple[int, str]]:
    """(line number, stripped text) of the lines that are neither blank nor ``#`` comments."""
    stripped = ((i, line.strip()) for i, line in enumerate(text.splitlines(), 1))
    return [(i, line) for i, line in stripped if line and not line.startswith("#")]


def check_writable(path: str | os.PathLike[str]) -> Path:
    """Raise :class:`SteadybenchError` unless a file can be written at ``path``.

    Checked before measuring, so a typo in an output path costs nothing: the path must be one
    :func:`output_target` accepts; a device or FIFO must be writable; otherwise the folder of
    the file must exist (no folder is ever created for an output file, as hyperfine and
    pytest-benchmark create none: issue 27 item 18) and accept a new file — tried for real with
    a temporary file, since permission bits do not tell (root, read-only mounts, /proc).
    """
    named = Path(path)
    REQUESTED.append(os.path.abspath(named))
    target = output_target(named)
    if target.kind == STREAM:
        if not os.access(named, os.W_OK):
            raise _refuse(named, os.strerror(errno.EACCES))
        return named
    folder = target.path.parent
    if not folder.exists():
        raise _refuse(named, f"the folder {folder} does not exist (create it first)")
    if not folder.is_dir():
        raise _refuse(named, f"{folder} is not a directory")
    try:
        fd, probe = tempfile.mkstemp(prefix=".steadybench-probe.", dir=folder)
    except OSError as exc:
        if exc.errno == errno.ENOENT:
            # the folder exists, yet no file can be made in it: a virtual file system such as
            # /proc or /sys, not a missing path
            raise _refuse(named, f"{folder} does not accept new files (a virtual file "
                                 "system?)") from None
        raise _refuse(named, exc.strerror or str(exc)) from None
    os.close(fd)
    os.unlink(probe)
    return named


def writable_path(ctx: Any, param: Any, value: Any) -> Any:
    """Click callback: an output path must be writable, checked before anything is measured
    ("-" for standard output passes); a refusal is click's ``BadParameter``. Here, below both
    the command line and the fleet's options (which must not import the command line)."""
    if value is not None and value != "-":
        try:
            check_writable(value)
        except SteadybenchError as exc:
            import click

            raise click.BadParameter(str(exc)) from None
    return value
