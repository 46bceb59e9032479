"""Issue 12, item 3: ``system reset`` trusted any journal it found, and writes followed symlinks.

A journal planted by another uid made root's reset write a pipe command into
``/proc/sys/kernel/core_pattern`` (the allow-list was all of /sys and /proc/sys); a symlink
made reset and tune overwrite a file outside the root. Now journals are private (0600, in a 0700
directory of the invoking user), reset refuses one owned by anybody but root or the user or
writable by others, the allow-list names exactly the files tuning changes, and no write
follows a symlink out of it.
"""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path

import pytest
from machine_faults import GOV, governors, machine, read_json, state

from fake_machine import CPU, put, snapshot
from steadybench.cli import main
from steadybench.errors import SystemControlError
from steadybench.system.allowlist import is_allowed
from steadybench.system.journal import Journal
from steadybench.system.sysfs import SysRoot
from steadybench.system.tuning import make_plan, tune

as_root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root to give files other owners")
CORE_PATTERN = "proc/sys/kernel/core_pattern"


@pytest.fixture
def env(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    return tmp_path


def _planted(path: Path, root: Path, entries: list[tuple[str, bytes]]) -> Path:
    """A journal written by hand (as an attacker would)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({
        "format": "steadybench-journal", "version": 1, "root": str(root), "pid": 0,
        "entries": [{"path": rel, "original_b64": base64.b64encode(value).decode()}
                    for rel, value in entries]}))
    path.chmod(0o600)
    return path


def test_journals_are_private(env, capsys):
    root = machine(env)
    assert main(["--root", str(root), "system", "tune"]) == 0
    folder = state(env)
    assert folder.stat().st_mode & 0o777 == 0o700 and folder.stat().st_uid == os.geteuid()
    journal = folder / "tune.json"
    assert journal.stat().st_mode & 0o777 == 0o600 and journal.stat().st_uid == os.geteuid()
    # a state directory left open to others by an older version is made private again
    main(["--root", str(root), "system", "reset"])
    folder.chmod(0o755)
    assert main(["--root", str(root), "system", "tune"]) == 0
    assert folder.stat().st_mode & 0o777 == 0o700


@as_root
def test_state_directory_of_another_user_is_refused(env, capsys):
    root = machine(env)
    before = snapshot(root)
    folder = state(env)
    folder.mkdir(parents=True)
    os.chown(folder, 4321, 4321)
    assert main(["--root", str(root), "system", "tune"]) == 2
    err = capsys.readouterr().err
    assert "belongs to uid 4321, not to you" in err and err.count("\n") == 1
    assert snapshot(root) == before


@as_root
@pytest.mark.parametrize("owner,mode,reason", [(4321, 0o600, "belongs to uid 4321"),
                                               (0, 0o646, "writable by others"),
                                               (0, 0o660 | 0o020, "writable by its group")])
def test_reset_refuses_journals_it_cannot_trust(env, capsys, owner, mode, reason):
    root = machine(env)
    assert main(["--root", str(root), "system", "tune"]) == 0
    journal = state(env) / "tune.json"
    tuned = snapshot(root)
    os.chown(journal, owner, owner)
    journal.chmod(mode)
    capsys.readouterr()
    assert main(["--root", str(root), "system", "reset"]) == 2
    err = capsys.readouterr().err
    assert reason in err and "refused" in err, err
    assert snapshot(root) == tuned and journal.exists()  # nothing of it written
    assert main(["--root", str(root), "system", "reset", "--journal", str(journal)]) == 2
    assert reason in capsys.readouterr().err


def test_allow_list_names_exactly_the_tuned_files(env, capsys):
    """The planted journal of the issue: a pipe into core_pattern. Refused as a whole; the files
    every setting plans are allowed, their neighbours are not."""
    root = machine(env)
    put(root, CORE_PATTERN, "core\n")
    before = snapshot(root)
    planted = _planted(state(env) / "run-1.json", root,
                       [(f"/{GOV.format(n=0)}", b"performance\n"),
                        (f"/{CORE_PATTERN}", b"|/tmp/pwn %p\n")])
    assert main(["--root", str(root), "system", "reset"]) == 2
    err = capsys.readouterr().err
    assert "is not one of the files steadybench may change" in err and "corrupt" in err
    assert snapshot(root) == before and planted.exists()
    plan = make_plan(SysRoot(machine(env, "other", governors="ondemand")))  # min_freq instead
    planned = {c.path for c in make_plan(SysRoot(root)).changes} | {c.path for c in plan.changes}
    assert planned and all(is_allowed(p) for p in planned)
    for rel in (f"/{CORE_PATTERN}", f"/{CPU}/cpu0/cpufreq/scaling_max_freq", f"/{CPU}/online",
                f"/{CPU}/cpu0/online", "/sys/kernel/mm/transparent_hugepage/enabled",
                f"/{CPU}/cpu0/cpufreq/../../../../../etc/passwd",
                f"/{CPU}/cpufreq/policy0/scaling_governor/x"):
        assert not is_allowed(rel), rel
    assert is_allowed(f"/{CPU}/cpufreq/policy12/scaling_governor")


def test_tune_does_not_write_through_a_symlink(env, capsys):
    """A governor linked out of the root is neither read nor written (issue 27 item 10: it
    used to be read, and only its write refused): tune says it is unreadable and tunes the
    rest; reset puts the rest back."""
    root = machine(env)
    victim = env / "outside" / "victim"
    put(env, "outside/victim", "precious\n")
    governor = root / GOV.format(n=1)
    governor.unlink()
    governor.symlink_to(victim)
    before = snapshot(root)
    assert main(["--root", str(root), "system", "tune"]) == 0
    out = capsys.readouterr().out
    assert f"{GOV.format(n=1)} unreadable" in out, out
    assert victim.read_text() == "precious\n"
    assert main(["--root", str(root), "system", "reset"]) == 0
    assert victim.read_text() == "precious\n" and snapshot(root) == before
    assert not (state(env) / "tune.json").exists()
    # a cpufreq directory that is a symlink out of the root: left alone the same way
    put(env, "outside/cpufreq/scaling_governor", "powersave\n")
    put(env, "outside/cpufreq/scaling_available_governors", "performance powersave\n")
    governor.unlink()
    governor.write_text("powersave\n")
    folder = root / f"{CPU}/cpu2/cpufreq"
    for child in folder.iterdir():
        child.unlink()
    folder.rmdir()
    folder.symlink_to(env / "outside" / "cpufreq")
    assert main(["--root", str(root), "system", "tune"]) == 0
    assert "cpu2/cpufreq/scaling_governor unreadable" in capsys.readouterr().out
    assert (env / "outside/cpufreq/scaling_governor").read_text() == "powersave\n"
    assert main(["--root", str(root), "system", "reset"]) == 0


def test_reset_does_not_write_through_a_symlink(env, capsys):
    root = machine(env)
    put(env, "outside/victim", "precious\n")
    assert main(["--root", str(root), "system", "tune"]) == 0
    governor = root / GOV.format(n=3)
    governor.unlink()
    governor.symlink_to(env / "outside" / "victim")
    capsys.readouterr()
    assert main(["--root", str(root), "system", "reset"]) == 2
    err = capsys.readouterr().err
    assert "cpu3/cpufreq/scaling_governor" in err and "not written" in err, err
    assert (env / "outside/victim").read_text() == "precious\n"
    assert governors(root, 3) == ["powersave"] * 3  # the others were restored
    kept = read_json(state(env) / "tune.json")["entries"]
    assert [e["path"] for e in kept] == [f"/{GOV.format(n=3)}"]


def test_symlinked_policy_folders_of_a_real_kernel_still_work(env):
    """``cpuN/cpufreq`` is a symlink to ``cpufreq/policyN`` on a real machine: inside the root
    and on the allow-list once resolved, so it is tuned and restored."""
    root = machine(env)
    for n in range(4):
        folder = root / f"{CPU}/cpu{n}/cpufreq"
        folder.rename(root / f"{CPU}/cpufreq/policy{n}")
        folder.symlink_to(f"../cpufreq/policy{n}")
    before = snapshot(root)
    report = tune(SysRoot(root), state(env) / "tune.json")
    assert len(report["changed"]) == 5
    assert (root / f"{CPU}/cpufreq/policy2/scaling_governor").read_text() == "performance\n"
    assert main(["--root", str(root), "system", "reset"]) == 0
    assert snapshot(root) == before


def test_journal_with_oversized_or_odd_values_is_corrupt(env):
    root = machine(env)
    path = _planted(env / "j.json", root, [(f"/{GOV.format(n=0)}", b"x" * 5000)])
    with pytest.raises(SystemControlError, match="corrupt"):
        Journal.load(path)
