"""The fleet behind every command, on a real local scheduler: no host with the ``benchmark``
resource is one clear line; ``run --every-host`` makes the host a level of the results (the
per-host breakdown, ``compare --by-host``); ``exec --cluster`` keeps a parameter set's
commands on one host; ``ab --cluster --every-host`` gives one verdict per host, every round of
a comparison on its host."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from fleet_cluster import child_env, local_fleet, run_events, wait_until

pytest.importorskip("distributed")

pytestmark = pytest.mark.timeout(600)

BENCH = '''
from steadybench import benchmark


@benchmark(params={"n": [2000, 4000]})
def summing(n):
    return lambda: sum(range(n))
'''


def steadybench(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "steadybench", *args], cwd=cwd,
                          env=child_env(), capture_output=True, text=True, timeout=300)


@pytest.mark.slow
def test_commands_on_a_two_host_fleet(tmp_path: Path) -> None:
    (tmp_path / "bench.py").write_text(BENCH)
    with local_fleet(tmp_path / "fleet") as fleet:
        cluster = str(fleet.scheduler_file)
        # a plain Dask worker offers no 'benchmark' resource: one line, no endless wait
        with open(tmp_path / "plain.log", "wb") as log:
            plain = subprocess.Popen(
                [sys.executable, "-m", "distributed.cli.dask_worker", fleet.address,
                 "--nthreads", "1", "--no-nanny", "--name", "plain", "--no-dashboard"],
                stdout=log, stderr=subprocess.STDOUT, env=child_env())
        try:
            wait_until(lambda: "plain" in fleet.worker_names().values(), "the plain worker")
            done = steadybench("run", "bench.py", "--cluster", cluster, "--cluster-wait", "1",
                               "-p", "2", "--runs", "3", cwd=tmp_path)
            assert done.returncode == 2
            assert done.stderr.splitlines()[-1] == (
                f"error: no host can take a benchmark at {fleet.address}: its 1 worker(s) "
                f"offer no 'benchmark' resource (start one per host with: steadybench worker "
                f"{fleet.address})")
        finally:
            plain.terminate()
            plain.wait(60)

        for host in ("left", "right"):
            fleet.start_worker(host, Path("/"))
        fleet.wait_for_workers({"left", "right"})

        # every case on every host: the host is a level of the results
        for name in ("base", "new"):
            done = steadybench("run", "bench.py", "--cluster", cluster, "--every-host",
                               "-p", "2", "--runs", "2", "--json", f"{name}.json",
                               "--hosts-report", f"{name}-hosts.html", cwd=tmp_path)
            assert done.returncode == 0, done.stderr
        data = json.loads((tmp_path / "new.json").read_text())
        assert sorted((c["params"]["n"], c["extra"]["host"]) for c in data["benchmarks"]) == [
            (2000, "left"), (2000, "right"), (4000, "left"), (4000, "right")]
        breakdown = data["context"]["fleet"]["hosts_breakdown"]
        assert [b["label"] for b in breakdown] == ["summing [n=2000]", "summing [n=4000]"]
        for item in breakdown:
            assert [h["host"] for h in item["hosts"]] == ["left", "right"]
            assert all(len(h["executions"]) == 2 for h in item["hosts"])
            assert item["within_cov"] is not None and item["between_cov"] is not None
            assert item["ci_low"] <= item["value"] <= item["ci_high"]
        assert "spread between hosts" in done.stderr and "within a host" in done.stderr
        page = (tmp_path / "new-hosts.html").read_text()
        assert page.count("data:image/png;base64,") == 2 and "summing [n=4000]" in page

        done = steadybench("compare", "base.json", "new.json", "--by-host", "--json",
                           "cmp.json", "-q", cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        rows = json.loads((tmp_path / "cmp.json").read_text())["benchmarks"]
        assert len(rows) == 4 and all("host=" in row["name"] + json.dumps(row) for row in rows)

        # exec: both commands of a parameter set measured on the same host, interleaved
        done = steadybench("exec", "--cluster", cluster, "--cmd", "true", "--cmd",
                           "sleep 0.001", "--runs", "3", "--json", "exec.json", "-q",
                           cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        cases = json.loads((tmp_path / "exec.json").read_text())["benchmarks"]
        assert len(cases) == 2 and len({c["extra"]["host"] for c in cases}) == 1
        assert cases[0]["extra"]["fleet"]["attempt"] == cases[1]["extra"]["fleet"]["attempt"]

        # ab: one comparison per host, its rounds on that host
        for name, n in (("a", 500), ("b", 5000)):
            (tmp_path / f"{name}.py").write_text(
                "from steadybench import benchmark\n\n\n@benchmark\ndef work():\n"
                f"    return lambda: sum(range({n}))\n")
        done = steadybench("ab", "a.py", "b.py", "--cluster", cluster, "--every-host",
                           "--max-rounds", "6", "--max-time", "0", "--min-rounds", "6",
                           "--execution-time", "0.01", "--json", "ab.json", cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        document = json.loads((tmp_path / "ab.json").read_text())
        assert [h["host"] for h in document["hosts"]] == ["left", "right"]
        for comparison in document["hosts"]:
            assert len(comparison["rounds"]) == 6
            assert {r["host"] for r in comparison["rounds"]} == {comparison["host"]}
        assert "host left:" in done.stdout and "host right:" in done.stdout

        # every host leaves mid-run: the cases not run fail with one reason, the rest is kept
        (tmp_path / "slow.py").write_text(
            "import time\nfrom steadybench import benchmark\n\n\n"
            '@benchmark(params={"i": list(range(8))})\ndef nap(i):\n'
            "    return lambda: time.sleep(0.05)\n")
        seen = len(run_events(fleet.client))
        leaving = subprocess.Popen(
            [sys.executable, "-m", "steadybench", "run", "slow.py", "--cluster", cluster,
             "--cluster-wait", "1", "-p", "3", "--runs", "3", "--json", "slow.json", "-q"],
            cwd=tmp_path, env=child_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True)
        wait_until(lambda: sum(m["kind"] == "execution"
                               for _t, m in run_events(fleet.client)[seen:]) >= 1,
                   "the first execution of the suite")
        for host in ("left", "right"):
            assert fleet.stop_worker(host) == 143  # SIGTERM: the worker leaves at once
        _out, err = leaving.communicate(timeout=300)
        assert leaving.returncode == 1, err
        assert err.splitlines()[-1].startswith("error: ") and "benchmark(s) failed" in err
        cases = json.loads((tmp_path / "slow.json").read_text())["benchmarks"]
        assert len(cases) == 8
        failed = [c for c in cases if c["errors"]]
        assert failed and all("no host offering the 'benchmark' resource is left"
                              in c["errors"][0] for c in failed)
