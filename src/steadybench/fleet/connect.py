"""Reaching a fleet: a Dask scheduler by address or scheduler file, and its benchmark hosts.

Every failure here is one line (:class:`FleetError`): an address that is not one, a scheduler
file that cannot be read, a scheduler that does not answer within the time-out, and a fleet
where no worker offers the ``benchmark`` resource (a task needing it would otherwise wait for
ever: Dask queues tasks whose resources no worker has, it does not reject them).
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import SteadybenchError
from . import METADATA_KEY, RESOURCE

if TYPE_CHECKING:
    from distributed import Client

#: seconds to wait for the scheduler to answer
CONNECT_TIMEOUT_S = 10.0
#: seconds to wait for a first worker offering the benchmark resource
WORKER_WAIT_S = 10.0


class FleetError(SteadybenchError):
    """The fleet cannot be used: the scheduler is unreachable or no host can take a case."""


@dataclass(frozen=True)
class Host:
    """One Dask worker offering the ``benchmark`` resource: one host of the fleet."""

    host: str
    address: str
    benchmark_slots: float
    nthreads: int
    #: what the host reported (:func:`steadybench.fleet.host.host_description`), if it did
    description: dict[str, Any] = field(default_factory=dict, compare=False)


def scheduler_address(target: str) -> str:
    """The scheduler address of ``target``: ``tcp://HOST:PORT`` (or another Dask protocol) as
    given, or the ``address`` in a Dask scheduler file (JSON, as written by
    ``dask scheduler --scheduler-file``)."""
    if "://" in target:
        return target
    if os.path.exists(target):
        try:
            with open(target, encoding="utf-8") as fh:
                info = json.load(fh)
        except (OSError, ValueError) as exc:
            raise FleetError(f"--cluster {target}: not a readable Dask scheduler file "
                             f"({type(exc).__name__}: {exc})") from None
        address = info.get("address") if isinstance(info, dict) else None
        if not isinstance(address, str) or "://" not in address:
            raise FleetError(f"--cluster {target}: the scheduler file names no address")
        return address
    if ":" in target and not target.endswith(":"):
        return f"tcp://{target}"
    raise FleetError(f"--cluster {target}: neither a scheduler address (tcp://HOST:PORT) nor "
                     "an existing scheduler file")


def connect(target: str, timeout: float = CONNECT_TIMEOUT_S, security: Any = None) -> Client:
    """A Dask client of the scheduler ``target`` names (``security``: Dask's
    :class:`~distributed.security.Security`, by default Dask's configured one); one line when
    it cannot be reached."""
    from distributed import Client

    address = scheduler_address(target)
    try:
        return Client(address, timeout=timeout, set_as_default=False, security=security)
    except (OSError, TimeoutError, TypeError, ValueError) as exc:  # TypeError: TLS settings
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise FleetError(f"cannot reach the Dask scheduler at {address} within {timeout:g} s "
                         f"({reason})") from None


def scheduler_workers(client: Client) -> dict[str, dict[str, Any]]:
    """The scheduler's workers now (address -> what it reports), asked of the scheduler itself.

    Not ``client.scheduler_info(n_workers=-1)``: that refreshes the client's cached identity
    and then returns the cache, which the client's own periodic refresh (every
    ``distributed.client.scheduler-info-interval``, asking for no workers) may overwrite in
    between; under load it did, and a fleet with a worker read as one without (issue 27)."""
    info = client.sync(client.scheduler.identity, n_workers=-1)
    return dict(info.get("workers") or {})


def benchmark_hosts(client: Client, describe: bool = True) -> list[Host]:
    """The workers that offer the ``benchmark`` resource, with what each reported
    (``describe=False``: without, for the frequent checks while a run waits)."""
    workers = scheduler_workers(client)
    described: dict[str, Any] = {}
    if describe:
        try:
            described = client.get_metadata(list(METADATA_KEY), default={}) or {}
        except Exception:  # an old scheduler without metadata: hosts are still usable
            described = {}
    hosts = []
    for address, worker in sorted(workers.items()):
        slots = float((worker.get("resources") or {}).get(RESOURCE, 0))
        if slots <= 0:
            continue
        name = str(worker.get("name") or address)
        hosts.append(Host(host=name, address=address, benchmark_slots=slots,
                          nthreads=int(worker.get("nthreads") or 1),
                          description=dict(described.get(name) or {})))
    return hosts


def require_hosts(client: Client, wait: float = WORKER_WAIT_S) -> list[Host]:
    """The benchmark hosts, waiting up to ``wait`` seconds for a first one; a FleetError naming
    what the scheduler has when there is none (never an endless wait)."""
    deadline = time.monotonic() + wait
    while True:
        hosts = benchmark_hosts(client, describe=False)
        if hosts or time.monotonic() >= deadline:
            break
        time.sleep(0.2)
    if not hosts:
        workers = scheduler_workers(client)
        address = client.scheduler.address
        have = (f"its {len(workers)} worker(s) offer no {RESOURCE!r} resource"
                if workers else "it has no workers")
        raise FleetError(f"no host can take a benchmark at {address}: {have} (start one per "
                         f"host with: steadybench worker {address})")
    return benchmark_hosts(client)
