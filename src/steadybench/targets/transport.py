"""Running shell code on a target: the system ``ssh`` client or the ``adb`` tool.

Both transports do one thing: run a POSIX shell script on the device and hand back its output.
Every script is built by steadybench from fixed text and values quoted with
:func:`shlex.quote` (:func:`q`), so no file name, parameter or option reaches the remote shell
as code. Exit statuses and data travel *in band* (a marker line written by the script itself),
because ``adb shell`` before the shell protocol of Android 7.0 does not return the remote exit
status.

- **SSH** (:class:`SshTarget`): OpenSSH's client, with the user's configuration, keys and agent
  (``STEADYBENCH_SSH_CONFIG`` names another ``ssh_config`` file, as ``ssh -F``). One master
  connection is opened per target (``ControlMaster``, socket in a private temporary folder) and
  every later command reuses it, so a command costs one round trip, not one handshake; the
  master is closed at exit (and ends by itself after a minute unused, should the process be
  killed). ``BatchMode`` is on: a missing key fails with one line instead of
  prompting.
- **adb** (:class:`AdbTarget`): ``adb [-s SERIAL] shell SCRIPT`` and ``adb push``; the device
  must be listed by ``adb devices`` as ``device`` (authorised). Targets adb 1.0.39 and later
  (platform-tools 26+) and Android 7.0 (API 24) and later, whose toybox provides ``od``,
  ``readlink -f``, ``taskset``, ``timeout`` and ``date +%s%N``; an older shell works where these
  tools exist.

Reads and writes of the device's files go through one long-lived shell per target
(:class:`RemoteShell`), so reading the hundred files of ``system show`` costs a hundred round
trips on an open channel, not a hundred connections.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import select
import shlex
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..errors import SystemControlError
from .spec import TargetSpec

#: seconds a request to the long-lived shell may take before the target is declared gone
ANSWER_TIMEOUT = 60.0
#: seconds to open a connection
CONNECT_TIMEOUT = 20
#: seconds an ssh master connection stays open unused (one left behind by a killed process
#: ends by itself; a target in use always has its shell open on it)
MASTER_IDLE_S = 60


class TargetError(SystemControlError):
    """The target cannot be reached or refused us (one line says why)."""


def q(value: str | os.PathLike[str]) -> str:
    """``value`` as one literal word of a POSIX shell command."""
    return shlex.quote(os.fspath(value))


@dataclass
class Completed:
    """What a script run with :meth:`Target.run` gave."""

    returncode: int
    stdout: bytes
    stderr: bytes

    @property
    def error_text(self) -> str:
        lines = [ln.strip() for ln in self.stderr.decode("utf-8", "replace").splitlines()
                 if ln.strip()]
        return " | ".join(lines[-3:])


class Target:
    """A device that runs shell scripts. Subclasses give :meth:`argv` and the error wording."""

    def __init__(self, spec: TargetSpec) -> None:
        self.spec = spec
        self._shell: RemoteShell | None = None
        self._tools: dict[str, bool] = {}
        self.closed = False
        #: the CPUs programs are pinned to (``taskset``), None: not pinned (:mod:`.sysroot`)
        self.pin: list[int] | None = None
        #: called before the connection closes (work folders removed on the device)
        self.on_close: list[Callable[[], None]] = []

    # ------------------------------------------------------------------ subclass API
    def argv(self, script: str) -> list[str]:
        """The host command that runs ``script`` with the device's ``sh``."""
        raise NotImplementedError

    def connect(self) -> None:
        """Make sure the device can be reached (raise :class:`TargetError` with why not)."""

    def explain(self, completed: Completed) -> str | None:
        """Why the transport (not the script) failed, or None when it did not."""
        return None

    def push(self, local: Path, remote: str) -> None:
        """Copy the local file ``local`` to the path ``remote`` on the device."""
        data = local.read_bytes()
        done = self.run(f"cat > {q(remote)} && echo ok", stdin=data)
        if done.stdout.strip() != b"ok":
            raise TargetError(f"{self.spec.address}: cannot copy {local} to {remote}: "
                              f"{done.error_text or 'failed'}")

    # ------------------------------------------------------------------ shared
    def run(self, script: str, *, stdin: bytes | None = None,
            timeout: float | None = ANSWER_TIMEOUT) -> Completed:
        """Run ``script`` on the device once (a new channel); transport failures raise."""
        self.connect()
        try:
            proc = subprocess.run(self.argv(script), input=stdin if stdin is not None else b"",
                                  capture_output=True, timeout=timeout, check=False)
        except subprocess.TimeoutExpired:
            raise TargetError(f"{self.spec.address}: no answer in {timeout:g} s") from None
        except OSError as exc:
            raise TargetError(f"{self.spec.address}: cannot start "
                              f"{self.argv('')[0]}: {exc.strerror or exc}") from None
        done = Completed(proc.returncode, proc.stdout, proc.stderr)
        why = self.explain(done)
        if why:
            raise TargetError(why)
        return done

    def shell(self) -> RemoteShell:
        """The long-lived shell of this target (opened on first use)."""
        if self.closed:
            raise TargetError(f"{self.spec.address}: connection already closed")
        if self._shell is None or not self._shell.alive:
            if self._shell is not None:  # abandoned after an interrupted request
                self._shell.close()
            self.connect()
            self._shell = RemoteShell(self)
        return self._shell

    def has(self, tool: str) -> bool:
        """Whether ``tool`` is on the device's PATH (asked once)."""
        if tool not in self._tools:
            status, _ = self.shell().request(f"command -v {q(tool)} >/dev/null 2>&1")
            self._tools[tool] = status == 0
        return self._tools[tool]

    def close(self) -> None:
        shell, self._shell = self._shell, None
        if shell is not None:
            shell.close()
        self.closed = True


