"""Submitting jobs to a fleet and collecting what comes back, whatever happens.

One general mechanism for every command (``run``, ``exec``, ``ab``): each job is a Dask task
needing one unit of the ``benchmark`` resource (optionally pinned to one host), with Dask
retries for a task that raised. While waiting, :func:`dispatch`

* hands each finished outcome to the caller as soon as it arrives;
* gives up on the jobs not run, each with an error of its own (the caller records them as
  failed cases, and the outputs keep everything that came back), when no host offering the
  resource is left for longer than the wait, or when a job pinned to a host has lost it (Dask
  would otherwise wait for ever);
* on Ctrl-C cancels every future, waits a few seconds for the running cases' partial results
  (sent by the hosts as ``partial`` events, :mod:`steadybench.fleet.task`), hands them over,
  and re-raises;
* at the end, reads the run's events back and attaches the attempts of cases whose host died
  (:mod:`steadybench.fleet.attempts`).

A worker that dies while running a task is not a task error for Dask: the scheduler re-runs
the task on another worker (up to ``distributed.scheduler.allowed-failures`` deaths, 3 by
default, then the future raises ``KilledWorker``, reported here as the case's error).
"""

from __future__ import annotations

import contextlib
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from . import RESOURCE
from .attempts import LostAttempt, lost_attempts
from .connect import WORKER_WAIT_S, benchmark_hosts
from .task import topic

if TYPE_CHECKING:
    from distributed import Client

#: Dask retries of a task that raised (an infrastructure error: the benchmark's own failures
#: are recorded in its case, they do not raise)
RETRIES = 2
#: seconds the running cases get to send their partial results after Ctrl-C
INTERRUPT_GRACE_S = 10.0
#: seconds between two looks at the fleet's hosts while waiting (each look lists the workers)
HOST_CHECK_S = 2.0
#: seconds between two looks for partial results after Ctrl-C
POLL_S = 0.5
#: seconds between two looks for finished futures
WAKE_S = 0.01


@dataclass
class Job:
    """One task to submit: ``fn(payload)`` on a host (``host`` pins it to that worker
    address)."""

    key: str
    fn: Callable[[Any], Any]
    payload: Any
    host: str | None = None


@dataclass
class Dispatched:
    """What came back: outcomes by key, errors by key, the lost attempts, whether the run
    was interrupted."""

    run_id: str
    outcomes: dict[str, Any] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)
    lost: dict[str, list[LostAttempt]] = field(default_factory=dict)
    interrupted: bool = False
    #: seconds from the first submission to the last result
    wall_s: float = 0.0


def new_run_id() -> str:
    return uuid.uuid4().hex[:12]


def dispatch(client: Client, jobs: Sequence[Job], run_id: str,
             on_outcome: Callable[[str, Any], None] | None = None,
             wait: float = WORKER_WAIT_S, retries: int = RETRIES) -> Dispatched:
    """Run ``jobs`` on the fleet; every outcome goes to ``on_outcome(key, outcome)`` as it
    arrives (also partial ones after Ctrl-C, then KeyboardInterrupt is re-raised)."""
    from distributed import as_completed

    report = Dispatched(run_id=run_id)
    log = EventLog(client, run_id)
    started = time.monotonic()
    futures = {}
    for job in jobs:
        futures[job.key] = client.submit(
            job.fn, job.payload, key=f"steadybench-{run_id}-{job.key}",
            resources={RESOURCE: 1}, retries=retries, pure=False,
            workers=[job.host] if job.host else None, allow_other_workers=False)
    by_future = {future.key: key for key, future in futures.items()}
    pinned = {job.key: job.host for job in jobs if job.host}
    pending = set(futures.values())

    def take(done: set[Any]) -> None:
        for future in done:
            key = by_future[future.key]
            pending.discard(future)
            if future.status == "finished":
                outcome = future.result()
                report.outcomes[key] = outcome
                if on_outcome is not None:
                    on_outcome(key, outcome)
            elif future.status != "cancelled":
                exc = future.exception()
                report.errors[key] = f"{type(exc).__name__}: {exc}"

    completed = as_completed(list(pending), loop=client.loop)
    try:
        hostless_since: float | None = None
        looked = 0.0
        while pending:
            batch = completed.next_batch(block=False)
            if batch:
                take(set(batch))
                continue
            if time.monotonic() - looked < HOST_CHECK_S:
                time.sleep(WAKE_S)
                continue
            looked = time.monotonic()
            addresses = {h.address for h in benchmark_hosts(client, describe=False)}
            for key, address in pinned.items():
                future = futures[key]
                if future in pending and address not in addresses:
                    future.cancel()
                    pending.discard(future)
                    report.errors[key] = (f"its host {address} left the fleet (an A/B "
                                          "comparison's rounds stay on one host)")
            now = time.monotonic()
            if addresses:
                hostless_since = None
            elif hostless_since is None:
                hostless_since = now
            elif now - hostless_since > wait:
                # every case not run is an error of its own; what came back is kept
                message = (f"no host offering the {RESOURCE!r} resource is left at "
                           f"{client.scheduler.address} (waited {wait:g} s)")
                client.cancel(list(pending))
                for future in pending:
                    report.errors[by_future[future.key]] = message
                pending.clear()
    except KeyboardInterrupt:
        report.interrupted = True
        running = list(pending)
        client.cancel(running)
        _collect_partial(log, {by_future[f.key] for f in running}, report, on_outcome)
        raise
    finally:
        report.wall_s = time.monotonic() - started
        attach_lost(log, report)
        log.close()
    return report


