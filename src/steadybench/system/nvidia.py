"""NVIDIA GPUs through NVML (the ``nvidia-ml-py`` package, imported as ``pynvml``; optional).

Rancid §III-A and §IV-A1 fix the GPU frequency because GPU governors move it most. On NVIDIA
GPUs the driver exposes this through NVML, not sysfs: clocks (graphics, SM, memory), the
temperature, the power draw and a total energy counter are read; the graphics clock can be
locked (``nvmlDeviceSetGpuLockedClocks``, root or the driver's unrestricted mode) and is reset
with ``nvmlDeviceResetGpuLockedClocks``. A lock is journalled (:mod:`.journal`), so
``steadybench system reset`` undoes it after a crash.

Assumption, named: NVML cannot tell whether clocks were already locked, so the restore resets
them to the driver's default (unlocked); a lock someone else set before the run is not put back.

NVML reads the GPUs of the machine running steadybench, whatever ``--root`` says. Without the
package or a driver there is one clear message, never a traceback. Tests pass a fake module
(``sys.modules["pynvml"]``).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any

from ..errors import SystemControlError
from ..runner.actions import Action

#: NVML constants (stable across NVML versions; the fake module need not define them)
CLOCK_GRAPHICS, CLOCK_SM, CLOCK_MEM = 0, 1, 2
TEMPERATURE_GPU = 0


class NvmlUnavailable(SystemControlError):
    """No NVML here: the package is missing, or there is no driver or GPU."""


def load_nvml(module: Any = None) -> Any:
    """The initialised NVML module (``pynvml``), or NvmlUnavailable saying why not."""
    if module is None:
        try:
            module = importlib.import_module("pynvml")
        except ImportError:
            raise NvmlUnavailable("no NVIDIA GPU support: the nvidia-ml-py package is not "
                                  "installed (pip install nvidia-ml-py)") from None
    try:
        module.nvmlInit()
    except Exception as exc:  # NVMLError_LibraryNotFound, _DriverNotLoaded, ...
        raise NvmlUnavailable(f"no NVIDIA GPU: NVML cannot start ({exc or type(exc).__name__})"
                              ) from None
    return module


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _try(fn: Any, *args: Any) -> Any:
    """An NVML query, or None when this GPU does not support it."""
    try:
        return fn(*args)
    except Exception:  # NVMLError_NotSupported and friends: the reading is left out
        return None


def read_gpu(nvml: Any, index: int) -> dict[str, Any]:
    """One GPU: name, UUID, clocks (MHz), maximum clocks, temperature (°C), power (W) and the
    total energy since the driver loaded (J; None where unsupported)."""
    h = nvml.nvmlDeviceGetHandleByIndex(index)
    power_mw = _try(nvml.nvmlDeviceGetPowerUsage, h)
    energy_mj = _try(nvml.nvmlDeviceGetTotalEnergyConsumption, h)
    return {
        "index": index,
        "name": _text(nvml.nvmlDeviceGetName(h)),
        "uuid": _text(_try(nvml.nvmlDeviceGetUUID, h) or f"gpu{index}"),
        "clocks_mhz": {"graphics": _try(nvml.nvmlDeviceGetClockInfo, h, CLOCK_GRAPHICS),
                       "sm": _try(nvml.nvmlDeviceGetClockInfo, h, CLOCK_SM),
                       "memory": _try(nvml.nvmlDeviceGetClockInfo, h, CLOCK_MEM)},
        "max_clocks_mhz": {"graphics": _try(nvml.nvmlDeviceGetMaxClockInfo, h, CLOCK_GRAPHICS),
                           "memory": _try(nvml.nvmlDeviceGetMaxClockInfo, h, CLOCK_MEM)},
        "temperature_c": _try(nvml.nvmlDeviceGetTemperature, h, TEMPERATURE_GPU),
        "power_w": None if power_mw is None else power_mw / 1000.0,
        "energy_j": None if energy_mj is None else energy_mj / 1000.0,
    }


def read_nvidia(module: Any = None) -> dict[str, Any]:
    """``{"available": bool, "reason": str | None, "gpus": [...]}`` (never raises)."""
    try:
        nvml = load_nvml(module)
    except NvmlUnavailable as exc:
        return {"available": False, "reason": str(exc), "gpus": []}
    try:
        count = nvml.nvmlDeviceGetCount()
        gpus = [read_gpu(nvml, i) for i in range(count)]
    except Exception as exc:  # a driver error while reading
        return {"available": False, "reason": f"NVML error: {exc}", "gpus": []}
    finally:
        _try(nvml.nvmlShutdown)
    if not gpus:
        return {"available": False, "reason": "NVML found no NVIDIA GPU", "gpus": []}
    return {"available": True, "reason": None, "gpus": gpus}


@dataclass
class ClockLock:
    """A graphics clock locked on GPU ``index`` (``uuid``) at ``mhz``; undone by :func:`unlock`."""

    index: int
    uuid: str
    mhz: int

    def to_dict(self) -> dict[str, Any]:
        return {"kind": "gpu_clocks", "index": self.index, "uuid": self.uuid, "mhz": self.mhz}


def lock_clocks(nvml: Any, index: int, mhz: int | None = None) -> ClockLock:
    """Lock GPU ``index``'s graphics clock at ``mhz`` (default: its maximum). Raises
    SystemControlError when not permitted or not supported (the message says which)."""
    h = nvml.nvmlDeviceGetHandleByIndex(index)
    target = mhz if mhz is not None else _try(nvml.nvmlDeviceGetMaxClockInfo, h, CLOCK_GRAPHICS)
    if not target:
        raise SystemControlError(f"GPU {index}: its maximum graphics clock cannot be read")
    try:
        nvml.nvmlDeviceSetGpuLockedClocks(h, int(target), int(target))
    except Exception as exc:
        why = type(exc).__name__
        if "Permission" in why:
            raise SystemControlError(f"GPU {index}: not permitted to lock clocks (needs root)"
                                     ) from None
        raise SystemControlError(f"GPU {index}: clocks cannot be locked ({exc or why})") from None
    uuid = _text(_try(nvml.nvmlDeviceGetUUID, h) or f"gpu{index}")
    return ClockLock(index, uuid, int(target))


def unlock(nvml: Any, lock: ClockLock | dict[str, Any]) -> None:
    """Reset the locked clocks of the GPU of ``lock`` (found by UUID, else by index)."""
    data = lock.to_dict() if isinstance(lock, ClockLock) else lock
    handle = None
    uuid = data.get("uuid")
    if uuid and hasattr(nvml, "nvmlDeviceGetHandleByUUID"):
        handle = _try(nvml.nvmlDeviceGetHandleByUUID, uuid)
    if handle is None:
        handle = nvml.nvmlDeviceGetHandleByIndex(int(data["index"]))
    nvml.nvmlDeviceResetGpuLockedClocks(handle)


def undo_gpu_clocks(item: dict[str, Any]) -> str:
    """The journal's undo of a ``gpu_clocks`` entry (:data:`~.journal.UNDO_HANDLERS`)."""
    unlock(load_nvml(), item)
    return f"GPU {item['index']} clocks reset"


