"""Running one external command and accounting for it, the way the operating system does.

Each run is a fresh process started from an argument list (no shell unless asked), in a
session and process group of its own, so that a timeout or Ctrl-C can kill the command *and*
everything it started with one ``killpg``. The wall time is read from the injected clock just
before the process is created and just after it has been reaped; user and system CPU time and
peak resident memory come from the kernel's accounting of the finished child (``wait4(2)``'s
``struct rusage``), not from sampling.

Waiting uses a Linux pidfd (``pidfd_open(2)``) polled with the timeout, so no helper thread or
busy loop runs beside the measured command; where pidfds are missing a timer thread kills the
group instead.
"""

from __future__ import annotations

import contextlib
import os
import resource
import select
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ..errors import ConfigurationError

Clock = Callable[[], int]

#: how much of a failing command's standard error is kept
STDERR_TAIL_CHARS = 2000


@dataclass
class ProcessRun:
    """What one run of a command gave."""

    wall_ns: int
    user_time: float  # seconds of CPU in user mode (the child and its waited-for children)
    sys_time: float  # seconds of CPU in kernel mode
    max_rss: int | None  # peak resident set size in bytes; None when not measurable (below)
    exit_code: int | None  # None when killed by a signal
    signal: int | None = None
    timed_out: bool = False
    stdout: str | None = None  # only when captured
    stderr_tail: str = ""

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out

    def describe_failure(self) -> str:
        """One phrase: why the run did not succeed."""
        if self.timed_out:
            return "timed out"
        if self.signal is not None:
            try:
                name = signal.Signals(self.signal).name
            except ValueError:
                name = str(self.signal)
            return f"killed by signal {name}"
        return f"exit status {self.exit_code}"


