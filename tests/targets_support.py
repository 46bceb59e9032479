"""A real OpenSSH server on 127.0.0.1 and a stand-in ``adb``, for the remote-target tests.

:func:`start_sshd` runs ``/usr/sbin/sshd -D`` (Debian's openssh-server, which ``.ci/run``
installs) on a free port of 127.0.0.1 with a host key and a user key generated for the test, an
``authorized_keys`` file of its own, ``UsePAM no`` and ``StrictModes no``, as the user running
the tests (root or not). It is ready when it has logged "Server listening" (read from its
standard error; no fixed sleep). The client side is an ``ssh_config`` file, given to steadybench
through ``STEADYBENCH_SSH_CONFIG``: the generated key, a ``known_hosts`` holding the generated
host key, strict host key checking.

``tests/bin/adb`` is the stand-in ``adb``: see its header.
"""

from __future__ import annotations

import getpass
import os
import select
import shutil
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

SSHD = "/usr/sbin/sshd"
FAKE_ADB = Path(__file__).parent / "bin" / "adb"


@dataclass
class SshServer:
    proc: subprocess.Popen
    port: int
    user: str
    config: Path  # the client's ssh_config
    drain: subprocess.Popen | None = None  # reads sshd's log

    def url(self, root: Path | None = None, **options: str) -> str:
        query = {**({"root": str(root)} if root else {}), **options}
        text = "&".join(f"{k}={v}" for k, v in query.items())
        return f"ssh://{self.user}@127.0.0.1:{self.port}" + (f"?{text}" if text else "")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.drain is not None:  # sessions still open keep its pipe: end it
            self.drain.kill()
            self.drain.wait()


def fake_clock_date(bin_dir: Path, clock: Path) -> Path:
    """A ``date`` that, while the file ``clock`` exists, answers ``+%s%N`` with the number in
    it and adds the step written on its second line (a clock the test controls: runs then last
    exactly one step); otherwise the real ``date``."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    script = bin_dir / "date"
    script.write_text(
        "#!/bin/sh\n"
        f"c={clock}\n"
        'if [ "$1" = "+%s%N" ] && [ -f "$c" ]; then\n'
        '  { read -r now; read -r step; } < "$c"\n'
        '  echo "$now"; printf \'%s\\n%s\\n\' $((now + step)) "$step" > "$c"; exit 0\n'
        "fi\n"
        'exec /bin/date "$@"\n')
    script.chmod(0o755)
    return script


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def why_no_sshd() -> str | None:
    """Why an sshd cannot be started here, or None."""
    if not os.path.exists(SSHD):
        return f"{SSHD} is not installed (Debian: openssh-server)"
    for tool in ("ssh", "ssh-keygen"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed (Debian: openssh-client)"
    return None


def start_sshd(folder: Path, ready_within: float = 30.0) -> SshServer:
    """Start sshd (see the module docstring); raise RuntimeError with its log on failure."""
    folder.mkdir(parents=True, exist_ok=True)
    os.chmod(folder, 0o700)
    host_key, user_key = folder / "host_ed25519", folder / "id_ed25519"
    for key in (host_key, user_key):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)],
                       check=True, stdin=subprocess.DEVNULL, capture_output=True)
    (folder / "authorized_keys").write_text((folder / "id_ed25519.pub").read_text())
    port = free_port()
    user = getpass.getuser()
    if os.geteuid() == 0:  # privilege separation wants its empty folder
        os.makedirs("/run/sshd", mode=0o755, exist_ok=True)
    server_config = folder / "sshd_config"
    server_config.write_text(
        f"Port {port}\nListenAddress 127.0.0.1\nHostKey {host_key}\n"
        f"PidFile {folder / 'sshd.pid'}\nAuthorizedKeysFile {folder / 'authorized_keys'}\n"
        "UsePAM no\nStrictModes no\nPasswordAuthentication no\n"
        "KbdInteractiveAuthentication no\nPubkeyAuthentication yes\n"
        "PermitRootLogin prohibit-password\nLogLevel INFO\nMaxStartups 100\n"
        f"MaxSessions 100\nSetEnv PATH={folder / 'bin'}:/usr/local/bin:/usr/bin:/bin\n")
    fake_clock_date(folder / "bin", folder / "clock")
    host_pub = (folder / "host_ed25519.pub").read_text().split()
    (folder / "known_hosts").write_text(f"[127.0.0.1]:{port} {host_pub[0]} {host_pub[1]}\n")
    client = folder / "ssh_config"
    client.write_text(f"Host *\n  IdentityFile {user_key}\n  IdentitiesOnly yes\n"
                      f"  UserKnownHostsFile {folder / 'known_hosts'}\n"
                      "  StrictHostKeyChecking yes\n  GlobalKnownHostsFile /dev/null\n")
    proc = subprocess.Popen([SSHD, "-D", "-e", "-f", str(server_config)],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    assert proc.stderr is not None
    log = b""
    deadline = time.monotonic() + ready_within
    while b"Server listening" not in log:
        left = deadline - time.monotonic()
        ready, _, _ = select.select([proc.stderr], [], [], max(left, 0))
        chunk = os.read(proc.stderr.fileno(), 4096) if ready else b""
        if not chunk:
            proc.kill()
            proc.wait()
            raise RuntimeError(f"sshd did not start: {log.decode(errors='replace').strip()}")
        log += chunk
    # keep draining its log so it never blocks on a full pipe
    drain = subprocess.Popen(["cat"], stdin=proc.stderr, stdout=subprocess.DEVNULL)
    proc.stderr.close()
    return SshServer(proc, port, user, client, drain)
