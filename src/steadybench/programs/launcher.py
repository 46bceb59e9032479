"""A tiny C launcher, so that a command's peak memory is its own and not steadybench's.

Why it is needed: Linux keeps the largest resident set a process ever had *across exec*
(``exec_mmap`` saves the old address space's high-water mark in the process's signal struct,
which ``ru_maxrss`` reports). A command started straight from this Python process - by
``vfork``/``posix_spawn``, whose old address space *is* Python's, or by ``fork``, whose copy holds
Python's anonymous pages - therefore reports at least steadybench's own 40-odd MiB whatever it
used: ``gzip -1`` showed 42 MiB where ``/usr/bin/time`` says 1.4 MiB.

``/usr/bin/time`` is right because it is a small C program: the child it forks starts from a
copy of *its* small address space. The launcher does the same and nothing more. Started as
``launcher FD PROGRAM ARG...``, it calls ``vfork`` (the child borrows the launcher's few
hundred KiB until it executes, and runs at once on the same CPU, as Python's own ``vfork``
start does), the child executes ``PROGRAM`` (a bare name is looked up on ``PATH``), and the
launcher waits for it with ``wait4(2)`` and writes one line on file descriptor ``FD``::

    ok STATUS UTIME_US STIME_US MAXRSS_KIB WALL_NS   the command ran (STATUS: its wait status)
    exec ERRNO                                       the command could not be started

``WALL_NS`` is read on ``CLOCK_MONOTONIC`` (the clock of :func:`time.perf_counter_ns` on Linux)
just before the ``vfork`` and just after the reap, as ``/usr/bin/time`` times its child.

The launcher itself is started in the command's session and process group, so a timeout or
Ctrl-C that kills the group kills both. Its own start (an ``exec`` of a dynamically linked
program, about a millisecond on a loaded 2-core VM) would double the start-up cost of a short
command, so the runner takes the launcher's ``WALL_NS`` as the wall time when it reads the
system's monotonic clock; an injected clock (tests) times the whole start instead.

The source is compiled once with the system's C compiler (``$CC``, else ``cc``, ``gcc`` or
``clang``) into ``$XDG_CACHE_HOME/steadybench`` (``~/.cache/steadybench``), under a name holding
the hash of the source and the machine type. Assumption: where no compiler is found, or the
build fails, :func:`launcher_path` returns None and commands are started directly; the peak
memory is then shown only when it exceeds steadybench's own (see
:func:`steadybench.programs.process.child_peak_rss`).
"""

from __future__ import annotations

import hashlib
import os
import platform
import shutil
import stat
import subprocess
import tempfile

