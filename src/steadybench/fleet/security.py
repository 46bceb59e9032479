"""Who may talk to a fleet: where a worker listens, and Dask's TLS between every party.

A fleet host runs whatever Python a Dask client of its scheduler sends (that is what a Dask
worker is for), often as root with the machine tuned. So (docs/fleet.md, "Trust"):

* **where a worker listens.** Dask's worker binds every interface (``0.0.0.0``) unless given a
  host. :func:`listen_host` picks the one interface that reaches the scheduler (``127.0.0.1``
  for a scheduler on the loopback), so a worker is reachable only where its scheduler is;
* **who may connect.** With TLS (Dask's :class:`distributed.security.Security`: a CA, and a
  certificate and key for the scheduler, each worker and each client) every connection is
  mutually authenticated: a peer without a certificate signed by the fleet's CA is refused at
  the TLS handshake, at the scheduler and at each worker. The files come from
  ``--tls-ca-file/--tls-cert/--tls-key`` (the names ``dask worker`` uses), or else from Dask's
  own configuration (``distributed.comm.tls.*``, e.g. ``DASK_DISTRIBUTED__COMM__TLS__CA_FILE``);
* **no plain TCP across a network.** :func:`check_transport` refuses a worker whose scheduler
  (or listening host) is not on the loopback unless the connection is TLS, or the user said
  ``--insecure`` (then a warning says what anyone on the network can do). A client only warns:
  it runs nothing for others.
"""

from __future__ import annotations

import ipaddress
import os
import socket
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from ..errors import ConfigurationError

if TYPE_CHECKING:
    from distributed.security import Security

#: the text of the warnings for plain TCP off the loopback
INSECURE_WORKER = ("warning: this worker serves {address} over plain TCP: anyone who can reach "
                   "the scheduler or this worker can run any code here{as_root} (docs/fleet.md, "
                   "'Trust'; use --tls-ca-file/--tls-cert/--tls-key)")
INSECURE_CLIENT = ("warning: the fleet at {address} is reached over plain TCP: anyone on the "
                   "network can run code on its hosts (docs/fleet.md, 'Trust')")


@dataclass(frozen=True)
class TLSFiles:
    """The PEM files of one party of the fleet: the CA that signs every party's certificate,
    and this party's certificate and private key (``key`` None: in the certificate's file)."""

    ca_file: str
    cert: str
    key: str | None = None

    @classmethod
    def from_options(cls, ca_file: str | None, cert: str | None,
                     key: str | None) -> TLSFiles | None:
        """The files given on the command line, checked (all readable; a CA and a certificate
        together), or None when none was given."""
        given = {"--tls-ca-file": ca_file, "--tls-cert": cert, "--tls-key": key}
        if not any(given.values()):
            return None
        if not ca_file or not cert:
            raise ConfigurationError("TLS needs both --tls-ca-file (the fleet's CA) and "
                                     "--tls-cert (this party's certificate; --tls-key if its "
                                     "key is in another file)")
        for option, path in given.items():
            if path and not os.access(path, os.R_OK):
                raise ConfigurationError(f"{option} {path}: cannot be read")
        return cls(ca_file, cert, key)

    def security(self, role: Literal["worker", "client"]) -> Security:
        """Dask's security object for ``role``: encryption required, peers verified against
        the CA (Dask's TLS contexts require a peer certificate both ways)."""
        from distributed.security import Security

        files = {f"tls_{role}_cert": self.cert, f"tls_{role}_key": self.key}
        return Security(tls_ca_file=self.ca_file, require_encryption=True, **files)


def configured_security(files: TLSFiles | None, role: Literal["worker", "client"]) -> Security:
    """The files' security, or else Dask's configured one (``distributed.comm.tls.*``)."""
    if files is not None:
        return files.security(role)
    from distributed.security import Security

    return Security()


def uses_tls(address: str, security: Security) -> bool:
    """Whether a connection to ``address`` is TLS with a CA to verify peers against."""
    return address.startswith("tls://") and bool(security.tls_ca_file)


def address_host(address: str) -> str:
    """The host part of a Dask address (``tcp://10.0.0.5:8786`` → ``10.0.0.5``)."""
    from distributed.comm.addressing import get_address_host

    return get_address_host(address)


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a name or an IP address) is on the loopback: every address it
    resolves to is (an unresolvable name is not)."""
    if not host or host == "localhost":
        return bool(host)
    try:
        infos = socket.getaddrinfo(host, None)
    except OSError:
        return False
    addresses = {info[4][0] for info in infos}
    return bool(addresses) and all(ipaddress.ip_address(a.split("%")[0]).is_loopback
                                   for a in addresses)


def listen_host(scheduler: str) -> str:
    """The local address of the interface that reaches the scheduler: where a worker should
    listen (a UDP socket "connected" to the scheduler sends nothing; its own address is the
    one the kernel's routing picks)."""
    host = address_host(scheduler)
    if is_loopback(host):
        return "::1" if ":" in host else "127.0.0.1"
    try:
        infos = socket.getaddrinfo(host, 9, type=socket.SOCK_DGRAM)
        family, _, _, _, target = infos[0]
        with socket.socket(family, socket.SOCK_DGRAM) as probe:
            probe.connect(target)
            return str(probe.getsockname()[0])
    except OSError as exc:
        raise ConfigurationError(f"cannot find the interface that reaches the scheduler "
                                 f"{host} ({exc.strerror or exc}); give --host") from None


def check_transport(scheduler: str, host: str, security: Security, insecure: bool,
                    role: Literal["worker", "client"] = "worker") -> str | None:
    """Refuse (a worker) or warn about (a client) plain TCP off the loopback; the warning line
    to print, or None when the connection is TLS or stays on this machine. A ``tls://``
    scheduler without TLS files is a one-line error (Dask would fail inside)."""
    if scheduler.startswith("tls://") and not (security.tls_ca_file and (
            security.tls_worker_cert if role == "worker" else security.tls_client_cert)):
        raise ConfigurationError(
            f"the scheduler at {scheduler} speaks TLS: give the fleet's CA and this {role}'s "
            "certificate (--tls-ca-file, --tls-cert, --tls-key) or Dask's configuration "
            "(distributed.comm.tls; docs/fleet.md)")
    if uses_tls(scheduler, security):
        return None
    local = is_loopback(address_host(scheduler)) and (role == "client" or is_loopback(host))
    if local:
        return None
    if role == "client":
        return INSECURE_CLIENT.format(address=scheduler)
    if not insecure:
        raise ConfigurationError(
            f"refusing to serve {scheduler} over plain TCP from {host}: anyone who can reach it "
            "could run code on this machine. Give the fleet's TLS files (--tls-ca-file, "
            "--tls-cert, --tls-key; docs/fleet.md) or, on a network you trust, --insecure")
    as_root = " as root" if hasattr(os, "geteuid") and os.geteuid() == 0 else ""
    return INSECURE_WORKER.format(address=scheduler, as_root=as_root)
