"""Running one external command and accounting for it, the way the operating system does.

Each run is a fresh process started from an argument list (no shell unless asked), in a
session and process group of its own, so that a timeout or Ctrl-C can kill the command *and*
everything it started with one ``killpg``. The wall time is read from the injected clock just
before the process is created and just after it has been reaped; user and system CPU time and
peak resident memory come from the kernel's accounting of the finished child (``wait4(2)``'s
``struct rusage``), not from sampling. The command is started through a tiny C launcher
(:mod:`.launcher`) that forks it and reports that accounting, since a child of this Python
process would carry steadybench's own peak memory in ``ru_maxrss``.

Waiting uses a Linux pidfd (``pidfd_open(2)``) polled with the timeout, so no helper thread or
busy loop runs beside the measured command; where pidfds are missing a timer thread kills the
group instead. A run may be given a timeout of its own (:meth:`CommandRunner.run`), shorter than
the runner's: ``exec`` kills a command that never ends at its hard time limit that way.

What a command wrote to standard error reaches error lines only through
:func:`clean_text`: control characters (NULs, escape sequences) are removed and
:meth:`ProcessRun.stderr_excerpt` caps the length, so a binary or hostile tail can neither flood
nor drive the terminal.
"""

from __future__ import annotations

import contextlib
import errno
import math
import os
import re
import resource
import select
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ..errors import ConfigurationError
from .launcher import launcher_path, read_report

Clock = Callable[[], int]

#: how much of a failing command's standard error is kept
STDERR_TAIL_CHARS = 2000
#: at most this many characters of it are quoted in an error line
STDERR_EXCERPT_CHARS = 300
#: the longest single wait of ``poll`` (its timeout is a C int of milliseconds)
_MAX_POLL_S = 3600.0

