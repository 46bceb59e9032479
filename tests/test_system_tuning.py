"""Tune and reset against fake sys trees: byte-identical restores, faults, journal recovery."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from child_process import default_sigint
from fake_machine import CPU, make_machine, put, snapshot
from steadybench.cli import main
from steadybench.errors import SystemControlError
from steadybench.model.implementation import CallableImplementation
from steadybench.model.parameters import Parameters
from steadybench.runner.runner import Runner, Stage
from steadybench.runner.stop import build_stop_condition
from steadybench.system.actions import TuneAction
from steadybench.system.journal import Journal
from steadybench.system.sysfs import SysRoot
from steadybench.system.tuning import make_plan, reset, tune
from steadybench.testing import SimulatedClock

GOV0 = f"{CPU}/cpu0/cpufreq/scaling_governor"


def test_tune_then_reset_restores_bytes(tmp_path: Path) -> None:
    root = make_machine(tmp_path / "m", governor="schedutil",
                        governors="performance schedutil powersave")
    # an odd but legal original (no trailing newline) must come back exactly
    put(root, f"{CPU}/cpu1/cpufreq/scaling_governor", b"schedutil")
    before = snapshot(root)
    journal = tmp_path / "state" / "tune.json"
    report = tune(SysRoot(root), journal)
    assert len(report["changed"]) == 5  # boost + 4 governors
    assert (root / GOV0).read_text() == "performance\n"
    assert (root / f"{CPU}/cpufreq/boost").read_text() == "0\n"
    data = json.loads(journal.read_text())
    assert {e["path"] for e in data["entries"]} >= {"/" + GOV0, f"/{CPU}/cpufreq/boost"}
    assert snapshot(root) != before
    restored = reset([journal], root=SysRoot(root))
    assert len(restored["restored"]) == 5
    assert snapshot(root) == before
    assert not journal.exists()


def test_second_tune_keeps_first_originals(tmp_path: Path) -> None:
    root = make_machine(tmp_path / "m")
    before = snapshot(root)
    journal = tmp_path / "j.json"
    tune(SysRoot(root), journal)
    put(root, GOV0, "powersave\n")  # someone changed it back in between
    tune(SysRoot(root), journal)
    reset([journal], root=SysRoot(root))
    assert snapshot(root) == before


def test_missing_performance_governor_raises_min_freq(tmp_path: Path) -> None:
    root = make_machine(tmp_path / "m", governors="ondemand powersave", boost=None, cpus=2)
    plan = make_plan(SysRoot(root))
    assert [c.setting for c in plan.changes] == ["min_freq", "min_freq"]
    assert plan.changes[0].new == b"3000000\n"
    with pytest.raises(SystemControlError, match="not available"):
        make_plan(SysRoot(root), governor="userspace", explicit_governor=True)


def test_min_freq_fallback_without_a_readable_maximum_is_unavailable(tmp_path: Path) -> None:
    root = make_machine(tmp_path / "m", governors="ondemand powersave", boost=None, cpus=2)
    policy = next(root.glob("sys/devices/system/cpu/cpu*/cpufreq"))
    (policy / "scaling_max_freq").unlink()
    plan = make_plan(SysRoot(root))
    assert [c.setting for c in plan.changes] == ["min_freq"]  # the other CPU still can
    [missing] = [u for u in plan.unavailable if "governor" in u["reason"]]
    assert "no performance governor" in missing["reason"]
    assert "scaling_min_freq/scaling_max_freq unreadable" in missing["reason"]
    # at the maximum already: nothing to change, and said so
    other = next(p for p in root.glob("sys/devices/system/cpu/cpu*/cpufreq") if p != policy)
    (other / "scaling_min_freq").write_text((other / "scaling_max_freq").read_text())
    plan = make_plan(SysRoot(root))
    assert plan.changes == [] and any("already at the maximum" in a for a in plan.already)


def test_intel_no_turbo(tmp_path: Path) -> None:
    root = make_machine(tmp_path / "m", boost=None, no_turbo=0, cpus=1)
    before = snapshot(root)
    tune(SysRoot(root), tmp_path / "j.json")
    assert (root / f"{CPU}/intel_pstate/no_turbo").read_text() == "1\n"
    reset([tmp_path / "j.json"])
    assert snapshot(root) == before


def test_no_root_changes_nothing(tmp_path: Path) -> None:
    root = make_machine(tmp_path / "m")
    before = snapshot(root)
    journal = tmp_path / "j.json"
    report = tune(SysRoot(root), journal, can_write=lambda p: False)
    assert report["changed"] == []
    assert len(report["not_permitted"]) == 5
    assert any("performance" in w for w in report["would_change"])
    assert snapshot(root) == before and not journal.exists()


def test_failed_write_half_way_restores(tmp_path: Path) -> None:
    root = make_machine(tmp_path / "m")
    before = snapshot(root)
    calls = []

    def flaky(path: Path, data: bytes) -> None:
        calls.append(path)
        if len(calls) == 3:
            raise PermissionError(13, "Permission denied")
        path.write_bytes(data)

    with pytest.raises(SystemControlError, match="already changed were restored"):
        tune(SysRoot(root), tmp_path / "j.json", write=flaky)
    assert snapshot(root) == before
    assert not (tmp_path / "j.json").exists()


def test_no_cpufreq_explains(tmp_path: Path) -> None:
    root = make_machine(tmp_path / "m", cpufreq=False)
    report = tune(SysRoot(root), tmp_path / "j.json")
    reasons = " ".join(u["reason"] for u in report["unavailable"])
    assert "no cpufreq files" in reasons and "boost" in reasons
    assert report["changed"] == []


@pytest.mark.parametrize("content", ["{not json", json.dumps({"format": "other"}),
                                     json.dumps({"format": "steadybench-journal", "version": 1,
                                                 "root": "/", "entries": [
                                                     {"path": "/etc/passwd",
                                                      "original_b64": "eA=="}]})])
def test_corrupt_journal_refused(tmp_path: Path, content: str) -> None:
    path = tmp_path / "j.json"
    path.write_text(content)
    with pytest.raises(SystemControlError, match="corrupt"):
        Journal.load(path)
    code = main(["system", "reset", "--journal", str(path)])
    assert code != 0


def test_binary_journal_is_corrupt_not_an_internal_error(tmp_path: Path, capsys) -> None:
    root = make_machine(tmp_path / "m")
    before = snapshot(root)
    path = tmp_path / "j.json"
    path.write_bytes(b"\xff\xfe\x00garbage")
    for command in ("reset", "tune"):
        code = main(["--root", str(root), "system", command, "--journal", str(path)])
        err = capsys.readouterr().err
        assert code == 2 and err.count("\n") == 1
        assert err.startswith(f"error: journal {path} is corrupt") and "nothing was restored" in err
    assert snapshot(root) == before


def test_cli_tune_reset_no_root_and_root_errors(tmp_path: Path, capsys, monkeypatch) -> None:
    root = make_machine(tmp_path / "m")
    before = snapshot(root)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    assert main(["--root", str(root), "system", "tune", "--dry-run"]) == 0
    assert "would change" in capsys.readouterr().out
    assert snapshot(root) == before
    assert main(["--root", str(root), "system", "tune"]) == 0
    out = capsys.readouterr().out
    assert "changed:" in out and (tmp_path / "state/steadybench/tune.json").exists()
    assert main(["--root", str(root), "system", "reset"]) == 0
    assert snapshot(root) == before
    assert main(["--root", str(tmp_path / "nope"), "system", "show"]) != 0
    assert "error: --root" in capsys.readouterr().err
    # no root: says what it would change, changes nothing, exits non-zero
    monkeypatch.setattr("steadybench.system.tuning.default_can_write", lambda p: False)
    assert main(["--root", str(root), "system", "tune"]) == 1
    captured = capsys.readouterr()
    assert "would change" in captured.out and "not permitted" in captured.err
    assert snapshot(root) == before


def _runner(clock: SimulatedClock, runs: int = 3) -> Runner:
    return Runner(build_stop_condition(runs=runs), clock=clock, sleep=clock.sleep)


def test_tune_action_restores_on_exception(tmp_path: Path) -> None:
    root = make_machine(tmp_path / "m")
    before = snapshot(root)
    clock = SimulatedClock()
    seen = []

    def work() -> None:
        seen.append((root / GOV0).read_text())
        raise RuntimeError("boom")

    runner = _runner(clock)
    runner.add_action(Stage.BEFORE_BENCHMARK,
                      TuneAction(SysRoot(root), journal=tmp_path / "run.json"))
    old = signal.getsignal(signal.SIGTERM)
    case = runner.execute(CallableImplementation(work, "w"), Parameters())
    assert seen and seen[0] == "performance\n"
    assert case.errors
    assert snapshot(root) == before and not (tmp_path / "run.json").exists()
    assert signal.getsignal(signal.SIGTERM) is old
    assert len(case.extra["machine"]["tuned"]) == 5


def test_tune_action_no_root_warns(tmp_path: Path) -> None:
    root = make_machine(tmp_path / "m")
    before = snapshot(root)
    clock = SimulatedClock()
    runner = _runner(clock)
    runner.add_action(Stage.BEFORE_BENCHMARK, TuneAction(SysRoot(root), can_write=lambda p: False,
                                                         journal=tmp_path / "run.json"))
    case = runner.execute(CallableImplementation(clock.workload(1000), "w"), Parameters())
    assert any("not permitted" in w for w in case.warnings)
    assert snapshot(root) == before


_CHILD = textwrap.dedent("""
    import sys, time
    from steadybench.model.implementation import CallableImplementation
    from steadybench.model.parameters import Parameters
    from steadybench.runner.runner import Runner, Stage
    from steadybench.runner.stop import build_stop_condition
    from steadybench.system.actions import TuneAction
    from steadybench.system.sysfs import SysRoot
    runner = Runner(build_stop_condition(runs=10**9), time_limit=60)
    runner.add_action(Stage.BEFORE_BENCHMARK, TuneAction(SysRoot(sys.argv[1]),
                                                         journal=sys.argv[2]))
    print("ready", flush=True)
    try:
        runner.execute(CallableImplementation(lambda: time.sleep(0.01), "w"), Parameters())
    except KeyboardInterrupt as exc:
        print("interrupted", type(exc).__name__, flush=True)
        sys.exit(3)
