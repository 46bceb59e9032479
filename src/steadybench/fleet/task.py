"""What runs on a fleet host: one case as one Dask task.

The client sends a :class:`CaseJob`: the core's own :class:`~steadybench.runner.worker.
WorkerTask` (the benchmark file's origin or the pickled code, the pickled in-process runner, the
meters), the number of independent executions, and the benchmark file's text. On the host,
:func:`run_case_job` runs the case exactly as ``steadybench run`` does on one machine
(the execution layer: :func:`steadybench.execution.driver.run_executions` with a
:class:`~steadybench.execution.backends.WorkerBackend`: K spawned interpreters in turn, hard time
limit, containment), so the benchmark never runs in Dask's threads; the Dask thread only waits
for the core's worker processes.

Side channel (nothing measured is lost with the host): the task sends events to the scheduler
on the run's topic: ``start`` when it begins (host, attempt id, time), ``execution`` each time
one execution has ended (its per-execution estimate and its measured values), and ``partial``
with the whole case when it was stopped by a cancellation. When the host dies mid-case, Dask
re-runs the task on another host, and the client reads the events of the attempt that never
returned (:mod:`steadybench.fleet.attempts`).

Cancellation: a watcher thread polls the Dask worker's state of this task; once the client
cancelled it (Ctrl-C), the core worker process gets SIGINT, as on one machine, returns what it
measured, and the task ends without starting another execution.
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import os
import pickle
import signal
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..model.implementation import Implementation

if TYPE_CHECKING:
    from ..execution.backend import Outcome
    from ..model.results import CaseResult
    from ..runner.worker import WorkerTask

#: seconds between two looks at whether the client cancelled the task
WATCH_INTERVAL_S = 0.2
#: Dask worker task states after which a task's result is no longer wanted
GONE_STATES = frozenset({"cancelled", "released", "forgotten", "error"})


def topic(run_id: str) -> str:
    """The scheduler event topic of one client run."""
    return f"steadybench-fleet-{run_id}"


@dataclass
class CaseJob:
    """One case as the client sends it to a host."""

    key: str
    run_id: str
    benchmark: str
    implementation: str
    error_policy: str
    task: WorkerTask
    processes: int
    confidence: float
    #: (path, text) of the benchmark file, used on a host where that path does not exist
    source: tuple[str, bytes] | None = None


@dataclass
class CaseOutcome:
    """What a host returns for one case: the merged raw case and where and when it ran."""

    key: str
    case: CaseResult
    host: str
    worker: str
    attempt: str
    #: wall-clock seconds (the host's clock) when the case started and ended
    started: float
    ended: float
    #: the client cancelled the task and the case stopped early
    stopped: bool = False


class _Named(Implementation):
    """The implementation's name and error policy, all the parent side of the core's workers
    needs: the code itself travels in the WorkerTask and is loaded by the worker process."""

    def __init__(self, name: str, error_policy: str) -> None:
        self.error_policy = error_policy
        super().__init__(name)


def emit(run_id: str, message: dict[str, Any]) -> None:
    """Send one event on the run's topic to the scheduler (best effort: a lost event only
    loses the record of a lost attempt, never the case)."""
    from distributed import get_worker

    with contextlib.suppress(Exception):
        get_worker().log_event(topic(run_id), message)


@dataclass
class Attempt:
    """One attempt at a task on this host: who runs it and since when. :meth:`begin` announces
    it to the client (the "start" event); :meth:`stamp` marks a case with it; :meth:`partial`
    sends what a cancelled attempt measured by the side channel."""

    run_id: str
    key: str
    host: str
    worker: str
    attempt: str
    started: float

    @classmethod
    def begin(cls, run_id: str, key: str) -> Attempt:
        from .host import current_host

        host, address = current_host()
        this = cls(run_id, key, host, address, uuid.uuid4().hex[:12], time.time())
        emit(run_id, {"kind": "start", "key": key, "attempt": this.attempt, "host": host,
                      "worker": address, "time": this.started})
        return this

    def stamp(self, case: CaseResult, ended: float) -> None:
        case.extra["host"] = self.host
        case.extra["fleet"] = {"host": self.host, "worker": self.worker,
                               "attempt": self.attempt, "started": self.started, "ended": ended}

    def partial(self, ended: float, outcome: Any) -> None:
        emit(self.run_id, {"kind": "partial", "key": self.key, "attempt": self.attempt,
                           "host": self.host, "time": ended, "outcome": pickle.dumps(outcome)})


def shipped_path(path: str, text: bytes, directory: str | None = None) -> str:
    """``path`` when it exists on this host with the same text; otherwise a copy of ``text``
    in this host's cache, named by its hash, with the same file name (so the module's name
    and relative imports of its directory's files are the only things that differ)."""
    with contextlib.suppress(OSError):
        if Path(path).read_bytes() == text:
            return path
    digest = hashlib.sha256(text).hexdigest()[:16]
    base = Path(directory or os.environ.get("TMPDIR", "/tmp")) / "steadybench-fleet" / digest
    base.mkdir(parents=True, exist_ok=True)
    target = base / Path(path).name
    if not target.exists():
        temporary = target.with_suffix(f".{os.getpid()}.tmp")
        temporary.write_bytes(text)
        os.replace(temporary, target)
    return str(target)


