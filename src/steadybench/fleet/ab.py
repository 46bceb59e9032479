"""``ab --cluster``: the live A/B protocol on fleet hosts, each round one Dask task.

A round (A once and B once, in the order the client drew) is one task pinned to one host, so a
comparison's rounds all run on the same host: the paired value ln(t_A/t_B) of a round only
cancels drift when A and B saw the same machine (Abedi & Brecht 2017). The client keeps the
protocol (the random order, the planned looks, the α spent, the verdict:
:class:`~steadybench.ab.session.ABSession`); the host only executes, in fresh processes as on
one machine (:mod:`steadybench.ab.variants`).

By default the comparison runs on one host (the first the scheduler lists); with
``every_host``, one comparison per host runs at the same time, each with its own verdict: the
comparison is paired by host, never across hosts. A host that leaves ends its comparison as
interim (its rounds cannot move elsewhere). Ctrl-C ends every comparison as interim.
"""

from __future__ import annotations

import contextlib
import copy
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..ab.session import ABResult, ABSession, ABSettings, Round
from .task import shipped_path

if TYPE_CHECKING:
    from distributed import Client

    from ..ab.variants import Outcome
    from .connect import Host

#: seconds between two looks at whether a round's host is still there
POLL_S = 2.0


class HostLost(KeyboardInterrupt):
    """The host of a comparison left the fleet: its comparison ends as interim."""


@dataclass
class RoundJob:
    """One round as a host receives it: the variants and the order to run them in."""

    index: int
    order: tuple[str, str]
    variants: dict[str, Any]
    #: path → text of the benchmark files, for hosts without them at that path
    sources: dict[str, bytes]


def run_round(job: RoundJob) -> tuple[str, dict[str, Outcome]]:
    """The body of one round's task: (host, outcome of each variant)."""
    from .host import current_host

    host, _address = current_host()
    outcomes = {}
    for label in job.order:
        variant = job.variants[label]
        path = getattr(variant, "path", None)
        if path in job.sources:
            variant.path = shipped_path(path, job.sources[path])
        outcomes[label] = variant.execute()
    return host, outcomes


class FleetABSession(ABSession):
    """An A/B session whose rounds run on one fleet host."""

    def __init__(self, a: Any, b: Any, settings: ABSettings, client: Client, host: Host,
                 stop: threading.Event, progress: Any = None) -> None:
        super().__init__(a, b, settings, progress)
        self.client = client
        self.host = host
        self.stop = stop
        #: why the comparison ended early because of its host (None: it did not)
        self.lost: str | None = None
        self.sources: dict[str, bytes] = {}
        for variant in (a, b):
            path = getattr(variant, "path", None)
            if path and not getattr(variant, "foreign", False):
                with contextlib.suppress(OSError):
                    self.sources[path] = Path(path).read_bytes()

    def _round(self, index: int) -> Round:
        from . import RESOURCE
        from .connect import benchmark_hosts

        if self.stop.is_set():
            raise KeyboardInterrupt
        order = tuple(self.rng.sample(["A", "B"], 2))
        job = RoundJob(index, order,  # type: ignore[arg-type]
                       {k: copy.copy(v) for k, v in self.variants.items()}, self.sources)
        future = self.client.submit(run_round, job, resources={RESOURCE: 1}, pure=False,
                                    workers=[self.host.address], allow_other_workers=False)
        looked = time.monotonic()
        try:
            while not future.done():
                if self.stop.is_set():
                    raise KeyboardInterrupt
                if time.monotonic() - looked > POLL_S:
                    looked = time.monotonic()
                    hosts = benchmark_hosts(self.client, describe=False)
                    if self.host.address not in {h.address for h in hosts}:
                        self.lost = f"host {self.host.host} left the fleet"
                        raise HostLost(self.lost)
                time.sleep(0.01)
            host, outcomes = future.result()
        except KeyboardInterrupt:
            future.cancel()
            raise
        for outcome in outcomes.values():
            outcome.record["host"] = host  # the host that executed it (always this one)
        return Round(index, order, outcomes)  # type: ignore[arg-type]


@dataclass
class HostComparison:
    """One host's comparison."""

    host: str
    result: ABResult
    error: str | None = None


