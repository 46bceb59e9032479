"""A command's time by sampling, with py-spy (PyPI ``py-spy``): it reads the Python stacks of
any running Python program from outside, through ``ptrace``, ``rate`` times a second. It
profiles ``ab --command`` and ``exec`` programs that are Python; a Python *case* is profiled in
its own process by :mod:`.cpu_sampler` instead, which samples CPU time (py-spy samples wall
time and, on a busy machine, falls behind: docs/profiles.md, "Choosing the sampler"). For a
command, nothing else can attach, and its profile says it samples wall time.

Every failure is a :class:`~.model.ProfileFailure` with one line: py-spy missing, ptrace not
permitted (``kernel.yama.ptrace_scope``, a container without ``CAP_SYS_PTRACE``), a program that
is not Python, a crash, a time-out.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from . import collapsed
from .model import Frame, ProfileFailure

#: samples per second (py-spy's default is 100; 1000 gives ten times the samples for a
#: difference, at about 10 % overhead in the profiled execution only)
RATE = 1000
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
class Sampled:
    """What one sampled process gave: its stacks, output and exit status."""

    stacks: tuple[tuple[tuple[Frame, ...], float], ...]
    stdout: str
    stderr: str
    returncode: int
    wall_seconds: float


_NOT_PERMITTED = ("Permission denied", "Operation not permitted", "ptrace")
_NOT_PYTHON = ("Failed to find python version", "Failed to get process executable name",
               "Couldn't find python")


def _explain(stderr: str, returncode: int) -> ProfileFailure:
    text = stderr.strip()
    last = next((line for line in reversed(text.splitlines()) if line.strip()), "")
    if any(word in text for word in _NOT_PERMITTED):
        return ProfileFailure(
            "profile not taken: py-spy may not trace the process (ptrace not permitted: run as "
            "root, grant CAP_SYS_PTRACE, or set kernel.yama.ptrace_scope=0); the measurement "
            "is not affected", "not-permitted")
    if any(word in text for word in _NOT_PYTHON):
        return ProfileFailure(
            "profile not taken: py-spy found no Python interpreter in the program (for a "
            "compiled program use --profile callgrind); the measurement is not affected",
            "not-python")
    return ProfileFailure(f"profile not taken: py-spy failed (exit status {returncode}"
                          + (f": {last[:160]}" if last else "") + "); the measurement is not "
                          "affected", "failed")


def sample(argv: Sequence[str], *, timeout: float, rate: int = RATE, cwd: str | None = None,
           env: dict[str, str] | None = None, subprocesses: bool = False,
           py_spy: str | None = None) -> Sampled:
    """Run ``argv`` under py-spy; its stacks per function (``--function``: a frame is a
    function's first line, not the line running), full file names. Raises
    :class:`SamplerError` when py-spy gives no profile."""
    import time

    program = py_spy or find_py_spy()
    with tempfile.TemporaryDirectory(prefix="steadybench-profile-") as work:
        out = os.path.join(work, "stacks.txt")
        cmd = [program, "record", "--rate", str(rate), "--function", "--full-filenames",
               "--format", "raw", "--output", out]
        if subprocesses:
            cmd.append("--subprocesses")
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
    stacks = collapsed.parse(text)
    if not stacks:
        raise SamplerError(_explain(stderr, proc.returncode))
    return Sampled(stacks, stdout, stderr, proc.returncode, wall)
