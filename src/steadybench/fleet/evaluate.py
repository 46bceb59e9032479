"""``evaluate --cluster``: Rancid's evaluation (§VI) on one fleet host.

The whole evaluation of a target is **one** Dask task, run on whichever host offers the
``benchmark`` resource: every baseline and managed execution of every case, in the client's
interleaved schedule, runs on that one machine, so drift hits both presets alike (the point of
interleaving), and the presets are applied and restored on that host under its own tuning lock
and journal (``steadybench system reset`` on that host recovers after a crash). Splitting the
launches over hosts would compare hosts, not presets.

The client sends what makes the target (the benchmark file's text, or the commands) and the
preset files' texts; the host makes the target again (:class:`~steadybench.evaluate.session.
FileTarget` loads the file in the Dask worker process, the benchmark itself runs in the core's
worker processes, as on one machine), runs :class:`~steadybench.evaluate.session.
EvaluationSession` on its own ``--root`` and returns every execution record. A host that holds a
preset for its lifetime (``steadybench worker --preset``) cannot evaluate: the baseline would
run tuned; it says so in one line.

Cancellation: Ctrl-C on the client cancels the task; the host stops the execution under way
(a command before its next run, a benchmark file's worker process by SIGINT through
:class:`~.task.StopWatcher`), restores its settings, and sends the records so far as a
``partial`` event, so the client writes the partial evaluation.
"""

from __future__ import annotations

import copy
import pickle
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import BenchmarkFailed, ConfigurationError, SteadybenchError
from .task import StopWatcher, emit, shipped_path

if TYPE_CHECKING:
    from ..evaluate.session import (
        EvaluateOptions,
        EvaluationSession,
        ExecutionRecord,
        ScheduleItem,
    )


class _Cancelled(KeyboardInterrupt):
    """The client cancelled the task: the session stops as on Ctrl-C, keeping its records."""


@dataclass
class EvaluateJob:
    """One evaluation as the client sends it to a host."""

    key: str
    run_id: str
    options: EvaluateOptions
    #: (path, text) of the benchmark file, or None for commands
    source: tuple[str, bytes] | None = None
    pattern: str | None = None
    method: str | None = None
    method_options: dict[str, Any] = field(default_factory=dict)
    commands: list[Any] = field(default_factory=list)
    shell: bool = False
    timeout: float | None = None
    #: preset name as given -> (path, text) for presets given as files
    preset_files: dict[str, tuple[str, bytes]] = field(default_factory=dict)


@dataclass
class EvaluateOutcome:
    """What the host returns: every execution record, the schedule, where and when."""

    key: str
    host: str
    worker: str
    attempt: str
    started: float
    ended: float
    records: list[ExecutionRecord] = field(default_factory=list)
    schedule: list[ScheduleItem] = field(default_factory=list)
    interrupted: bool = False
    restore_failures: list[str] = field(default_factory=list)
    #: the host could not evaluate (one line), nothing ran
    error: str | None = None
    root: str = "/"


def make_job(session: EvaluationSession, run_id: str, key: str = "0") -> EvaluateJob:
    """The job of ``session``'s target and options (made and checked on the client)."""
    from ..evaluate.session import CommandTarget, FileTarget
    from ..system.presets import PRESETS, load_preset

    options = copy.copy(session.options)
    options.root = "/"  # the host's own root replaces it
    files: dict[str, tuple[str, bytes]] = {}
    for name in options.presets:
        load_preset(name)  # a typo fails here, before anything is sent
        if name not in PRESETS:
            path = Path(name)
            try:
                files[name] = (str(path), path.read_bytes())
            except OSError as exc:
                raise ConfigurationError(f"preset {name}: cannot read ({exc.strerror})") from None
    target = session.target
    if isinstance(target, FileTarget):
        return EvaluateJob(key, run_id, options, (target.path, Path(target.path).read_bytes()),
                           target.pattern, target.method, dict(target.method_options),
                           preset_files=files)
    if isinstance(target, CommandTarget):
        return EvaluateJob(key, run_id, options, commands=target.commands, shell=target.shell,
                           timeout=target.timeout, preset_files=files)
    raise ConfigurationError(f"cannot send {type(target).__name__} to a fleet")