def prepare_task(job: CaseJob) -> WorkerTask:
    """The job's WorkerTask made runnable on this host: the benchmark file where the host has
    it (or the shipped copy), the client's working directory only where it exists."""
    task = copy.copy(job.task)
    if job.source is not None:
        path = shipped_path(*job.source)
        if task.origin is not None and task.origin[0] == job.source[0]:
            task.origin = (path, *task.origin[1:])
        if task.select is not None and task.select[0] == job.source[0]:
            task.select = (path, task.select[1])
        if path != job.source[0]:
            task.sys_path = [str(Path(path).parent), *task.sys_path]
    if task.cwd and not os.path.isdir(task.cwd):
        task.cwd = None
    return task


def core_worker_processes() -> list[int]:
    """Process ids of the core worker processes this Dask worker started (one case runs at a
    time, so they are this task's)."""
    import psutil

    found = []
    for child in psutil.Process().children(recursive=False):
        with contextlib.suppress(psutil.Error):
            if "steadybench.runner.worker" in " ".join(child.cmdline()):
                found.append(child.pid)
    return found


class StopWatcher:
    """A thread that notices when the client no longer wants this task (cancelled on Ctrl-C,
    or the client went away) and interrupts the core worker process, which then returns what
    it measured."""

    def __init__(self) -> None:
        from distributed import get_worker

        self.worker = get_worker()
        self.key = self.worker.get_current_task()
        self.stopped = threading.Event()
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="steadybench-stop-watcher",
                                        daemon=True)

    def __enter__(self) -> StopWatcher:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._done.set()
        self._thread.join()

    def wanted(self) -> bool:
        state = self.worker.state.tasks.get(self.key)
        return state is not None and state.state not in GONE_STATES

    def _watch(self) -> None:
        while not self._done.wait(WATCH_INTERVAL_S):
            if self.stopped.is_set():
                continue
            if not self.wanted():
                self.stopped.set()
                for pid in core_worker_processes():
                    with contextlib.suppress(ProcessLookupError, PermissionError):
                        os.killpg(pid, signal.SIGINT)


def execution_summary(outcome: Outcome, method: Any, confidence: float) -> dict[str, Any]:
    """One ended execution as plain values (it travels as a scheduler event): its record as in
    ``case.processes`` (value, interval, n...) and its measured values (ok runs), seconds."""
    from ..execution.merge import execution_record
    from ..model.results import PRIMARY_METRIC, RUN_OK
    from ..processors.base import finalize_case

    own = copy.deepcopy(outcome.case) if outcome.case is not None else None
    values: list[float] = []
    if own is not None:
        with contextlib.suppress(Exception):  # the record is informative; the values count
            finalize_case(own, (), outcome.method or method, confidence)
        column = own.metrics.get(PRIMARY_METRIC)
        if column is not None:
            values = [float(v) for v, s in zip(column, own.status) if s == RUN_OK]
    entry = execution_record(outcome, own).to_dict()
    return {"entry": {k: v for k, v in entry.items() if k != "figures"}, "values": values}


def run_case_job(job: CaseJob) -> CaseOutcome:
    """Run one case on this host (the body of the Dask task)."""
    from ..execution.backends import WorkerBackend
    from ..execution.driver import run_executions

    this = Attempt.begin(job.run_id, job.key)
    task = prepare_task(job)
    runner = pickle.loads(task.runner)
    runner.processes = max(1, int(job.processes))
    runner.confidence = job.confidence
    implementation = _Named(job.implementation, job.error_policy)
    merged = runner.new_case(implementation, task.params, job.benchmark)

    with StopWatcher() as watcher:
        def on_execution(outcome: Outcome) -> bool:
            outcome.host = this.host
            summary = execution_summary(outcome, runner.method, job.confidence)
            emit(job.run_id, {"kind": "execution", "key": job.key, "attempt": this.attempt,
                              "host": this.host, "time": time.time(), **summary})
            return not watcher.stopped.is_set()

        if not watcher.wanted():
            watcher.stopped.set()
        else:
            runner.last_case = merged
            run_executions(WorkerBackend(runner, task=task), merged, runner.processes,
                           time_limit=runner.time_limit, method=runner.method,
                           confidence=job.confidence,
                           stop_on_error=implementation.error_policy == "stop",
                           on_execution=on_execution, hard_limits=runner.hard_limits())
    ended = time.time()
    stopped = watcher.stopped.is_set()
    if stopped:
        merged.interrupted = True
        merged.stop_reason = "interrupted (cancelled by the client)"
    this.stamp(merged, ended)
    outcome = CaseOutcome(key=job.key, case=merged, host=this.host, worker=this.worker,
                          attempt=this.attempt, started=this.started, ended=ended,
                          stopped=stopped)
    if stopped:  # the client cancelled the future: the result goes by the side channel
        this.partial(ended, outcome)
    return outcome
