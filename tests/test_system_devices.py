"""Issue 15, items 3-5: devfreq (GPU, DDR), sensor units, energy meters, NVML, and the
countermeasure fixes, against the fake board of ``fake_machine.make_board``."""

from __future__ import annotations

import errno
import json
from pathlib import Path

import pytest

from fake_machine import DDR, MALI, add_battery, make_board, make_machine, put, snapshot
from steadybench.model.implementation import CallableImplementation
from steadybench.model.parameters import Parameters
from steadybench.model.results import CaseResult
from steadybench.runner import Runner, Runs, Stage
from steadybench.runner.actions import RunContext
from steadybench.runner.stop import RunState
from steadybench.system.actions import (
    KeepMinFreqAction,
    PinAction,
    PinFallbackAction,
    SpinWarmUpAction,
    TuneAction,
)
from steadybench.system.advice import Rules, check
from steadybench.system.devices import read_devfreq, read_rapl, read_supply_power
from steadybench.system.journal import Journal
from steadybench.system.presets import build_preset
from steadybench.system.readers import detect_unit, machine_state, read_thermal, sensor_units
from steadybench.system.sysfs import SysRoot
from steadybench.system.tuning import make_plan, reset, tune
from steadybench.testing import SimulatedClock

MALI_DIR = f"sys/devices/platform/{MALI}/devfreq/{MALI}"
DDR_DIR = f"sys/devices/platform/{DDR}/devfreq/{DDR}"


