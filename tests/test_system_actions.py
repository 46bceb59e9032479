"""Countermeasure actions, monitor meters and presets against fake sys/proc trees."""

from __future__ import annotations

import gc
import json
import os
from pathlib import Path

import pytest

from fake_machine import CPU, make_machine, put, set_proc, snapshot
from steadybench.cli import main
from steadybench.errors import ConfigurationError
from steadybench.model.implementation import CallableImplementation
from steadybench.model.parameters import Parameters
from steadybench.model.results import Results
from steadybench.runner.actions import RunContext
from steadybench.runner.runner import Runner
from steadybench.runner.stop import build_stop_condition
from steadybench.system.actions import (
    FrequencyWarmUpAction,
    GcAction,
    MachineCoolDownAction,
    PinAction,
    PriorityAction,
    QuietMachineAction,
    SettleAfterBootAction,
    fastest_cpus,
)
from steadybench.system.advice import Rules
from steadybench.system.meters import CpuFrequencyMeter, LoadMeter, TemperatureMeter
from steadybench.system.presets import apply_preset, build_preset, load_preset
from steadybench.system.sysfs import SysRoot
from steadybench.testing import SimulatedClock

TEMP = "sys/class/thermal/thermal_zone0/temp"


def _ctx(clock=None, sleep=None, run_fn=None) -> RunContext:
    from steadybench.model.results import CaseResult
    from steadybench.runner.stop import RunState

    clock = clock or SimulatedClock()
    impl = CallableImplementation(run_fn or (lambda: None), "w")
    return RunContext(impl, Parameters(), CaseResult("b", "w"), RunState(), clock,
                      sleep or clock.sleep)


# ---------------------------------------------------------------------------- affinity
def test_fastest_cpus_big_little(tmp_path: Path) -> None:
    root = SysRoot(make_machine(tmp_path / "a", capacities=[446, 446, 1024, 1024]))
    assert fastest_cpus(root) == ([2, 3], "highest cpu_capacity 1024")
    assert fastest_cpus(root, allowed={0, 1}) == ([0, 1], "all CPUs alike")
    root = SysRoot(make_machine(tmp_path / "b", max_khz=[1500000, 1500000, 2100000, 2100000]))
    assert fastest_cpus(root)[0] == [2, 3]
    root = SysRoot(make_machine(tmp_path / "c", cpufreq=False, cpus=2))
    assert fastest_cpus(root) == ([0, 1], "all CPUs alike")


def test_pin_action_rotates_and_restores() -> None:
    calls: list[list[int]] = []
    action = PinAction([2, 3], rotate=True, setaffinity=lambda pid, cpus: calls.append(
        sorted(cpus)), getaffinity=lambda pid: {0, 1, 2, 3})
    ctx = _ctx()
    action(ctx)
    for i in range(3):
        ctx.run_index = i
        action(ctx)
    action.close(ctx)
    action.close(ctx)  # idempotent: added to two stages, closed twice
    assert calls == [[2, 3], [2], [3], [2], [0, 1, 2, 3]]
    assert ctx.case.extra["machine"]["pinned"] == "2-3"


