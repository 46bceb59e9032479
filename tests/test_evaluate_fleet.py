"""``evaluate --cluster`` on a real local scheduler and one ``steadybench worker`` whose machine
is a fake board: the whole evaluation (every baseline and managed execution, interleaved) runs
on that one host, the host tunes its own tree around the managed executions and restores it byte
for byte, and the results say which host measured."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from child_process import default_sigint
from evaluate_machine import make_board
from fake_machine import CPU, snapshot
from fleet_cluster import child_env, local_fleet, wait_until

pytest.importorskip("distributed")

pytestmark = pytest.mark.timeout(600)

GOV0 = f"{CPU}/cpu0/cpufreq/scaling_governor"

BENCH = '''
from steadybench import benchmark


@benchmark
def summing():
    return lambda: sum(range(500))
'''


def steadybench(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "steadybench", *args], cwd=cwd,
                          env=child_env(), capture_output=True, text=True, timeout=300)


@pytest.mark.slow
def test_evaluate_runs_on_one_fleet_host(tmp_path: Path) -> None:
    board = make_board(tmp_path / "board")
    before = snapshot(board)
    (tmp_path / "bench.py").write_text(BENCH)
    seen = tmp_path / "seen.txt"
    with local_fleet(tmp_path / "fleet") as fleet:
        cluster = str(fleet.scheduler_file)
        worker = fleet.start_worker("board", board)
        fleet.wait_for_workers({"board"})

        # commands: each run appends the governor the host's tree has while it runs
        done = steadybench("evaluate", "--cluster", cluster, "--launches", "2", "--runs", "3",
                           "--warmup", "0", "--seed", "5", "--json", "cmd.json", "--shell",
                           "--cmd", f"cat {board / GOV0} >> {seen}", cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        assert snapshot(board) == before
        assert not list(worker.state.rglob("run-*.json"))  # the host's journal is closed
        data = json.loads((tmp_path / "cmd.json").read_text())
        ev = data["context"]["evaluate"]
        assert ev["executions"] == {"planned": 4, "done": 4}
        order = [i["preset"] for i in ev["schedule"]]
        assert sorted(order) == ["baseline", "baseline", "managed", "managed"]
        assert seen.read_text().splitlines() == [
            "performance" if p == "managed" else "schedutil" for p in order for _ in range(3)]
        fleet_context = data["context"]["fleet"]
        assert fleet_context["host"] == "board" and fleet_context["root"] == str(board)
        assert {c["extra"]["host"] for c in data["benchmarks"]} == {"board"}
        assert "Table 3." in done.stdout

        # a benchmark file: its text travels, the host loads it and runs its executions
        done = steadybench("evaluate", "bench.py", "--cluster", cluster, "--launches", "2",
                           "--runs", "2", "--order", "alternate", "-q", "--json", "file.json",
                           cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        assert snapshot(board) == before
        ev = json.loads((tmp_path / "file.json").read_text())["context"]["evaluate"]
        assert [i["preset"] for i in ev["schedule"]] == ["baseline", "managed"] * 2
        assert [bool(i["tuned"]) for i in ev["schedule"]] == [False, True] * 2
        assert ev["cases"][0]["table3"]["baseline"]["n"] == 2

        # Ctrl-C on the client: the host stops between two runs, restores its tree and sends
        # what it measured; the client writes the partial evaluation
        held = tmp_path / "held.txt"
        client = subprocess.Popen(
            [sys.executable, "-m", "steadybench", "evaluate", "--cluster", cluster,
             "--launches", "3", "--runs", "1000", "--warmup", "0", "--order", "alternate",
             "--time-limit", "3600", "--json", "part.json", "--shell",
             "--cmd", f"cat {board / GOV0} >> {held}"],
            cwd=tmp_path, env=child_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True, preexec_fn=default_sigint)
        # the baseline execution has ended and the managed one measures on the tuned tree
        wait_until(lambda: held.exists() and "performance" in held.read_text(),
                   "a managed run on the host")
        client.send_signal(signal.SIGINT)
        _out, err = client.communicate(timeout=120)
        assert client.returncode == 130, err
        assert "Traceback" not in err
        data = json.loads((tmp_path / "part.json").read_text())
        ev = data["context"]["evaluate"]
        assert data["interrupted"] and ev["interrupted"]
        assert ev["executions"] == {"planned": 6, "done": 2}
        first, last = ev["schedule"][:2]
        assert first["preset"] == "baseline" and first["runs"] == 1000
        assert last["preset"] == "managed" and last["interrupted"] and 0 < last["runs"] < 1000
        assert snapshot(board) == before

        # a preset that is not there fails on the client, before anything is sent
        done = steadybench("evaluate", "bench.py", "--cluster", cluster, "--managed-preset",
                           "nosuch.toml", cwd=tmp_path)
        assert done.returncode == 2
        assert done.stderr.splitlines() == [
            "error: preset 'nosuch.toml': not baseline, managed or a preset file"]

        # a host that holds a preset for its lifetime cannot run the baseline untouched
        fleet.stop_worker("board")
        other = make_board(tmp_path / "other")
        fleet.start_worker("tuned", other, "--preset", "managed")
        fleet.wait_for_workers({"tuned"})
        done = steadybench("evaluate", "--cluster", cluster, "--launches", "2", "--runs", "1",
                           "--", "true", cwd=tmp_path)
        assert done.returncode == 2
        assert done.stderr.splitlines() == [
            "error: host tuned holds preset 'managed' for its lifetime (steadybench worker "
            "--preset): evaluate applies its two presets around each execution; start that "
            "worker without --preset"]
    assert snapshot(board) == before
