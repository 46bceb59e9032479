"""Issue 27 item 8: a fleet worker listens only where its scheduler is, speaks Dask's TLS, and
refuses plain TCP off the loopback.

The worker listened on 0.0.0.0 even with a scheduler on 127.0.0.1, and any Dask client (or a
direct RPC) ran code on it. Here a throw-away CA (the ``openssl`` command) signs certificates
for a scheduler, two workers and a client; the authenticated client runs ``exec --cluster`` on
both hosts, and clients without a certificate, with one from another CA, or over plain TCP are
refused by the scheduler and by each worker at the TLS handshake.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import socket
import ssl
import subprocess
import sys
from pathlib import Path

import pytest

from fleet_cluster import child_env, local_fleet
from steadybench.cli import main
from steadybench.errors import ConfigurationError

pytest.importorskip("distributed")

pytestmark = pytest.mark.timeout(600)


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True, timeout=120)


def make_ca(folder: Path, parties: list[str], ca: str = "ca") -> None:
    """A CA (``ca.pem``) and, for each party, ``NAME.pem`` + ``NAME.key`` signed by it."""
    _openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", f"{ca}.key", "-out",
             f"{ca}.pem", "-days", "2", "-subj", f"/CN={ca}", cwd=folder)
    for name in parties:
        _openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", f"{name}.key", "-out",
                 f"{name}.csr", "-subj", f"/CN={name}", cwd=folder)
        _openssl("x509", "-req", "-in", f"{name}.csr", "-CA", f"{ca}.pem", "-CAkey",
                 f"{ca}.key", "-CAcreateserial", "-out", f"{name}.pem", "-days", "2",
                 cwd=folder)


def _listening(pid: int) -> set[str]:
    import psutil

    return {c.laddr.ip for c in psutil.Process(pid).net_connections(kind="inet")
            if c.status == psutil.CONN_LISTEN}


def _handshake(address: str, context: ssl.SSLContext) -> str:
    """A TLS handshake with the Dask endpoint ``tls://HOST:PORT`` followed by a read: ``"ok"``
    if the peer accepted us, else the error's name."""
    host, port = address.split("://")[1].rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=10) as raw:
        try:
            with context.wrap_socket(raw) as tls:
                tls.settimeout(10)
                tls.sendall(b"\0" * 8)
                data = tls.recv(1)  # TLS 1.3: the server's refusal arrives after the handshake
                return "ok" if data else "closed"
        except (ssl.SSLError, OSError) as exc:
            return type(exc).__name__


def _context(folder: Path, cert: str | None) -> ssl.SSLContext:
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE  # an attacker trusts whatever the server shows
    if cert:
        ctx.load_cert_chain(folder / f"{cert}.pem", folder / f"{cert}.key")
    return ctx


