"""Programs run and timed on the target, not across the network.

Each run starts one wrapper on the device (a new ``ssh`` channel or ``adb shell``) that reads a
clock *on the device* just before it starts the program and just after the program has ended,
and prints both at the end of its output behind a random marker; the host only parses them. The
transport's start-up and round trip are therefore outside the measured interval. Two wrappers:

- ``python`` (chosen by ``timer=auto`` when the device has ``python3``): ``time.perf_counter_ns``
  (``CLOCK_MONOTONIC``) around ``fork``/``exec`` and ``wait4``, which also gives user and system
  CPU time and peak memory (``ru_maxrss``), as the local runner has them; a timer kills the
  program's process group at the timeout.
- ``shell`` (any POSIX ``sh`` with ``date +%s%N``, e.g. Android's toybox or busybox):
  ``date +%s%N`` before and after, ``times`` for the CPU time of the children, ``timeout -s
  KILL`` for the timeout. ``date`` reads ``CLOCK_REALTIME``, which an NTP step would move: keep
  runs short or use the ``python`` timer where that matters. The ``date`` processes themselves
  fall inside the interval; the start-up correction of ``exec`` (a trivial program timed the
  same way, :func:`calibrate_remote`) subtracts that cost with the rest of the start-up.

Programs run in a work folder created on the device for the session (``--push`` copies files
there; removed at exit), with standard input from ``/dev/null`` or the ``--input`` file copied
there, and pinned when the preset pins (:mod:`.sysroot`): ``taskset -p MASK`` pins the wrapper
shell before the clock starts, and the program inherits the affinity, so the ``taskset``
process itself is not inside the measured interval.
"""

from __future__ import annotations

import contextlib
import math
import os
import re
import signal
import subprocess
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ConfigurationError, MeasurementError
from ..programs.calibration import (
    CALIBRATION_MAX_RUNS,
    CALIBRATION_MIN_RUNS,
    CALIBRATION_TIME,
    CALIBRATION_WARMUP,
    Calibration,
)
from ..programs.process import STDERR_TAIL_CHARS, ProcessRun, clean_text, kill_group
from .transport import Completed, Target, TargetError, q

#: seconds the host waits beyond a run's timeout before it gives the transport up
GRACE_S = 30.0

#: the ``python`` wrapper: argv = token, timeout (0: none), stdout (keep|null), program...
PY_TIMER = r"""
import os, resource, sys, threading, time
tok, lim, keep = sys.argv[1], float(sys.argv[2]), sys.argv[3] == "keep"
argv = sys.argv[4:]
floor = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
sys.stdout.flush()
t0 = time.perf_counter_ns()
pid = os.fork()
if pid == 0:
    try:
        os.setsid()
        if not keep:
            fd = os.open(os.devnull, os.O_WRONLY)
            os.dup2(fd, 1)
        os.execvp(argv[0], argv)
    except OSError as exc:
        os.write(2, ("cannot start %s: %s\n" % (argv[0], exc.strerror)).encode())
    os._exit(127)
with open(".sb-%s.pid" % tok, "w") as handle:  # for the host to kill it when interrupted
    handle.write(str(pid))
fired = []
def expire():
    fired.append(1)
    try:
        os.killpg(pid, 9)
    except OSError:
        pass
timer = threading.Timer(lim, expire) if lim > 0 else None
if timer:
    timer.daemon = True
    timer.start()
_, status, ru = os.wait4(pid, 0)
t1 = time.perf_counter_ns()
if timer:
    timer.cancel()
try:
    os.killpg(pid, 9)
except OSError:
    pass
try:
    os.unlink(".sb-%s.pid" % tok)
except OSError:
    pass
rc = os.WEXITSTATUS(status) if os.WIFEXITED(status) else -os.WTERMSIG(status)
rss = ru.ru_maxrss if ru.ru_maxrss > floor else -1
os.write(1, ("\n@@%s py %d %d %d %d %.9f %.9f %d\n" % (
    tok, t0, t1, rc, 1 if fired else 0, ru.ru_utime, ru.ru_stime, rss)).encode())
"""

_TIMES = re.compile(r"(\d+)m([\d.]+)s")


