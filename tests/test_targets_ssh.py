"""``--target ssh://...`` end to end against a real sshd on 127.0.0.1 (tests/targets_support).

The "device" is this machine reached over SSH; its sys/proc tree is a fake one under
``?root=`` (tests/fake_machine.py). What is checked: the remote tree is read, tuned and restored
byte for byte (normal exit, and SIGKILL + ``system reset --target``), the journals are on the
host in the target's own folder, pinning reaches the program through ``taskset``, the measured
time is the device's clock (a ``date`` the test controls), and unreachable hosts, failed
authentication, symlinks and hostile names give one line each.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from fake_machine import CPU, make_machine
from steadybench.cli import main
from steadybench.output.results_io import load_results
from steadybench.targets import close_all
from targets_support import start_sshd, why_no_sshd


@pytest.fixture(scope="module")
def sshd(tmp_path_factory):
    reason = why_no_sshd()
    if reason:
        pytest.skip(f"no sshd: {reason}")
    try:
        server = start_sshd(tmp_path_factory.mktemp("sshd"))
    except (RuntimeError, OSError, subprocess.CalledProcessError) as exc:
        pytest.skip(f"sshd cannot start here: {exc}")
    yield server
    close_all()
    server.stop()


@pytest.fixture(autouse=True)
def _client(sshd, tmp_path, monkeypatch):
    monkeypatch.setenv("STEADYBENCH_SSH_CONFIG", str(sshd.config))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.delenv("STEADYBENCH_TARGET", raising=False)
    yield
    close_all()


def tree_digest(root: Path) -> dict[str, str]:
    """Every file of a tree by path → sha256 of its bytes (links by their target)."""
    out = {}
    for path in sorted(root.rglob("*")):
        rel = str(path.relative_to(root))
        if path.is_symlink():
            out[rel] = "link:" + os.readlink(path)
        elif path.is_file():
            out[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def cli(args, capsys):
    code = main(args)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture()
def remote(tmp_path):
    # two CPUs, as the machines the tests run on have: taskset on the "device" applies the
    # fake tree's CPU numbers to the real CPUs
    return make_machine(tmp_path / "remote", cpus=2, governor="powersave",
                        capacities=[512, 1024], thermal={"cpu": 45000})


def test_show_reads_the_remote_tree(sshd, remote, capsys):
    code, out, err = cli(["system", "show", "--json", "--interval", "0",
                          "--target", sshd.url(remote)], capsys)
    assert code == 0, err
    state = json.loads(out)["state"]
    assert state["root"] == sshd.url(remote)
    assert [c["governor"] for c in state["cpus"]] == ["powersave"] * 2
    assert [c["capacity"] for c in state["cpus"]] == [512, 1024]
    assert state["temperatures"][0]["celsius"] == 45.0
    assert state["cpu_model"] == "Fake CPU 9000"


def test_tune_then_reset_restores_the_remote_tree_exactly(sshd, remote, tmp_path, capsys):
    before = tree_digest(remote)
    url = sshd.url(remote)
    code, out, err = cli(["system", "tune", "--target", url], capsys)
    assert code == 0, err
    assert (remote / f"{CPU}/cpu0/cpufreq/scaling_governor").read_text() == "performance\n"
    assert (remote / f"{CPU}/cpufreq/boost").read_text() == "0\n"
    # the journal is on the host, in the target's own private folder
    journals = list((tmp_path / "state" / "steadybench" / "targets").glob("ssh-*/tune.json"))
    assert len(journals) == 1, out
    assert stat.S_IMODE(journals[0].stat().st_mode) == 0o600
    assert stat.S_IMODE(journals[0].parent.stat().st_mode) == 0o700
    assert json.loads(journals[0].read_text())["root"] == url
    assert f"system reset --target {url}" in out
    # a plain (local) reset does not touch the target's journals
    code, out, err = cli(["system", "reset"], capsys)
    assert code == 0 and journals[0].exists()
    code, out, err = cli(["system", "reset", "--target", url], capsys)
    assert code == 0, err
    assert out.count("restored:") == 3  # boost and two governors
    assert tree_digest(remote) == before
    assert not journals[0].exists()


def test_tune_refuses_a_symlink_out_of_the_tree(sshd, remote, tmp_path, capsys):
    outside = tmp_path / "outside"
    outside.write_text("powersave\n")
    gov = remote / f"{CPU}/cpu1/cpufreq/scaling_governor"
    gov.unlink()
    gov.symlink_to(outside)
    before = tree_digest(remote)
    code, out, err = cli(["system", "tune", "--target", sshd.url(remote)], capsys)
    assert code == 2
    assert err.startswith("error: ") and "outside the root" in err and err.count("\n") == 1
    assert outside.read_text() == "powersave\n"
    assert tree_digest(remote) == before


def test_exec_times_on_the_remote_clock(sshd, remote, tmp_path, capsys):
    clock = sshd.config.parent / "clock"
    clock.write_text("1700000000000000000\n250000000\n")  # every run lasts 0.25 s there
    try:
        out = tmp_path / "r.json"
        code, _, err = cli(["exec", "--runs", "4", "--no-correction", "--json", str(out),
                            "--target", sshd.url(remote, timer="shell"), "--", "true"], capsys)
    finally:
        clock.unlink()
    assert code == 0, err
    results = load_results(out)
    (case,) = results.cases
    assert case.values("wall_time") == [0.25] * 4
    assert results.context["target"]["address"] == f"ssh://{sshd.user}@127.0.0.1:{sshd.port}"
    assert results.context["target"]["timer"] == "shell"
    assert results.context["target"]["timing"] == "measured on the target"


def test_exec_python_timer_measures_the_program_not_the_network(sshd, remote, tmp_path,
                                                                capsys):
    out = tmp_path / "r.json"
    code, _, err = cli(["exec", "--runs", "5", "--json", str(out), "--no-correction",
                        "--target", sshd.url(remote, timer="python"), "--",
                        "sleep", "0.05"], capsys)
    assert code == 0, err
    (case,) = load_results(out).cases
    # a 50 ms sleep, timed around fork/exec and wait4 on the device: never less than the sleep
    assert all(0.05 <= v < 0.05 + 0.2 for v in case.values("wall_time"))
    assert case.extra["exit_statuses"] == {"0": 5}


def test_exec_with_a_preset_pins_tunes_and_restores(sshd, remote, tmp_path, capsys):
    before = tree_digest(remote)
    preset = tmp_path / "p.toml"
    preset.write_text('countermeasures = ["tune", "pin"]\n[pin]\ncpus = "1"\n')
    seen = tmp_path / "seen.txt"
    code, _, err = cli(["exec", "--runs", "2", "--no-correction", "--preset", str(preset),
                        "--output", str(seen), "--target", sshd.url(remote), "--shell",
                        "--cmd", "grep Cpus_allowed_list /proc/self/status; "
                                 f"cat {remote}/{CPU}/cpu0/cpufreq/scaling_governor"], capsys)
    assert code == 0, err
    text = seen.read_text()
    # the program ran under taskset on CPU 1, with the tree tuned; restored after
    assert text.count("Cpus_allowed_list:\t1\n") == 2 + 0, text
    assert text.count("performance") == 2
    assert tree_digest(remote) == before


@pytest.mark.slow
def test_sigkill_during_a_tuned_run_then_reset(sshd, remote, tmp_path):
    before = tree_digest(remote)
    env = {**os.environ, "STEADYBENCH_SSH_CONFIG": str(sshd.config),
           "XDG_STATE_HOME": str(tmp_path / "state")}
    folder = tmp_path / "state" / "steadybench" / "targets"
    proc = subprocess.Popen([sys.executable, "-m", "steadybench", "exec", "--runs", "100000",
                             "--preset", "managed", "--no-correction", "-q",
                             "--target", sshd.url(remote), "--", "sleep", "0.05"],
                            env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while not list(folder.glob("*/run-*.json")):  # tuned: its journal exists
            assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
            assert time.monotonic() < deadline, "the run never tuned the target"
            time.sleep(0.05)
        while (remote / f"{CPU}/cpu0/cpufreq/scaling_governor").read_text() != "performance\n":
            assert time.monotonic() < deadline
            time.sleep(0.05)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert tree_digest(remote) != before
    done = subprocess.run([sys.executable, "-m", "steadybench", "system", "reset",
                           "--target", sshd.url(remote)], env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "restored:" in done.stdout
    assert tree_digest(remote) == before
    assert not list(folder.glob("*/run-*.json"))


@pytest.mark.slow
def test_iters_pushes_the_program_and_fits_it(sshd, remote, tmp_path, capsys):
    prog = tmp_path / "work.py"
    prog.write_text("#!/usr/bin/env python3\nimport sys\n"
                    "n = int(sys.argv[1])\nprint(f'BATCHTIME: {n * 0.001 + 0.0005}')\n")
    prog.chmod(0o755)
    out = tmp_path / "r.json"
    code, _, err = cli(["iters", "--runs", "10", "--bootstrap", "0", "--json", str(out),
                        "--push", str(prog), "--target", sshd.url(remote), "--",
                        "./work.py"], capsys)
    assert code == 0, err
    results = load_results(out)
    (case,) = results.cases
    assert case.estimate.value == pytest.approx(0.001, rel=1e-9)
    assert case.estimate.figure("intercept") == pytest.approx(0.0005, rel=1e-6)
    assert results.context["target"]["kind"] == "ssh"


def test_hostile_names_stay_words(sshd, remote, tmp_path, capsys):
    pwned = tmp_path / "pwned"
    evil = tmp_path / "x;touch b;$(touch c)`touch d`'e'"
    evil.write_text("x")
    seen = tmp_path / "seen.txt"
    code, _, err = cli(["exec", "--runs", "1", "--no-correction", "--push", str(evil),
                        "--output", str(seen), "--target", sshd.url(remote), "--",
                        "ls", "-1A", f"$(touch {pwned})", f"`touch {pwned}`", "."], capsys)
    assert code == 2 or code == 1  # ls fails on the two odd names: they were words
    assert not pwned.exists()
    code, _, err = cli(["exec", "--runs", "1", "--no-correction", "--push", str(evil),
                        "--output", str(seen), "--target", sshd.url(remote), "--",
                        "ls", "-1A"], capsys)
    assert code == 0, err
    # the work folder on the target holds exactly the pushed file, under its own name
    assert seen.read_text().splitlines()[-1:] == [evil.name]
    assert "b" not in seen.read_text().splitlines()


def test_program_missing_on_the_target(sshd, remote, capsys):
    code, _, err = cli(["exec", "--runs", "1", "--target", sshd.url(remote), "--",
                        "./nope"], capsys)
    assert code == 2
    assert "not found or not executable on ssh://" in err and "--push" in err


@pytest.mark.parametrize(("url", "words"), [
    ("ssh://nosuchuser@127.0.0.1:{port}", "authentication failed"),
    ("ssh://{user}@127.0.0.1:{closed}", "connection refused"),
])
def test_unreachable_and_refused_are_one_line(sshd, remote, capsys, url, words):
    from targets_support import free_port

    url = url.format(port=sshd.port, user=sshd.user, closed=free_port())
    code, _, err = cli(["system", "show", "--interval", "0", "--target", url], capsys)
    assert code == 2
    assert err.startswith(f"error: cannot reach {url}: {words}")
    assert err.count("\n") == 1


def test_apps_stops_a_background_process_on_the_target_and_continues_it(sshd, remote,
                                                                       tmp_path, capsys):
    """Rancid §IV-A4: a named background process is stopped while measuring (SIGSTOP, state
    T), and continued afterwards (SIGCONT)."""
    name = f"sbbg{os.getpid() % 100000}"
    program = tmp_path / name
    shutil.copy("/bin/sleep", program)
    background = subprocess.Popen([str(program), "300"])
    try:
        preset = tmp_path / "apps.toml"
        preset.write_text(f'countermeasures = ["apps"]\n[apps]\nprocesses = ["{name}"]\n')
        seen = tmp_path / "seen.txt"
        out = tmp_path / "r.json"
        code, _, err = cli(["exec", "--runs", "2", "--no-correction", "--preset", str(preset),
                            "--json", str(out), "--output", str(seen), "--shell",
                            "--target", sshd.url(remote),
                            "--cmd", f"cut -d' ' -f3 /proc/{background.pid}/stat"], capsys)
        assert code == 0, err
        assert seen.read_text().split() == ["T", "T"]  # stopped during both runs
        record = load_results(out).context["machine"]
        assert record["session"]["stopped_processes"] == [{"pid": background.pid,
                                                           "name": name}]
        state = Path(f"/proc/{background.pid}/stat").read_text().rpartition(")")[2].split()[0]
        assert state in ("S", "R")  # continued
    finally:
        background.kill()
        background.wait()


def _pids_named(name: str) -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if (entry / "comm").read_text().strip() == name:
                    pids.append(int(entry.name))
            except OSError:
                continue
    return pids


@pytest.mark.slow
def test_sigterm_restores_the_target_and_kills_the_remote_program(sshd, remote, tmp_path):
    before = tree_digest(remote)
    name = f"sbterm{os.getpid() % 100000}"
    program = tmp_path / name
    shutil.copy("/bin/sleep", program)
    env = {**os.environ, "STEADYBENCH_SSH_CONFIG": str(sshd.config),
           "XDG_STATE_HOME": str(tmp_path / "state")}
    proc = subprocess.Popen([sys.executable, "-m", "steadybench", "exec", "--runs", "3",
                             "--preset", "managed", "--no-correction", "-q",
                             "--target", sshd.url(remote, timer="python"), "--",
                             str(program), "300"],
                            env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while not _pids_named(name):  # the program runs on the "device": tuned by now
            assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
            assert time.monotonic() < deadline, "the program never started"
            time.sleep(0.05)
        assert tree_digest(remote) != before
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(60) == 143
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert tree_digest(remote) == before  # restored on the way out
    assert not list((tmp_path / "state").rglob("run-*.json"))
    deadline = time.monotonic() + 30
    while _pids_named(name):  # the kill is sent before steadybench exits; reaping follows
        assert time.monotonic() < deadline, "the program on the target was left running"
        time.sleep(0.05)
