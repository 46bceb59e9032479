"""Reading the machine from fake sys/proc trees; advice, check, show, fingerprint."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fake_machine import CPU, make_machine, put, set_proc
from steadybench.cli import main
from steadybench.errors import SystemControlError
from steadybench.system.advice import Rules, assess, check
from steadybench.system.fingerprint import fingerprint, fingerprint_differences
from steadybench.system.readers import (
    machine_state,
    python_state,
    read_boost,
    read_cpus,
    read_fans,
    read_load,
    read_power,
    read_thermal,
    top_processes,
)
from steadybench.system.sysfs import SysRoot, format_cpulist, parse_cpulist


def test_cpulist_round_trip() -> None:
    assert parse_cpulist("0-3,6,8-9\n") == [0, 1, 2, 3, 6, 8, 9]
    assert parse_cpulist("") == []
    assert format_cpulist([9, 0, 1, 2, 6, 8]) == "0-2,6,8-9"
    with pytest.raises(ValueError):
        parse_cpulist("3-1")
    with pytest.raises(ValueError):
        parse_cpulist("x")


def test_root_must_be_a_directory(tmp_path: Path) -> None:
    with pytest.raises(SystemControlError, match="not a directory"):
        SysRoot(tmp_path / "missing")


def test_read_cpus_and_boost(tmp_path: Path) -> None:
    root = SysRoot(make_machine(tmp_path, cpus=4, capacities=[512, 512, 1024, 1024],
                                max_khz=[1800000, 1800000, 2400000, 2400000]))
    put(root.root, f"{CPU}/cpu3/online", "0\n")
    cpus = read_cpus(root)
    assert [c["capacity"] for c in cpus] == [512, 512, 1024, 1024]
    assert cpus[0]["online"] and not cpus[3]["online"]
    assert cpus[2]["governor"] == "powersave"
    assert cpus[2]["available_governors"] == ["performance", "powersave"]
    assert cpus[2]["hw_max_mhz"] == 2400.0 and cpus[0]["cur_mhz"] == 1200.0
    assert read_boost(root) == {"cpufreq_boost": 1, "intel_no_turbo": None, "enabled": True}


def test_thermal_hwmon_fans_and_garbage(tmp_path: Path) -> None:
    root = SysRoot(make_machine(tmp_path, thermal={"x86_pkg_temp": 55000, "acpitz": "garbage",
                                                   "bogus": -273000},
                                hwmon={"Core 0": 48000}, fans={"cpu_fan": 1800}))
    sensors = {s["name"]: s for s in read_thermal(root)}
    assert sensors["thermal_zone0:x86_pkg_temp"]["celsius"] == 55.0
    assert sensors["thermal_zone1:acpitz"]["celsius"] is None
    assert "not a number" in sensors["thermal_zone1:acpitz"]["error"]
    assert "implausible" in sensors["thermal_zone2:bogus"]["error"]
    assert sensors["hwmon0:coretemp:Core 0"]["celsius"] == 48.0
    assert read_fans(root) == [{"name": "hwmon0:coretemp:fan1", "rpm": 1800}]


def test_load_uptime_power(tmp_path: Path) -> None:
    root = SysRoot(make_machine(tmp_path, loadavg="1.50 0.75 0.25 2/300 4000", uptime=42.5,
                                power="battery"))
    assert read_load(root) == {"loadavg": [1.5, 0.75, 0.25], "uptime_s": 42.5}
    assert read_power(root)["on_ac"] is False
    put(root.root, "proc/loadavg", "garbage\n")
    assert read_load(root)["loadavg"] is None


def test_top_processes_measures_growth(tmp_path: Path) -> None:
    root = make_machine(tmp_path, procs={10: ("busy worker", 100), 11: ("idle", 5)})

    def sleep(seconds: float) -> None:  # during the interval pid 10 uses half a core
        set_proc(root, 10, "busy worker", 100 + int(0.5 * seconds * 100))

    import os
    hz = os.sysconf("SC_CLK_TCK")
    top = top_processes(SysRoot(root), interval=2.0, sleep=sleep)
    assert top[0]["pid"] == 10 and top[0]["name"] == "busy worker"
    assert top[0]["cpu_pct"] == pytest.approx(100.0 * 100 / hz / 2.0, abs=0.1)
    assert all(p["pid"] != 11 for p in top)


def test_python_state_fields() -> None:
    state = python_state()
    assert set(state) >= {"debug_build", "dev_mode", "assertions", "hash_seed", "gc_enabled"}


def test_assess_names_each_problem(tmp_path: Path) -> None:
    root = SysRoot(make_machine(tmp_path, thermal={"cpu": 85000}, power="battery", uptime=30,
                                loadavg="9.0 1 1 1/1 1", capacities=[512, 512, 1024, 1024]))
    findings = assess(machine_state(root, top_interval=0))
    text = {f["topic"]: f["message"] for f in findings if f["level"] == "warning"}
    assert "powersave" in text["frequency"]
    assert "boost" in text
    assert "85" in text["temperature"]
    assert "battery" in text["power"]
    assert "booted 30 s" in text["uptime"]
    assert "busy" in text["load"]
    advice = [f for f in findings if f["topic"] == "affinity"]
    assert advice and "2-3" in advice[0]["message"]
    reasons = check(machine_state(root, top_interval=0), Rules())
    assert len(reasons) == 4  # hot, load, uptime, battery


def test_assess_missing_cpufreq_and_thermal(tmp_path: Path) -> None:
    root = SysRoot(make_machine(tmp_path, cpufreq=False, power=None))
    findings = assess(machine_state(root, top_interval=0))
    missing = {f["topic"]: f["message"] for f in findings if f["level"] == "missing"}
    assert "no cpufreq files" in missing["frequency"]
    assert "virtual machine" in missing["frequency"]
    assert "no readable thermal zone" in missing["temperature"]
    assert check(machine_state(root, top_interval=0), Rules()) == []


def test_show_json_and_text(tmp_path: Path, capsys) -> None:
    root = make_machine(tmp_path, cpufreq=False)
    assert main(["--root", str(root), "system", "show", "--json", "--interval", "0"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["state"]["cpu_model"] == "Fake CPU 9000"
    assert any(f["level"] == "missing" for f in data["findings"])
    assert main(["--root", str(root), "system", "show", "--interval", "0"]) == 0
    out = capsys.readouterr().out
    assert "no cpufreq" in out and "missing (temperature)" in out


def test_check_exit_status(tmp_path: Path, capsys) -> None:
    hot = make_machine(tmp_path / "hot", thermal={"cpu": 90000})
    assert main(["--root", str(hot), "system", "check", "--interval", "0"]) == 1
    assert "not fit" in capsys.readouterr().out
    cool = make_machine(tmp_path / "cool", thermal={"cpu": 40000})
    assert main(["--root", str(cool), "system", "check", "--interval", "0"]) == 0
    assert main(["--root", str(cool), "system", "check", "--preset", "nope"]) == 2
    assert "error: preset" in capsys.readouterr().err


def test_fingerprint_differences(tmp_path: Path) -> None:
    a = fingerprint(SysRoot(make_machine(tmp_path / "a", governor="powersave")))
    b = fingerprint(SysRoot(make_machine(tmp_path / "b", governor="performance", boost=0)))
    assert fingerprint_differences(a, a) == []
    diffs = fingerprint_differences(a, b)
    assert "frequency governor: powersave vs performance" in diffs
    assert "boost/turbo: on vs off" in diffs
    # records and plain environments are accepted; missing keys are not compared
    rec_a = {"preset": "baseline", "fingerprint": a}
    rec_b = {"preset": "managed", "fingerprint": a}
    assert fingerprint_differences({"machine": rec_a}, rec_b) == ["preset: baseline vs managed"]
    assert fingerprint_differences({"kernel": "6.1", "python": {"version": "3.11.7"}},
                                   {"kernel": "6.2", "cpu_model": "X"}) == ["kernel: 6.1 vs 6.2"]