@dataclass
class RemoteCommandRunner:
    """Runs commands on ``target``; the interface of
    :class:`~steadybench.programs.process.CommandRunner` (``resolve``, ``run``, ``clock``,
    ``shell``, ``timeout``), so ``exec``, ``iters`` and ``sweep`` use it unchanged.

    ``clock`` is the host's: the run loop's budgets are host time; the measured interval of
    every run comes from the device (:attr:`ProcessRun.wall_ns`).
    """

    target: Target
    shell: bool = False
    timeout: float | None = None
    input_path: str | None = None
    output_path: str | None = None
    capture_stdout: bool = False
    timer: str = "auto"
    push: Sequence[str] = ()
    clock: Any = time.perf_counter_ns
    shell_path: str = "sh"
    env: dict[str, str] | None = None
    workdir: str = ""
    _resolved: dict[str, str] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        if self.timeout is not None and not (self.timeout > 0 and math.isfinite(self.timeout)):
            raise ConfigurationError(f"--timeout must be a positive number of seconds, "
                                     f"got {self.timeout}")
        if self.output_path is not None:
            try:
                open(self.output_path, "ab").close()  # noqa: SIM115
            except OSError as exc:
                raise ConfigurationError(f"--output {self.output_path}: cannot write "
                                         f"({exc.strerror or exc})") from None
        local_files = [Path(p) for p in self.push]
        for path in local_files:
            if not path.is_file():
                raise ConfigurationError(f"--push {path}: not a file")
        if self.input_path is not None and not Path(self.input_path).is_file():
            raise ConfigurationError(f"--input {self.input_path}: not a regular file")
        self.workdir = make_workdir(self.target)
        self.timer = choose_timer(self.target, self.timer)
        for path in local_files:
            remote = f"{self.workdir}/{path.name}"
            self.target.push(path, remote)
            if os.access(path, os.X_OK):
                self.target.shell().request(f"chmod 755 {q(remote)}")
        self._stdin = "/dev/null"
        if self.input_path is not None:
            self._stdin = f"{self.workdir}/.stdin"
            self.target.push(Path(self.input_path), self._stdin)

    @property
    def address(self) -> str:
        return self.target.spec.address

    # ------------------------------------------------------------------ checks
    def resolve(self, argv: Sequence[str]) -> list[str]:
        """Check on the device that the program can be started; return the argument list."""
        if not argv or not str(argv[0]).strip():
            raise ConfigurationError("empty command")
        if self.shell:
            return [self.shell_path, "-c", " ".join(argv)]
        program = str(argv[0])
        found = self._resolved.get(program)
        if found is None:
            shell = self.target.shell()
            where = f"cd {q(self.workdir)} && "
            if "/" in program:
                status, _ = shell.request(f"{where}[ -f {q(program)} ] && [ -x {q(program)} ]")
                if status != 0:
                    raise ConfigurationError(f"command not found or not executable on "
                                             f"{self.address}: {program} (copy it there with "
                                             "--push, or give its path on the device)")
                found = program
            else:
                status, out = shell.request(f"{where}command -v {q(program)}")
                text = out.decode("utf-8", "replace").strip()
                if status != 0 or not text:
                    raise ConfigurationError(f"command not found on {self.address}: {program}")
                found = text.splitlines()[-1]
            self._resolved[program] = found
        return [found, *map(str, argv[1:])]

    def trivial_command(self) -> list[str]:
        """A program that does nothing, run the way commands are run (for the correction)."""
        return [self.shell_path, "-c", ""] if self.shell else self.resolve(["true"])

    # ------------------------------------------------------------------ one run
    def _wrapper(self, argv: Sequence[str], token: str, limit: float | None) -> str:
        keep = self.capture_stdout or self.output_path is not None
        words = list(argv)
        head = f"cd {q(self.workdir)} || exit 97; exec < {q(self._stdin)}; "
        pin = self.target.pin
        if pin:
            # the wrapper shell itself is pinned before the clock starts; the timer (exec'd in
            # its place) and the program inherit it, so no taskset process is timed
            head += f"taskset -p {hex(sum(1 << c for c in pin))} $$ > /dev/null || exit 96; "
        if self.timer == "python":
            return (head + f"exec python3 -c {q(PY_TIMER)} {q(token)} "
                    f"{q(repr(float(limit or 0)))} {'keep' if keep else 'null'} "
                    + " ".join(q(w) for w in words))
        if limit is not None and self.target.has("timeout"):
            words = ["timeout", "-s", "KILL", f"{limit:.3f}", *words]
        out = "" if keep else " > /dev/null"
        return (head + "t0=$(date +%s%N); "
                + " ".join(q(w) for w in words) + out + "; rc=$?; t1=$(date +%s%N); "
                + f"printf '\\n@@%s sh %s %s %s\\n' {q(token)} \"$t0\" \"$t1\" \"$rc\"; times")

    def run(self, argv: Sequence[str], timeout: float | None = None) -> ProcessRun:
        """Run ``argv`` (from :meth:`resolve`) once on the device; the interval is the
        device's."""
        limits = [t for t in (self.timeout, timeout) if t is not None]
        limit = max(min(limits), 1e-3) if limits else None
        token = os.urandom(8).hex()
        script = self._wrapper(argv, token, limit)
        with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
            started = time.monotonic()
            try:
                proc = subprocess.Popen(self.target.argv(script), stdin=subprocess.DEVNULL,
                                        stdout=out, stderr=err, start_new_session=True)
            except OSError as exc:
                raise TargetError(f"{self.address}: cannot start the transport: "
                                  f"{exc.strerror or exc}") from None
            host_timed_out = False
            try:
                proc.wait(None if limit is None else limit + GRACE_S)
            except subprocess.TimeoutExpired:
                host_timed_out = True
                kill_group(proc.pid)
                proc.wait()
                self._kill_remote(token)
            except BaseException:
                kill_group(proc.pid)
                with contextlib.suppress(ChildProcessError, OSError):
                    proc.wait(5)
                self._kill_remote(token)
                raise
            host_ns = int((time.monotonic() - started) * 1e9)
            out.seek(0)
            stdout = out.read()
            err.seek(0, os.SEEK_END)
            size = err.tell()
            err.seek(max(0, size - STDERR_TAIL_CHARS))
            stderr = err.read()
        return self._parse(stdout, stderr, proc.returncode, token, limit, host_ns,
                           host_timed_out)

    def _kill_remote(self, token: str) -> None:
        """Kill the program of an interrupted run on the device (the ``python`` timer leaves its
        process group's number in the work folder; with the ``shell`` timer the program is
        left to ``timeout``)."""
        pid_file = q(f".sb-{token}.pid")
        with contextlib.suppress(TargetError, OSError):
            self.target.shell().request(
                f"cd {q(self.workdir)} && if [ -f {pid_file} ]; then read -r p < {pid_file}; "
                f"kill -9 -- \"-$p\" 2>/dev/null || kill -9 \"$p\" 2>/dev/null; "
                f"rm -f {pid_file}; fi", timeout=10)

    def _parse(self, stdout: bytes, stderr: bytes, code: int, token: str,
               limit: float | None, host_ns: int, host_timed_out: bool) -> ProcessRun:
        tail = clean_text(stderr.decode("utf-8", "replace")).strip()
        marker = f"\n@@{token} ".encode()
        at = stdout.rfind(marker)
        if at < 0:
            # the wrapper never reported: the program was killed with it, or the connection
            # failed (then the transport's own words say so); a failed run, so the loop
            # records it and the results measured so far are written
            why = self.target.explain(Completed(code, b"", stderr))
            if why:
                tail = why
            return ProcessRun(wall_ns=host_ns, user_time=0.0, sys_time=0.0, max_rss=None,
                              exit_code=None if host_timed_out else (code if code >= 0 else None),
                              signal=-code if code < 0 else None, timed_out=host_timed_out,
                              stdout=None, stderr_tail=tail or "the device reported no timing",
                              timeout=limit)
        body = stdout[:at]
        words = stdout[at + len(marker):].decode("utf-8", "replace").split()
        if self.output_path is not None and not self.capture_stdout:
            with open(self.output_path, "ab") as handle:
                handle.write(body)
        try:
            kind, t0, t1, rc = words[0], int(words[1]), int(words[2]), int(words[3])
        except (IndexError, ValueError):
            raise MeasurementError(f"{self.address}: the timing wrapper gave "
                                   f"{' '.join(words[:4])!r}; the device's date lacks %N? "
                                   "(use ?timer=python with python3 on the device)") from None
        user = system = 0.0
        rss: int | None = None
        timed_out = host_timed_out
        if kind == "py":
            timed_out = timed_out or words[4] == "1"
            user, system = float(words[5]), float(words[6])
            rss = int(words[7]) * 1024 if int(words[7]) > 0 else None
        else:
            children = [m for line in " ".join(words[4:]).split("\n") for m in
                        _TIMES.findall(line)]
            if len(children) >= 2:  # the last two: children's user and system time
                (um, us), (sm, ss) = children[-2], children[-1]
                user, system = int(um) * 60 + float(us), int(sm) * 60 + float(ss)
            if limit is not None and rc in (124, 137) and (t1 - t0) >= limit * 0.99e9:
                timed_out = True
        sig = -rc if rc < 0 else (rc - 128 if kind == "sh" and rc > 128 and not timed_out
                                  and rc - 128 in _SIGNALS else None)
        exit_code = None if sig is not None or timed_out else rc
        return ProcessRun(wall_ns=t1 - t0, user_time=user, sys_time=system, max_rss=rss,
                          exit_code=exit_code, signal=sig, timed_out=timed_out,
                          stdout=body.decode("utf-8", "replace") if self.capture_stdout
                          else None, stderr_tail=tail, timeout=limit)


