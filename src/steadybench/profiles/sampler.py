"""Time by sampling, with py-spy (PyPI ``py-spy``): it reads the Python stacks of a running
program from outside, ``rate`` times a second, and records the stacks of threads that are
running or waiting for a core (``--idle`` off: a thread blocked in a lock, a ``select`` or a
``join`` is not sampled). It profiles both a Python *case* (the process of :mod:`.child`) and a
*command*; either runs as py-spy's own child (``py-spy record -- PROGRAM``), so py-spy needs no
permission to attach to a process it did not start (it still needs ``ptrace`` and
``process_vm_readv`` of its child: ``kernel.yama.ptrace_scope`` 1 allows that, 3 does not, nor
does a container without ``CAP_SYS_PTRACE`` under some seccomp profiles).

``--threads`` puts each sample under its thread (``thread (NATIVE_ID): NAME``) and
``--subprocesses`` follows child processes that are Python programs, each sample under its
chain of processes (``process PID:"COMMAND"``, outermost first): :func:`parse_raw` reads both
into :class:`PySpySample`. Why py-spy rather than pyinstrument or a signal sampler of our own:
docs/profiles.md, "Choosing the sampler" (overhead and fidelity measured).

Every failure is a :class:`~.model.ProfileFailure` with one line: py-spy missing, ptrace not
permitted, a program that is not Python, a crash, a time-out.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from . import collapsed
from .model import Frame, ProfileFailure

#: samples per second (py-spy's default is 100). Measured (benchmarks/profile_fidelity.py,
#: docs/profiles.md): on a busy machine the samples come in clusters (a thread waiting for a core
#: is sampled where it waits, and py-spy catches up on a late wake-up with samples back to
#: back), so beyond ~250 Hz more samples add little information: at 1000 Hz the variance of a
#: share was 19-31 times the binomial one, at 250 Hz 2-3 times, for about the same spread.
RATE = 250
#: how many times the variance of a function's share of py-spy's samples exceeds the binomial
#: one, p (1 - p) / n, on this project's 2-core machine at 250 Hz (benchmarks/
#: profile_fidelity.py, 10 profiles per condition, at loads 10-14, with and without two CPU
#: hogs): 2.0, 3.1, 3.7 and 3.9, pooled 3.2, whose upper 95 % bound over the 36 degrees of
#: freedom is 4.9; taken as 5. On a quiet machine it is lower: the errors are then too wide,
#: never too narrow.
DESIGN_EFFECT = 5.0
#: the environment variable naming another py-spy program (tests use it)
ENV = "STEADYBENCH_PY_SPY"


class SamplerError(Exception):
    def __init__(self, failure: ProfileFailure) -> None:
        super().__init__(failure.message)
        self.failure = failure


def find_py_spy() -> str:
    """py-spy: ``$STEADYBENCH_PY_SPY``, beside this interpreter, or on PATH."""
    wanted = os.environ.get(ENV)
    if wanted:
        found = shutil.which(wanted)
    else:
        beside = Path(sys.executable).parent / "py-spy"
        found = str(beside) if beside.is_file() else shutil.which("py-spy")
    if not found:
        raise SamplerError(ProfileFailure(
            "profile not taken: py-spy not found (pip install py-spy); the measurement is "
            "not affected", "missing"))
    return found


@dataclass(frozen=True)
class PySpySample:
    """One distinct stack py-spy recorded: the processes it lies in (``(pid, command)``,
    outermost first; empty without ``--subprocesses``), its thread (native id and name; ``None``
    without ``--threads``), its Python frames (outermost first) and how many samples."""

    processes: tuple[tuple[int, str], ...]
    thread: int | None
    thread_name: str
    frames: tuple[Frame, ...]
    weight: float


@dataclass(frozen=True)
class Sampled:
    """What one sampled process gave: its samples, output and exit status, and the lines
    py-spy printed about falling behind the rate (``... behind in sampling``)."""

    samples: tuple[PySpySample, ...]
    stdout: str
    stderr: str
    returncode: int
    wall_seconds: float
    behind: tuple[str, ...] = ()

    @property
    def stacks(self) -> tuple[tuple[tuple[Frame, ...], float], ...]:
        """The Python frames of every sample, processes and threads left out."""
        from .model import merge_stacks

        return merge_stacks((s.frames, s.weight) for s in self.samples if s.frames)


_PROCESS = re.compile(r'process (\d+):"')
_RECORD_END = re.compile(r'[)"] (\d+)\s*$')
_THREAD = re.compile(r"thread \((\d+|0x[0-9a-fA-F]+)\)(?:: ([^;]*))?;?")


def _records(text: str) -> list[tuple[str, float]]:
    """``(stack text, weight)`` per record. A command line py-spy quotes in a process frame
    may hold newlines: a line that does not end like a record, a frame's ``)`` (or a process
    frame's closing quote) then `` COUNT``, continues on the next."""
    out: list[tuple[str, float]] = []
    pending = ""
    for line in text.splitlines():
        pending = pending + "\n" + line if pending else line
        if (end := _RECORD_END.search(pending)):
            out.append((pending[:end.start() + 1], float(end.group(1))))
            pending = ""
    return out