#: the launcher's source (C99 + POSIX); the protocol is in the module docstring
SOURCE = r"""
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* execv, a bare name looked up on PATH as Popen does; not execvp, which runs a file that has
   no #! line with /bin/sh where Popen reports ENOEXEC */
static int run(const char *file, char *const argv[]) {
    if (strchr(file, '/') != NULL) {
        execv(file, argv);
        return errno;
    }
    const char *path = getenv("PATH");
    if (path == NULL) path = "/usr/local/bin:/usr/bin:/bin";
    int err = ENOENT;
    char full[4096];
    while (*path) {
        const char *end = strchr(path, ':');
        size_t len = end ? (size_t) (end - path) : strlen(path);
        int n = len ? snprintf(full, sizeof full, "%.*s/%s", (int) len, path, file)
                    : snprintf(full, sizeof full, "./%s", file);  /* empty entry: "." */
        if (n > 0 && (size_t) n < sizeof full) {
            execv(full, argv);
            if (errno != ENOENT && errno != ENOTDIR && errno != EACCES) return errno;
            if (errno == EACCES) err = EACCES;
        }
        if (!end) break;
        path = end + 1;
    }
    return err;
}

int main(int argc, char **argv) {
    if (argc < 3) return 125;
    int fd = atoi(argv[1]);
    int pipe_fds[2];  /* tells the launcher whether the child's exec failed */
    if (pipe2(pipe_fds, O_CLOEXEC) != 0) return 126;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    pid_t pid = vfork();  /* this program's small memory, not a copy: see the docstring */
    if (pid < 0) return 126;
    if (pid == 0) {
        close(fd);
        close(pipe_fds[0]);
        int err = run(argv[2], argv + 2);
        if (write(pipe_fds[1], &err, sizeof err) < 0) _exit(127);
        _exit(127);
    }
    close(pipe_fds[1]);
    int err = 0;
    ssize_t got;
    do got = read(pipe_fds[0], &err, sizeof err); while (got < 0 && errno == EINTR);
    close(pipe_fds[0]);
    int status = 0;
    struct rusage ru;
    memset(&ru, 0, sizeof ru);
    while (wait4(pid, &status, 0, &ru) < 0) {
        if (errno != EINTR) return 126;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    long long wall = (long long) (t1.tv_sec - t0.tv_sec) * 1000000000LL
                     + (t1.tv_nsec - t0.tv_nsec);
    char line[160];
    int n;
    if (got == (ssize_t) sizeof err)
        n = snprintf(line, sizeof line, "exec %d\n", err);
    else
        n = snprintf(line, sizeof line, "ok %d %lld %lld %ld %lld\n", status,
                     (long long) ru.ru_utime.tv_sec * 1000000LL + ru.ru_utime.tv_usec,
                     (long long) ru.ru_stime.tv_sec * 1000000LL + ru.ru_stime.tv_usec,
                     ru.ru_maxrss, wall);
    if (write(fd, line, (size_t) n) != n) return 126;
    return 0;
}
"""

#: the launcher's path once looked for: unset, None (none can be built) or the path
_built: dict[str, str | None] = {}


def _cache_dir() -> str:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "steadybench")


def _compiler() -> str | None:
    for name in (os.environ.get("CC"), "cc", "gcc", "clang"):
        if name and (found := shutil.which(name)):
            return found
    return None


def _trusted(path: str) -> bool:
    """``path`` is a regular file of ours that no one else may write (not planted)."""
    try:
        info = os.lstat(path)
    except OSError:
        return False
    return (stat.S_ISREG(info.st_mode) and info.st_uid == os.getuid()
            and not info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
            and os.access(path, os.X_OK))


def launcher_path() -> str | None:
    """The launcher's executable, built on first use; None when it cannot be built."""
    if "path" in _built:
        return _built["path"]
    digest = hashlib.sha256(SOURCE.encode()).hexdigest()[:16]
    folder = _cache_dir()
    path = os.path.join(folder, f"launcher-{platform.machine() or 'any'}-{digest}")
    if not _trusted(path):
        path = _build(folder, path)
    _built["path"] = path
    return path


def _build(folder: str, path: str) -> str | None:
    """Compile :data:`SOURCE` into ``path`` atomically (a build is renamed into place, so
    two processes building at once both end with a whole program); None on any failure."""
    compiler = _compiler()
    if compiler is None:
        return None
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=folder) as tmp:
            source = os.path.join(tmp, "launcher.c")
            with open(source, "w", encoding="ascii") as handle:
                handle.write(SOURCE)
            binary = os.path.join(tmp, "launcher")
            done = subprocess.run([compiler, "-O2", "-o", binary, source],
                                  stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL, timeout=60, check=False)
            if done.returncode != 0 or not os.path.exists(binary):
                return None
            os.chmod(binary, 0o700)
            os.replace(binary, path)
    except (OSError, subprocess.SubprocessError):
        return None
    return path if _trusted(path) else None


def forget() -> None:
    """Look for the launcher again on next use (tests change ``$XDG_CACHE_HOME`` and ``$CC``)."""
    _built.clear()


def read_report(read_fd: int) -> list[str]:
    """The words of the launcher's line (``[]`` when it wrote none: it was killed)."""
    chunks = []
    while True:
        chunk = os.read(read_fd, 256)
        if not chunk:
            break
        chunks.append(chunk)
    return b"".join(chunks).decode("ascii", errors="replace").split()
