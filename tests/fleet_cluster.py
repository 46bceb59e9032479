"""A real local fleet for the fleet tests: a Dask scheduler and ``steadybench worker`` processes
on 127.0.0.1, each worker with its own fake machine tree (``--root``) and its own state
directory (``XDG_STATE_HOME``, where its tuning journal lives).

Readiness is polled (the scheduler file appears; the scheduler lists the workers), never
waited for with fixed sleeps. Several workers on one machine act as separate hosts through
distinct ``--host-id`` values.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from child_process import default_sigint

#: seconds any readiness poll may take before the test fails (a busy 2-core machine)
READY_TIMEOUT_S = 90.0


def wait_until(condition: Callable[[], Any], what: str,
               timeout: float = READY_TIMEOUT_S, interval: float = 0.05) -> Any:
    """Poll ``condition`` until it returns something true; its value."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(interval)


def child_env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    src = str(Path(__file__).resolve().parent.parent / "src")
    env["PYTHONPATH"] = os.pathsep.join([src, env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env.update(extra)
    return env


@dataclass
class WorkerProcess:
    host: str
    root: Path
    state: Path
    proc: subprocess.Popen[bytes]
    log: Path


@dataclass
class Fleet:
    """A scheduler and its workers; :meth:`close` stops what is still running."""

    directory: Path
    scheduler_file: Path
    scheduler: subprocess.Popen[bytes]
    workers: dict[str, WorkerProcess] = field(default_factory=dict)
    #: Dask's Security for the fleet's own client (a TLS fleet), or None
    security: Any = None
    _client: Any = None

    @property
    def address(self) -> str:
        return json.loads(self.scheduler_file.read_text())["address"]

    @property
    def client(self) -> Any:
        if self._client is None:
            from distributed import Client

            self._client = Client(self.address, timeout=30, set_as_default=False,
                                  security=self.security)
        return self._client

    def start_worker(self, host: str, root: Path, *args: str) -> WorkerProcess:
        state = self.directory / f"state-{host}"
        log = self.directory / f"worker-{host}.log"
        with open(log, "wb") as out:
            proc = subprocess.Popen(
                [sys.executable, "-m", "steadybench", "--root", str(root), "worker",
                 str(self.scheduler_file), "--host-id", host, *args],
                stdout=out, stderr=subprocess.STDOUT, preexec_fn=default_sigint,
                env=child_env(XDG_STATE_HOME=str(state)))
        worker = WorkerProcess(host, root, state, proc, log)
        self.workers[host] = worker
        return worker

    def worker_names(self) -> dict[str, str]:
        """Dask worker address → host id, as the scheduler lists them."""
        from steadybench.fleet.connect import scheduler_workers

        info = scheduler_workers(self.client)
        return {address: str(w.get("name")) for address, w in info.items()}

    def wait_for_workers(self, hosts: set[str]) -> None:
        def ready() -> bool:
            for name, worker in self.workers.items():
                if name in hosts and worker.proc.poll() is not None:
                    raise AssertionError(f"worker {name} exited: {worker.log.read_text()}")
            return hosts <= set(self.worker_names().values())

        wait_until(ready, f"workers {sorted(hosts)} on the scheduler")

    def stop_worker(self, host: str, signum: int = signal.SIGTERM) -> int:
        worker = self.workers[host]
        if worker.proc.poll() is None:
            worker.proc.send_signal(signum)
        return worker.proc.wait(60)

    def close(self) -> None:
        if self._client is not None:
            with contextlib.suppress(Exception):
                self._client.close(timeout=5)
        for worker in self.workers.values():
            if worker.proc.poll() is None:
                worker.proc.send_signal(signal.SIGTERM)
        for worker in self.workers.values():
            with contextlib.suppress(subprocess.TimeoutExpired):
                worker.proc.wait(30)
            if worker.proc.poll() is None:
                worker.proc.kill()
                worker.proc.wait()
        self.scheduler.send_signal(signal.SIGTERM)
        try:
            self.scheduler.wait(30)
        except subprocess.TimeoutExpired:
            self.scheduler.kill()
            self.scheduler.wait()


@contextlib.contextmanager
def local_fleet(directory: Path, *scheduler_args: str, security: Any = None) -> Iterator[Fleet]:
    """A Dask scheduler on 127.0.0.1 (a free port, its address in a scheduler file);
    ``scheduler_args`` are added to ``dask scheduler``'s (TLS files), ``security`` is the
    fleet client's."""
    directory.mkdir(parents=True, exist_ok=True)
    scheduler_file = directory / "scheduler.json"
    log = open(directory / "scheduler.log", "wb")  # noqa: SIM115 - closed below
    proc = subprocess.Popen(
        [sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1",
         "--port", "0", "--no-dashboard", "--scheduler-file", str(scheduler_file),
         *scheduler_args],
        stdout=log, stderr=subprocess.STDOUT, env=child_env())
    fleet = Fleet(directory, scheduler_file, proc, security=security)
    try:
        def ready() -> bool:
            if proc.poll() is not None:
                raise AssertionError("the scheduler exited: "
                                     + (directory / "scheduler.log").read_text())
            try:
                return "://" in json.loads(scheduler_file.read_text())["address"]
            except (OSError, ValueError, KeyError):
                return False

        wait_until(ready, "the scheduler file")
        yield fleet
    finally:
        fleet.close()
        log.close()


def run_events(client: Any) -> list[tuple[float, dict[str, Any]]]:
    """Every steadybench fleet event the scheduler holds (all runs)."""
    events = client.get_events()
    out = []
    for name, items in events.items():
        if str(name).startswith("steadybench-fleet-"):
            out.extend((t, m) for t, m in items if isinstance(m, dict))
    return sorted(out, key=lambda item: item[0])
