"""A stand-in for the ``pynvml`` module (nvidia-ml-py): one or more fake GPUs whose clocks can
be locked, for the NVML tests (there is no NVIDIA GPU on the test machines)."""

from __future__ import annotations

import types


class NVMLError(Exception):
    pass


class NVMLError_NoPermission(NVMLError):  # noqa: N801 - the name pynvml uses
    pass


class NVMLError_NotSupported(NVMLError):  # noqa: N801
    pass


class FakeGpu:
    def __init__(self, index: int, name: str = "NVIDIA Fake 9000", max_graphics: int = 1980,
                 energy_mj: int = 1_000_000, permitted: bool = True) -> None:
        self.index = index
        self.name = name
        self.uuid = f"GPU-fake-{index}"
        self.max_graphics = max_graphics
        self.graphics = 345
        self.energy_mj = energy_mj
        self.permitted = permitted
        self.locked: tuple[int, int] | None = None


def make_nvml(gpus: list[FakeGpu] | None = None, driver: bool = True) -> types.ModuleType:
    """A module with the pynvml functions steadybench calls."""
    gpus = gpus if gpus is not None else [FakeGpu(0)]
    mod = types.ModuleType("pynvml")
    mod.gpus = gpus
    mod.inits = 0

    def init():
        if not driver:
            raise NVMLError("Driver Not Loaded")
        mod.inits += 1

    def handle(index):
        return gpus[index]

    def by_uuid(uuid):
        return next(g for g in gpus if g.uuid == uuid)

    def clock(h, kind):
        return {0: h.graphics, 1: h.graphics, 2: 3500}[kind]

    def max_clock(h, kind):
        return {0: h.max_graphics, 2: 3500}[kind]

    def lock(h, low, high):
        if not h.permitted:
            raise NVMLError_NoPermission("Insufficient Permissions")
        h.locked = (low, high)
        h.graphics = high

    def reset(h):
        h.locked = None
        h.graphics = 345

    mod.NVMLError = NVMLError
    mod.nvmlInit = init
    mod.nvmlShutdown = lambda: None
    mod.nvmlDeviceGetCount = lambda: len(gpus)
    mod.nvmlDeviceGetHandleByIndex = handle
    mod.nvmlDeviceGetHandleByUUID = by_uuid
    mod.nvmlDeviceGetName = lambda h: h.name.encode()
    mod.nvmlDeviceGetUUID = lambda h: h.uuid
    mod.nvmlDeviceGetClockInfo = clock
    mod.nvmlDeviceGetMaxClockInfo = max_clock
    mod.nvmlDeviceGetTemperature = lambda h, kind: 52
    mod.nvmlDeviceGetPowerUsage = lambda h: 87_500
    mod.nvmlDeviceGetTotalEnergyConsumption = lambda h: h.energy_mj
    mod.nvmlDeviceSetGpuLockedClocks = lock
    mod.nvmlDeviceResetGpuLockedClocks = reset
    return mod