class RemoteShell:
    """One ``sh`` on the device fed requests on its standard input.

    A request is shell code; after it the shell prints ``@@TOKEN STATUS`` on a line of its own,
    so the answer is everything before that line. The token is random per shell, and what
    steadybench asks for is written as hexadecimal (``od``) or plain text it controls, so a
    file's content cannot fake the marker.
    """

    def __init__(self, target: Target) -> None:
        self.target = target
        self.token = secrets.token_hex(8)
        self._err = tempfile.TemporaryFile()  # noqa: SIM115 - closed in close()
        try:
            self.proc = subprocess.Popen(target.argv("exec sh"), stdin=subprocess.PIPE,
                                         stdout=subprocess.PIPE, stderr=self._err,
                                         start_new_session=True)
        except OSError as exc:
            self._err.close()
            raise TargetError(f"{target.spec.address}: cannot start "
                              f"{target.argv('')[0]}: {exc.strerror or exc}") from None
        self._buffer = b""
        status, _ = self.request("true")
        if status != 0:
            raise TargetError(f"{target.spec.address}: the remote shell does not work")

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None

    def _gone(self) -> TargetError:
        self.proc.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(5)
        self._err.seek(0)
        text = self._err.read().decode("utf-8", "replace")
        done = Completed(self.proc.returncode if self.proc.returncode is not None else -1,
                         b"", text.encode())
        why = self.target.explain(done)
        return TargetError(why or f"{self.target.spec.address}: the connection closed"
                                  + (f" ({done.error_text})" if done.error_text else ""))

    def request(self, code: str, timeout: float = ANSWER_TIMEOUT) -> tuple[int, bytes]:
        """Run ``code`` in the shell; return (its exit status, its standard output).

        A request cut short (Ctrl-C, SIGTERM, a timeout) ends this shell: what it was doing
        might still answer later, so the next request opens a fresh one
        (:meth:`Target.shell`) rather than read a stale answer.
        """
        try:
            return self._request(code, timeout)
        except BaseException:
            self._abandon()
            raise

    def _abandon(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(5)

    def _request(self, code: str, timeout: float) -> tuple[int, bytes]:
        marker = f"@@{self.token} ".encode()
        line = f"{code}\nprintf '\\n@@%s %s\\n' {self.token} \"$?\"\n".encode()
        try:
            assert self.proc.stdin is not None
            self.proc.stdin.write(line)
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            raise self._gone() from None
        deadline = time.monotonic() + timeout
        out = self.proc.stdout
        assert out is not None
        fd = out.fileno()
        while True:
            at = self._buffer.find(b"\n" + marker)
            if at >= 0:
                end = self._buffer.find(b"\n", at + 1 + len(marker))
                if end >= 0:
                    body = self._buffer[:at]
                    status_text = self._buffer[at + 1 + len(marker):end]
                    self._buffer = self._buffer[end + 1:]
                    try:
                        return int(status_text), body
                    except ValueError:
                        raise TargetError(f"{self.target.spec.address}: garbled answer "
                                          f"{status_text[:40]!r}") from None
            left = deadline - time.monotonic()
            if left <= 0:
                raise TargetError(f"{self.target.spec.address}: no answer in {timeout:g} s")
            ready, _, _ = select.select([fd], [], [], left)
            if not ready:
                continue
            chunk = os.read(fd, 65536)
            if not chunk:
                raise self._gone()
            self._buffer += chunk

    def close(self) -> None:
        with contextlib.suppress(OSError, ValueError):
            if self.proc.stdin is not None:
                self.proc.stdin.write(b"exit 0\n")
                self.proc.stdin.close()
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        if self.proc.stdout is not None:
            self.proc.stdout.close()
        self._err.close()


# ---------------------------------------------------------------------------- ssh
_SSH_TRANSPORT_ERRORS = (
    ("permission denied", "authentication failed"),
    ("host key verification failed", "the host key is not known or has changed (check "
                                     "known_hosts)"),
    ("connection refused", "connection refused"),
    ("could not resolve hostname", "unknown host name"),
    ("no route to host", "no route to host"),
    ("connection timed out", "connection timed out"),
    ("operation timed out", "connection timed out"),
    ("network is unreachable", "network unreachable"),
    ("connection closed by", "the connection was closed by the remote side"),
    ("connection reset", "the connection was reset"),
    ("bad configuration option", "bad ssh configuration"),
    ("can't open user config file", "the ssh configuration file cannot be read"),
)


class SshTarget(Target):
    """A host reached with OpenSSH's ``ssh`` (see the module docstring)."""

    def __init__(self, spec: TargetSpec) -> None:
        super().__init__(spec)
        self.ssh = shutil.which("ssh")
        self._folder: str | None = None
        self._master = False

    @property
    def destination(self) -> str:
        return f"{self.spec.user}@{self.spec.host}" if self.spec.user else str(
            self.spec.host).strip("[]")

    def _base(self) -> list[str]:
        if self.ssh is None:
            raise TargetError("the ssh client is not installed (Debian: openssh-client)")
        args = [self.ssh]
        config = os.environ.get("STEADYBENCH_SSH_CONFIG")
        if config:
            args += ["-F", config]
        args += ["-o", "BatchMode=yes", "-o", f"ConnectTimeout={CONNECT_TIMEOUT}",
                 "-o", "ServerAliveInterval=15", "-o", "LogLevel=ERROR"]
        if self.spec.port:
            args += ["-p", str(self.spec.port)]
        return args

    def _socket(self) -> str:
        if self._folder is None:
            self._folder = tempfile.mkdtemp(prefix="sb-ssh-")  # 0700
        return os.path.join(self._folder, "m")

    def argv(self, script: str) -> list[str]:
        args = self._base()
        if self._master:
            args += ["-o", "ControlMaster=no", "-S", self._socket()]
        # the remote login shell runs `sh -c SCRIPT`: the script always meets a POSIX sh
        return [*args, "-T", "--", self.destination, f"sh -c {q(script)}" if script else ""]

    def explain(self, completed: Completed) -> str | None:
        if completed.returncode != 255:
            return None
        text = completed.error_text
        low = text.lower()
        for needle, words in _SSH_TRANSPORT_ERRORS:
            if needle in low:
                return f"cannot reach {self.spec.address}: {words} ({text})"
        return f"cannot reach {self.spec.address}: ssh failed" + (f" ({text})" if text else "")

    def connect(self) -> None:
        if self._master or self.closed:
            return
        with tempfile.TemporaryFile() as err:
            args = [*self._base(), "-o", "ControlMaster=yes",
                    "-o", f"ControlPersist={MASTER_IDLE_S}",
                    "-S", self._socket(), "-f", "-N", "-T", "--", self.destination]
            try:
                code = subprocess.run(args, stdin=subprocess.DEVNULL,
                                      stdout=subprocess.DEVNULL, stderr=err,
                                      timeout=CONNECT_TIMEOUT * 3, check=False).returncode
            except subprocess.TimeoutExpired:
                raise TargetError(f"cannot reach {self.spec.address}: no answer in "
                                  f"{CONNECT_TIMEOUT * 3} s") from None
            err.seek(0)
            done = Completed(code, b"", err.read())
        if code != 0:
            raise TargetError(self.explain(Completed(255, b"", done.stderr)) or "ssh failed")
        self._master = True

    def close(self) -> None:
        super().close()
        if self._master:
            self._master = False
            with contextlib.suppress(OSError, subprocess.TimeoutExpired):
                subprocess.run([*self._base(), "-S", self._socket(), "-O", "exit", "--",
                                self.destination], stdin=subprocess.DEVNULL,
                               capture_output=True, timeout=10, check=False)
        if self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)
            self._folder = None