class EventLog:
    """Every event of one run, as the scheduler forwards them to this client (subscribed
    before anything is submitted). The scheduler itself keeps only the last
    ``distributed.admin.low-level-log-length`` events of a topic (1,000 by default), fewer
    than a large suite sends, so the record is kept here; the scheduler's copy fills in what
    the subscription missed (a client that connected late)."""

    def __init__(self, client: Client, run_id: str) -> None:
        import threading

        self.client = client
        self.topic = topic(run_id)
        self._lock = threading.Lock()
        self._items: list[tuple[float, Any]] = []
        self.subscribed = False
        try:
            client.subscribe_topic(self.topic, self._receive)
            self.subscribed = True
        except Exception:  # an old scheduler: the scheduler's copy is read instead
            pass

    def _receive(self, event: tuple[float, Any]) -> None:
        with self._lock:
            self._items.append(event)

    def events(self) -> list[tuple[float, Any]]:
        with self._lock:
            items = list(self._items)
        seen = {_identity(m) for _t, m in items}
        try:
            stored = tuple(self.client.get_events(self.topic))
        except Exception:  # the scheduler is gone: what arrived is all there is
            stored = ()
        items += [(t, m) for t, m in stored if _identity(m) not in seen]
        return sorted(items, key=lambda item: item[0])

    def close(self) -> None:
        if self.subscribed:
            with contextlib.suppress(Exception):
                self.client.unsubscribe_topic(self.topic)


def _identity(message: Any) -> tuple[Any, ...]:
    if not isinstance(message, dict):
        return (repr(message),)
    return (message.get("kind"), message.get("key"), message.get("attempt"),
            message.get("time"), (message.get("entry") or {}).get("index"))


def _collect_partial(log: EventLog, keys: set[str], report: Dispatched,
                     on_outcome: Callable[[str, Any], None] | None) -> None:
    """After Ctrl-C: the partial outcomes the hosts of running cases send once they stopped."""
    import pickle

    started = {m["key"] for _t, m in log.events()
               if isinstance(m, dict) and m.get("kind") == "start" and m.get("key") in keys}
    deadline = time.monotonic() + INTERRUPT_GRACE_S
    seen: set[str] = set()
    while started - seen and time.monotonic() < deadline:
        for _t, message in log.events():
            if (isinstance(message, dict) and message.get("kind") == "partial"
                    and message.get("key") in started and message["key"] not in seen):
                seen.add(message["key"])
                outcome = pickle.loads(message["outcome"])
                report.outcomes[message["key"]] = outcome
                if on_outcome is not None:
                    on_outcome(message["key"], outcome)
        if started - seen:
            time.sleep(POLL_S)


def attach_lost(log: EventLog, report: Dispatched) -> None:
    """Fill ``report.lost`` from the run's events, and mark each returned case with its lost
    attempts (``case.extra["fleet"]["lost_attempts"]``)."""
    returned = {key: getattr(outcome, "attempt", "") for key, outcome in report.outcomes.items()}
    report.lost = lost_attempts(log.events(), returned)
    for key, attempts in report.lost.items():
        outcome = report.outcomes.get(key)
        for case in outcome_cases(outcome):
            _mark_lost(case, attempts)


def outcome_cases(outcome: Any) -> list[Any]:
    """The cases an outcome carries (one for ``run``, one per command for ``exec``...)."""
    if outcome is None:
        return []
    cases = getattr(outcome, "cases", None)
    if cases is not None:
        return list(cases)
    case = getattr(outcome, "case", None)
    return [case] if case is not None else []


def _mark_lost(case: Any, attempts: list[LostAttempt]) -> None:
    """Record a case's lost attempts in it, and say so in a warning."""
    fleet = case.extra.setdefault("fleet", {})
    fleet["lost_attempts"] = [a.to_dict() for a in attempts]
    hosts = ", ".join(sorted({a.host for a in attempts}))
    runs = sum(a.runs for a in attempts)
    note = (f"re-run after its host {hosts} left mid-case; {runs} run(s) measured there "
            "are kept, marked, out of the statistics")
    if note not in case.warnings:
        case.warnings.append(note)