#: ANSI escape sequences (CSI ... final byte, OSC ... BEL/ST, and two-byte ones), removed whole
_ESCAPES = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-_]?")
#: every other control character but newline and tab (C0, DEL, C1)
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def clean_text(text: str) -> str:
    """``text`` without escape sequences and control characters (newlines and tabs stay; a
    carriage return becomes a line break), so a program's output can be quoted safely."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return _CONTROLS.sub("", _ESCAPES.sub("", text)).replace("\t", " ")


def excerpt(text: str, max_lines: int = 5, max_chars: int = STDERR_EXCERPT_CHARS) -> str:
    """The last ``max_lines`` non-blank lines of ``text``, cleaned (:func:`clean_text`), joined
    with `` | `` and cut to ``max_chars`` characters (the end kept: errors come last)."""
    lines = [ln.strip() for ln in clean_text(text).splitlines() if ln.strip()][-max_lines:]
    joined = " | ".join(lines)
    if len(joined) > max_chars:
        joined = "…" + joined[-(max_chars - 1):]
    return joined


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
    stderr_tail: str = ""  # the end of standard error, cleaned (clean_text)
    #: the timeout that applied to this run (seconds; None: none)
    timeout: float | None = None

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

    def stderr_excerpt(self, max_lines: int = 5, max_chars: int = STDERR_EXCERPT_CHARS) -> str:
        """The end of standard error as a short single line for an error message (``""``
        when there was none)."""
        return excerpt(self.stderr_tail, max_lines, max_chars)


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
        cwd: the working directory of the commands (default: this process's); a relative
            program path is found from it.
        launcher: start commands through :mod:`steadybench.programs.launcher` (when it can be
            built) so that :attr:`ProcessRun.max_rss` is the command's own peak.
    """

    shell: bool = False
    timeout: float | None = None
    input_path: str | None = None
    output_path: str | None = None
    capture_stdout: bool = False
    clock: Clock = time.perf_counter_ns
    shell_path: str = "/bin/sh"
    env: dict[str, str] | None = None
    cwd: str | None = None
    #: start each command through the C launcher (.launcher) when one can be built, so that
    #: its peak memory is its own; False starts it directly from this process
    launcher: bool = True
    _files: list = field(default_factory=list, repr=False)

    def __post_init__(self) -> None:
        if self.timeout is not None and not (self.timeout > 0 and math.isfinite(self.timeout)):
            raise ConfigurationError(f"--timeout must be a positive number of seconds, "
                                     f"got {self.timeout}")
        if self.input_path is not None:
            check_input(self.input_path)
        if self.output_path not in (None, "-"):  # fail now, not after the first run
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
            if self.cwd is not None and not os.path.isabs(program):
                program = os.path.join(self.cwd, program)
                argv = [program, *argv[1:]]
            if not os.path.exists(program):
                raise ConfigurationError(f"command not found: {program}")
            if os.path.isdir(program) or not os.access(program, os.X_OK):
                raise ConfigurationError(f"command is not executable: {program}")
            check_interpreter(program)
            return list(argv)
        found = shutil.which(program)
        if found is None:
            raise ConfigurationError(f"command not found: {program}")
        check_interpreter(found, program)
        return [found, *argv[1:]]

    # ------------------------------------------------------------------ one run
    def run(self, argv: Sequence[str], timeout: float | None = None) -> ProcessRun:
        """Run ``argv`` (already resolved with :meth:`resolve`) once and account for it.

        ``timeout`` (seconds), when given, applies to this run if it is shorter than the
        runner's own; :attr:`ProcessRun.timeout` says which applied. Ctrl-C during the run
        kills the process group, reaps the child and re-raises.
        """
        limits = [t for t in (self.timeout, timeout) if t is not None]
        limit = max(min(limits), 1e-3) if limits else None
        stdin = open(self.input_path, "rb") if self.input_path else subprocess.DEVNULL  # noqa: SIM115
        out_file = None
        if self.capture_stdout:
            out_file = tempfile.TemporaryFile()  # noqa: SIM115
        elif self.output_path == "-":  # shown (--show-output): the command writes to ours
            sys.stdout.flush()
            out_file = sys.stdout.fileno()
        elif self.output_path:
            out_file = open(self.output_path, "ab")  # noqa: SIM115
        err_file = tempfile.TemporaryFile()  # noqa: SIM115
        try:
            return self._run(list(argv), stdin, out_file, err_file, limit)
        finally:
            if stdin is not subprocess.DEVNULL:
                stdin.close()
            if out_file is not None and not isinstance(out_file, int):
                out_file.close()
            err_file.close()

    def _run(self, argv: list[str], stdin, out_file, err_file,
             timeout: float | None) -> ProcessRun:
        clock = self.clock
        floor = own_peak_rss()
        launcher = launcher_path() if self.launcher else None
        report_r = report_w = -1
        spawned = argv
        if launcher is not None:  # the command's own peak memory (see .launcher)
            report_r, report_w = os.pipe()
            spawned = [launcher, str(report_w), *argv]
        try:
            t0 = clock()
            try:
                proc = subprocess.Popen(
                    spawned, stdin=stdin,
                    stdout=out_file if out_file is not None else subprocess.DEVNULL,
                    stderr=err_file, start_new_session=True, close_fds=True, env=self.env,
                    cwd=self.cwd, pass_fds=(report_w,) if launcher is not None else (),
                )
            except OSError as exc:
                raise ConfigurationError(start_failure(spawned[0], exc)) from None
            finally:
                if report_w >= 0:
                    os.close(report_w)  # the launcher holds it now: EOF when it ends
            pid = proc.pid
            timed_out = False
            try:
                timed_out, status, usage = self._wait(pid, timeout)
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
            max_rss = child_peak_rss(int(usage.ru_maxrss) * 1024, floor)
            user_time, sys_time = usage.ru_utime, usage.ru_stime
            if launcher is not None:
                report = read_report(report_r)
                if report[:1] == ["exec"] and len(report) == 2:
                    err = int(report[1])
                    raise ConfigurationError(start_failure(argv[0], OSError(err,
                                                                            os.strerror(err))))
                if report[:1] == ["ok"] and len(report) == 6:
                    status = int(report[1])
                    user_time, sys_time = int(report[2]) / 1e6, int(report[3]) / 1e6
                    max_rss = int(report[4]) * 1024
                    if clock is time.perf_counter_ns:  # the same clock, without the launcher's
                        t0, t1 = 0, int(report[5])     # own start (see .launcher)
                else:  # the launcher was killed (a timeout): its own figure is ours
                    max_rss = None
        finally:
            if report_r >= 0:
                os.close(report_r)
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
        tail = clean_text(err_file.read().decode("utf-8", errors="replace"))
        return ProcessRun(
            wall_ns=t1 - t0,
            user_time=user_time,
            sys_time=sys_time,
            max_rss=max_rss,
            exit_code=exit_code,
            signal=sig,
            timed_out=timed_out,
            stdout=stdout,
            stderr_tail=tail.strip(),
            timeout=timeout,
        )

    def _wait(self, pid: int, timeout: float | None):
        """Wait for ``pid`` at most ``timeout`` seconds (None: for ever), killing its group
        then; return (timed_out, status, rusage)."""
        if timeout is None:
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
                deadline = time.monotonic() + timeout
                while True:  # in slices: poll's timeout is a C int of milliseconds
                    left = deadline - time.monotonic()
                    if left <= 0:
                        timed_out = True
                        kill_group(pid)
                        break
                    if poller.poll(min(left, _MAX_POLL_S) * 1000.0):
                        break
            finally:
                os.close(pidfd)
            _, status, usage = os.wait4(pid, 0)
            return timed_out, status, usage
        fired = threading.Event()

        def expire() -> None:
            fired.set()
            kill_group(pid)

        timer = threading.Timer(min(timeout, threading.TIMEOUT_MAX), expire)
        timer.start()
        try:
            _, status, usage = os.wait4(pid, 0)
        finally:
            timer.cancel()
        return fired.is_set(), status, usage


