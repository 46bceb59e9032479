"""Writing files so that nothing the user had is lost.

Every output file is written atomically: the text goes to a temporary file in the same
directory, is flushed to disk, and then replaces the target in one ``os.replace`` step, so an
interrupted write leaves either the old file or the new one, never half of one.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

from .errors import SteadybenchError


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically, creating parent directories as needed."""
    target = Path(path)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    except OSError as exc:
        raise SteadybenchError(f"cannot write {target}: {exc.strerror or exc}") from exc
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            # mkstemp makes the file owner-only; give it the mode a plain open() would.
            os.fchmod(handle.fileno(), 0o666 & ~_umask())
            os.fsync(handle.fileno())
        os.replace(tmp_name, target)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp_name)
        if isinstance(exc, OSError):
            raise SteadybenchError(f"cannot write {target}: {exc.strerror or exc}") from exc
        raise
    return target


def atomic_write_text(path: str | os.PathLike[str], text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` atomically."""
    return atomic_write_bytes(path, text.encode("utf-8"))


def read_user_text(path: str | os.PathLike[str],
                   error: type[SteadybenchError] = SteadybenchError) -> str:
    """The text of a file the user named, or ``error`` with one clear line saying why not."""
    p = Path(path)
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


def content_lines(text: str) -> list[tuple[int, str]]:
    """(line number, stripped text) of the lines that are neither blank nor ``#`` comments."""
    stripped = ((i, line.strip()) for i, line in enumerate(text.splitlines(), 1))
    return [(i, line) for i, line in stripped if line and not line.startswith("#")]


def check_writable(path: str | os.PathLike[str]) -> Path:
    """Raise :class:`SteadybenchError` unless a file can be written at ``path``.

    Checked before measuring, so a typo in an output path costs nothing: the path must not be a
    directory, and its folder (or the nearest existing parent, whose missing folders would be
    created) must accept a new file — tried for real with a temporary file, since permission
    bits do not tell (root, read-only mounts, /proc).
    """
    target = Path(path)
    if target.is_dir():
        raise SteadybenchError(f"cannot write {target}: it is a directory")
    folder = target.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    if not folder.is_dir():
        raise SteadybenchError(f"cannot write {target}: {folder} is not a directory")
    try:
        fd, probe = tempfile.mkstemp(prefix=".steadybench-probe.", dir=folder)
    except OSError as exc:
        raise SteadybenchError(f"cannot write {target}: {exc.strerror or exc}") from None
    os.close(fd)
    os.unlink(probe)
    return target
