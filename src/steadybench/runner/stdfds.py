"""Standard streams a benchmark in this process closes or replaces (issue 27 item 14).

An ``--in-process`` benchmark that closes fd 1 (``os.close(1)``) took steadybench's own
standard output with it: the table failed with "Bad file descriptor" and the results files were
never written. :func:`kept_streams` keeps a duplicate of fds 0, 1 and 2 while a case runs and
puts back any that the case closed or pointed elsewhere, saying so in the case's warnings.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

_NAMES = {0: "standard input", 1: "standard output", 2: "standard error"}


def _identity(fd: int) -> tuple[int, int] | None:
    try:
        st = os.fstat(fd)
    except OSError:
        return None
    return st.st_dev, st.st_ino


@contextlib.contextmanager
def kept_streams(warnings: list[str]) -> Iterator[None]:
    """Run the block; then put back fds 0-2 that it closed or replaced, one line each in
    ``warnings``. Streams that were not open to begin with are left alone."""
    saved: dict[int, tuple[int, tuple[int, int]]] = {}
    for fd in _NAMES:
        ident = _identity(fd)
        if ident is None:
            continue
        try:
            saved[fd] = (os.dup(fd), ident)
        except OSError:
            continue
    try:
        yield
    finally:
        for fd, (copy, ident) in saved.items():
            try:
                if _identity(fd) != ident:
                    os.dup2(copy, fd)
                    warnings.append(f"the benchmark closed or replaced {_NAMES[fd]} (fd {fd}); "
                                    "steadybench put it back")
            except OSError:
                pass
            finally:
                os.close(copy)