@pytest.fixture(autouse=True)
def _state(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.delenv("STEADYBENCH_SENSOR_UNITS", raising=False)


def _ctx(clock: SimulatedClock | None = None) -> RunContext:
    clock = clock or SimulatedClock()
    return RunContext(CallableImplementation(lambda: None, "w"), Parameters(),
                      CaseResult("b", "w"), RunState(), clock, clock.sleep)


# ---------------------------------------------------------------- devfreq
def test_devfreq_devices_are_read_with_their_kind(tmp_path):
    root = SysRoot(make_board(tmp_path / "b"))
    devices = {d["name"]: d for d in read_devfreq(root)}
    assert devices[MALI]["kind"] == "gpu" and devices[DDR]["kind"] == "memory"
    assert devices[MALI]["cur_mhz"] == 177.0 and devices[MALI]["max_mhz"] == 600.0
    assert devices[DDR]["steps_mhz"][-1] == 825.0
    assert "performance" not in devices[MALI]["available_governors"]
    state = machine_state(root, top_interval=0)
    assert [d["name"] for d in state["devfreq"]] == sorted([MALI, DDR])
    json.dumps(state)


def test_tune_fixes_gpu_and_ddr_and_reset_restores_byte_for_byte(tmp_path):
    board = make_board(tmp_path / "b")
    root = SysRoot(board)
    before = snapshot(board)
    plan = make_plan(root)
    by_path = {c.path: c for c in plan.changes}
    # the Mali GPU has no performance governor: its minimum is raised to the maximum (§IV-A1)
    mali_min = by_path[f"/sys/class/devfreq/{MALI}/min_freq"]
    assert mali_min.new == b"600000000\n" and "minimum frequency raised" in mali_min.reason
    # the DDR controller has one
    assert by_path[f"/sys/class/devfreq/{DDR}/governor"].new == b"performance\n"
    journal = tmp_path / "tune.json"
    report = tune(root, journal)
    assert len(report["changed"]) == len(plan.changes)
    assert (board / MALI_DIR / "min_freq").read_text() == "600000000\n"
    assert (board / DDR_DIR / "governor").read_text() == "performance\n"
    assert (board / "sys/devices/system/cpu/cpufreq/boost").read_text() == "0\n"
    assert snapshot(board) != before
    reset([journal], root=root)
    assert snapshot(board) == before


def test_devfreq_can_be_left_alone(tmp_path):
    root = SysRoot(make_board(tmp_path / "b"))
    plan = make_plan(root, devfreq=False)
    assert not any("devfreq" in c.path for c in plan.changes)


def test_min_freq_is_reapplied_between_runs_and_restored_at_the_end(tmp_path):
    """§IV-A1: the governor resets the raised minimum when the device gets hot; it is checked
    and raised again before each run; the restore at the end is still exact."""
    board = make_board(tmp_path / "b")
    before = snapshot(board)
    root = SysRoot(board)
    clock = SimulatedClock()
    tune_action = TuneAction(root, journal=tmp_path / "run.json")
    runs = {"n": 0}

    def work() -> None:
        runs["n"] += 1
        clock.advance(1e6)
        if runs["n"] in (2, 4):  # the "thermal governor" puts the minimum back
            (board / MALI_DIR / "min_freq").write_text("177000000\n")

    runner = Runner(Runs(5), clock=clock, sleep=clock.sleep)
    runner.add_action(Stage.BEFORE_BENCHMARK, tune_action)
    runner.add_action(Stage.BEFORE_RUN, KeepMinFreqAction(tune_action))
    seen = []
    runner.add_action(Stage.AFTER_RUN, lambda ctx: seen.append(
        (board / MALI_DIR / "min_freq").read_text().strip()))
    case = runner.execute(CallableImplementation(work, "w"), Parameters())
    assert seen == ["600000000", "177000000", "600000000", "177000000", "600000000"]
    cost = case.extra["machine"]["costs"]["keep_min_freq"]
    assert cost["rounds"] == 2 and cost["runs"] == 2
    assert any("raised again" in w for w in case.warnings)
    assert snapshot(board) == before


def test_devfreq_meter_records_each_run(tmp_path):
    board = make_board(tmp_path / "b")
    plan = build_preset("baseline", board)
    names = [m.name for m in plan.meters]
    assert f"devfreq:{MALI}" in names and f"devfreq:{DDR}" in names
    assert "energy" in names and "timestamp" in names
    meter = next(m for m in plan.meters if m.name == f"devfreq:{MALI}")
    assert meter.stop(True) == 177.0
    (board / MALI_DIR / "cur_freq").write_text("543000000\n")
    assert meter.stop(True) == 543.0


# ---------------------------------------------------------------- sensors
def test_whole_degree_sensor_reads_as_degrees_and_check_is_not_fit(tmp_path):
    root = SysRoot(make_board(tmp_path / "b", sensor_degrees=85))
    sensors = {s["name"]: s for s in read_thermal(root)}
    hot = sensors["thermal_zone1:soc-degrees"]
    assert hot["celsius"] == 85.0 and hot["unit"] == "degrees" and hot["unit_source"] == "detected"
    assert sensors["thermal_zone0:cpu-millideg"]["celsius"] == 41.0
    reasons = check(machine_state(root, top_interval=0), Rules(max_temperature=70.0))
    assert any("85 °C > 70 °C" in r for r in reasons)


def test_the_unit_rule_and_its_overrides(tmp_path, monkeypatch):
    assert detect_unit(85) == "degrees" and detect_unit(999) == "degrees"
    assert detect_unit(1000) == "millidegrees" and detect_unit(-5000) == "millidegrees"
    root = make_machine(tmp_path / "m", thermal={"battery": 350})
    # 350 read as degrees is implausible: reported, and an override fixes it
    sensor = read_thermal(SysRoot(root))[0]
    assert sensor["celsius"] is None and "implausible" in sensor["error"]
    fixed = read_thermal(SysRoot(root), {"thermal_zone0:battery": "decidegrees"})[0]
    assert fixed["celsius"] == 35.0 and fixed["unit_source"] == "set"
    monkeypatch.setenv("STEADYBENCH_SENSOR_UNITS", "/sys/class/thermal/thermal_zone0/temp="
                                                   "decidegrees")
    assert read_thermal(SysRoot(root))[0]["celsius"] == 35.0
    with pytest.raises(ValueError):
        sensor_units("x=kelvin")
    monkeypatch.setenv("STEADYBENCH_SENSOR_UNITS", "x=kelvin")
    from steadybench.system.advice import assess

    findings = assess(machine_state(SysRoot(root), top_interval=0))
    assert any("kelvin" in f["message"] and f["level"] == "warning" for f in findings)


def test_cooldown_uses_the_sensor_units_of_the_preset(tmp_path):
    board = make_board(tmp_path / "b", sensor_degrees=None)
    put(board, "sys/class/thermal/thermal_zone0/temp", "350\n")
    preset = tmp_path / "p.toml"
    preset.write_text('countermeasures = ["cooldown"]\n[cooldown]\nupper = 30\n'
                      'units = {"thermal_zone0:cpu-millideg" = "decidegrees"}\n')
    plan = build_preset(str(preset), board)
    assert [a["name"] for a in plan.record["applied"]] == ["cooldown"]
    # system check reads the sensors with the preset's units: 850 is 85.0 °C, too hot (read
    # by the rule, 850 °C would be an unusable sensor and the check would pass)
    import subprocess
    import sys

    put(board, "sys/class/thermal/thermal_zone0/temp", "850\n")
    cli = str(Path(sys.executable).with_name("steadybench"))
    hot = subprocess.run([cli, "--root", str(board), "system", "check", "--preset", str(preset),
                          "--interval", "0"], capture_output=True, text=True, timeout=120)
    assert hot.returncode == 1 and "at 85 °C > 70 °C" in hot.stdout, hot.stdout + hot.stderr
    preset.write_text('countermeasures = ["cooldown"]\n[cooldown]\nunits = {"a" = "kelvin"}\n')
    from steadybench.errors import ConfigurationError

    with pytest.raises(ConfigurationError, match="units"):
        build_preset(str(preset), board)


# ---------------------------------------------------------------- energy
def test_rapl_energy_per_run_across_a_wrap(tmp_path):
    from steadybench.meters.energy import EnergyMeter, RaplEnergyMeter, rapl_delta

    board = make_board(tmp_path / "b")
    energy = board / "sys/class/powercap/intel-rapl:0/energy_uj"
    top = 262_143_328_850
    assert [z["zone"] for z in read_rapl(SysRoot(board))] == ["intel-rapl:0"]
    meter = RaplEnergyMeter(SysRoot(board))
    energy.write_text(f"{top - 1_000_000}\n")
    meter.start()
    energy.write_text("2500000\n")  # wrapped: 1 J to the top, then 2.5 J
    assert meter.stop(True) == pytest.approx(3.5)
    energy.write_text("2500000\n")
    meter.start()
    energy.write_text("4500000\n")
    assert meter.stop(True) == pytest.approx(2.0)
    assert rapl_delta(10, 5, 100) == 95
    with pytest.raises(ValueError):
        rapl_delta(10, 5, None)
    auto = EnergyMeter(SysRoot(board))
    assert auto.source == "rapl" and auto.available


def test_power_supply_energy_where_there_is_no_rapl(tmp_path):
    from steadybench.meters.energy import EnergyMeter

    board = make_board(tmp_path / "b", rapl=False)
    assert read_supply_power(SysRoot(board))[0]["watts"] == pytest.approx(2.0)
    clock = SimulatedClock()
    meter = EnergyMeter(SysRoot(board), clock=clock)
    assert meter.source == "power_supply"
    meter.start()
    clock.advance(3e9)
    add_battery(board, current_ua=-1_000_000)  # 4 W at the end
    # trapezoid over the run: (2 W + 4 W) / 2 × 3 s
    assert meter.stop(True) == pytest.approx(9.0)
    bare = EnergyMeter(SysRoot(make_machine(tmp_path / "m")))
    assert not bare.available and "RAPL" in bare.reason and "current_now" in bare.reason


# ---------------------------------------------------------------- affinity
def test_pinning_is_restricted_to_the_cpus_the_process_may_use(tmp_path):
    board = make_board(tmp_path / "b")
    plan = build_preset("managed", board, affinity={0, 1, 4})
    detail = {a["name"]: a["detail"] for a in plan.record["applied"]}
    assert detail["pin"].startswith("pin to CPUs 4 (highest cpu_capacity")
    preset = tmp_path / "p.toml"
    preset.write_text('countermeasures = ["pin"]\n[pin]\ncpus = "4-7"\n')
    detail = build_preset(str(preset), board, affinity={0, 1, 4}).record["applied"][0]["detail"]
    assert detail.startswith("pin to CPUs 4 ") and "5-7 left out" in detail
    # the CPUs asked for are not ours: pinning is skipped with the reason
    preset.write_text('countermeasures = ["pin", "warmup"]\n[pin]\ncpus = "4-7"\n')
    skipped = build_preset(str(preset), board, affinity={0, 1}).record["skipped"]
    assert "CPUs 4-7 are not among those this process may use (0-1)" in skipped[0]["reason"]
    # none of the board's CPUs is ours: pinning is skipped with the reason, warm-up takes over
    plan = build_preset("managed", board, affinity={8, 9})
    skipped = {s["name"]: s["reason"] for s in plan.record["skipped"]}
    applied = {a["name"]: a["detail"] for a in plan.record["applied"]}
    assert "pin" not in applied and "warm-up before each run takes over" in skipped["pin"]
    assert "pinning impossible" in applied["warmup"]


def test_a_refused_pin_is_skipped_and_the_warm_up_takes_over():
    clock = SimulatedClock(read_cost_ns=1000)

    def refuse(pid, cpus):
        raise OSError(errno.EINVAL, "Invalid argument")

    pin = PinAction([2, 3], setaffinity=refuse, getaffinity=lambda pid: {0, 1, 2, 3})
    runner = Runner(Runs(3), clock=clock, sleep=clock.sleep)
    runner.add_action(Stage.BEFORE_BENCHMARK, pin)
    runner.add_action(Stage.BEFORE_RUN, PinFallbackAction(pin, SpinWarmUpAction(0.001)))
    case = runner.execute(CallableImplementation(clock.workload(1e6), "w"), Parameters())
    assert case.stop_reason == "3 runs done" and not case.errors
    assert "Invalid argument" in case.extra["machine"]["pin_skipped"]
    cost = case.extra["machine"]["costs"]["spin_warmup"]
    assert cost["runs"] == 3 and cost["time_s"] >= 0.003 and cost["rounds"] > 0


# ---------------------------------------------------------------- messages, fingerprint
def test_only_min_freq_raised_is_not_called_the_performance_governor(tmp_path):
    board = make_board(tmp_path / "b", governors="interactive ondemand powersave")
    plan = build_preset("managed", board, affinity=set(range(8)))
    skipped = {s["name"]: s["reason"] for s in plan.record["skipped"]}
    assert "performance governor" not in skipped["warmup"]
    assert "minimum frequency raised to the maximum" in skipped["warmup"]


def test_the_managed_fingerprint_describes_the_tuned_machine(tmp_path):
    board = make_board(tmp_path / "b")
    managed = build_preset("managed", board, affinity=set(range(8))).record["fingerprint"]
    baseline = build_preset("baseline", board).record["fingerprint"]
    assert baseline["boost"] is True and managed["boost"] is False
    assert managed["governors"] == ["performance"]
    assert managed["devfreq"][DDR].startswith("performance")
    assert managed["devfreq"][MALI] == "simple_ondemand min 600 MHz"
    # building the preset changed nothing
    assert (board / "sys/devices/system/cpu/cpufreq/boost").read_text() == "1\n"


def test_countermeasure_costs_are_recorded_per_case(tmp_path):
    board = make_board(tmp_path / "b")
    clock = SimulatedClock()
    # hot at first: one cool-down of 3 polls, then cool
    temps = iter([80000, 80000, 75000, 50000] + [40000] * 100)

    def work() -> None:
        clock.advance(1e6)

    from steadybench.system.actions import MachineCoolDownAction

    class Reading:
        def __call__(self):
            value = next(temps)
            (board / "sys/class/thermal/thermal_zone0/temp").write_text(f"{value}\n")
            return value / 1000

    cool = MachineCoolDownAction(SysRoot(board), upper=70, lower=60, poll=1.0)
    cool.reading = Reading()
    runner = Runner(Runs(3), clock=clock, sleep=clock.sleep)
    runner.add_action(Stage.BEFORE_RUN, cool)
    case = runner.execute(CallableImplementation(work, "w"), Parameters())
    cost = case.extra["machine"]["costs"]["cooldown"]
    assert cost["time_s"] == pytest.approx(3.0) and cost["runs"] == 1 and cost["max_s"] == 3.0


def test_journal_version_2_without_undo_is_still_read(tmp_path):
    board = make_board(tmp_path / "b")
    path = tmp_path / "old.json"
    path.write_text(json.dumps({"format": "steadybench-journal", "version": 2,
                                "root": str(board), "pid": 1, "start_time": None,
                                "created": "", "entries": []}))
    path.chmod(0o600)
    assert Journal.load(path).undo == []


# ---------------------------------------------------------------- background processes
def _proc(board, pid: int, name: str, started: int) -> None:
    put(board, f"proc/{pid}/comm", f"{name}\n")
    fields = ["S", "1", "1", "1"] + ["0"] * 15 + [str(started)] + ["0"] * 20
    put(board, f"proc/{pid}/stat", f"{pid} ({name}) {' '.join(fields)}\n")


def test_background_processes_stopped_and_continued_with_pid_reuse_guarded(tmp_path):
    import signal

    from steadybench.system.background import StopProcessesAction, find_processes
    from steadybench.system.journal import run_journal_path

    board = make_board(tmp_path / "b")
    _proc(board, 4001, "syncd", 777)
    _proc(board, 4002, "syncd", 778)
    _proc(board, 4003, "root-only", 779)
    _proc(board, 4004, "other", 780)
    assert [p["pid"] for p in find_processes(SysRoot(board), ["syncd"])] == [4001, 4002]
    assert find_processes(SysRoot(board), ["syncd"])[0]["start_time"] == 777
    sent = []

    def kill(pid, sig):
        if pid == 4003:
            raise PermissionError(1, "Operation not permitted")
        sent.append((pid, sig))

    action = StopProcessesAction(SysRoot(board), ["syncd", "root-only", "absent"], kill=kill)
    ctx = _ctx()
    action(ctx)
    assert sent == [(4001, signal.SIGSTOP), (4002, signal.SIGSTOP)]
    info = ctx.case.extra["machine"]
    assert info["stopped_processes"] == [{"pid": 4001, "name": "syncd"},
                                         {"pid": 4002, "name": "syncd"}]
    assert info["not_running"] == ["absent"]
    assert any("not permitted to stop root-only" in w for w in ctx.case.warnings)
    journal = Journal.load(run_journal_path(part="processes"))
    assert [u["pid"] for u in journal.undo] == [4001, 4002]  # 4003 was not stopped
    # 4002 exits and its PID goes to another process: it must not be continued
    _proc(board, 4002, "syncd", 999)
    sent.clear()
    action.close(ctx)
    assert (4001, signal.SIGCONT) in sent and (4002, signal.SIGCONT) not in sent
    assert not run_journal_path(part="processes").exists()


def test_long_names_match_on_the_kernel_s_cut_and_parents_are_never_stopped(tmp_path,
                                                                           monkeypatch):
    import os

    from steadybench.system.background import find_processes

    board = make_board(tmp_path / "b")
    # comm keeps 15 bytes: "com.example.syncservice" is seen as its first or last 15
    _proc(board, 4001, "com.example.syn", 777)
    _proc(board, 4002, "e.syncservice", 778)  # not a cut of the name: left alone
    _proc(board, 4003, "ple.syncservice", 779)  # its last 15
    # the parent chain of this process: its parent's parent (5000) is a "syncd" too
    monkeypatch.setattr(os, "getppid", lambda: 4999)
    _proc(board, 4999, "bash", 1)
    put(board, "proc/4999/stat", "4999 (bash) S 5000 1 1\n")
    _proc(board, 5000, "syncd", 2)
    _proc(board, 5001, "syncd", 3)
    found = find_processes(SysRoot(board), ["com.example.syncservice", "syncd"])
    assert [p["pid"] for p in found] == [4001, 4003, 5001]


def test_apps_on_this_machine_is_journaled_like_background(tmp_path):
    """``apps`` on the real root stops a real process through the journaled action, so that
    ``system reset`` could continue it after a ``kill -9`` (it used to keep no journal).

    Issue 27 item 4, the flake ("the sleeper never reached state T"): ``Popen`` returns once
    the child's exec has closed its close-on-exec descriptors, but the kernel renames the
    process (``comm``) a little later in the same exec (``begin_new_exec``); on a loaded
    machine the action listed the processes in between, found no ``sbtestsleeper`` (recorded
    in ``not_running``), stopped nothing, and the test waited 30 s for a T that could not come.
    The test now waits for the child to carry its name, as a test waits for a child to say it
    is ready. The name is also this run's own (two suites on one machine stopped and continued
    each other's ``sbtestsleeper``), and so is the tuning lock the action takes (as root the
    real machine's lock is shared by every steadybench)."""
    import secrets
    import shutil
    import subprocess

    from steadybench.system.background import StopProcessesAction
    from steadybench.system.journal import run_journal_path
    from steadybench.system.lock import TuningLock

    name = f"sbt{secrets.token_hex(5)}"  # 13 characters: /proc comm keeps 15
    sleeper = tmp_path / name
    shutil.copy(shutil.which("sleep"), sleeper)
    proc = subprocess.Popen([str(sleeper), "60"])

    def reaches(states: str) -> bool:
        """Whether the sleeper's state becomes one of ``states``: a signal is delivered when
        the process next runs, which on a busy machine is not at once (polled, up to 30 s)."""
        import time

        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            stat = Path(f"/proc/{proc.pid}/stat").read_text()
            if stat.rpartition(")")[2].split()[0] in states:
                return True
            time.sleep(0.01)
        return False

    def named() -> bool:
        """Whether the child's exec has renamed it (polled, up to 30 s)."""
        import time

        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if Path(f"/proc/{proc.pid}/comm").read_text().strip() == name:
                return True
            time.sleep(0.01)
        return False

    try:
        assert named(), "the sleeper never carried its name"
        preset = tmp_path / "apps.toml"
        preset.write_text(f'countermeasures = ["apps"]\n[apps]\nprocesses = ["{name}"]\n')
        plan = build_preset(str(preset), "/")
        [(_, action)] = plan.actions
        assert isinstance(action, StopProcessesAction)
        action.lock = TuningLock(SysRoot("/"), tmp_path / "tune.lock")
        ctx = _ctx()
        action(ctx)
        assert reaches("T")
        journal = Journal.load(run_journal_path(part="processes"))
        assert [u["pid"] for u in journal.undo] == [proc.pid]
        assert ctx.case.extra["machine"]["stopped_processes"] == [
            {"pid": proc.pid, "name": name}]
        action.close(ctx)
        assert reaches("SR")
        assert not run_journal_path(part="processes").exists()
    finally:
        proc.kill()
        proc.wait()


def test_stopping_processes_takes_the_tuning_lock_and_names_its_holder(tmp_path):
    """Issue 27 item 4: two steadybench processes stopping the same processes resumed each
    other's, silently. The action now holds the machine's tuning lock; while another process
    holds it, it refuses in one line naming the holder, and stops nothing."""
    import subprocess
    import sys

    from steadybench.system.background import StopProcessesAction
    from steadybench.system.lock import LockBusy

    board = make_board(tmp_path / "b")
    _proc(board, 4242, "syncd", 7)
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import sys\n"
         "from steadybench.system.lock import TuningLock\n"
         "from steadybench.system.sysfs import SysRoot\n"
         f"TuningLock(SysRoot({str(board)!r})).acquire()\n"
         "print('ready', flush=True)\n"
         "sys.stdin.read()\n"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline() == "ready\n"  # it holds the lock now
        sent = []
        action = StopProcessesAction(SysRoot(board), ["syncd"],
                                     kill=lambda pid, sig: sent.append((pid, sig)))
        with pytest.raises(LockBusy, match=f"pid {holder.pid} "):
            action(_ctx())
        assert sent == []
        action.close(_ctx())  # nothing to undo, nothing released that it did not take
    finally:
        holder.stdin.close()
        holder.wait(60)
    action = StopProcessesAction(SysRoot(board), ["syncd"], kill=lambda pid, sig: None)
    ctx = _ctx()
    action(ctx)  # free again
    assert action.lock.is_held
    action.close(ctx)
    assert not action.lock.is_held


def test_a_forged_journal_cannot_signal_init_or_a_process_group(tmp_path):
    from steadybench.errors import SystemControlError

    board = make_board(tmp_path / "b")
    for pid in (1, 0, -5, True):
        path = tmp_path / f"forged{pid}.json"
        path.write_text(json.dumps({"format": "steadybench-journal", "version": 3,
                                    "root": str(board), "pid": 2, "entries": [],
                                    "undo": [{"kind": "sigcont", "pid": pid}]}))
        path.chmod(0o600)
        with pytest.raises(SystemControlError, match="corrupt"):
            Journal.load(path)
