"""``steadybench worker SCHEDULER``: one fleet host, a Dask worker configured for benchmarks.

One process, one thread, and the resource ``benchmark=1``: the scheduler gives this host one
case at a time (docs/fleet.md). The case itself runs in the core's spawned worker processes
(:mod:`steadybench.fleet.task`). ``--preset`` applies machine countermeasures for the worker's
whole lifetime through the system layer (tuning journal, tuning lock, signal guard) and
restores them exactly when the worker stops (Ctrl-C, SIGTERM, SIGHUP, the scheduler going
away); after a hard kill, ``steadybench system reset`` restores them from the journal. The
host's id and fingerprint are reported to the scheduler (:mod:`steadybench.fleet.host`).
"""

from __future__ import annotations

import contextlib
import signal
import socket
from typing import Any

import click

from ..errors import ConfigurationError
from .common import pass_root
from .validate import harden, not_empty

#: signals that stop the worker (and restore the preset)
STOP_SIGNALS = ("SIGINT", "SIGTERM", "SIGHUP")


async def serve(address: str, host_id: str, root: str, preset: dict[str, Any] | None,
                timeout: float, on_ready: Any, host: str | None = None,
                security: Any = None) -> int | None:
    """Run the Dask worker until a stop signal or the scheduler's end; the signal number."""
    import asyncio

    from distributed import Worker

    from ..fleet import RESOURCE
    from ..fleet.host import HostPlugin
    from ..fleet.task import core_worker_processes

    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    received: list[int] = []

    def on_signal(signum: int) -> None:
        received.append(signum)
        stop.set()

    for name in STOP_SIGNALS:
        loop.add_signal_handler(getattr(signal, name), on_signal, getattr(signal, name))
    plugin = HostPlugin(host_id, root, preset)
    worker = Worker(address, nthreads=1, resources={RESOURCE: 1}, name=host_id,
                    plugins={plugin}, death_timeout=timeout, dashboard=False, host=host,
                    security=security)
    try:
        await asyncio.wait_for(worker.start(), timeout)
    except (OSError, TimeoutError, RuntimeError) as exc:
        with contextlib.suppress(Exception):
            await worker.close(timeout=2, executor_wait=False)
        cause = exc.__cause__ or exc
        reason = str(cause).splitlines()[0] if str(cause) else type(cause).__name__
        if isinstance(exc, TimeoutError):
            reason = "no answer"
        if "name taken" in reason:
            raise ConfigurationError(f"the scheduler at {address} already has a worker named "
                                     f"{host_id!r}: give this one another --host-id") from None
        if isinstance(exc, RuntimeError) and not isinstance(cause, (OSError, TimeoutError)):
            raise ConfigurationError(f"the Dask worker did not start ({reason})") from None
        raise ConfigurationError(f"cannot reach the Dask scheduler at {address} within "
                                 f"{timeout:g} s ({reason})") from None
    await plugin.publish(worker)
    on_ready(worker)
    finished = asyncio.ensure_future(worker.finished())
    stopping = asyncio.ensure_future(stop.wait())
    await asyncio.wait({finished, stopping}, return_when=asyncio.FIRST_COMPLETED)
    if stop.is_set():
        # The case running here is abandoned (the scheduler re-runs it on another host; the
        # executions that ended are on the scheduler already): its processes end with us,
        # before the close and after it (the task's thread may have started another).
        _kill_core_workers(core_worker_processes())
        await worker.close(timeout=5, executor_wait=False, reason="steadybench worker stopped")
        _kill_core_workers(core_worker_processes())
    stopping.cancel()
    return received[0] if received else None


def _kill_core_workers(pids: list[int]) -> None:
    import os

    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signal.SIGKILL)


@click.command("worker")
@click.argument("scheduler")
@click.option("--host-id", metavar="ID", callback=not_empty,
              help="This host's id in results (the Dask worker name). Default: the machine's "
              "host name; give distinct ids to several workers on one machine (tests).")
@click.option("--preset", metavar="NAME|FILE", callback=not_empty,
              help="Machine countermeasures applied for the worker's lifetime and restored "
              "exactly when it stops (docs/machine-control.md).")
@click.option("--wait-lock", is_flag=True,
              help="When another tuned run holds the machine's tuning lock, wait for it.")
@click.option("--connect-timeout", type=click.FloatRange(min=0.1, max=3600), default=10.0,
              show_default=True, help="Seconds to wait for the scheduler.")
@click.option("--host", "listen", metavar="HOST", callback=not_empty,
              help="The address to listen on. Default: the interface that reaches the "
              "scheduler (127.0.0.1 for a scheduler on this machine), never every interface.")
