"""Which process a journal belongs to: its PID *and* its start time.

Issue 12, item 5: a journal records the PID of the run that wrote it, and ``system reset`` skips
the journals of runs still alive. After a crash the PID can be reused by an unrelated process,
and the journal was then skipped for as long as that process lived. The start time of a
process (field 22, ``starttime``, of ``/proc/PID/stat``, in clock ticks after boot; proc(5))
does not change while it lives, so (PID, start time) names one process. It is read through the
:class:`~steadybench.system.sysfs.SysRoot` like every other ``/proc`` file, so tests give it in a
fake tree.
"""

from __future__ import annotations

import os
from typing import Literal

from .sysfs import SysRoot

#: ``starttime`` is field 22 of /proc/PID/stat; counted from field 3, the first after the name
_STARTTIME_AFTER_NAME = 22 - 3

Liveness = Literal["alive", "gone", "reused"]


def start_time(root: SysRoot, pid: int) -> int | None:
    """The start time of ``pid`` (clock ticks after boot), or None when it cannot be read.

    The command name (field 2) is in parentheses and may hold spaces and parentheses itself, so
    the fields are counted after its *last* closing parenthesis.
    """
    text = root.read(f"proc/{int(pid)}/stat")
    if not text:
        return None
    _name, sep, rest = text.rpartition(")")
    if not sep:
        return None
    try:
        return int(rest.split()[_STARTTIME_AFTER_NAME])
    except (IndexError, ValueError):
        return None


def pid_alive(pid: int) -> bool:
    """Whether a process with this PID exists (any owner)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def liveness(root: SysRoot, pid: int, recorded_start: int | None) -> Liveness:
    """``alive`` (the process that wrote the journal still runs), ``gone`` (no such PID) or
    ``reused`` (the PID now belongs to a process started at another time).

    A journal without a recorded start time (older journals, or a root whose ``/proc`` lacks the
    process) counts as alive while the PID exists: nothing says otherwise.
    """
    if not pid_alive(pid):
        return "gone"
    if recorded_start is None:
        return "alive"
    now = start_time(root, pid)
    if now is not None and now != recorded_start:
        return "reused"
    return "alive"