class GpuClockLockAction(Action):
    """Lock the graphics clock of NVIDIA GPUs for the benchmark; reset it in ``close``.

    Before the benchmark each GPU in ``indices`` (default all) gets its graphics clock locked at
    its maximum (or ``mhz``); each lock is journalled (``run-<pid>-gpu.json``) *before* it is
    made, so ``steadybench system reset`` resets it after a crash. A GPU that refuses (no
    permission, not supported) gives a warning of the case and is left alone.
    """

    def __init__(self, indices: list[int] | None = None, mhz: int | None = None,
                 nvml: Any = None, journal: str | None = None) -> None:
        self.indices = indices
        self.mhz = mhz
        self.nvml_module = nvml
        self.journal_path = journal
        self._journal: Any = None
        self._nvml: Any = None
        self._guarded = False

    def __call__(self, ctx: Any) -> None:
        from pathlib import Path

        from . import signals
        from .journal import Journal, run_journal_path
        from .sysfs import SysRoot

        if self._journal is not None:
            return
        info = ctx.case.extra.setdefault("machine", {})
        try:
            nvml = self._nvml = load_nvml(self.nvml_module)
        except NvmlUnavailable as exc:
            ctx.warn(f"gpu: {exc}")
            return
        indices = self.indices if self.indices is not None else \
            list(range(nvml.nvmlDeviceGetCount()))
        self._guarded = signals.install()
        locked = info.setdefault("gpu_locked", [])
        with signals.protected():
            path = Path(self.journal_path) if self.journal_path else run_journal_path(part="gpu")
            journal = self._journal = Journal.open(path, SysRoot("/"))
            journal.claim()
            for index in indices:
                h = nvml.nvmlDeviceGetHandleByIndex(index)
                uuid = _text(_try(nvml.nvmlDeviceGetUUID, h) or f"gpu{index}")
                journal.record_undo({"kind": "gpu_clocks", "index": index, "uuid": uuid,
                                     "mhz": self.mhz})
                try:
                    lock = lock_clocks(nvml, index, self.mhz)
                except SystemControlError as exc:
                    ctx.warn(f"gpu: {exc}; clocks left as they are")
                    continue
                locked.append(f"GPU {index} graphics clock {lock.mhz} MHz")

    def close(self, ctx: Any) -> None:
        from . import signals

        journal, self._journal = self._journal, None
        try:
            if journal is not None:
                signals.restore_quietly(journal.restore, ctx, "gpu")
        finally:
            if self._guarded:
                self._guarded = False
                signals.uninstall()

    def describe(self) -> str:
        at = f"{self.mhz} MHz" if self.mhz else "the maximum"
        return f"lock NVIDIA graphics clocks at {at} (reset at the end)"