@pytest.mark.skipif(shutil.which("openssl") is None, reason="needs the openssl command")
def test_a_tls_fleet_refuses_unauthenticated_clients(tmp_path):
    from distributed.security import Security

    certs = tmp_path / "certs"
    certs.mkdir()
    make_ca(certs, ["scheduler", "worker", "client"])
    make_ca(certs, ["intruder"], ca="rogue")
    files = {name: str(certs / name) for name in ("ca", "scheduler", "worker", "client")}
    client_security = Security(tls_ca_file=files["ca"] + ".pem",
                               tls_client_cert=files["client"] + ".pem",
                               tls_client_key=files["client"] + ".key", require_encryption=True)
    with local_fleet(tmp_path / "fleet", "--protocol", "tls", "--tls-ca-file",
                     files["ca"] + ".pem", "--tls-cert", files["scheduler"] + ".pem",
                     "--tls-key", files["scheduler"] + ".key",
                     security=client_security) as fleet:
        assert fleet.address.startswith("tls://127.0.0.1:")
        for host in ("h1", "h2"):
            fleet.start_worker(host, tmp_path, "--tls-ca-file", files["ca"] + ".pem",
                               "--tls-cert", files["worker"] + ".pem", "--tls-key",
                               files["worker"] + ".key")
        fleet.wait_for_workers({"h1", "h2"})
        workers = list(fleet.worker_names())
        assert all(w.startswith("tls://127.0.0.1:") for w in workers)
        for worker in fleet.workers.values():
            assert _listening(worker.proc.pid) == {"127.0.0.1"}, worker.log.read_text()

        # the authenticated client measures on both hosts
        done = subprocess.run(
            [sys.executable, "-m", "steadybench", "exec", "-q", "--cluster",
             str(fleet.scheduler_file), "--every-host", "--tls-ca-file", files["ca"] + ".pem",
             "--tls-cert", files["client"] + ".pem", "--tls-key", files["client"] + ".key",
             "--runs", "2", "--no-correction", "--json", str(tmp_path / "r.json"), "--",
             "true"], env=child_env(XDG_STATE_HOME=str(tmp_path / "client-state")),
            capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        hosts = {c["extra"]["host"] for c in
                 json.loads((tmp_path / "r.json").read_text())["benchmarks"]}
        assert hosts == {"h1", "h2"}

        # anyone else is refused at the scheduler and at each worker
        for endpoint in [fleet.address, *workers]:
            assert _handshake(endpoint, _context(certs, "client")) == "ok"
            assert _handshake(endpoint, _context(certs, None)) != "ok"
            assert _handshake(endpoint, _context(certs, "intruder")) != "ok"
            host, port = endpoint.split("://")[1].rsplit(":", 1)
            with socket.create_connection((host, int(port)), timeout=10) as plain:
                plain.settimeout(10)
                plain.sendall(b"\x00" * 64)  # a Dask message over plain TCP
                with contextlib.suppress(ConnectionResetError):  # reset: refused too
                    assert plain.recv(1024)[:1] in (b"", b"\x15", b"\x16")  # closed, or TLS

        # the steadybench client without certificates: one line, nothing run
        refused = subprocess.run(
            [sys.executable, "-m", "steadybench", "exec", "--cluster",
             str(fleet.scheduler_file), "--runs", "1", "--", "true"],
            env=child_env(XDG_STATE_HOME=str(tmp_path / "client-state")),
            capture_output=True, text=True, timeout=120)
        assert refused.returncode == 2 and "speaks TLS" in refused.stderr
        assert "Traceback" not in refused.stderr
        # and Dask's own client with another CA's certificate
        from distributed import Client

        rogue = Security(tls_ca_file=str(certs / "rogue.pem"),
                         tls_client_cert=str(certs / "intruder.pem"),
                         tls_client_key=str(certs / "intruder.key"), require_encryption=True)
        with pytest.raises(Exception, match="certificate|TLS|closed|timed out"):
            Client(fleet.address, timeout=5, set_as_default=False, security=rogue)


def test_a_plain_worker_listens_only_on_the_loopback(tmp_path):
    """With a scheduler on 127.0.0.1 the worker listened on 0.0.0.0."""
    with local_fleet(tmp_path / "fleet") as fleet:
        worker = fleet.start_worker("h1", tmp_path)
        fleet.wait_for_workers({"h1"})
        assert _listening(worker.proc.pid) == {"127.0.0.1"}
        assert list(fleet.worker_names())[0].startswith("tcp://127.0.0.1:")


def test_the_workers_read_never_miss_a_registered_worker(tmp_path):
    """Issue 27: right after the worker was seen, the next read listed none. The client's
    periodic refresh of its cached identity (which asks for no workers) overwrote the cache
    between ``scheduler_info(n_workers=-1)``'s refresh and its return. A refresh every 2 ms
    makes that overlap frequent; every read asks the scheduler directly and sees the worker."""
    import dask

    from steadybench.fleet.connect import benchmark_hosts, scheduler_workers

    with local_fleet(tmp_path / "fleet") as fleet:
        fleet.start_worker("h1", tmp_path)
        fleet.wait_for_workers({"h1"})
        with dask.config.set({"distributed.client.scheduler-info-interval": "2ms"}):
            from distributed import Client

            client = Client(fleet.address, timeout=30, set_as_default=False)
        try:
            reads = [len(scheduler_workers(client)) for _ in range(300)]
            assert reads == [1] * 300, reads.count(0)
            assert [h.host for h in benchmark_hosts(client, describe=False)] == ["h1"]
        finally:
            client.close(timeout=5)


@pytest.mark.parametrize("args, message", [
    (["tcp://192.0.2.7:8786"], "refusing to serve tcp://192.0.2.7:8786 over plain TCP"),
    (["tcp://127.0.0.1:8786", "--host", "0.0.0.0"], "over plain TCP from 0.0.0.0"),
    (["tls://127.0.0.1:8786"], "speaks TLS"),
    (["tcp://127.0.0.1:8786", "--tls-ca-file", "/nonexistent", "--tls-cert", __file__],
     "--tls-ca-file /nonexistent"),
    (["tcp://127.0.0.1:8786", "--tls-cert", __file__], "needs both --tls-ca-file"),
])
def test_worker_refuses_an_open_or_broken_transport(args, message, capsys):
    code = main(["worker", *args, "--connect-timeout", "0.5"])
    err = capsys.readouterr().err
    assert code == 2 and message in err, err
    assert len(err.strip().splitlines()) == 1


def test_insecure_worker_is_warned_about(capsys):
    code = main(["worker", "tcp://192.0.2.7:8786", "--insecure", "--connect-timeout", "0.5"])
    err = capsys.readouterr().err
    assert code == 2  # nothing answers at the documentation address
    assert err.startswith("warning: this worker serves tcp://192.0.2.7:8786 over plain TCP")


def test_listen_host_and_loopback():
    from steadybench.fleet.security import check_transport, is_loopback, listen_host

    assert listen_host("tcp://127.0.0.1:8786") == "127.0.0.1"
    assert listen_host("tcp://localhost:8786") == "127.0.0.1"
    assert is_loopback("127.0.0.2") and is_loopback("::1") and not is_loopback("192.0.2.7")
    assert not is_loopback("no-such-host.invalid")
    from distributed.security import Security

    plain = Security()
    assert check_transport("tcp://127.0.0.1:1", "127.0.0.1", plain, False) is None
    with pytest.raises(ConfigurationError):
        check_transport("tcp://127.0.0.1:1", "0.0.0.0", plain, False)
    assert "plain TCP" in check_transport("tcp://192.0.2.7:1", "", plain, True, "client")
