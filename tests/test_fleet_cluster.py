"""Issue 17, "Done when": a real Dask scheduler and three ``steadybench worker`` processes on
127.0.0.1 run a suite of 12 cases with ``run --cluster``; one host is killed mid-case.

Checks: every case records its host and its start and end; no two cases on one host overlap
(the ``benchmark=1`` resource); the killed host's case was re-run elsewhere and its ended
executions are kept, marked; all 12 results are complete; each host's fake machine tree is
restored exactly (the two stopped with SIGTERM on exit, the killed one by ``system reset``
from its journal). Then Ctrl-C on a client cancels the running cases, which come back partial,
and the hosts are idle again.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from child_process import default_sigint
from fake_machine import CPU, make_machine, snapshot
from fleet_cluster import child_env, local_fleet, run_events, wait_until

pytest.importorskip("distributed")

pytestmark = pytest.mark.timeout(600)

BENCH = '''
import time
from steadybench import benchmark


@benchmark(params={"i": list(range(12))})
def nap(i):
    # 30 ms a call: a sample is one call, an execution about 0.4 s with its interpreter
    return lambda: time.sleep(0.03)
'''

LONG_BENCH = '''
import time
from steadybench import benchmark


@benchmark(params={"i": list(range(6))})
def long_nap(i):
    return lambda: time.sleep(0.05)
'''

PRESET = 'name = "fleet-test"\ncountermeasures = ["tune"]\n'
GOVERNOR = f"{CPU}/cpu0/cpufreq/scaling_governor"


def steadybench(*args: str, cwd: Path, env: dict[str, str] | None = None,
                **kwargs) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-m", "steadybench", *args], cwd=cwd,
                            env=env or child_env(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, preexec_fn=default_sigint, **kwargs)


@pytest.mark.slow
def test_suite_on_three_hosts_survives_a_killed_host(tmp_path: Path) -> None:
    (tmp_path / "bench.py").write_text(BENCH)
    (tmp_path / "long.py").write_text(LONG_BENCH)
    (tmp_path / "preset.toml").write_text(PRESET)
    hosts = ["host-a", "host-b", "host-c"]
    roots = {h: make_machine(tmp_path / f"machine-{h}") for h in hosts}
    before = {h: snapshot(root) for h, root in roots.items()}
    with local_fleet(tmp_path / "fleet") as fleet:
        for host in hosts:
            fleet.start_worker(host, roots[host], "--preset", str(tmp_path / "preset.toml"))
        fleet.wait_for_workers(set(hosts))
        for host in hosts:  # the preset holds for the worker's lifetime
            assert (roots[host] / GOVERNOR).read_text().strip() == "performance"
        # each host reports its fingerprint once registered
        described = wait_until(
            lambda: (d := fleet.client.get_metadata(["steadybench", "hosts"], default={}))
            and set(d) == set(hosts) and d, "the hosts' descriptions")
        fingerprint = described["host-b"]["environment"]["fingerprint"]
        assert list(fingerprint["governors"]) == ["performance"]
        assert described["host-a"]["preset"]["preset"] == "fleet-test"

        client_run = steadybench("run", "bench.py", "--cluster", str(fleet.scheduler_file),
                                 "-p", "3", "--runs", "3", "--json", "out.json", "-q",
                                 cwd=tmp_path)
        # Kill a host once it is mid-case: it has ended one execution of a case it is running.
        names = {}

        def mid_case() -> str | None:
            if client_run.poll() is not None:
                raise AssertionError(client_run.stderr.read().decode())
            names.update(fleet.worker_names())
            busy = {names.get(a) for a, keys in fleet.client.processing().items() if keys}
            attempts: dict[str, tuple[str, str]] = {}
            ended: dict[tuple[str, str], int] = {}
            for _t, message in run_events(fleet.client):
                ident = (message["key"], message["attempt"])
                if message["kind"] == "start":
                    attempts[message["host"]] = ident
                elif message["kind"] == "execution":
                    ended[ident] = ended.get(ident, 0) + 1
            for host, ident in attempts.items():
                # the first of the case's three executions ended: two more to go
                if host in busy and ended.get(ident, 0) == 1:
                    return host
            return None

        victim = wait_until(mid_case, "a host in the middle of a case", interval=0.02)
        fleet.workers[victim].proc.send_signal(signal.SIGKILL)
        fleet.workers[victim].proc.wait(30)
        out, err = client_run.communicate(timeout=300)
        assert client_run.returncode == 0, err.decode()

        data = json.loads((tmp_path / "out.json").read_text())
        cases = data["benchmarks"]
        assert len(cases) == 12 and not data["interrupted"]
        assert sorted(c["params"]["i"] for c in cases) == list(range(12))
        for case in cases:  # complete: three executions, each with its three runs
            assert case["status"] == "ok" and not case["errors"] and not case["interrupted"]
            assert len(case["processes"]) == 3 and case["n"] == 9
            assert case["estimate"]["value"] > 0.02
            fleet_record = case["extra"]["fleet"]
            assert case["extra"]["host"] == fleet_record["host"] in hosts
            assert fleet_record["started"] < fleet_record["ended"]
        # no host ran two cases at once
        by_host: dict[str, list[tuple[float, float]]] = {}
        for case in cases:
            record = case["extra"]["fleet"]
            by_host.setdefault(record["host"], []).append((record["started"], record["ended"]))
        for host, spans in by_host.items():
            spans.sort()
            for (_s1, e1), (s2, _e2) in zip(spans, spans[1:]):
                assert e1 <= s2, f"{host} ran two cases at once: {spans}"
        # the killed host's case was re-run elsewhere; its ended executions are kept, marked
        lost = [(case, attempt) for case in cases
                for attempt in case["extra"]["fleet"].get("lost_attempts", [])]
        assert lost, "the killed host's case has no lost attempt"
        for case, attempt in lost:
            assert attempt["host"] == victim and attempt["lost"] is True
            assert case["extra"]["host"] != victim
            assert any("re-run after its host" in w for w in case["warnings"])
        assert any(attempt["runs"] >= 3 and attempt["executions"][0]["values"]
                   for _case, attempt in lost)
        assert data["context"]["fleet"]["host_loads"]

        # Ctrl-C on a client: running cases are cancelled and come back partial
        survivors = [h for h in hosts if h != victim]
        interrupted = steadybench("run", "long.py", "--cluster", str(fleet.scheduler_file),
                                  "-p", "20", "--runs", "3", "--json", "partial.json", "-q",
                                  cwd=tmp_path)
        seen_before = len(run_events(fleet.client))

        def running() -> bool:
            started = [m for _t, m in run_events(fleet.client)[seen_before:]
                       if m["kind"] == "execution"]
            return len(started) >= 2

        wait_until(running, "the interrupted suite's first executions")
        interrupted.send_signal(signal.SIGINT)
        _out, err = interrupted.communicate(timeout=120)
        assert interrupted.returncode == 130, err.decode()
        partial = json.loads((tmp_path / "partial.json").read_text())
        assert partial["interrupted"] is True
        stopped = [c for c in partial["benchmarks"] if c["interrupted"]]
        assert stopped and all(0 < len(c["processes"]) < 20 for c in stopped)
        assert all("cancelled by the client" in c["stop_reason"] for c in stopped)
        wait_until(lambda: not any(fleet.client.processing().values()), "idle hosts")

        # every host restores its settings: on exit (SIGTERM) ...
        for host in survivors:
            assert fleet.stop_worker(host, signal.SIGTERM) == 143
            assert snapshot(roots[host]) == before[host], host
        # ... and the killed one from its journal
        assert snapshot(roots[victim]) != before[victim]
        reset = subprocess.run(
            [sys.executable, "-m", "steadybench", "--root", str(roots[victim]), "system",
             "reset"], env=child_env(XDG_STATE_HOME=str(fleet.workers[victim].state)),
            capture_output=True, timeout=120)
        assert reset.returncode == 0, reset.stderr.decode()
        assert snapshot(roots[victim]) == before[victim]