def parse_raw(text: str) -> tuple[PySpySample, ...]:
    """py-spy's ``--format raw`` (collapsed stacks, ``--function --full-filenames``), with the
    ``process`` and ``thread`` frames ``--subprocesses`` and ``--threads`` put first. A
    process frame's command may hold ``;`` and quotes: it ends at the ``";`` followed by the
    next process or thread frame."""
    out = []
    for stack, weight in _records(text):
        if weight <= 0:
            continue
        processes: list[tuple[int, str]] = []
        rest = stack
        while (m := _PROCESS.match(rest)):
            body = rest[m.end():]
            end = next((k for k in range(len(body)) if body.startswith('";', k)
                        and (_PROCESS.match(body, k + 2) or _THREAD.match(body, k + 2))), None)
            if end is not None:
                processes.append((int(m.group(1)), body[:end]))
                rest = body[end + 2:]
            else:  # a process with no frame of its own (the command's last character is ")
                processes.append((int(m.group(1)), body.rstrip('"')))
                rest = ""
        thread, name = None, ""
        if (t := _THREAD.match(rest)):
            ident = t.group(1)
            thread = int(ident, 16) if ident.startswith("0x") else int(ident)
            name = (t.group(2) or "").strip()
            rest = rest[t.end():]
        frames = tuple(collapsed.parse_frame(part) for part in rest.split(";") if part.strip())
        out.append(PySpySample(tuple(processes), thread, name, frames, weight))
    return tuple(out)


_NOT_PERMITTED = ("Permission denied", "Operation not permitted", "ptrace")
_NOT_PYTHON = ("Failed to find python version", "Failed to get process executable name",
               "Couldn't find python")


def explain(stderr: str, returncode: int) -> ProfileFailure:
    text = stderr.strip()
    last = next((line for line in reversed(text.splitlines()) if line.strip()), "")
    if any(word in text for word in _NOT_PERMITTED):
        return ProfileFailure(
            "profile not taken: py-spy may not trace the process (ptrace not permitted: set "
            "kernel.yama.ptrace_scope to 0 or 1, or in a container grant CAP_SYS_PTRACE); the "
            "measurement is not affected", "not-permitted")
    if any(word in text for word in _NOT_PYTHON):
        return ProfileFailure(
            "profile not taken: py-spy found no Python interpreter in the program (for a "
            "compiled program use --profile callgrind); the measurement is not affected",
            "not-python")
    return ProfileFailure(f"profile not taken: py-spy failed (exit status {returncode}"
                          + (f": {last[:160]}" if last else "") + "); the measurement is not "
                          "affected", "failed")


def sample(argv: Sequence[str], *, timeout: float, rate: int = RATE, cwd: str | None = None,
           env: dict[str, str] | None = None, subprocesses: bool = True, threads: bool = True,
           py_spy: str | None = None, allow_empty: bool = False) -> Sampled:
    """Run ``argv`` as py-spy's child; its samples per function (``--function``: a frame is a
    function's first line, not the line running), full file names, each under its processes
    and thread. Raises :class:`SamplerError` when py-spy gives no profile (unless
    ``allow_empty``: the caller then reads the program's own output to say why)."""
    import time

    program = py_spy or find_py_spy()
    with tempfile.TemporaryDirectory(prefix="steadybench-profile-") as work:
        out = os.path.join(work, "stacks.txt")
        cmd = [program, "record", "--rate", str(rate), "--function", "--full-filenames",
               "--format", "raw", "--output", out]
        if subprocesses:
            cmd.append("--subprocesses")
        if threads:
            cmd.append("--threads")
        cmd += ["--", *argv]
        started = time.perf_counter()
        try:
            proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    stdin=subprocess.DEVNULL, text=True, cwd=cwd,
                                    env={**os.environ, **(env or {})}, start_new_session=True)
        except OSError as exc:
            raise SamplerError(ProfileFailure(
                f"profile not taken: py-spy could not start ({exc.strerror or exc}); the "
                "measurement is not affected", "failed")) from None
        try:
            stdout, stderr = proc.communicate(timeout=timeout)
        except BaseException as exc:  # a time-out or Ctrl-C: the profiled group goes too
            from ..programs.process import kill_group

            kill_group(proc.pid)
            proc.communicate()
            if isinstance(exc, subprocess.TimeoutExpired):
                raise SamplerError(ProfileFailure(
                    f"profile not taken: the profiled execution did not end within "
                    f"{timeout:g} s (killed); the measurement is not affected",
                    "timeout")) from None
            raise
        wall = time.perf_counter() - started
        text = Path(out).read_text(errors="replace") if os.path.exists(out) else ""
    samples = parse_raw(text)
    if not samples and not allow_empty:
        raise SamplerError(explain(stderr, proc.returncode))
    behind = tuple(line.strip() for line in (stdout + stderr).splitlines()
                   if "behind in sampling" in line)
    return Sampled(samples, stdout, stderr, proc.returncode, wall, behind)