def ab_on_fleet(client: Client, a: Any, b: Any, settings: ABSettings, *,
                every_host: bool = False, wait: float = 10.0,
                progress: Any = None) -> list[HostComparison]:
    """Run the comparison on one host (or on every host at once); one result per host.
    Ctrl-C ends them all as interim and returns them (the caller reports and exits 130)."""
    from .connect import require_hosts

    hosts = require_hosts(client, wait)
    chosen = hosts if every_host else hosts[:1]
    stop = threading.Event()
    sessions = [FleetABSession(copy.copy(a), copy.copy(b), settings, client, host, stop,
                               progress) for host in chosen]
    results: dict[str, HostComparison] = {}

    def run(session: FleetABSession) -> None:
        try:
            res = session.run()
            if session.lost is not None:
                res.reason = f"interrupted: {session.lost} (its rounds stay on one host)"
            results[session.host.host] = HostComparison(session.host.host, res)
        except Exception as exc:  # noqa: BLE001 - reported per host
            results[session.host.host] = HostComparison(session.host.host, session.result,
                                                        f"{type(exc).__name__}: {exc}")

    threads = [threading.Thread(target=run, args=(s,), daemon=True) for s in sessions]
    for thread in threads:
        thread.start()
    try:
        for thread in threads:
            while thread.is_alive():
                thread.join(0.1)
    except KeyboardInterrupt:
        stop.set()
        for thread in threads:
            thread.join(60)
    for session in sessions:
        res = session.result
        res.variants["A"]["host"] = res.variants["B"]["host"] = session.host.host
    return sorted((results[s.host.host] for s in sessions if s.host.host in results),
                  key=lambda c: c.host)


def ab_command_on_cluster(va: Any, vb: Any, settings: ABSettings, opts: dict[str, Any],
                          progress: Any, warnings: list[str]) -> int:
    """``steadybench ab --cluster``: run, print each host's answer, write the JSON (one
    document per host under ``hosts``), and return the exit status as ``ab`` does."""
    import json
    import sys
    import textwrap

    import click

    from ..ab.report import quiet_line, summary_lines, to_document
    from ..ab.session import FAILED
    from ..errors import ConfigurationError
    from ..fileio import atomic_write_text
    from ..output.results_io import _finite
    from .options import open_fleet

    if opts.get("hosts_report"):
        raise ConfigurationError("--hosts-report is for run and exec: ab --every-host prints "
                                 "one verdict per host")
    if settings.duet:
        raise ConfigurationError("--duet with --cluster: a duet pins two cores of one machine; "
                                 "run it on the host itself")
    wait = float(opts.get("cluster_wait") or 10.0)
    with open_fleet(opts["cluster"], wait, opts) as client:
        if not opts["quiet"]:
            click.echo(f"ab on the fleet at {client.scheduler.address}: "
                       + ("one comparison per host" if opts.get("every_host") else "one host"),
                       err=True)
        comparisons = ab_on_fleet(client, va, vb, settings,
                                  every_host=bool(opts.get("every_host")), wait=wait,
                                  progress=progress)
    for comparison in comparisons:
        comparison.result.warnings.extend(warnings)
        if comparison.error:
            comparison.result.warnings.append(f"host {comparison.host}: {comparison.error}")
    if opts["json_path"]:
        document = {"hosts": [_host_document(c, to_document(c.result)) for c in comparisons]}
        text = json.dumps(_finite(document), indent=1, ensure_ascii=False) + "\n"
        if opts["json_path"] == "-":
            sys.stdout.write(text)
        else:
            atomic_write_text(opts["json_path"], text)
    if opts["json_path"] != "-":
        for comparison in comparisons:
            lines = ([quiet_line(comparison.result)] if opts["quiet"]
                     else summary_lines(comparison.result, verbose=opts.get("verbose", False)))
            click.echo(f"host {comparison.host}:")
            for line in lines:
                click.echo(textwrap.fill(line, 80, initial_indent="  ",
                                         subsequent_indent="    ", break_on_hyphens=False))
            for w in comparison.result.warnings:
                click.echo(f"warning: host {comparison.host}: {w}", err=True)
    verdicts = [c.result.verdict for c in comparisons]
    if any(c.result.interim for c in comparisons):
        from ..errors import Interrupted

        raise Interrupted()
    if FAILED in verdicts or any(c.error for c in comparisons):
        return 1
    if opts["fail_on"] == "slower" and "slower" in verdicts:
        return 1
    if opts["fail_on"] == "change" and ({"faster", "slower"} & set(verdicts)):
        return 1
    return 0


def _host_document(comparison: HostComparison, document: dict[str, Any]) -> dict[str, Any]:
    """One host's ``ab`` document, each round marked with the host that executed it."""
    for entry, rnd in zip(document["rounds"], comparison.result.rounds):
        hosts = {o.record.get("host") for o in rnd.outcomes.values()}
        entry["host"] = hosts.pop() if len(hosts) == 1 else sorted(map(str, hosts))
    return {"host": comparison.host, **document}