@click.option("--tls-ca-file", metavar="PEM", callback=not_empty,
              help="The fleet's CA certificate: peers (scheduler, clients) must present a "
              "certificate it signed (as dask worker's option). Default: Dask's configuration "
              "(distributed.comm.tls).")
@click.option("--tls-cert", metavar="PEM", callback=not_empty,
              help="This worker's certificate (signed by the CA).")
@click.option("--tls-key", metavar="PEM", callback=not_empty,
              help="This worker's private key, if not in the --tls-cert file.")
@click.option("--insecure", is_flag=True,
              help="Serve a scheduler off this machine over plain TCP (refused without it): "
              "anyone who can reach the scheduler or this worker can run code here.")
@click.option("-v", "--verbose", is_flag=True, help="Show Dask's own log (INFO and above).")
@pass_root
def worker_cmd(scheduler: str, host_id: str | None, preset: str | None, wait_lock: bool,
               connect_timeout: float, listen: str | None, tls_ca_file: str | None,
               tls_cert: str | None, tls_key: str | None, insecure: bool, verbose: bool,
               root: str) -> None:
    """Serve benchmarks to a fleet: a Dask worker of SCHEDULER (tcp://HOST:PORT,
    tls://HOST:PORT or a scheduler file) with one thread and the resource benchmark=1, one case
    at a time. It listens only on the interface that reaches the scheduler; off this machine
    it needs TLS (--tls-ca-file/--tls-cert/--tls-key) or --insecure (docs/fleet.md, Trust)."""
    import asyncio

    try:
        from ..fleet.connect import scheduler_address
    except ImportError as exc:
        raise ConfigurationError(f"steadybench worker needs Dask distributed: pip install "
                                 f"'steadybench[fleet]' ({exc})") from None
    import logging

    import distributed  # noqa: F401 - its loggers exist from here on

    level = logging.INFO if verbose else logging.WARNING
    for name in ["distributed", *logging.root.manager.loggerDict]:
        if name.startswith("distributed"):
            logging.getLogger(name).setLevel(level)
    from ..fleet.security import TLSFiles, check_transport, configured_security, listen_host

    address = scheduler_address(scheduler)
    files = TLSFiles.from_options(tls_ca_file, tls_cert, tls_key)
    if files is not None and not address.startswith("tls://"):
        raise ConfigurationError(f"--tls-* given but the scheduler is {address}: start the "
                                 "scheduler with TLS too (its address is then tls://...)")
    security = configured_security(files, "worker")
    listen = listen or listen_host(address)
    warning = check_transport(address, listen, security, insecure)
    if warning:
        click.echo(warning, err=True)
    host_id = host_id or socket.gethostname()

    def ready(worker: Any) -> None:
        click.echo(f"worker {host_id} at {worker.address}: serving {address} "
                   "(benchmark=1, one thread)", err=True)

    with contextlib.ExitStack() as stack:
        record = None
        if preset:
            record = _apply_preset(stack, preset, root, wait_lock)
        saved = {name: signal.getsignal(getattr(signal, name)) for name in STOP_SIGNALS}
        try:
            signum = asyncio.run(serve(address, host_id, root, record, connect_timeout, ready,
                                       listen, security))
        finally:
            for name, handler in saved.items():
                if handler is not None:
                    signal.signal(getattr(signal, name), handler)
    if record is not None:
        click.echo(f"preset {record['preset']}: settings restored", err=True)
    if signum == signal.SIGINT:
        raise KeyboardInterrupt
    if signum is not None and signum != signal.SIGINT:
        import os

        os.kill(os.getpid(), signum)  # the command line's own handler: exit 143


def _apply_preset(stack: contextlib.ExitStack, preset: str, root: str,
                  wait_lock: bool) -> dict[str, Any]:
    """Apply the preset for the worker's lifetime (restored when ``stack`` closes), holding
    the machine's tuning lock while it tunes."""
    from ..system.lock import TuningLock
    from ..system.presets import build_preset, changes_machine, machine_session
    from ..system.sysfs import SysRoot

    plan = build_preset(preset, root)
    if changes_machine(plan.record):
        lock = TuningLock(SysRoot(root))
        lock.acquire(wait_lock, on_wait=lambda line: click.echo(line, err=True))
        stack.callback(lock.release)
    session = stack.enter_context(machine_session(preset, root))
    record = session.record
    applied = ", ".join(a["name"] for a in record["applied"]) or "none"
    click.echo(f"preset {record['preset']}: applied {applied} for the worker's lifetime",
               err=True)
    for skip in record["skipped"]:
        click.echo(f"  skipped {skip['name']}: {skip['reason']}", err=True)
    return {"preset": record["preset"], "applied": record["applied"],
            "skipped": record["skipped"]}


commands = [harden(worker_cmd)]