""")


def _start_child(tmp_path: Path, root: Path, journal: Path) -> subprocess.Popen:
    script = tmp_path / "child.py"
    script.write_text(_CHILD)
    proc = subprocess.Popen([sys.executable, str(script), str(root), str(journal)],
                            stdout=subprocess.PIPE, text=True, preexec_fn=default_sigint)
    deadline = time.monotonic() + 30
    while (root / GOV0).read_text() != "performance\n":
        assert proc.poll() is None, "child died"
        assert time.monotonic() < deadline, "child never tuned"
        time.sleep(0.02)
    return proc


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_signal_restores(tmp_path: Path, sig: int) -> None:
    root = make_machine(tmp_path / "m")
    before = snapshot(root)
    journal = tmp_path / "run.json"
    proc = _start_child(tmp_path, root, journal)
    assert journal.exists()
    proc.send_signal(sig)
    out, _ = proc.communicate(timeout=30)
    assert proc.returncode == 3 and "interrupted" in out
    assert snapshot(root) == before
    assert not journal.exists()


def test_sigkill_then_reset_from_journal(tmp_path: Path, capsys) -> None:
    root = make_machine(tmp_path / "m")
    before = snapshot(root)
    journal = tmp_path / "run.json"
    proc = _start_child(tmp_path, root, journal)
    os.kill(proc.pid, signal.SIGKILL)
    proc.communicate(timeout=30)
    assert snapshot(root) != before and journal.exists()
    assert main(["--root", str(root), "system", "reset", "--journal", str(journal)]) == 0
    assert "restored" in capsys.readouterr().out
    assert snapshot(root) == before and not journal.exists()


def test_reset_restores_the_good_journals_past_a_corrupt_one(tmp_path: Path, capsys,
                                                               monkeypatch) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    root = make_machine(tmp_path / "m", governor="schedutil",
                        governors="performance schedutil powersave")
    before = snapshot(root)
    assert main(["--root", str(root), "system", "tune"]) == 0
    assert snapshot(root) != before
    corrupt = tmp_path / "state" / "steadybench" / "run-999999.json"
    corrupt.write_text("{not json")
    os.utime(corrupt, (time.time() + 60, time.time() + 60))  # the newest: tried first
    capsys.readouterr()
    code = main(["--root", str(root), "system", "reset"])
    out, err = capsys.readouterr()
    assert snapshot(root) == before, out
    assert code != 0 and "restored:" in out
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "1 journal(s) not restored" in lines[0] and "run-999999" in lines[0]
    assert corrupt.exists()  # left for the user to inspect
