"""Writing a tuned sysfs/procfs file without following a symlink out of the allow-list.

Issue 12, item 3: ``system tune`` and ``system reset`` wrote through symlinks, so a symlink in
the tree (or a journal naming one) overwrote a file outside the root. Each write now

1. checks the path the journal or plan names against the allow-list (:mod:`.allowlist`);
2. resolves it (``os.path.realpath``: on a real machine ``cpuN/cpufreq`` is a symlink to
   ``cpufreq/policyN``) and checks that the resolved path lies under the root and is on the
   allow-list as well;
3. opens that resolved path one component at a time with ``O_NOFOLLOW`` (a symlink put in place
   after the check makes the open fail rather than be followed), ``O_NONBLOCK`` (a FIFO never
   blocks) and without ``O_CREAT`` (a vanished file is an error, never created), and writes only
   to a regular file with one link (sysfs and procfs attributes are regular files with one
   name; a hard link planted in a fake tree would write through to its other name), truncating
   it only after that check (issue 27 item 10: ``O_TRUNC`` at the open emptied the file first).

Writes are in place: sysfs files cannot be replaced by a rename.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Callable
from pathlib import Path

from ..errors import SystemControlError
from .allowlist import check_allowed, is_allowed
from .sysfs import SysRoot

#: how a file is written: ``write(resolved_path, data)``, raising OSError on failure
Writer = Callable[[Path, bytes], None]


def file_kind(mode: int) -> str:
    """``st_mode`` in words (for "not a regular file" messages)."""
    for test, name in ((stat.S_ISLNK, "a symbolic link"), (stat.S_ISFIFO, "a FIFO"),
                       (stat.S_ISDIR, "a directory"), (stat.S_ISSOCK, "a socket"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device")):
        if test(mode):
            return name
    return "a regular file" if stat.S_ISREG(mode) else "a special file"


def resolve_target(root: SysRoot, rel: str) -> Path:
    """The resolved path of ``rel`` under ``root``, checked against the allow-list both as named
    and as resolved; SystemControlError when either is not allowed."""
    if root.remote:  # resolved and checked on the device (steadybench.targets.sysroot)
        return root.resolve_setting(rel)  # type: ignore[attr-defined,no-any-return]
    check_allowed(rel)
    real = Path(os.path.realpath(root.path(rel)))
    try:
        inside = real.relative_to(root.root)
    except ValueError:
        raise SystemControlError(f"{rel} resolves to {real}, outside the root {root.root}: "
                                 "not written (symlinks are not followed out of the "
                                 "allowed files)") from None
    real_rel = "/" + inside.as_posix()
    if not is_allowed(real_rel):
        raise SystemControlError(f"{rel} resolves to {real_rel}, which steadybench may not "
                                 "change: not written (symlinks are not followed out of the "
                                 "allowed files)")
    return real


def open_no_symlinks(path: Path, flags: int) -> int:
    """Open the absolute ``path`` following no symlink in any component (``O_NOFOLLOW`` on each
    directory and on the file). A symlink anywhere gives OSError(ELOOP)."""
    parts = Path(os.path.abspath(path)).parts
    fd = os.open(parts[0], os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for part in parts[1:-1]:
            try:
                nxt = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC,
                              dir_fd=fd)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR) and \
                        stat.S_ISLNK(os.lstat(part, dir_fd=fd).st_mode):
                    raise OSError(errno.ELOOP, "a symbolic link in the path is not followed",
                                  str(path)) from None
                raise
            os.close(fd)
            fd = nxt
        try:
            return os.open(parts[-1], flags | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK,
                           dir_fd=fd)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise OSError(errno.ELOOP, "is a symbolic link: not followed",
                              str(path)) from None
            raise
    finally:
        os.close(fd)


def write_file(path: Path, data: bytes) -> None:
    """Write ``data`` in place to the existing regular file ``path`` (see the module notes)."""
    fd = open_no_symlinks(path, os.O_WRONLY)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise OSError(errno.EINVAL, f"is {file_kind(st.st_mode)}, not a regular file",
                          str(path))
        if st.st_nlink != 1:
            raise OSError(errno.EMLINK, f"has {st.st_nlink} hard links, not one: not written "
                          "through", str(path))
        with contextlib.suppress(OSError):  # kernfs attributes take a write whole anyway
            os.ftruncate(fd, 0)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    finally:
        os.close(fd)


def write_setting(root: SysRoot, rel: str, data: bytes, write: Writer = write_file) -> None:
    """Check ``rel`` (:func:`resolve_target`) and write ``data`` to it with ``write`` (on a
    remote target, the target writes it: ``write`` applies to local files only)."""
    if root.remote:
        root.write_resolved(resolve_target(root, rel), data)  # type: ignore[attr-defined]
        return
    write(resolve_target(root, rel), data)
