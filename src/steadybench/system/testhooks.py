"""A pause inside the restore, for the fault tests only (issue 12, item 1).

A test must deliver a signal *in the middle of* a restore without racing the clock. With
``STEADYBENCH_TEST_RESTORE_GATE=K:SIGNALS:MARKER`` in the environment, the first restore that
reaches its K-th file (0-based) stops before writing it, creates the file MARKER and waits until
every signal named in SIGNALS (comma-separated, without ``SIG``: ``TERM,INT``) has reached the
process, then goes on. Arrival is seen through ``signal.set_wakeup_fd``: CPython's C-level
handler writes the signal number to that pipe from whichever thread the kernel chose, before
any Python handler runs; the Python handlers then run as usual, inside the restore. Nothing
happens without the variable.
"""

from __future__ import annotations

import os
import signal
import threading
from pathlib import Path

ENV = "STEADYBENCH_TEST_RESTORE_GATE"


def restore_gate(index: int) -> None:
    """Called by the restore before it writes file ``index``; see the module docstring."""
    spec = os.environ.get(ENV)
    if not spec or threading.current_thread() is not threading.main_thread():
        return
    at, names, marker = spec.split(":", 2)
    if index != int(at):
        return
    del os.environ[ENV]  # once per process
    wanted = {signal.Signals[f"SIG{name.strip()}"].value for name in names.split(",")
              if name.strip()}
    read_end, write_end = os.pipe()
    os.set_blocking(write_end, False)
    old = signal.set_wakeup_fd(write_end, warn_on_full_buffer=False)
    try:
        Path(marker).write_text(f"{os.getpid()}\n")
        seen: set[int] = set()
        while not wanted <= seen:
            seen.update(os.read(read_end, 64))
    finally:
        signal.set_wakeup_fd(old)
        os.close(read_end)
        os.close(write_end)
