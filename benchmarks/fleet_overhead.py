"""The fleet's scheduling overhead, and a suite's wall time on 1, 2 and 3 local hosts.

Starts a real Dask scheduler and ``steadybench worker`` processes on 127.0.0.1 (the same
programs a fleet runs; several workers on one machine act as hosts through ``--host-id``), then
measures:

1. **Dask's own task overhead with the benchmark resource**: ``--tasks`` no-op tasks needing
   ``benchmark=1`` on one worker, so they run one after another; per task: the wall time of all
   divided by their number (submit, schedule, run a no-op, report back).
2. **steadybench's per-case overhead on a host**: in a ``run --cluster`` suite, the idle gap on
   a host between the end of one case and the start of its next (the hosts' clocks are this
   machine's clock), and the client-side wall time beyond the busiest host's busy time.
3. **A suite's wall time** with 1, 2 and 3 workers (``--cases`` cases of a 20 ms sleep, ``-p 2
   --runs 3``: about 0.5–1 s a case, most of it starting the core's worker interpreters), and
   the speed-up against one worker.

Sleep-based cases scale on this 2-core machine because a sleeping case does not need a core;
starting interpreters does, so 3 workers contend for 2 cores. The figures feed docs/fleet.md.

Run: ``.venv/bin/python benchmarks/fleet_overhead.py [--cases 12] [--tasks 200]``
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from statistics import mean, median

SUITE = '''
import time
from steadybench import benchmark


@benchmark(params={"i": list(range(CASES))})
def nap(i):
    return lambda: time.sleep(0.02)
'''


def noop(_: int) -> int:
    return 0


def wait_for(condition, what: str, timeout: float = 120.0):
    deadline = time.monotonic() + timeout
    while not (value := condition()):
        if time.monotonic() > deadline:
            raise SystemExit(f"timed out waiting for {what}")
        time.sleep(0.05)
    return value


@contextlib.contextmanager
def scheduler(directory: Path) -> Iterator[Path]:
    path = directory / "scheduler.json"
    proc = subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_scheduler", "--host",
                             "127.0.0.1", "--port", "0", "--no-dashboard", "--scheduler-file",
                             str(path)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for(lambda: path.exists() and path.stat().st_size > 0, "the scheduler")
        yield path
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(30)


@contextlib.contextmanager
def workers(path: Path, count: int, client) -> Iterator[None]:
    procs = [subprocess.Popen([sys.executable, "-m", "steadybench", "worker", str(path),
                               "--host-id", f"host-{n}"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
             for n in range(count)]
    try:
        wait_for(lambda: len(client.scheduler_info(n_workers=-1)["workers"]) == count,
                 f"{count} workers")
        yield
    finally:
        for proc in procs:
            proc.send_signal(signal.SIGTERM)
        for proc in procs:
            proc.wait(60)
        wait_for(lambda: not client.scheduler_info(n_workers=-1)["workers"], "workers gone")


def task_overhead(client, tasks: int) -> float:
    """Seconds per no-op task needing benchmark=1 on one worker (tasks in sequence)."""
    client.submit(noop, -1, resources={"benchmark": 1}, pure=False).result()  # warm
    started = time.perf_counter()
    futures = [client.submit(noop, i, resources={"benchmark": 1}, pure=False)
               for i in range(tasks)]
    client.gather(futures)
    return (time.perf_counter() - started) / tasks


def run_suite(path: Path, directory: Path, count: int) -> dict:
    out = directory / f"suite-{count}.json"
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "steadybench", "run", "suite.py", "--cluster",
                           str(path), "-p", "2", "--runs", "3", "--json", str(out), "-q"],
                          cwd=directory, capture_output=True, text=True)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(done.stderr)
    data = json.loads(out.read_text())
    spans: dict[str, list[tuple[float, float]]] = {}
    for case in data["benchmarks"]:
        record = case["extra"]["fleet"]
        spans.setdefault(record["host"], []).append((record["started"], record["ended"]))
    gaps, busy = [], []
    for host_spans in spans.values():
        host_spans.sort()
        busy.append(sum(e - s for s, e in host_spans))
        gaps += [b[0] - a[1] for a, b in zip(host_spans, host_spans[1:])]
    cases = len(data["benchmarks"])
    return {"wall": wall, "dispatch_wall": data["context"]["fleet"]["wall_s"], "gaps": gaps,
            "busiest": max(busy), "case_mean": sum(busy) / cases, "cases": cases}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=12)
    parser.add_argument("--tasks", type=int, default=200)
    args = parser.parse_args()
    from distributed import Client

    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        (directory / "suite.py").write_text(SUITE.replace("CASES", str(args.cases)))
        with scheduler(directory) as path:
            address = json.loads(path.read_text())["address"]
            client = Client(address, timeout=30, set_as_default=False)
            print(f"machine: {os.cpu_count()} CPUs; load {os.getloadavg()[0]:.2f}")
            with workers(path, 1, client):
                per_task = task_overhead(client, args.tasks)
            print(f"Dask task with benchmark=1, one worker, in sequence: "
                  f"{per_task * 1e3:.2f} ms per task ({args.tasks} no-op tasks)")
            first = None
            for count in (1, 2, 3):
                with workers(path, count, client):
                    suite = run_suite(path, directory, count)
                first = first or suite["wall"]
                gaps = suite["gaps"]
                gap_text = (f"host idle between cases median {median(gaps) * 1e3:.1f} ms, "
                            f"mean {mean(gaps) * 1e3:.1f} ms" if gaps else "no gaps")
                print(f"{count} worker(s): suite of {suite['cases']} cases "
                      f"(mean case {suite['case_mean']:.2f} s on its host) "
                      f"wall {suite['wall']:.2f} s (dispatch {suite['dispatch_wall']:.2f} s, "
                      f"busiest host {suite['busiest']:.2f} s), speed-up "
                      f"{first / suite['wall']:.2f}x; {gap_text}")
            client.close()


if __name__ == "__main__":
    main()