@dataclass
class CommandRunner:
    """Runs commands with fixed settings.

    Args:
        shell: run each command line through ``shell`` (``/bin/sh -c``) instead of directly.
        timeout: seconds after which the whole process group is killed (None: no limit).
        input_path: file given to the command as standard input (default: closed, /dev/null).
        output_path: file that receives the command's standard output (default: discarded).
        capture_stdout: keep the standard output in :attr:`ProcessRun.stdout` (the ITERS
            protocol reads it); it goes to a temporary file, never a pipe, so a chatty program
            cannot block on a full pipe.
        clock: zero-argument callable returning integer nanoseconds.
    """

    shell: bool = False
    timeout: float | None = None
    input_path: str | None = None
    output_path: str | None = None
    capture_stdout: bool = False
    clock: Clock = time.perf_counter_ns
    shell_path: str = "/bin/sh"
    env: dict[str, str] | None = None
    _files: list = field(default_factory=list, repr=False)

    def __post_init__(self) -> None:
        if self.timeout is not None and not self.timeout > 0:
            raise ConfigurationError(f"--timeout must be positive, got {self.timeout}")
        if self.input_path is not None and not os.path.isfile(self.input_path):
            raise ConfigurationError(f"--input {self.input_path}: no such file")
        if self.output_path is not None:  # fail now, not after the first run
            try:
                open(self.output_path, "ab").close()  # noqa: SIM115
            except OSError as exc:
                raise ConfigurationError(f"--output {self.output_path}: cannot write "
                                         f"({exc.strerror or exc})") from None

    # ------------------------------------------------------------------ checks
    def resolve(self, argv: Sequence[str]) -> list[str]:
        """Check that the command can be started; return the argument list actually run."""
        if not argv or not str(argv[0]).strip():
            raise ConfigurationError("empty command")
        if self.shell:
            return [self.shell_path, "-c", " ".join(argv)]
        program = argv[0]
        if os.sep in program:
            if not os.path.exists(program):
                raise ConfigurationError(f"command not found: {program}")
            if os.path.isdir(program) or not os.access(program, os.X_OK):
                raise ConfigurationError(f"command is not executable: {program}")
            return list(argv)
        found = shutil.which(program)
        if found is None:
            raise ConfigurationError(f"command not found: {program}")
        return [found, *argv[1:]]

    # ------------------------------------------------------------------ one run
    def run(self, argv: Sequence[str]) -> ProcessRun:
        """Run ``argv`` (already resolved with :meth:`resolve`) once and account for it.

        Ctrl-C during the run kills the process group, reaps the child and re-raises.
        """
        stdin = open(self.input_path, "rb") if self.input_path else subprocess.DEVNULL  # noqa: SIM115
        out_file = None
        if self.capture_stdout:
            out_file = tempfile.TemporaryFile()  # noqa: SIM115
        elif self.output_path:
            out_file = open(self.output_path, "ab")  # noqa: SIM115
        err_file = tempfile.TemporaryFile()  # noqa: SIM115
        try:
            return self._run(list(argv), stdin, out_file, err_file)
        finally:
            if stdin is not subprocess.DEVNULL:
                stdin.close()
            if out_file is not None:
                out_file.close()
            err_file.close()

    def _run(self, argv: list[str], stdin, out_file, err_file) -> ProcessRun:
        clock = self.clock
        floor = own_peak_rss()
        t0 = clock()
        try:
            proc = subprocess.Popen(
                argv, stdin=stdin,
                stdout=out_file if out_file is not None else subprocess.DEVNULL,
                stderr=err_file, start_new_session=True, close_fds=True, env=self.env,
            )
        except FileNotFoundError:
            raise ConfigurationError(f"command not found: {argv[0]}") from None
        except PermissionError:
            raise ConfigurationError(f"command is not executable: {argv[0]}") from None
        except OSError as exc:
            raise ConfigurationError(f"cannot start {argv[0]}: {exc.strerror or exc}") from None
        pid = proc.pid
        timed_out = False
        try:
            timed_out, status, usage = self._wait(pid)
            t1 = clock()
        except BaseException:
            # Ctrl-C or anything else: leave nothing behind.
            kill_group(pid)
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)
            proc.returncode = -9
            raise
        proc.returncode = os.waitstatus_to_exitcode(status)
        kill_group(pid)  # anything the command left running in its group
        exit_code: int | None = None
        sig: int | None = None
        if os.WIFEXITED(status):
            exit_code = os.WEXITSTATUS(status)
        elif os.WIFSIGNALED(status):
            sig = os.WTERMSIG(status)
        stdout = None
        if self.capture_stdout and out_file is not None:
            out_file.seek(0)
            stdout = out_file.read().decode("utf-8", errors="replace")
        err_file.seek(0, os.SEEK_END)
        size = err_file.tell()
        err_file.seek(max(0, size - STDERR_TAIL_CHARS))
        tail = err_file.read().decode("utf-8", errors="replace")
        return ProcessRun(
            wall_ns=t1 - t0,
            user_time=usage.ru_utime,
            sys_time=usage.ru_stime,
            max_rss=child_peak_rss(int(usage.ru_maxrss) * 1024, floor),
            exit_code=exit_code,
            signal=sig,
            timed_out=timed_out,
            stdout=stdout,
            stderr_tail=tail.strip(),
        )

    def _wait(self, pid: int):
        """Wait for ``pid`` with the timeout; return (timed_out, status, rusage)."""
        if self.timeout is None:
            _, status, usage = os.wait4(pid, 0)
            return False, status, usage
        timed_out = False
        pidfd = None
        if hasattr(os, "pidfd_open"):
            with contextlib.suppress(OSError):
                pidfd = os.pidfd_open(pid)
        if pidfd is not None:
            try:
                poller = select.poll()
                poller.register(pidfd, select.POLLIN)
                if not poller.poll(self.timeout * 1000.0):
                    timed_out = True
                    kill_group(pid)
            finally:
                os.close(pidfd)
            _, status, usage = os.wait4(pid, 0)
            return timed_out, status, usage
        fired = threading.Event()

        def expire() -> None:
            fired.set()
            kill_group(pid)

        timer = threading.Timer(self.timeout, expire)
        timer.start()
        try:
            _, status, usage = os.wait4(pid, 0)
        finally:
            timer.cancel()
        return fired.is_set(), status, usage


def own_peak_rss() -> int:
    """This process's peak resident set size in bytes (``getrusage(RUSAGE_SELF)``)."""
    return int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) * 1024


def child_peak_rss(reported: int, floor: int) -> int | None:
    """The child's own peak RSS, or None when the kernel's figure cannot show it.

    Linux keeps the largest resident size a process ever had *across exec*: a child created by
    (v)fork from this Python process starts with this process's memory, so ``wait4`` reports at
    least our own peak (``floor``) whatever the command used. A larger figure is the command's
    own peak; one at or below the floor says only "no more than the floor", and is dropped.
    """
    return reported if reported > floor else None


def kill_group(pgid: int) -> None:
    """SIGKILL every process of the group ``pgid``; no error if it is already gone."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)