# ---------------------------------------------------------------------------- adb
class AdbTarget(Target):
    """An Android device reached with the ``adb`` tool (see the module docstring)."""

    def __init__(self, spec: TargetSpec) -> None:
        super().__init__(spec)
        self.adb = shutil.which(os.environ.get("STEADYBENCH_ADB", "adb"))
        self._checked = False

    def _base(self) -> list[str]:
        if self.adb is None:
            raise TargetError("adb is not installed or not on PATH (Debian: "
                              "android-tools-adb / adb; or Android platform-tools)")
        return [self.adb, *(["-s", self.spec.serial] if self.spec.serial else [])]

    def argv(self, script: str) -> list[str]:
        return [*self._base(), "shell", script]

    def connect(self) -> None:
        if self._checked:
            return
        try:
            proc = subprocess.run([*self._base(), "get-state"], stdin=subprocess.DEVNULL,
                                  capture_output=True, timeout=CONNECT_TIMEOUT, check=False)
        except subprocess.TimeoutExpired:
            raise TargetError(f"cannot reach {self.spec.address}: adb did not answer in "
                              f"{CONNECT_TIMEOUT} s") from None
        state = proc.stdout.decode("utf-8", "replace").strip()
        if proc.returncode != 0 or state != "device":
            text = Completed(proc.returncode, proc.stdout, proc.stderr).error_text or state
            low = text.lower()
            if "unauthorized" in low:
                why = "the device has not authorised this computer (accept the prompt on it)"
            elif "more than one" in low:
                why = "more than one device is connected: name one with adb://SERIAL"
            elif "not found" in low or "no devices" in low:
                why = "no such device (see `adb devices`)"
            elif "offline" in low:
                why = "the device is offline"
            else:
                why = f"state {state or 'unknown'}"
            raise TargetError(f"cannot reach {self.spec.address}: {why}"
                              + (f" ({text})" if text and text != state else ""))
        self._checked = True

    def explain(self, completed: Completed) -> str | None:
        low = completed.error_text.lower()
        if completed.returncode != 0 and ("device" in low and ("not found" in low or
                                                               "offline" in low)
                                          or "no devices" in low):
            return f"cannot reach {self.spec.address}: {completed.error_text}"
        return None

    def push(self, local: Path, remote: str) -> None:
        self.connect()
        proc = subprocess.run([*self._base(), "push", str(local), remote],
                              stdin=subprocess.DEVNULL, capture_output=True,
                              timeout=ANSWER_TIMEOUT * 10, check=False)
        if proc.returncode != 0:
            raise TargetError(f"{self.spec.address}: adb push {local} failed: "
                              f"{Completed(1, proc.stdout, proc.stderr).error_text}")
