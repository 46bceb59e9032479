"""Attempts of a case that never returned: the record a dead host leaves on the scheduler.

A fleet task sends an event when it starts and one per ended execution
(:mod:`steadybench.fleet.task`). When a host dies mid-case, Dask gives the task to another
host; the attempt on the dead host never returns, but its events stay on the scheduler. This
module rebuilds those attempts from the events: which host, when, and every execution that had
ended there, with its per-execution estimate and its measured values.

They are **kept and marked, never pooled**: the case's statistics use only the attempt that
returned (one host, complete), because executions from two hosts mix the host level into the
execution level (Kalibera & Jones 2013: a level's variation must be estimated at that level).
They are written under ``case.extra["fleet"]["lost_attempts"]``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass
class LostAttempt:
    """One attempt of a case on a host that did not return it."""

    host: str
    attempt: str
    worker: str
    #: wall-clock start on that host (seconds since the epoch)
    started: float
    #: the executions that ended there: ``{"entry": {...}, "values": [...]}`` each
    executions: list[dict[str, Any]] = field(default_factory=list)
    reason: str = "the host left the fleet before the case ended; re-run on another host"

    @property
    def runs(self) -> int:
        """How many measured runs the lost attempt had sent."""
        return sum(len(e.get("values") or ()) for e in self.executions)

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "runs": self.runs, "lost": True}


def lost_attempts(events: Iterable[tuple[float, Any]],
                  returned: dict[str, str]) -> dict[str, list[LostAttempt]]:
    """Case key → its attempts that did not return, from a run's events.

    ``returned`` maps each case key to the attempt id whose result the client received (a
    case the client never received keeps all its attempts as lost).
    """
    attempts: dict[tuple[str, str], LostAttempt] = {}
    order: list[tuple[str, str]] = []
    ended: set[tuple[str, str]] = set()
    for _time, message in events:
        if not isinstance(message, dict):
            continue
        key, attempt = message.get("key"), message.get("attempt")
        if not isinstance(key, str) or not isinstance(attempt, str):
            continue
        ident = (key, attempt)
        kind = message.get("kind")
        if kind == "start":
            attempts[ident] = LostAttempt(host=str(message.get("host")), attempt=attempt,
                                          worker=str(message.get("worker")),
                                          started=float(message.get("time") or 0.0))
            order.append(ident)
        elif kind == "execution" and ident in attempts:
            attempts[ident].executions.append({"entry": message.get("entry") or {},
                                               "values": list(message.get("values") or [])})
        elif kind == "partial":
            ended.add(ident)
    out: dict[str, list[LostAttempt]] = {}
    for ident in order:
        key, attempt = ident
        if returned.get(key) == attempt or ident in ended:
            continue
        out.setdefault(key, []).append(attempts[ident])
    return out
