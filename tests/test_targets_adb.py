"""``--target adb[://SERIAL]`` against the stand-in ``adb`` of tests/bin (it runs everything on
this machine: ``shell`` through ``sh -c``, ``push`` as a copy). What a real device adds
(authorisation, toybox's tools) is described in docs/machine-control.md."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from fake_machine import CPU, make_machine
from steadybench.cli import main
from steadybench.output.results_io import load_results
from steadybench.targets import close_all
from targets_support import FAKE_ADB, fake_clock_date


@pytest.fixture(autouse=True)
def _adb(tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    fake_clock_date(bin_dir, tmp_path / "clock")
    monkeypatch.setenv("PATH", f"{FAKE_ADB.parent}{os.pathsep}{bin_dir}{os.pathsep}"
                               f"{os.environ['PATH']}")
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.setenv("FAKE_ADB_LOG", str(tmp_path / "adb.log"))
    monkeypatch.delenv("FAKE_ADB_SERIAL", raising=False)
    monkeypatch.delenv("FAKE_ADB_OFFLINE", raising=False)
    monkeypatch.delenv("STEADYBENCH_ADB", raising=False)
    yield
    close_all()


@pytest.fixture()
def phone(tmp_path):
    return make_machine(tmp_path / "phone", cpus=8, governor="schedutil",
                        governors="schedutil performance powersave",
                        capacities=[160] * 4 + [1024] * 4, boost=None,
                        thermal={"cpu-0-0-usr": 41000}, power="battery")


def digest(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def cli(args, capsys):
    code = main(args)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_show_tune_reset_over_adb(phone, tmp_path, capsys):
    url = f"adb://emulator-5554?root={phone}"
    before = digest(phone)
    code, out, err = cli(["system", "show", "--json", "--interval", "0", "--target", url],
                         capsys)
    assert code == 0, err
    state = json.loads(out)["state"]
    assert state["power"]["on_ac"] is False
    assert {c["governor"] for c in state["cpus"]} == {"schedutil"}
    code, out, err = cli(["system", "tune", "--target", url], capsys)
    assert code == 0, err
    assert (phone / f"{CPU}/cpu7/cpufreq/scaling_governor").read_text() == "performance\n"
    assert list((tmp_path / "state/steadybench/targets").glob("adb-emulator-5554-*/tune.json"))
    code, out, err = cli(["system", "reset", "--target", url], capsys)
    assert code == 0, err
    assert digest(phone) == before
    # every call named the device
    calls = (tmp_path / "adb.log").read_text().splitlines()
    assert calls and all(c.startswith("-s emulator-5554 ") for c in calls)


def test_exec_on_the_device_clock_pinned_to_the_big_core(tmp_path, capsys):
    # a two-core big.LITTLE "phone": the stand-in device is this machine, which has 2 CPUs
    phone = make_machine(tmp_path / "phone", cpus=2, governor="schedutil",
                         governors="schedutil performance", capacities=[160, 1024], boost=None)
    (tmp_path / "clock").write_text("1600000000000000000\n40000000\n")  # 40 ms a run
    preset = tmp_path / "p.toml"
    preset.write_text('countermeasures = ["pin", "tune", "priority", "warmup"]\n')
    out, seen = tmp_path / "r.json", tmp_path / "seen.txt"
    code, _, err = cli(["exec", "--runs", "3", "--no-correction", "--json", str(out),
                        "--preset", str(preset), "--output", str(seen), "--shell",
                        "--target", f"adb?root={phone}&timer=shell",
                        "--cmd", "grep Cpus_allowed_list /proc/self/status"], capsys)
    assert code == 0, err
    results = load_results(out)
    (case,) = results.cases
    assert case.values("wall_time") == [0.04] * 3
    # pin chose the big core (highest cpu_capacity) and taskset applied it to every run
    assert seen.read_text().count("Cpus_allowed_list:\t1\n") == 3
    applied = {a["name"]: a["detail"] for a in results.context["machine"]["applied"]}
    assert "pin to CPUs 1" in applied["pin"]
    skipped = {s["name"]: s["reason"] for s in results.context["machine"]["skipped"]}
    assert "target" in skipped["priority"]  # niceness and the warm-up spin are this process's
    assert "performance governor" in skipped["warmup"] or "target" in skipped["warmup"]
    assert (phone / f"{CPU}/cpu0/cpufreq/scaling_governor").read_text() == "schedutil\n"


def test_pinning_to_cpus_this_machine_lacks_fails_with_one_line(phone, tmp_path, capsys):
    if (os.cpu_count() or 1) >= 8:
        pytest.skip("the stand-in device is this machine, which has the big cores")
    preset = tmp_path / "p.toml"
    preset.write_text('countermeasures = ["pin"]\n')
    code, _, err = cli(["exec", "--runs", "1", "--no-correction", "--preset", str(preset),
                        "--target", f"adb?root={phone}&timer=shell", "--", "true"], capsys)
    # taskset on the "device" refuses CPUs 4-7 (this machine has fewer): a failed run
    assert code == 1
    assert err.count("\n") >= 1 and "taskset" in err


@pytest.mark.parametrize(("env", "target", "words"), [
    ({"STEADYBENCH_ADB": "no-such-adb"}, "adb", "error: adb is not installed"),
    ({}, "adb://R58M123", "error: cannot reach adb://R58M123: no such device"),
    ({"FAKE_ADB_OFFLINE": "1"}, "adb", "error: cannot reach adb: the device is offline"),
])
def test_adb_problems_are_one_line(monkeypatch, capsys, env, target, words):
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    code, _, err = cli(["system", "show", "--interval", "0", "--target", target], capsys)
    assert code == 2
    assert err.startswith(words), err
    assert err.count("\n") == 1


def test_the_journal_rules_hold_for_a_target(phone, tmp_path, capsys):
    """Issue 12's rules on a target's journals: allow-list, owner/mode, no symlinks."""
    import base64

    url = f"adb://emulator-5554?root={phone}"
    code, out, err = cli(["system", "tune", "--target", url], capsys)
    assert code == 0, err
    (journal,) = (tmp_path / "state/steadybench/targets").glob("adb-*/tune.json")
    folder = journal.parent
    good = journal.read_bytes()
    # a forged journal naming a file off the allow-list: refused, nothing written
    core = phone / "proc/sys/kernel/core_pattern"
    core.parent.mkdir(parents=True, exist_ok=True)
    core.write_text("core\n")
    forged = json.loads(good)
    forged["entries"] = [{"path": "/proc/sys/kernel/core_pattern",
                          "original_b64": base64.b64encode(b"|/tmp/x\n").decode()}]
    (folder / "run-1.json").write_text(json.dumps(forged))
    os.chmod(folder / "run-1.json", 0o600)
    # a journal others may write: refused
    (folder / "run-2.json").write_bytes(good)
    os.chmod(folder / "run-2.json", 0o666)
    # a symlink named like a journal: left alone, never opened
    (folder / "run-3.json").symlink_to(journal)
    code, out, err = cli(["system", "reset", "--target", url], capsys)
    assert code == 2
    assert core.read_text() == "core\n"
    assert "run-3.json: a symbolic link, not a journal; left alone" in out
    assert "not one of the files steadybench may change" in err
    assert "writable by" in err
    # the genuine journal was restored all the same
    assert (phone / f"{CPU}/cpu0/cpufreq/scaling_governor").read_text() == "schedutil\n"
    assert not journal.exists()


def test_apps_force_stops_android_packages(phone, tmp_path, capsys):
    preset = tmp_path / "apps.toml"
    preset.write_text('countermeasures = ["apps"]\n[apps]\npackages = ["com.example.chat"]\n')
    # without Android's `am` the countermeasure is skipped with the reason
    from steadybench.system.presets import build_preset
    from steadybench.targets import remote_root

    record = build_preset(str(preset), remote_root(f"adb?root={phone}")).record
    assert record["skipped"] == [{"name": "apps", "reason": "packages are force-stopped with "
                                  "Android's am, which adb does not have"}]
    close_all()
    am = tmp_path / "bin" / "am"
    log = tmp_path / "am.log"
    am.write_text(f"#!/bin/sh\nprintf '%s\\n' \"$*\" >> {log}\n")
    am.chmod(0o755)
    out = tmp_path / "r.json"
    code, _, err = cli(["exec", "--runs", "1", "--no-correction", "--preset", str(preset),
                        "--json", str(out), "--target", f"adb?root={phone}&timer=shell",
                        "--", "true"], capsys)
    assert code == 0, err
    assert log.read_text() == "force-stop com.example.chat\n"
    assert load_results(out).context["machine"]["session"]["force_stopped"] == [
        "com.example.chat"]


def test_apps_needs_real_processes_locally(tmp_path):
    from steadybench.system.presets import build_preset

    root = make_machine(tmp_path / "m")
    preset = tmp_path / "apps.toml"
    preset.write_text('countermeasures = ["apps"]\n[apps]\nprocesses = ["x"]\n')
    record = build_preset(str(preset), root).record
    assert record["skipped"][0]["name"] == "apps"
    assert "fake tree" in record["skipped"][0]["reason"]


def test_input_is_copied_to_the_device_and_check_reads_it(phone, tmp_path, capsys):
    data = tmp_path / "in.bin"
    data.write_bytes(b"line one\n\x00\xffbinary tail")
    seen = tmp_path / "seen.bin"
    code, _, err = cli(["exec", "--runs", "2", "--no-correction", "--input", str(data),
                        "--output", str(seen), "--target", f"adb?root={phone}&timer=shell",
                        "--", "cat"], capsys)
    assert code == 0, err
    assert seen.read_bytes() == data.read_bytes() * 2
    # system check judges the device: on battery (the fake phone) is a reason
    code, out, err = cli(["system", "check", "--interval", "0", "--target",
                          f"adb?root={phone}"], capsys)
    assert code == 1
    assert "not fit:" in out and "battery" in out


def test_a_device_lost_mid_run_keeps_the_runs_measured(phone, tmp_path, monkeypatch, capsys):
    gone = tmp_path / "unplugged"
    monkeypatch.setenv("FAKE_ADB_OFFLINE_FILE", str(gone))
    count = tmp_path / "count"
    out = tmp_path / "r.json"
    # the third run unplugs the device: the fourth cannot start
    code, _, err = cli(["exec", "--runs", "10", "--no-correction", "--json", str(out),
                        "--shell", "--target", f"adb?root={phone}&timer=shell", "--cmd",
                        f"n=$(cat {count} 2>/dev/null || echo 0); echo $((n + 1)) > {count}; "
                        f"if [ $n -ge 2 ]; then touch {gone}; fi"], capsys)
    assert code == 1
    assert "cannot reach adb: adb: device offline" in err
    (case,) = load_results(out).cases
    assert case.n == 3
