"""Remote targets: run programs and control the machine on a board over SSH or a phone over adb.

``--target ssh://[USER@]HOST[:PORT]`` or ``--target adb[://SERIAL]`` (:mod:`.spec`) makes
``exec``, ``iters``, ``sweep`` and ``system show|check|tune|reset`` work on the device:

- :mod:`.transport`: the ``ssh`` client (one master connection) and the ``adb`` tool, and one
  long-lived device shell per target for file reads and writes;
- :mod:`.sysroot`: the device's ``sys``/``proc`` behind the local
  :class:`~steadybench.system.sysfs.SysRoot` interface, so every countermeasure works there,
  with the journals kept on the host, one folder per target;
- :mod:`.remote_run`: programs run and timed *on the device* (a monotonic clock there, not the
  network round trip), pinned with ``taskset`` when the preset pins;
- :mod:`.cli`: the shared ``--target``/``--push`` options.

Targets opened in a process are kept here (one connection each) and closed at exit.
"""

from __future__ import annotations

import atexit
import contextlib

from .spec import TargetSpec, parse_target
from .sysroot import RemoteSysRoot
from .transport import AdbTarget, SshTarget, Target, TargetError

_OPEN: dict[str, Target] = {}
_ROOTS: dict[str, RemoteSysRoot] = {}

__all__ = ["RemoteSysRoot", "Target", "TargetError", "TargetSpec", "close_all", "open_target",
           "parse_target", "remote_root"]


def open_target(spec: TargetSpec | str) -> Target:
    """The open :class:`Target` for ``spec`` (one per target and process)."""
    if isinstance(spec, str):
        spec = parse_target(spec)
    if spec.is_local:
        raise TargetError("the local machine is not a remote target")
    target = _OPEN.get(spec.key)
    if target is None or target.closed:
        target = SshTarget(spec) if spec.kind == "ssh" else AdbTarget(spec)
        _OPEN[spec.key] = target
    return target


def remote_root(spec: TargetSpec | str) -> RemoteSysRoot:
    """The device's filesystem root of ``spec`` as a :class:`RemoteSysRoot` (one per target)."""
    target = open_target(spec)
    root = _ROOTS.get(target.spec.key)
    if root is None or root.target is not target:
        root = RemoteSysRoot(target)
        _ROOTS[target.spec.key] = root
    return root


def close_all() -> None:
    """Close every open target (their work folders on the devices are removed first)."""
    for key, target in list(_OPEN.items()):
        for hook in list(getattr(target, "on_close", [])):
            with contextlib.suppress(Exception):  # closing goes on for every target
                hook()
        target.close()
        del _OPEN[key]
    _ROOTS.clear()


atexit.register(close_all)
