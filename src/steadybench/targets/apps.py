"""Stopping background applications for the benchmark, on this machine or a target.

Rancid §III-D and §IV-A4: background processes add load at unpredictable moments; the authors
killed the non-critical Android applications before each benchmark (§VI-A) and note that many
restart soon after. The ``apps`` countermeasure does the two things a user can undo or accept:

- ``processes = ["name", ...]``: every process whose name (``/proc/PID/comm``, which the kernel
  cuts to 15 bytes: a longer name matches on its first or last 15 characters) is one of these is
  sent ``SIGSTOP`` before the benchmark and ``SIGCONT`` when it ends, on every exit path the
  runner's ``close`` covers. PID 1, this process and its parents are never stopped. On this
  machine that is :class:`~steadybench.system.background.StopProcessesAction`, which journals
  each process before stopping it, so ``steadybench system reset`` continues it after a
  ``kill -9``; on a target, after a ``kill -9`` they stay stopped: the record lists them
  (``kill -CONT PID`` on the device).
- ``packages = ["com.example.app", ...]`` (Android only): ``am force-stop PACKAGE`` before the
  benchmark. That cannot be undone: the application starts again when it is next launched.

On a target the processes are the device's real ones (also with ``?root=``, which only moves
the ``sys``/``proc`` tree that is *read and tuned*); every name and PID reaches the device's
shell quoted. On this machine it needs the real root (``--root /``): a fake tree's PIDs are
not processes.
"""

from __future__ import annotations

from typing import Any, ClassVar

from ..errors import ConfigurationError, SystemControlError
from ..runner.actions import Action, RunContext
from ..runner.runner import Stage
from ..system.background import StopProcessesAction, matches
from ..system.presets import Built, Countermeasure, PresetMachine, Skip
from ..system.sysfs import SysRoot
from .transport import q


class RemoteProcesses:
    """A target's processes, through its shell (:mod:`.transport`): list them, signal them,
    force-stop Android packages."""

    def __init__(self, root: Any) -> None:
        self.target = root.target
        self.where = root.spec.address

    def _ask(self, code: str) -> tuple[int, str]:
        status, out = self.target.shell().request(code)
        return status, out.decode("utf-8", "replace")

    def processes(self) -> dict[int, str]:
        """pid → kernel name (``comm``)."""
        status, out = self._ask("for d in /proc/[0-9]*; do "
                                "if read -r c < \"$d/comm\"; then "
                                "printf '%s\\t%s\\n' \"${d#/proc/}\" \"$c\"; fi; "
                                "done 2>/dev/null; true")
        found = {}
        for line in out.splitlines():
            pid, _, comm = line.partition("\t")
            if pid.isdigit():
                found[int(pid)] = comm.strip()
        return found

    def protected(self) -> set[int]:
        """PIDs never stopped: the device's init."""
        return {1}

    def send(self, pid: int, name: str) -> None:
        """Send the signal ``name`` (``STOP``/``CONT``); OSError when it cannot be sent."""
        status, out = self._ask(f"kill -s {q(name)} {int(pid)} 2>&1")
        if status != 0:
            raise OSError(f"kill -s {name} {pid} on {self.where}: {out.strip() or status}")

    def has_am(self) -> bool:
        return self.target.has("am")

    def force_stop(self, package: str) -> None:
        status, out = self._ask(f"am force-stop {q(package)} 2>&1")
        if status != 0:
            raise SystemControlError(f"am force-stop {package} on {self.where}: "
                                     f"{out.strip() or status}")


def control_for(root: SysRoot) -> RemoteProcesses | None:
    """A target's processes behind ``root``; None for this machine's real ones (stopped by
    :class:`~steadybench.system.background.StopProcessesAction`); :class:`Skip` for a fake
    local tree."""
    if root.remote:
        return RemoteProcesses(root)
    if not root.is_real:
        raise Skip("a fake tree's processes are not real (use --root / or a target)")
    return None


class StopAppsAction(Action):
    """Force-stop ``packages`` and ``SIGSTOP`` the ``processes`` named; ``SIGCONT`` in close."""

    def __init__(self, control: RemoteProcesses, processes: list[str],
                 packages: list[str]) -> None:
        self.control = control
        self.names = processes
        self.packages = packages
        self._stopped: list[tuple[int, str]] | None = None

    def __call__(self, ctx: RunContext) -> None:
        if self._stopped is not None:
            return
        info = ctx.case.extra.setdefault("machine", {})
        for package in self.packages:
            try:
                self.control.force_stop(package)
            except SystemControlError as exc:
                ctx.warn(f"apps: {exc}")
        info["force_stopped"] = list(self.packages)
        self._stopped = []
        if not self.names:
            return
        keep = self.control.protected()
        found = {pid: comm for pid, comm in self.control.processes().items()
                 if pid not in keep and matches(comm, self.names)}
        for pid, comm in sorted(found.items()):
            try:
                self.control.send(pid, "STOP")
            except OSError as exc:
                ctx.warn(f"apps: cannot stop {comm} ({pid}): {exc}")
                continue
            self._stopped.append((pid, comm))
        missing = [n for n in self.names if not any(matches(c, [n]) for c in found.values())]
        if missing:
            ctx.warn(f"apps: no process named {', '.join(missing)} on {self.control.where}")
        info["stopped_processes"] = [{"pid": p, "name": c} for p, c in self._stopped]

    def close(self, ctx: RunContext) -> None:
        stopped, self._stopped = self._stopped, None
        for pid, comm in stopped or []:
            try:
                self.control.send(pid, "CONT")
            except OSError as exc:  # gone meanwhile, or the target is unreachable
                ctx.warn(f"apps: cannot continue {comm} ({pid}): {exc}; run kill -CONT {pid}")

    def describe(self) -> str:
        parts = []
        if self.packages:
            parts.append(f"am force-stop {', '.join(self.packages)}")
        if self.names:
            parts.append(f"stop {', '.join(self.names)} while measuring (continued after)")
        return "; ".join(parts) + f" on {self.control.where}"


def _names(value: Any, key: str) -> list[str]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise ConfigurationError(f"[apps] {key} must be a list of names")
    return [v.strip() for v in value]


class StopApps(Countermeasure):
    """Stop named background processes (and force-stop Android packages) for the benchmark."""

    options: ClassVar[dict[str, Any]] = {"processes": [], "packages": []}

    def build(self, machine: PresetMachine, o: dict[str, Any]) -> Built:
        processes, packages = _names(o["processes"], "processes"), _names(o["packages"],
                                                                          "packages")
        if not processes and not packages:
            raise Skip("no processes or packages named ([apps] processes, packages)")
        control = control_for(machine.root)
        if packages and (control is None or not control.has_am()):
            where = "this machine" if control is None else control.where
            raise Skip(f"packages are force-stopped with Android's am, which {where} does "
                       "not have")
        action: StopAppsAction | StopProcessesAction
        if control is None:
            action = StopProcessesAction(machine.root, processes)
        else:
            action = StopAppsAction(control, processes, packages)
        return [(Stage.BEFORE_BENCHMARK, action)], action.describe()


