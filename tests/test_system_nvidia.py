"""Issue 15, items 3-4: NVIDIA GPUs through NVML, with a fake ``pynvml`` module."""

from __future__ import annotations

import sys

import pytest

from fake_nvml import FakeGpu, make_nvml
from steadybench.model.implementation import CallableImplementation
from steadybench.model.parameters import Parameters
from steadybench.runner import Runner, Runs, Stage
from steadybench.system.journal import Journal
from steadybench.system.nvidia import GpuClockLockAction, read_nvidia
from steadybench.system.tuning import reset
from steadybench.testing import SimulatedClock


@pytest.fixture(autouse=True)
def _state(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))


def test_no_package_or_no_driver_is_one_clear_message(monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", None)  # import fails as if not installed
    state = read_nvidia()
    assert not state["available"] and "nvidia-ml-py package is not installed" in state["reason"]
    state = read_nvidia(make_nvml(driver=False))
    assert not state["available"] and "Driver Not Loaded" in state["reason"]
    assert "found no NVIDIA GPU" in read_nvidia(make_nvml([]))["reason"]


def test_clocks_temperature_power_and_energy_are_read():
    state = read_nvidia(make_nvml([FakeGpu(0), FakeGpu(1, "NVIDIA Other")]))
    assert state["available"]
    gpu = state["gpus"][1]
    assert gpu["name"] == "NVIDIA Other" and gpu["uuid"] == "GPU-fake-1"
    assert gpu["clocks_mhz"] == {"graphics": 345, "sm": 345, "memory": 3500}
    assert gpu["temperature_c"] == 52 and gpu["power_w"] == 87.5 and gpu["energy_j"] == 1000.0


def test_clocks_locked_for_the_run_and_reset_at_its_end(monkeypatch, tmp_path):
    nvml = make_nvml([FakeGpu(0), FakeGpu(1, permitted=False)])
    monkeypatch.setitem(sys.modules, "pynvml", nvml)
    clock = SimulatedClock()
    seen = []
    runner = Runner(Runs(2), clock=clock, sleep=clock.sleep)
    runner.add_action(Stage.BEFORE_BENCHMARK, GpuClockLockAction())
    runner.add_action(Stage.BEFORE_RUN, lambda ctx: seen.append(nvml.gpus[0].locked))
    case = runner.execute(CallableImplementation(clock.workload(1e6), "w"), Parameters())
    assert seen == [(1980, 1980)] * 2
    assert case.extra["machine"]["gpu_locked"] == ["GPU 0 graphics clock 1980 MHz"]
    assert any("not permitted to lock clocks" in w for w in case.warnings)
    assert nvml.gpus[0].locked is None and not list((tmp_path / "state").rglob("*.json"))


def test_a_crashed_run_s_lock_is_reset_by_system_reset(monkeypatch, tmp_path):
    nvml = make_nvml()
    monkeypatch.setitem(sys.modules, "pynvml", nvml)
    action = GpuClockLockAction(journal=str(tmp_path / "state" / "steadybench" / "run-9-gpu.json"))
    from steadybench.model.results import CaseResult
    from steadybench.runner.actions import RunContext
    from steadybench.runner.stop import RunState

    clock = SimulatedClock()
    ctx = RunContext(None, Parameters(), CaseResult("b", "w"), RunState(), clock, clock.sleep)
    action(ctx)
    assert nvml.gpus[0].locked == (1980, 1980)
    path = action._journal.path
    action._journal = None  # as if killed: nothing undone, the journal stays
    from steadybench.system import signals

    signals.uninstall()
    journal = Journal.load(path)
    assert journal.undo == [{"kind": "gpu_clocks", "index": 0, "uuid": "GPU-fake-0",
                             "mhz": None}]
    report = reset([path])
    assert "GPU 0 clocks reset" in report["restored"] and nvml.gpus[0].locked is None


def test_gpu_energy_meter(monkeypatch):
    from steadybench.meters.energy import NvmlEnergyMeter

    nvml = make_nvml()
    meter = NvmlEnergyMeter(0, nvml)
    assert meter.available
    meter.start()
    nvml.gpus[0].energy_mj += 2500
    assert meter.stop(True) == 2.5
    monkeypatch.setitem(sys.modules, "pynvml", None)
    missing = NvmlEnergyMeter(0)
    assert not missing.available and "nvidia-ml-py" in missing.reason