_SIGNALS = {int(s) for s in signal.Signals}


def make_workdir(target: Target) -> str:
    """A fresh folder on the device for this session's files, removed when the target closes."""
    shell = target.shell()
    status, out = shell.request(
        "d=${TMPDIR:-}; if [ -z \"$d\" ] || [ ! -d \"$d\" ] || [ ! -w \"$d\" ]; then "
        "if [ -d /data/local/tmp ]; then d=/data/local/tmp; else d=/tmp; fi; fi; "
        "mktemp -d \"$d/steadybench.XXXXXX\"")
    folder = out.decode("utf-8", "replace").strip().splitlines()
    if status != 0 or not folder or not folder[-1].startswith("/"):
        raise TargetError(f"{target.spec.address}: cannot create a work folder (mktemp -d)")
    path = folder[-1]

    def remove() -> None:
        if target._shell is not None and target._shell.alive:
            target._shell.request(f"rm -rf -- {q(path)}")

    target.on_close.append(remove)
    return path


def choose_timer(target: Target, wanted: str) -> str:
    """``python`` when asked for or available (``auto``), else ``shell`` (checked to work)."""
    if wanted in ("python", "auto"):
        status, _ = target.shell().request(
            "python3 -c 'import sys,time; sys.exit(0 if sys.version_info >= (3, 7) else 1)' "
            ">/dev/null 2>&1")
        if status == 0:
            return "python"
        if wanted == "python":
            raise ConfigurationError(f"{target.spec.address}: timer=python needs python3 "
                                     "(3.7 or later) on the device")
    status, out = target.shell().request("date +%s%N")
    text = out.decode("utf-8", "replace").strip()
    if status != 0 or not text.isdigit() or len(text) < 19:
        raise ConfigurationError(f"{target.spec.address}: cannot time programs there: no "
                                 f"python3 and `date +%s%N` gives {text[:30]!r} (nanoseconds "
                                 "are needed)")
    return "shell"


def calibrate_remote(runner: RemoteCommandRunner, min_runs: int = CALIBRATION_MIN_RUNS,
                     max_time: float = CALIBRATION_TIME, max_runs: int = CALIBRATION_MAX_RUNS,
                     warmup: int = CALIBRATION_WARMUP) -> Calibration:
    """The start-up cost of a trivial program on the device, timed by the same wrapper as the
    commands (the counterpart of :func:`steadybench.programs.calibration.calibrate`)."""
    from ..programs.calibration import sample_startup

    argv = runner.trivial_command()
    return sample_startup(argv, lambda: runner.run(argv, timeout=10.0), f" on {runner.address}",
                          min_runs, max_time, max_runs, warmup)