def run_evaluate_job(job: EvaluateJob) -> EvaluateOutcome:
    """The body of the evaluate task on a host."""
    from distributed import get_worker

    from ..evaluate.session import CommandTarget, EvaluationSession, FileTarget
    from . import PLUGIN_NAME
    from .host import current_host

    host, address = current_host()
    plugin = get_worker().plugins.get(PLUGIN_NAME)
    root = str(getattr(plugin, "root", "/") or "/")
    attempt = uuid.uuid4().hex[:12]
    started = time.time()
    outcome = EvaluateOutcome(job.key, host, address, attempt, started, started, root=root)
    emit(job.run_id, {"kind": "start", "key": job.key, "attempt": attempt, "host": host,
                      "worker": address, "time": started})
    held = getattr(plugin, "preset", None)
    if held:
        outcome.error = (f"host {host} holds preset {held.get('preset')!r} for its lifetime "
                         "(steadybench worker --preset): evaluate applies its two presets "
                         "around each execution; start that worker without --preset")
        return outcome
    options = copy.copy(job.options)
    options.root = root
    names = {}
    for name, (path, text) in job.preset_files.items():
        here = shipped_path(path, text)
        names[here] = name
        if options.baseline == name:
            options.baseline = here
        if options.managed == name:
            options.managed = here
    try:
        if job.source is not None:
            target: Any = FileTarget(shipped_path(*job.source), job.pattern, job.method,
                                     job.method_options)
        else:
            target = CommandTarget(job.commands, shell=job.shell, timeout=job.timeout)
    except SteadybenchError as exc:
        outcome.error = f"host {host}: {exc}"
        return outcome
    with StopWatcher() as watcher:
        def check_stop() -> None:
            if watcher.stopped.is_set():
                raise _Cancelled()

        if isinstance(target, CommandTarget):  # stop between two runs of a command
            target.check_stop = check_stop

        def on_execution(record: Any, done: int, total: int) -> None:
            record.case.extra["host"] = host
            record.case.extra["fleet"] = {"host": host, "worker": address, "attempt": attempt}
            # what a lost attempt keeps (steadybench.fleet.attempts) if this host dies
            emit(job.run_id, {"kind": "execution", "key": job.key, "attempt": attempt,
                              "host": host, "time": time.time(), "done": done, "total": total,
                              "entry": {"index": record.position, "preset": record.preset,
                                        "series": record.series, "launch": record.launch},
                              "values": record.values()})
            check_stop()

        session = EvaluationSession(target, options, on_execution)
        try:
            session.run()
        except KeyboardInterrupt:  # cancelled: between executions, or the worker got SIGINT
            session.interrupted = True
        except ConfigurationError as exc:
            outcome.error = f"host {host}: {exc}"
        except SteadybenchError as exc:  # e.g. the host's tuning lock is busy
            outcome.error = f"host {host}: {exc}"
    for item in [*session.schedule, *session.records]:
        item.preset = names.get(item.preset, item.preset)
    outcome.records = session.records
    outcome.schedule = session.schedule
    outcome.interrupted = session.interrupted
    outcome.restore_failures = session.restore_failures
    outcome.ended = time.time()
    if watcher.stopped.is_set():
        outcome.interrupted = True
        emit(job.run_id, {"kind": "partial", "key": job.key, "attempt": attempt, "host": host,
                          "time": outcome.ended, "outcome": pickle.dumps(outcome)})
    return outcome


def evaluate_on_cluster(session: EvaluationSession, opts: dict[str, Any]) -> dict[str, Any]:
    """Run ``session``'s evaluation as one task on a fleet host and fill ``session`` with
    what came back (records, schedule, restore failures; ``interrupted`` and
    KeyboardInterrupt re-raised after Ctrl-C). Returns the results' ``fleet`` context."""
    from .connect import require_hosts
    from .dispatch import Job, dispatch, new_run_id
    from .options import open_fleet
    from .suite import host_records

    wait = float(opts.get("cluster_wait") or 10.0)
    run_id = new_run_id()
    job = make_job(session, run_id)
    received: dict[str, EvaluateOutcome] = {}
    context: dict[str, Any] = {}

    def take(key: str, outcome: EvaluateOutcome) -> None:
        received[key] = outcome
        session.records = list(outcome.records)
        session.schedule = list(outcome.schedule)
        session.restore_failures = list(outcome.restore_failures)
        session.interrupted = session.interrupted or outcome.interrupted
        if session.on_execution is not None:  # the host's progress, shown as it came back
            for i, record in enumerate(outcome.records):
                session.on_execution(record, i + 1, len(outcome.schedule))

    with open_fleet(opts["cluster"], wait, opts) as client:
        hosts = require_hosts(client, wait)
        context["fleet"] = {"scheduler": client.scheduler.address, "run_id": run_id,
                            "hosts": host_records(hosts), "tasks": 1,
                            "evaluate": "one task: the whole evaluation on one host"}
        try:
            report = dispatch(client, [Job(job.key, run_evaluate_job, job)], run_id, take, wait)
        except KeyboardInterrupt:
            session.interrupted = True
            _describe(context, received.get(job.key))
            raise
    outcome = received.get(job.key)
    if outcome is None:
        message = report.errors.get(job.key, "no result came back")
        raise BenchmarkFailed(f"the fleet could not run the evaluation: {message}")
    if outcome.error:
        raise ConfigurationError(outcome.error)
    if report.lost.get(job.key):
        lost = report.lost[job.key]
        context["fleet"]["lost_attempts"] = [a.to_dict() for a in lost]
    context["fleet"]["wall_s"] = report.wall_s
    _describe(context, outcome)
    return context


def _describe(context: dict[str, Any], outcome: EvaluateOutcome | None) -> None:
    if outcome is None:
        return
    context["fleet"].update(host=outcome.host, worker=outcome.worker, root=outcome.root,
                            attempt=outcome.attempt, started=outcome.started,
                            ended=outcome.ended)
