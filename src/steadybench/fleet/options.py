"""The ``--cluster`` option, shared by every command that can run on a fleet.

Use it on a click command with :func:`cluster_options`; the command receives ``cluster``
(``None`` on one machine), ``every_host`` and ``cluster_wait``, and opens the fleet with
:func:`open_fleet`::

    @click.command()
    @cluster_options
    def evaluate(..., cluster, every_host, cluster_wait): ...
        if cluster:
            with open_fleet(cluster) as client:
                ...  # fleet.dispatch.dispatch(client, jobs, ...)

This module imports neither Dask nor anything heavy, so ``--help`` stays fast.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import click

from ..fileio import writable_path

if TYPE_CHECKING:
    from distributed import Client

#: option names this module adds, for commands that pass ``**opts`` on
OPTION_NAMES = ("cluster", "every_host", "cluster_wait", "hosts_report", "tls_ca_file",
                "tls_cert", "tls_key")


def cluster_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    """--cluster, --every-host, --cluster-wait, --hosts-report, --tls-ca-file/-cert/-key."""
    for name, text in (("--tls-key", "this client's private key, if not in --tls-cert"),
                       ("--tls-cert", "this client's certificate, signed by the fleet's CA"),
                       ("--tls-ca-file", "the fleet's CA certificate (default: Dask's "
                                         "configuration, distributed.comm.tls)")):
        fn = click.option(name, metavar="PEM", help=f"With --cluster over TLS: {text}.")(fn)
    fn = click.option(
        "--cluster-wait", type=click.FloatRange(min=0, max=86400), default=10.0,
        show_default=True, metavar="SECONDS",
        help="With --cluster: how long to wait for the scheduler to answer and for a host "
        "offering the 'benchmark' resource (at the start, and whenever none is left).")(fn)
    fn = click.option(
        "--hosts-report", metavar="FILE", type=click.Path(dir_okay=False),
        callback=writable_path,
        help="With --cluster: write the per-host HTML section (each case across hosts) to "
        "FILE.")(fn)
    fn = click.option(
        "--every-host", is_flag=True,
        help="With --cluster: run every case once on every host (the host becomes a level "
        "of the results) instead of once on any host.")(fn)
    fn = click.option(
        "--cluster", metavar="tcp://HOST:PORT|FILE",
        help="Run on a fleet: a Dask scheduler's address or scheduler file. Each case is one "
        "task on a host started with 'steadybench worker' (one benchmark per host at a "
        "time; docs/fleet.md).")(fn)
    return fn


def check_cluster_options(opts: dict[str, Any]) -> None:
    """--every-host needs --cluster; --preset belongs to the hosts on a fleet."""
    from ..errors import ConfigurationError

    for name in ("every_host", "hosts_report", "tls_ca_file", "tls_cert", "tls_key"):
        if opts.get(name) and not opts.get("cluster"):
            raise ConfigurationError(f"--{name.replace('_', '-')} needs --cluster")
    if opts.get("cluster") and opts.get("preset"):
        raise ConfigurationError("--preset with --cluster: a fleet host applies its own preset "
                                 "for its lifetime (steadybench worker --preset NAME)")
    if opts.get("cluster") and opts.get("in_process"):
        raise ConfigurationError("--in-process with --cluster: a fleet host always measures in "
                                 "its own worker processes")


@contextlib.contextmanager
def open_fleet(target: str, wait: float | None = None,
               opts: dict[str, Any] | None = None) -> Iterator[Client]:
    """A connected client of the fleet ``target`` (closed afterwards), with the TLS files of
    ``opts`` (``tls_ca_file``, ``tls_cert``, ``tls_key``) or Dask's configured security; one
    line when Dask is not installed or the scheduler cannot be reached, and a warning when it
    is reached over plain TCP off this machine (:mod:`.security`)."""
    from ..errors import ConfigurationError

    try:
        from .connect import connect, scheduler_address
        from .security import TLSFiles, check_transport, configured_security
    except ImportError as exc:
        raise ConfigurationError(f"--cluster needs Dask distributed: pip install "
                                 f"'steadybench[fleet]' ({exc})") from None
    opts = opts or {}
    files = TLSFiles.from_options(opts.get("tls_ca_file"), opts.get("tls_cert"),
                                  opts.get("tls_key"))
    security = configured_security(files, "client")
    address = scheduler_address(target)
    warning = check_transport(address, "", security, insecure=True, role="client")
    if warning and not opts.get("quiet"):
        click.echo(warning, err=True)
    client = connect(target, max(1.0, wait if wait is not None else 10.0), security)
    try:
        yield client
    finally:
        with contextlib.suppress(Exception):
            client.close(timeout=5)


def run_manager(manager: Any, opts: dict[str, Any]) -> Any:
    """``manager.run()`` on this machine, or on the fleet ``opts["cluster"]`` names (then the
    per-host section is printed after the manager's own output, unless ``quiet``)."""
    if not opts.get("cluster"):
        return manager.run()
    from .suite import run_manager_on_fleet

    wait = float(opts.get("cluster_wait") or 10.0)
    with open_fleet(opts["cluster"], wait, opts) as client:
        results = run_manager_on_fleet(manager, client, every_host=bool(opts.get("every_host")),
                                       wait=wait)
    finish_hosts(results, opts)
    return results


def exec_on_cluster(commands: Any, param_sets: Any, runner: Any, settings: Any,
                    opts: dict[str, Any]) -> Any:
    """``exec``'s measurement on the fleet ``opts["cluster"]`` names (one task per parameter
    set, every command interleaved on its host); the per-host section is printed unless
    ``quiet``."""
    from .exec import exec_on_fleet

    wait = float(opts.get("cluster_wait") or 10.0)
    with open_fleet(opts["cluster"], wait, opts) as client:
        results = exec_on_fleet(client, list(commands), list(param_sets), runner, settings,
                                every_host=bool(opts.get("every_host")), wait=wait)
    finish_hosts(results, opts)
    return results


def finish_hosts(results: Any, opts: dict[str, Any]) -> None:
    """After a fleet run: the per-host breakdown into the results' context, the per-host
    section on the console (unless ``quiet``) and in ``--hosts-report``."""
    from .hosts import print_host_section, record_hosts

    record_hosts(results)
    if not opts.get("quiet"):
        print_host_section(results)
    if opts.get("hosts_report"):
        from .report import write_hosts_page

        write_hosts_page(results, opts["hosts_report"])
