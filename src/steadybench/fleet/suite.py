"""``run --cluster``: a manager's suite with each case as one task on a fleet host.

The same manager, processors and loggers as on one machine (:class:`steadybench.manager.
Manager`); only where a case runs changes. Cases are submitted all at once and finished in the
order they come back (each goes through the manager's processors and loggers on arrival); the
Results list them in the suite's order. ``every_host`` runs each case once on every host
(pinned), which makes the host a level of the results: host → execution → run
(:mod:`steadybench.fleet.hosts`).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..environment import capture_environment
from ..model.results import CaseResult, Results
from .connect import WORKER_WAIT_S, Host, require_hosts
from .dispatch import Job, dispatch, new_run_id
from .task import CaseJob, run_case_job

if TYPE_CHECKING:
    from distributed import Client

    from ..manager import Manager
    from ..model.benchmark import Benchmark


def host_records(hosts: list[Host]) -> list[dict[str, Any]]:
    """The fleet's hosts as the results' context records them (id, address, fingerprint)."""
    out = []
    for host in hosts:
        env = host.description.get("environment") or {}
        out.append({"host": host.host, "address": host.address,
                    "cpu_model": env.get("cpu_model"), "cpu_count": env.get("cpu_count"),
                    "hostname": env.get("hostname"), "kernel": env.get("kernel"),
                    "python": (env.get("python") or {}).get("version"),
                    "fingerprint": env.get("fingerprint"),
                    "preset": host.description.get("preset")})
    return out


def benchmark_source(benchmarks: list[Benchmark]) -> dict[str, tuple[str, bytes]]:
    """The text of each benchmark file the suite's implementations come from (sent along, for
    hosts that do not have the file at the same path)."""
    sources: dict[str, tuple[str, bytes]] = {}
    for benchmark in benchmarks:
        for config in benchmark.configurations:
            origin = config.implementation.origin
            if origin is not None and origin[0] not in sources:
                try:
                    sources[origin[0]] = (origin[0], Path(origin[0]).read_bytes())
                except OSError:
                    continue
    return sources


def run_manager_on_fleet(manager: Manager, client: Client, *, every_host: bool = False,
                         wait: float = WORKER_WAIT_S) -> Results:
    """Run the manager's suite on the fleet behind ``client`` and return its Results.

    Ctrl-C: raises :class:`~steadybench.manager.PartialResults` with the cases that came back
    (the running ones stopped and sent what they measured).
    """
    from ..errors import ConfigurationError
    from ..manager import PartialResults
    from ..runner.workers import make_task

    hosts = require_hosts(client, wait)
    run_id = new_run_id()
    sources = benchmark_source(manager.benchmarks)
    jobs: list[Job] = []
    owners: dict[str, tuple[Benchmark, Any, Any]] = {}
    for benchmark in manager.benchmarks:
        for config, params in benchmark.cases():
            runner = config.runner
            runner.confidence = manager.confidence
            implementation = config.implementation
            task = make_task(runner, implementation, params, manager.meters, benchmark.title)
            origin = implementation.origin
            for host in hosts if every_host else [None]:
                key = str(len(jobs))
                job = CaseJob(key=key, run_id=run_id, benchmark=benchmark.title,
                              implementation=implementation.name,
                              error_policy=implementation.error_policy, task=task,
                              processes=runner.processes, confidence=manager.confidence,
                              source=sources.get(origin[0]) if origin else None)
                jobs.append(Job(key, run_case_job, job, host.address if host else None))
                owners[key] = (benchmark, config, params)
    if not jobs:
        raise ConfigurationError("no benchmarks to run")
    results = Results(suite=manager.title, environment=capture_environment(),
                      context=dict(manager.context))
    results.context["fleet"] = {"scheduler": client.scheduler.address, "run_id": run_id,
                                "hosts": host_records(hosts), "every_host": every_host,
                                "cases": len(jobs)}
    for logger in manager.loggers:
        logger.start(results, len(jobs))
    finished: dict[str, CaseResult] = {}

    def on_outcome(key: str, outcome: Any) -> None:
        benchmark, config, params = owners[key]
        case: CaseResult = outcome.case
        for logger in manager.loggers:
            logger.case_start(benchmark.title, config.implementation.name, params.to_dict())
        manager._finish_case(case, config.runner, results, [])
        finished[key] = case

    try:
        report = dispatch(client, jobs, run_id, on_outcome, wait)
    except KeyboardInterrupt:
        _order(results, finished, jobs)
        results.interrupted = True
        manager._finish(results)
        raise PartialResults(results) from None
    for key, message in report.errors.items():
        benchmark, config, params = owners[key]
        case = config.runner.new_case(config.implementation, params, benchmark.title)
        case.errors.append(f"the fleet could not run this case: {message}")
        case.stop_reason = "error"
        manager._finish_case(case, config.runner, results, [])
        finished[key] = case
    _order(results, finished, jobs)
    by_benchmark: dict[str, list[CaseResult]] = {}
    for case in results.cases:
        by_benchmark.setdefault(case.benchmark, []).append(case)
    for title, cases in by_benchmark.items():
        for processor in manager.global_processors:
            processor.process(cases)
        for logger in manager.loggers:
            logger.benchmark_end(title, cases)
    results.context["fleet"]["wall_s"] = report.wall_s
    manager._finish(results)
    return results


def _order(results: Results, finished: dict[str, CaseResult], jobs: list[Job]) -> None:
    """The cases in the suite's order (they arrive in the order the hosts finish them)."""
    results.cases = [finished[job.key] for job in jobs if job.key in finished]
