"""``evaluate --target adb`` against the stand-in ``adb`` of tests/bin (it runs everything on
this machine): the presets are applied to the device's (fake) sysfs around each execution, the
commands run and are timed on the device, and the device's tree is restored byte for byte."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from evaluate_machine import make_board
from fake_machine import CPU, snapshot
from steadybench.cli import main
from steadybench.targets import close_all
from targets_support import FAKE_ADB, start_sshd, why_no_sshd

GOV0 = f"{CPU}/cpu0/cpufreq/scaling_governor"


@pytest.fixture(autouse=True)
def _adb(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", f"{FAKE_ADB.parent}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.setenv("FAKE_ADB_LOG", str(tmp_path / "adb.log"))
    for name in ("FAKE_ADB_SERIAL", "FAKE_ADB_OFFLINE", "STEADYBENCH_ADB",
                 "STEADYBENCH_TARGET"):
        monkeypatch.delenv(name, raising=False)
    yield
    close_all()


@pytest.mark.slow
def test_commands_are_evaluated_on_the_device_and_its_tree_restored(tmp_path, capsys):
    board = make_board(tmp_path / "phone")
    before = snapshot(board)
    seen, out = tmp_path / "seen.txt", tmp_path / "r.json"
    # each run appends the governor of CPU 0 as the device has it while the run runs; the
    # program is pushed to the device's work folder
    program = tmp_path / "gov.sh"
    program.write_text(f"#!/bin/sh\ncat {board / GOV0} >> {seen}\n")
    program.chmod(0o755)
    code = main(["evaluate", "--target", f"adb://emulator-5554?root={board}",
                 "--launches", "2", "--runs", "5", "--warmup", "0", "--seed", "3",
                 "--json", str(out), "--push", str(program), "--", "./gov.sh"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert snapshot(board) == before  # every managed execution's tuning undone
    assert not list((tmp_path / "state").rglob("run-*.json"))  # no journal left behind
    data = json.loads(out.read_text())
    ev = data["context"]["evaluate"]
    assert ev["executions"] == {"planned": 4, "done": 4}
    # the managed executions ran on the tuned device, the baseline ones on the untouched one
    lines = seen.read_text().splitlines()
    assert len(lines) == 20
    order = [i["preset"] for i in ev["schedule"]]
    expected = [("performance" if p == "managed" else "schedutil") for p in order
                for _ in range(5)]
    assert lines == expected
    assert [bool(i["tuned"]) for i in ev["schedule"]] == [p == "managed" for p in order]
    assert ev["cases"][0]["table3"]["managed"]["n"] == 2
    target = data["context"]["target"]
    assert target["kind"] == "adb" and target["timing"] == "measured on the target"
    # every call named the device (a logged call's script may span several lines)
    lines = (tmp_path / "adb.log").read_text().splitlines()
    assert any(c.startswith("-s emulator-5554 shell ") for c in lines)
    assert not [c for c in lines if c.split(" ")[0] in ("shell", "push", "get-state")]


@pytest.mark.slow
def test_commands_are_evaluated_over_ssh(tmp_path, monkeypatch, capsys):
    import subprocess

    reason = why_no_sshd()
    if reason:
        pytest.skip(f"no sshd: {reason}")
    try:
        server = start_sshd(tmp_path / "sshd")
    except (RuntimeError, OSError, subprocess.CalledProcessError) as exc:
        pytest.skip(f"sshd cannot start here: {exc}")
    try:
        monkeypatch.setenv("STEADYBENCH_SSH_CONFIG", str(server.config))
        board = make_board(tmp_path / "board")
        before = snapshot(board)
        seen, out = tmp_path / "seen.txt", tmp_path / "r.json"
        code = main(["evaluate", "--target", server.url(board), "--launches", "2",
                     "--runs", "2", "--warmup", "0", "--order", "alternate", "-q",
                     "--json", str(out), "--shell", "--cmd", f"cat {board / GOV0} >> {seen}"])
        assert code == 0, capsys.readouterr().err
        assert snapshot(board) == before
        assert seen.read_text().splitlines() == ["schedutil"] * 2 + ["performance"] * 2 + \
            ["schedutil"] * 2 + ["performance"] * 2
        assert json.loads(out.read_text())["context"]["target"]["kind"] == "ssh"
    finally:
        close_all()
        server.stop()


def test_a_benchmark_file_on_a_target_is_one_line(tmp_path, capsys):
    board = make_board(tmp_path / "phone")
    bench = tmp_path / "b.py"
    bench.write_text("import steadybench as sb\n\n@sb.benchmark\ndef f():\n"
                     "    return lambda: None\n")
    code = main(["evaluate", str(bench), "--target", f"adb?root={board}"])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("error: --target adb?root=") and err.count("\n") == 1
    assert "a benchmark file cannot run on the device" in err
    assert not (tmp_path / "adb.log").exists()  # refused before the device was asked


def test_a_program_missing_on_the_device_is_one_line(tmp_path, capsys):
    board = make_board(tmp_path / "phone")
    before = snapshot(board)
    code = main(["evaluate", "--target", f"adb?root={board}", "--launches", "2",
                 "--", "no-such-program-xyz"])
    err = capsys.readouterr().err
    assert code == 2 and err == "error: command not found on adb: no-such-program-xyz\n", err
    assert snapshot(board) == before


@pytest.mark.parametrize("args, message", [
    (["--push", "x", "--", "true"], "--push needs --target"),
    (["--cluster", "tcp://127.0.0.1:1", "--target", "adb", "--", "true"],
     "--cluster with --target"),
    (["--cluster", "tcp://127.0.0.1:1", "--every-host", "--", "true"],
     "--every-host with evaluate"),
    (["--every-host", "--", "true"], "--every-host needs --cluster"),
])
def test_place_options_are_checked(tmp_path, capsys, args, message):
    code = main(["evaluate", *args])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("error: ") and message in err, err
    assert err.count("\n") == 1


def test_help_names_target_and_cluster(capsys):
    assert main(["evaluate", "--help"]) == 0
    text = capsys.readouterr().out
    assert "--target" in text and "--push" in text and "--cluster" in text
    assert Path(FAKE_ADB).is_file()
