"""``exec --cluster``: external commands on a fleet.

One task per parameter set, holding every command: the commands ``exec`` compares stay
interleaved run by run on one host (splitting them over hosts would compare hosts, not
commands). The host runs the ordinary :class:`~steadybench.programs.exec.ExecSession` with the
client's options; each run is a fresh process there, as on one machine. ``every_host`` runs
each parameter set on every host. A cancelled task (Ctrl-C on the client) stops before its next
run and sends what it measured as a ``partial`` event (:mod:`steadybench.fleet.task`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..model.results import CaseResult, Results
from .task import Attempt, StopWatcher

if TYPE_CHECKING:
    from distributed import Client

    from ..programs.commands import Command
    from ..programs.exec import ExecOptions
    from ..programs.process import CommandRunner


class _Cancelled(KeyboardInterrupt):
    """The client cancelled the task: unwinds the session like Ctrl-C, keeping its runs."""


@dataclass
class ExecJob:
    """The commands at one parameter set, as the client sends them to a host."""

    key: str
    run_id: str
    commands: list[Command]
    param_set: dict[str, Any]
    runner: CommandRunner
    options: ExecOptions


@dataclass
class ExecOutcome:
    """What a host returns: one case per command, where and when they ran."""

    key: str
    cases: list[CaseResult]
    host: str
    worker: str
    attempt: str
    started: float
    ended: float
    stopped: bool = False
    context: dict[str, Any] = field(default_factory=dict)


def run_exec_job(job: ExecJob) -> ExecOutcome:
    """The body of one exec task on a host."""
    from ..programs.exec import ExecSession

    this = Attempt.begin(job.run_id, job.key)
    session = ExecSession(job.commands, [job.param_set], job.runner, job.options)
    with StopWatcher() as watcher:
        def before_run() -> None:
            if watcher.stopped.is_set():
                raise _Cancelled()

        session.before_run = before_run
        try:
            results = session.run()
        except _Cancelled:
            results = session.results(interrupted=True)
    ended = time.time()
    stopped = watcher.stopped.is_set()
    for case in results.cases:
        this.stamp(case, ended)
        if stopped:
            case.interrupted = True
    outcome = ExecOutcome(key=job.key, cases=results.cases, host=this.host, worker=this.worker,
                          attempt=this.attempt, started=this.started, ended=ended,
                          stopped=stopped, context=results.context)
    if stopped:
        this.partial(ended, outcome)
    return outcome


def exec_on_fleet(client: Client, commands: list[Command],
                  param_sets: list[dict[str, Any]], runner: CommandRunner,
                  options: ExecOptions, *, every_host: bool = False,
                  wait: float = 10.0) -> Results:
    """Measure the commands on the fleet; Results as ``exec`` makes them, plus the hosts.
    Ctrl-C: the partial Results ride on :class:`~steadybench.manager.PartialResults`."""
    from ..environment import capture_environment
    from ..manager import PartialResults
    from .connect import require_hosts
    from .dispatch import Job, dispatch, new_run_id
    from .suite import host_records

    hosts = require_hosts(client, wait)
    run_id = new_run_id()
    jobs = []
    for params in param_sets or [{}]:
        for host in hosts if every_host else [None]:
            key = str(len(jobs))
            jobs.append(Job(key, run_exec_job,
                            ExecJob(key, run_id, list(commands), dict(params), runner, options),
                            host.address if host else None))
    results = Results(suite="exec", environment=capture_environment())
    results.context["fleet"] = {"scheduler": client.scheduler.address, "run_id": run_id,
                                "hosts": host_records(hosts), "every_host": every_host,
                                "tasks": len(jobs)}
    received: dict[str, ExecOutcome] = {}

    def on_outcome(key: str, outcome: ExecOutcome) -> None:
        received[key] = outcome
        if "programs" in outcome.context:
            results.context.setdefault("programs", outcome.context["programs"])

    def ordered() -> list[CaseResult]:
        return [c for job in jobs if job.key in received for c in received[job.key].cases]

    try:
        report = dispatch(client, jobs, run_id, on_outcome, wait)
    except KeyboardInterrupt:
        results.cases = ordered()
        results.interrupted = True
        raise PartialResults(results) from None
    results.cases = ordered()
    for key, message in report.errors.items():
        job = next(j for j in jobs if j.key == key)
        for command in commands:
            case = CaseResult(benchmark=command.name, implementation=command.name,
                              params=dict(job.payload.param_set), method="exec")
            case.errors.append(f"the fleet could not run this case: {message}")
            case.stop_reason = "error"
            results.cases.append(case)
    results.context["fleet"]["wall_s"] = report.wall_s
    return results
