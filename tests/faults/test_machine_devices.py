"""Issue 15: every setting of the fake board (big.LITTLE CPUs, Mali and DDR devfreq, boost) and
every stopped background process is put back after a normal exit, SIGTERM, and SIGKILL followed
by ``steadybench system reset``.

The background process is a real child (``sleep``) that the fake board's ``/proc`` lists under a
name of its own; the test checks its real state (``/proc/PID/stat``: ``T`` stopped, ``S``
sleeping). Children are awaited through the marker the benchmark writes, never a fixed sleep.
"""

from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path

import pytest
from machine_faults import (
    DEADLINE_S,
    STEADYBENCH,
    child_env,
    run_journals,
    sampling_bench,
    start,
    wait_for,
    wait_or_kill,
)

from fake_machine import DDR, MALI, make_board, put, snapshot

VICTIM = "sb-victim"


def _real_state(pid: int) -> str:
    text = Path(f"/proc/{pid}/stat").read_text()
    return text.rpartition(")")[2].split()[0]


def _wait_state(pid: int, wanted: str) -> None:
    """Wait (bounded) until the real process is in ``wanted`` state: a signal is delivered
    asynchronously."""
    deadline = time.monotonic() + DEADLINE_S
    while _real_state(pid) not in wanted:
        if time.monotonic() > deadline:
            pytest.fail(f"process {pid} never reached state {wanted}: {_real_state(pid)}")
        time.sleep(0.005)


@pytest.fixture
def victim(tmp_path):
    proc = subprocess.Popen(["sleep", "600"])
    try:
        yield proc
    finally:
        proc.send_signal(signal.SIGCONT)
        proc.kill()
        proc.wait()


def _board(tmp_path: Path, victim_pid: int) -> tuple[Path, Path]:
    board = make_board(tmp_path / "board")
    put(board, f"proc/{victim_pid}/comm", f"{VICTIM}\n")
    fields = ["S", "1", "1", "1"] + ["0"] * 40
    put(board, f"proc/{victim_pid}/stat", f"{victim_pid} ({VICTIM}) {' '.join(fields)}\n")
    preset = tmp_path / "managed-board.toml"
    preset.write_text('countermeasures = ["tune", "background", "monitor"]\n'
                      f'[background]\nnames = ["{VICTIM}"]\n')
    return board, preset


def _start(tmp_path: Path, board: Path, preset: Path, runs: str):
    script, marker = sampling_bench(tmp_path)
    stderr = tmp_path / "stderr.txt"
    proc = start(["--root", str(board), "run", str(script), "--preset", str(preset),
                  "--in-process", "--runs", runs, "--time-limit", "3600", "--json",
                  str(tmp_path / "r.json")], child_env(tmp_path), stderr)
    return proc, marker, stderr


def _tuned(board: Path) -> bool:
    mali = board / f"sys/devices/platform/{MALI}/devfreq/{MALI}/min_freq"
    ddr = board / f"sys/devices/platform/{DDR}/devfreq/{DDR}/governor"
    return mali.read_text() == "600000000\n" and ddr.read_text() == "performance\n"


def test_normal_exit_restores_the_board_and_continues_the_process(tmp_path, victim):
    board, preset = _board(tmp_path, victim.pid)
    before = snapshot(board)
    result = subprocess.run([STEADYBENCH, "--root", str(board), "run",
                             str(sampling_bench(tmp_path)[0]), "--preset", str(preset),
                             "--in-process", "--runs", "5", "--json", str(tmp_path / "r.json")],
                            env=child_env(tmp_path), capture_output=True, text=True,
                            timeout=DEADLINE_S)
    assert result.returncode == 0, result.stderr
    assert snapshot(board) == before and run_journals(tmp_path) == []
    _wait_state(victim.pid, "SR")


def test_sigterm_restores_the_board_and_continues_the_process(tmp_path, victim):
    board, preset = _board(tmp_path, victim.pid)
    before = snapshot(board)
    proc, marker, stderr = _start(tmp_path, board, preset, "100000")
    wait_for(marker.exists, proc, "sampling", stderr)
    assert _tuned(board)
    _wait_state(victim.pid, "T")
    proc.send_signal(signal.SIGTERM)
    code = wait_or_kill(proc, stderr)
    assert code == 143, stderr.read_text()
    assert snapshot(board) == before and run_journals(tmp_path) == []
    _wait_state(victim.pid, "SR")


def test_sigkill_then_system_reset_restores_everything(tmp_path, victim):
    board, preset = _board(tmp_path, victim.pid)
    before = snapshot(board)
    proc, marker, stderr = _start(tmp_path, board, preset, "100000")
    wait_for(marker.exists, proc, "sampling", stderr)
    _wait_state(victim.pid, "T")
    proc.kill()
    proc.wait()
    # nothing ran after the kill: still tuned, still stopped, the journals left behind
    assert _tuned(board) and _real_state(victim.pid) == "T"
    assert len(run_journals(tmp_path)) == 2
    result = subprocess.run([STEADYBENCH, "--root", str(board), "system", "reset"],
                            env=child_env(tmp_path), capture_output=True, text=True,
                            timeout=DEADLINE_S)
    assert result.returncode == 0, result.stderr
    assert f"process {victim.pid} ({VICTIM}) continued" in result.stdout
    assert snapshot(board) == before and run_journals(tmp_path) == []
    _wait_state(victim.pid, "SR")
