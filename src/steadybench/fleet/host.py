"""The host side of a fleet: who a Dask worker is, as a worker plugin.

``steadybench worker`` installs :class:`HostPlugin` on its Dask worker. The plugin holds the
host's id (the Dask worker's name: by default the machine's host name, or ``--host-id`` when
several workers share one machine, as in tests) and the machine root it reads (``--root``), and
publishes the host's fingerprint (:func:`steadybench.environment.capture_environment` and the
machine-control fingerprint) to the scheduler's metadata under
:data:`steadybench.fleet.METADATA_KEY` once the worker is registered, so a client can list
the hosts and what they are before it submits anything.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from distributed.diagnostics.plugin import WorkerPlugin

from . import METADATA_KEY, PLUGIN_NAME

if TYPE_CHECKING:
    from distributed import Worker


def host_description(host_id: str, root: str = "/",
                     preset: dict[str, Any] | None = None) -> dict[str, Any]:
    """What a host reports: its id, the environment (Python, CPU, kernel...), the machine
    fingerprint read under ``root``, and the preset it holds applied (its record)."""
    from ..environment import capture_environment, machine_fingerprint

    env = capture_environment()
    env["fingerprint"] = machine_fingerprint(root)
    return {"host": host_id, "environment": env, "root": root, "preset": preset}


class HostPlugin(WorkerPlugin):
    """Names the host on its worker (tasks read it with :func:`current_host`)."""

    name = PLUGIN_NAME

    def __init__(self, host_id: str, root: str = "/",
                 preset: dict[str, Any] | None = None) -> None:
        self.host_id = host_id
        self.root = root
        self.preset = preset

    async def publish(self, worker: Worker) -> None:
        """Report the host's description to the scheduler (once the worker is registered)."""
        description = host_description(self.host_id, self.root, self.preset)
        await worker.scheduler.set_metadata(keys=[*METADATA_KEY, self.host_id],
                                            value=description)


def current_host() -> tuple[str, str]:
    """(host id, worker address) of the Dask worker running the calling task. A worker started
    without ``steadybench worker`` (no plugin) is named by its Dask name or address."""
    from distributed import get_worker

    worker = get_worker()
    plugin = worker.plugins.get(PLUGIN_NAME)
    host = getattr(plugin, "host_id", None) or str(worker.name or worker.address)
    return host, worker.address