# ---------------------------------------------------------------------------- cool-down
def test_cooldown_hysteresis_while_the_chip_cools(tmp_path: Path) -> None:
    """The chip cools 1 °C every 5 ms of the injected clock (the file replaced atomically, as a
    sysfs read never sees half): the wait goes on past the upper threshold down to the lower
    one. (It was a thread cooling on the real clock, which a loaded machine made flaky.)"""
    root = make_machine(tmp_path, thermal={"cpu": 80000})
    clock = SimulatedClock()
    start = clock.now_ns

    def sleep(seconds: float) -> None:
        clock.sleep(seconds)
        temp = max(80000 - (clock.now_ns - start) // 5_000_000 * 1000, 40000)
        tmp = root / (TEMP + ".new")
        tmp.write_text(f"{temp}\n")
        os.replace(tmp, root / TEMP)

    action = MachineCoolDownAction(SysRoot(root), upper=70, lower=60, max_wait=20, poll=0.002)
    ctx = _ctx(clock=clock, sleep=sleep)
    action(ctx)
    after = int((root / TEMP).read_text()) / 1000
    assert after <= 60.0  # waited past the upper threshold down to the lower one
    assert ctx.notes["cooldown_waited"] > 0 and not ctx.case.warnings
    # hysteresis: between the thresholds no wait happens
    put(root, TEMP, "65000\n")
    ctx2 = _ctx()
    action(ctx2)
    assert "cooldown_waited" not in ctx2.notes


def test_cooldown_missing_sensor_never_waits(tmp_path: Path) -> None:
    root = make_machine(tmp_path, thermal={"cpu": "garbage"})
    action = MachineCoolDownAction(SysRoot(root), upper=70, lower=60)
    ctx = _ctx()
    action(ctx)
    assert any("cannot read" in w for w in ctx.case.warnings)


# ---------------------------------------------------------------------------- warm-up
def test_frequency_warmup_until_max(tmp_path: Path) -> None:
    root = make_machine(tmp_path, cpus=2, cur_khz=1000000, max_khz=[3000000, 3000000])
    freq_files = [root / f"{CPU}/cpu{i}/cpufreq/scaling_cur_freq" for i in (0, 1)]

    def work() -> None:  # the governor raises the frequency as the load continues
        for f in freq_files:
            f.write_text(f"{min(int(f.read_text()) + 400000, 3000000)}\n")

    action = FrequencyWarmUpAction(SysRoot(root), cpus=lambda: [0, 1], fraction=0.95,
                                   max_wait=5, spin=0)
    ctx = _ctx(run_fn=work)
    action(ctx)
    assert ctx.notes["warmup_rounds"] == 5  # 1.0 → 3.0 GHz in 0.4 GHz steps, target 2.85
    assert not ctx.case.warnings
    # bounded: a frequency that never rises stops at max_wait with a warning
    for f in freq_files:
        f.write_text("1000000\n")
    clock = SimulatedClock(read_cost_ns=1_000_000)  # each read takes 1 ms of virtual time
    stuck = FrequencyWarmUpAction(SysRoot(root), cpus=lambda: [0, 1], max_wait=1, spin=0.1)
    ctx = _ctx(clock=clock)
    stuck(ctx)
    assert any("warm-up" in w for w in ctx.case.warnings)


# ---------------------------------------------------------------------------- load, boot, gc
def test_quiet_machine_waits_then_records(tmp_path: Path) -> None:
    root = make_machine(tmp_path, procs={50: ("indexer", 0)})
    clock = SimulatedClock()
    ticks = {"n": 0, "calls": 0}

    def sleep(seconds: float) -> None:
        clock.sleep(seconds)
        ticks["calls"] += 1
        if ticks["calls"] <= 4:  # busy during the first two measuring intervals
            ticks["n"] += 100
            set_proc(root, 50, "indexer", ticks["n"])

    action = QuietMachineAction(SysRoot(root), Rules(max_process_cpu=10), max_wait=30,
                                interval=0.5)
    ctx = _ctx(clock=clock, sleep=sleep)
    action(ctx)
    info = ctx.case.extra["machine"]
    assert [p["name"] for p in info["busy_processes"]] == ["indexer"]
    assert 0 < info["quiet_waited_s"] < 30 and not ctx.case.warnings


def test_quiet_machine_bounded(tmp_path: Path) -> None:
    root = make_machine(tmp_path, loadavg="8.0 8.0 8.0 1/1 1")
    action = QuietMachineAction(SysRoot(root), Rules(), max_wait=3, interval=0.5)
    ctx = _ctx()
    action(ctx)
    assert any("still busy after 3 s" in w for w in ctx.case.warnings)


def test_settle_after_boot(tmp_path: Path) -> None:
    root = make_machine(tmp_path, uptime=100)
    clock = SimulatedClock()
    ctx = _ctx(clock=clock)
    SettleAfterBootAction(SysRoot(root), min_uptime=300, max_wait=60)(ctx)
    assert ctx.case.extra["machine"]["settle_waited_s"] == 60
    assert ctx.now() == pytest.approx(1.0 + 60)
    assert any("booted 100 s" in w for w in ctx.case.warnings)


def test_gc_action_disables_and_restores() -> None:
    assert gc.isenabled()
    action = GcAction()
    ctx = _ctx()
    action(ctx)
    assert not gc.isenabled()
    action(ctx)  # nothing allocated since: no collection is due
    assert action.collections == 0
    garbage = [[] for _ in range(gc.get_threshold()[0] + 10)]  # tracked containers
    action(ctx)
    assert action.collections == 1 and gc.get_count()[0] < gc.get_threshold()[0]
    action.close(ctx)
    assert gc.isenabled() and garbage


def test_priority_action_fakes() -> None:
    state = {"nice": 0}

    def setp(which: int, who: int, value: int) -> None:
        state["nice"] = value

    action = PriorityAction(-5, getpriority=lambda w, p: state["nice"], setpriority=setp)
    ctx = _ctx()
    action(ctx)
    assert state["nice"] == -5
    action.close(ctx)
    assert state["nice"] == 0

    def denied(which: int, who: int, value: int) -> None:
        raise PermissionError(1, "Operation not permitted")

    action = PriorityAction(-5, getpriority=lambda w, p: 0, setpriority=denied)
    action(ctx)
    assert any("cannot set niceness" in w for w in ctx.case.warnings)


# ---------------------------------------------------------------------------- meters
def test_monitor_meters(tmp_path: Path) -> None:
    root = SysRoot(make_machine(tmp_path, thermal={"a": 50000, "b": 61500}))
    assert CpuFrequencyMeter(root, lambda: [0, 1]).stop(True) == 1200.0
    assert TemperatureMeter(root).stop(True) == 61.5
    assert TemperatureMeter(root, ["thermal_zone0:a"]).stop(True) == 50.0
    assert LoadMeter(root).stop(True) == 0.1
    missing = TemperatureMeter(root, ["nope"])
    assert missing.stop(True) is None and "no readable" in missing.last_error


# ---------------------------------------------------------------------------- presets
def test_managed_preset_full_machine(tmp_path: Path) -> None:
    root = make_machine(tmp_path / "m", thermal={"cpu": 45000}, capacities=[512, 512, 1024, 1024])
    plan = build_preset("managed", root, affinity={0, 1, 2, 3})
    rec = plan.record
    applied = [a["name"] for a in rec["applied"]]
    assert applied == ["settle", "power", "quiet", "priority", "tune", "pin", "cooldown", "gc",
                       "monitor"]
    assert {"name": "warmup", "reason": "not needed: tune fixes the frequency (the performance "
                                        "governor)"} in rec["skipped"]
    assert "CPUs 2-3" in rec["applied"][5]["detail"]
    assert rec["meters"] == ["cpu_freq", "temperature", "loadavg", "timestamp"]
    stages = [(s.value, type(a).__name__) for s, a in plan.actions]
    assert stages.index(("before_run", "MachineCoolDownAction")) < \
        stages.index(("before_run", "GcAction"))
    json.dumps(rec)


def test_managed_without_root_warms_up(tmp_path: Path) -> None:
    root = make_machine(tmp_path / "m")
    rec = build_preset("managed", root, can_write=lambda p: False).record
    skipped = {s["name"]: s["reason"] for s in rec["skipped"]}
    assert skipped["tune"].startswith("needs root")
    assert "warmup" in [a["name"] for a in rec["applied"]]
    names = [a["name"] for a in rec["applied"]]
    assert names.index("cooldown" if "cooldown" in names else "pin") < names.index("warmup")


def test_managed_on_bare_vm_lists_skipped(tmp_path: Path) -> None:
    root = make_machine(tmp_path / "m", cpufreq=False, power=None)
    rec = build_preset("managed", root).record
    skipped = {s["name"]: s["reason"] for s in rec["skipped"]}
    assert "no cpufreq files" in skipped["tune"]
    assert "no readable temperature sensor" in skipped["cooldown"]
    assert "no cpufreq" in skipped["warmup"]
    assert "power_supply" in skipped["power"]
    assert "scaling_cur_freq" in skipped["monitor:cpu_freq"]
    assert rec["meters"] == ["loadavg", "timestamp"]


def test_managed_on_this_machine_builds() -> None:
    """The real machine, read only: every countermeasure is either applied or skipped."""
    rec = build_preset("managed", "/").record
    names = {a["name"] for a in rec["applied"]} | {s["name"] for s in rec["skipped"]}
    assert {"tune", "pin", "cooldown", "warmup", "quiet", "gc"} <= names
    assert all(s["reason"] for s in rec["skipped"])


def test_baseline_has_no_actions(tmp_path: Path) -> None:
    plan = build_preset("baseline", make_machine(tmp_path / "m"))
    assert plan.actions == [] and plan.record["preset"] == "baseline"


def test_custom_preset_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = make_machine(tmp_path / "m", thermal={"cpu": 45000})
    path = tmp_path / "lab.toml"
    path.write_text('name = "lab"\nbase = "managed"\ndisable = ["priority", "quiet"]\n'
                    '[pin]\ncpus = "1"\n[cooldown]\nupper = 50\nlower = 40\n'
                    '[rules]\nmin_uptime = 10\n')
    spec = load_preset(str(path))
    assert spec.name == "lab" and "priority" not in spec.countermeasures
    rec = build_preset(spec, root).record
    details = {a["name"]: a["detail"] for a in rec["applied"]}
    assert "pin to CPUs 1" in details["pin"] and "> 50 until <= 40" in details["cooldown"]
    assert rec["rules"]["min_uptime"] == 10
    for bad, msg in (('base = "fast"\n', "base must be"), ("[pin]\ncore = 1\n", "unknown option"),
                     ('countermeasures = ["turbo"]\n', "unknown countermeasure"),
                     ("x = [\n", "not valid TOML"), ("colour = 1\n", "unknown key"),
                     ("countermeasures = 5\n", "countermeasures must be a list of names"),
                     ('disable = "gc"\n', "disable must be a list of names"),
                     ('base = ["managed"]\n', "base must be"),
                     ('[rules]\nmax_temperature = "hot"\n',
                      "max_temperature must be a non-negative number, got 'hot'"),
                     ('[rules]\nrequire_ac = "yes"\n', "require_ac must be true or false")):
        path.write_text(bad)
        with pytest.raises(ConfigurationError, match=msg):
            load_preset(str(path))
    with pytest.raises(ConfigurationError, match="not baseline, managed"):
        load_preset("fastest")
    path.write_text('countermeasures = ["priority"]\n[priority]\nniceness = "x"\n')
    with pytest.raises(ConfigurationError, match="niceness must be an integer in -20..19"):
        build_preset(load_preset(str(path)), root)
    path.write_text("countermeasures = 5\n")  # was an internal error
    assert main(["--root", str(root), "system", "check", "--preset", str(path),
                 "--interval", "0"]) == 2
    err = capsys.readouterr().err
    assert err == f"error: preset {path}: countermeasures must be a list of names\n"


def test_apply_preset_runs_and_records(tmp_path: Path) -> None:
    root = make_machine(tmp_path / "m", thermal={"cpu": 45000})
    before = snapshot(root)
    path = tmp_path / "p.json"
    path.write_text(json.dumps({"base": "managed", "disable": ["quiet", "priority", "pin"],
                                "tune": {"governor": "performance"}}))
    clock = SimulatedClock()
    runner = Runner(build_stop_condition(runs=4), clock=clock, sleep=clock.sleep)
    meters: list = []
    seen: list[str] = []
    gov = root / f"{CPU}/cpu0/cpufreq/scaling_governor"

    def work() -> None:
        seen.append(gov.read_text())
        clock.advance(1000)

    import steadybench.system.journal as journal_mod

    old_dir = journal_mod.state_dir
    journal_mod.state_dir = lambda: tmp_path / "state"  # type: ignore[assignment]
    try:
        record = apply_preset(runner, str(path), str(root), add_meter=meters.append)
        case = runner.execute(CallableImplementation(work, "w"), Parameters(), meters=meters)
    finally:
        journal_mod.state_dir = old_dir  # type: ignore[assignment]
    assert set(seen) == {"performance\n"}
    assert snapshot(root) == before  # restored after the case
    assert case.values("cpu_freq") == [1200.0] * 4
    assert case.values("temperature") == [45.0] * 4
    assert case.units["temperature"] == "°C" and case.units["cpu_freq"] == "MHz"
    results = Results(cases=[case], context={"machine": record})
    again = Results.from_dict(json.loads(json.dumps(results.to_dict())))
    assert again.context["machine"]["preset"] == "p"
    assert again.cases[0].extra["machine"]["tuned"]


def test_machine_session_restores_on_exception(tmp_path: Path, monkeypatch) -> None:
    from steadybench.system.presets import machine_session

    root = make_machine(tmp_path / "m", thermal={"cpu": 45000})
    before = snapshot(root)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    gov = root / f"{CPU}/cpu0/cpufreq/scaling_governor"
    clock = SimulatedClock()
    with pytest.raises(RuntimeError), machine_session(
            str(_preset(tmp_path)), str(root), clock=clock, sleep=clock.sleep) as session:
        session.before_run()
        assert gov.read_text() == "performance\n"
        assert session.record["session"]["tuned"]
        raise RuntimeError("benchmark failed")
    assert snapshot(root) == before
    assert not list((tmp_path / "state").rglob("run-*.json"))


def _preset(tmp_path: Path) -> Path:
    path = tmp_path / "session.toml"
    path.write_text('base = "managed"\ndisable = ["quiet", "priority", "pin"]\n')
    return path