def check_input(path: str) -> None:
    """Raise :class:`ConfigurationError` unless ``path`` can be a command's standard input: a
    readable regular file or device (``/dev/zero``, ``/dev/urandom``). A FIFO or socket is
    refused, since opening it before every run would wait for a writer, and so is a folder."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        raise ConfigurationError(f"--input {path}: no such file") from None
    except OSError as exc:
        raise ConfigurationError(f"--input {path}: {exc.strerror or exc}") from None
    if stat.S_ISDIR(mode):
        raise ConfigurationError(f"--input {path}: is a directory, not a file")
    if not (stat.S_ISREG(mode) or stat.S_ISCHR(mode) or stat.S_ISBLK(mode)):
        kind = "a FIFO" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode) \
            else "not a regular file"
        raise ConfigurationError(f"--input {path}: is {kind}; give a regular file or a "
                                 "device such as /dev/zero")
    try:
        os.close(os.open(path, os.O_RDONLY | os.O_NONBLOCK))
    except OSError as exc:
        raise ConfigurationError(f"--input {path}: cannot read ({exc.strerror or exc})") from None


def shebang(path: str) -> list[str] | None:
    """The words of the ``#!`` line of the file at ``path`` (interpreter first), or None when it
    has none or cannot be read."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(256)
    except OSError:
        return None
    if not head.startswith(b"#!"):
        return None
    line = head[2:].split(b"\n", 1)[0].decode("utf-8", errors="replace")
    return line.split() or None


def missing_interpreter(path: str) -> str | None:
    """Why the ``#!`` interpreter of the script at ``path`` cannot run, in words; None when it
    can (or the file has no ``#!`` line)."""
    words = shebang(path)
    if not words:
        return None
    interpreter = words[0]
    if not os.path.exists(interpreter):
        return f"its interpreter {interpreter} (on its #! line) does not exist"
    if os.path.isdir(interpreter) or not os.access(interpreter, os.X_OK):
        return f"its interpreter {interpreter} (on its #! line) is not executable"
    if os.path.basename(interpreter) == "env":
        names = [w for w in words[1:] if not w.startswith("-") and "=" not in w]
        if names and shutil.which(names[0]) is None:
            return f"its interpreter {names[0]} (on its #! line, through env) is not on PATH"
    return None


def check_interpreter(path: str, program: str | None = None) -> None:
    """Raise :class:`ConfigurationError` when ``path`` is a script whose ``#!`` interpreter
    is missing (``program`` is the name the user gave, default ``path``)."""
    why = missing_interpreter(path)
    if why is not None:
        raise ConfigurationError(f"cannot run {program or path}: {why}")


def start_failure(program: str, exc: OSError) -> str:
    """One line on why ``program`` could not be started: a missing file is "command not
    found", but an existing file that gives ENOENT has a missing interpreter or loader."""
    if exc.errno == errno.ENOENT:
        if not os.path.exists(program):
            return f"command not found: {program}"
        why = missing_interpreter(program) or ("its interpreter or dynamic loader does not "
                                               "exist")
        return f"cannot run {program}: {why}"
    if exc.errno == errno.EACCES:
        return f"command is not executable: {program}"
    if exc.errno == errno.ENOEXEC:
        return (f"cannot run {program}: not a program the system can start (a script needs a "
                "#! line)")
    return f"cannot start {program}: {exc.strerror or exc}"


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
    """SIGKILL every process of the group ``pgid`` and every descendant of its leader (the
    process ``pgid``) that left the group (``setsid``, issue 27 item 12); no error if they
    are already gone. The descendants are listed before the group dies: an orphan is
    re-parented and can no longer be told from any other process."""
    import psutil

    try:
        strays = [c for c in psutil.Process(pgid).children(recursive=True)
                  if _group_of(c.pid) not in (pgid, None)]
    except (psutil.Error, OSError):
        strays = []
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)
    for child in strays:
        with contextlib.suppress(psutil.Error, OSError):
            child.send_signal(signal.SIGKILL)  # psutil checks the pid is still this process


def _group_of(pid: int) -> int | None:
    try:
        return os.getpgid(pid)
    except OSError:
        return None
