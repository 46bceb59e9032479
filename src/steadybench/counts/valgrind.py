"""Running one process under valgrind's cachegrind and reading its event totals.

cachegrind runs the program on a synthetic CPU and counts every instruction it executes
(``Ir``); with ``--cache-sim=yes`` it also simulates a first-level instruction and data cache
and a last-level cache and counts their misses (valgrind manual, chapter "Cachegrind"). The
counts do not depend on the machine's load, frequency or other processes, which is why they can
be compared across days and CI runners (CodSpeed's "CPU simulation" and iai-callgrind use the
same tool for the same reason).

What this module fixes so that two runs of one program give the same counts:

* the cache geometry is given explicitly (:data:`CACHE_GEOMETRY`), never detected from the host,
  so that the simulated misses are the same on any machine;
* the output file goes to a private temporary directory, named by a fixed-length name, and the
  valgrind command line is the same in every run of a measurement (its length moves the
  client's stack);
* the caller passes the environment (hash seed, padding) and whether ASLR is off
  (:mod:`steadybench.counts.layout`).

Every way a run can go wrong is one :class:`CountFailure` with a one-line message: valgrind
missing (:class:`ValgrindMissing`, with how to install it), a program that cannot be started,
a crash (a signal), a non-zero exit, a run that does not end within its time limit.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields
from functools import lru_cache
from pathlib import Path

from ..errors import ConfigurationError, MeasurementError
from ..programs.process import excerpt, kill_group
from ..runner.layout import aslr_off_for_children

#: the event names of ``cachegrind --cache-sim=yes``, in the order of its ``events:`` line
EVENTS = ("Ir", "I1mr", "ILmr", "Dr", "D1mr", "DLmr", "Dw", "D1mw", "DLmw")
#: the simulated caches (size bytes, associativity, line bytes): 32 KiB 8-way first-level
#: caches and an 8 MiB 16-way last-level cache, a common x86 desktop/server geometry. Fixed
#: rather than detected, so counts from different machines are comparable.
CACHE_GEOMETRY = {"I1": (32768, 8, 64), "D1": (32768, 8, 64), "LL": (8388608, 16, 64)}
#: how to get valgrind, for the error line when it is missing
INSTALL_HINT = ("install it with your package manager (Debian/Ubuntu: apt-get install valgrind; "
                "Fedora: dnf install valgrind); valgrind runs on Linux and some BSDs")
#: the platforms valgrind supports (its README: Linux on x86, x86-64, ARM, ARM64, PPC, s390x,
#: MIPS; FreeBSD; Solaris); macOS support ended with macOS 10.13
SUPPORTED_PLATFORMS = ("linux", "freebsd", "sunos")


class ValgrindMissing(ConfigurationError):
    """valgrind is not installed, or this platform cannot run it (exit status 2; a
    configuration error, so it ends the command rather than failing one benchmark)."""


class CountFailure(MeasurementError):
    """One run under valgrind gave no counts; ``kind`` says how it failed."""

    def __init__(self, message: str, kind: str) -> None:
        super().__init__(message)
        #: "start" (cannot be run), "crash" (a signal), "exit" (non-zero status or the code left
        #: the process early), "hang" (time limit), "output" (no counts written)
        self.kind = kind


def over_limit(label: str, limit: float) -> CountFailure:
    """The one line for a case whose counted processes did not finish within its limit."""
    return CountFailure(f"{label}: did not finish within the case's --time-limit of {limit:g} s "
                        "(all its counted processes together; valgrind runs code 20–100× "
                        "slower than natively: raise --time-limit if it is only slow)", "hang")


@dataclass(frozen=True)
class Counts:
    """cachegrind's totals for one process (``None`` for the cache events without the cache
    simulation). ``Ir`` instructions executed; ``Dr``/``Dw`` data reads and writes;
    ``I1mr``/``D1mr``/``D1mw`` first-level misses; ``ILmr``/``DLmr``/``DLmw`` last-level
    misses."""

    Ir: int
    I1mr: int | None = None
    ILmr: int | None = None
    Dr: int | None = None
    D1mr: int | None = None
    DLmr: int | None = None
    Dw: int | None = None
    D1mw: int | None = None
    DLmw: int | None = None

    @property
    def cache_simulated(self) -> bool:
        return self.Dr is not None

    def to_dict(self) -> dict[str, int | None]:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def minus(self, other: Counts) -> dict[str, int | None]:
        """The event-by-event difference ``self − other``."""
        return {f.name: (None if getattr(self, f.name) is None or getattr(other, f.name) is None
                         else getattr(self, f.name) - getattr(other, f.name))
                for f in fields(self)}


@dataclass(frozen=True)
class Valgrind:
    """An installed valgrind: where it is and which version (counts are comparable only
    between runs of the same version)."""

    path: str
    version: str


def check_platform(platform: str | None = None) -> None:
    """Raise :class:`ValgrindMissing` where valgrind does not run."""
    platform = platform or sys.platform
    if not platform.startswith(SUPPORTED_PLATFORMS):
        raise ValgrindMissing(f"counting instructions needs valgrind, which does not run on "
                              f"{platform}; measure time instead (--measure time) or run on Linux")


@lru_cache(maxsize=8)
def _version_of(path: str) -> str:
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ValgrindMissing(f"valgrind at {path} cannot be run ({exc}); {INSTALL_HINT}") from None
    version = out.stdout.strip()
    if out.returncode != 0 or not version.startswith("valgrind"):
        raise ValgrindMissing(f"{path} --version did not answer like valgrind "
                              f"({excerpt(out.stdout + out.stderr) or 'no output'}); "
                              f"{INSTALL_HINT}")
    return version


def find_valgrind(path: str | None = None) -> Valgrind:
    """The valgrind on ``PATH`` (or the ``STEADYBENCH_VALGRIND`` program); :class:`ValgrindMissing`
    with how to install it when there is none."""
    check_platform()
    wanted = os.environ.get("STEADYBENCH_VALGRIND") or "valgrind"
    found = shutil.which(wanted, path=path)
    if found is None:
        raise ValgrindMissing(f"--measure instructions/cycles needs valgrind, which was not found "
                              f"on PATH; {INSTALL_HINT}")
    return Valgrind(found, _version_of(found))


def cachegrind_argv(valgrind: Valgrind, out_file: str, log_file: str,
                    cache_sim: bool, dump_before: str | None = None) -> list[str]:
    """The valgrind part of the command line (the program follows it): cachegrind, or, with
    ``dump_before``, callgrind writing its counts so far (and starting again from zero) each
    time the program enters the C function of that name (valgrind manual, "Callgrind",
    ``--dump-before``), so that one process yields the counts of several parts of its run."""
    tool = "callgrind" if dump_before else "cachegrind"
    argv = [valgrind.path, f"--tool={tool}", f"--cache-sim={'yes' if cache_sim else 'no'}",
            f"--{tool}-out-file={out_file}", f"--log-file={log_file}"]
    if dump_before:
        argv.append(f"--dump-before={dump_before}")
    if cache_sim:
        argv += [f"--{name}={size},{assoc},{line}"
                 for name, (size, assoc, line) in CACHE_GEOMETRY.items()]
    return argv


_SUMMARY = re.compile(r"^summary:((?:\s+\d+)+)\s*$", re.MULTILINE)
_EVENTS = re.compile(r"^events:\s*(.+?)\s*$", re.MULTILINE)


def parse_cachegrind_out(text: str, source: str = "cachegrind output") -> Counts:
    """The totals of a ``cachegrind.out`` file (its ``events:`` and ``summary:`` lines; a
    ``callgrind.out`` file has the same two lines, with the events in another order)."""
    events = _EVENTS.search(text)
    summary = _SUMMARY.search(text)
    if events is None or summary is None:
        raise CountFailure(f"{source}: no 'events:'/'summary:' line (not a cachegrind output "
                           "file, or cut short)", "output")
    names = events.group(1).split()
    values = [int(v) for v in summary.group(1).split()]
    if text.startswith("# callgrind format"):  # it leaves out trailing zero counts
        values += [0] * max(0, len(names) - len(values))
    if len(names) != len(values) or "Ir" not in names:
        raise CountFailure(f"{source}: {len(names)} events but {len(values)} totals", "output")
    known = {n: v for n, v in zip(names, values, strict=True) if n in EVENTS}
    return Counts(**known)


@dataclass(frozen=True)
class CountedRun:
    """One process run under cachegrind: its counts and what it printed."""

    counts: Counts
    stdout: str
    stderr: str
    #: address-space randomisation was off for it
    aslr_off: bool = False
    #: with ``dump_before``: the counts of each part of the run that ended at the marker
    #: function, in order (``counts`` is then the part after the last marker)
    segments: tuple[Counts, ...] = ()


def _tail(path: Path) -> str:
    try:
        return path.read_text(errors="replace")[-4000:]
    except OSError:
        return ""


def _valgrind_said(log: str) -> str:
    """valgrind's own complaint in its log, without the ``==PID==`` prefixes."""
    lines = [re.sub(r"^(==|--)\d+(==|--)\s?", "", ln) for ln in log.splitlines()]
    wanted = [ln for ln in lines if re.search(r"valgrind:|cannot|Fatal|failed|error", ln, re.I)]
    return excerpt("\n".join(wanted or lines), max_lines=3)


def run_counted(valgrind: Valgrind, argv: Sequence[str], *, env: Mapping[str, str],
                cwd: str | None = None, timeout: float = 600.0, cache_sim: bool = False,
                label: str | None = None, workdir: str | None = None,
                stdin_data: bytes | None = None, aslr_off: bool = False,
                started: Callable[[subprocess.Popen[bytes]], None] | None = None,
                dump_before: str | None = None) -> CountedRun:
    """Run ``argv`` under cachegrind and return its totals.

    ``workdir`` is a private directory for valgrind's files (a fresh one when None). The
    process runs in a session of its own; at ``timeout`` seconds its whole group is killed and
    a ``hang`` failure raised. The caller chooses ASLR (a personality set around this call is
    inherited). ``stdin_data`` is written to the process's standard input (else it reads
    /dev/null). ``aslr_off`` starts it with address-space randomisation off (the personality is
    set around the spawn only, so several counted processes can run at once); ``started(proc)``
    is told of the process (a caller running several kills them all on Ctrl-C).
    ``dump_before`` runs it under callgrind, cut into segments at each entry of that C function
    (:attr:`CountedRun.segments`); the program learns where the segments are written from
    :func:`segment_file`."""
    label = label or " ".join(argv)
    own = workdir is None
    work = Path(workdir or tempfile.mkdtemp(prefix="sb-counts-"))
    out_file, log_file = work / "cg.out", work / "vg.log"
    for stale in (out_file, log_file):
        stale.unlink(missing_ok=True)
    for stale in work.glob("cg.out.*"):
        stale.unlink()
    full = cachegrind_argv(valgrind, str(out_file), str(log_file), cache_sim,
                           dump_before) + list(argv)
    try:
        try:
            with aslr_off_for_children(aslr_off) as in_force:  # for the child only
                proc = subprocess.Popen(full, env=dict(env), cwd=cwd,
                                        stdin=subprocess.DEVNULL if stdin_data is None
                                        else subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                        start_new_session=True)
            if started is not None:
                started(proc)
        except OSError as exc:
            raise CountFailure(f"{label}: valgrind could not be started ({exc.strerror or exc})",
                               "start") from None
        try:
            stdout, stderr = proc.communicate(stdin_data, timeout=timeout)
        except subprocess.TimeoutExpired:
            kill_group(proc.pid)
            proc.communicate()
            raise CountFailure(f"{label}: did not finish under valgrind within {timeout:g} s "
                               "(killed; valgrind runs code 20–100× slower than natively: "
                               "raise --time-limit if it is only slow)", "hang") from None
        except BaseException:
            kill_group(proc.pid)
            proc.communicate()
            raise
        out = stdout.decode(errors="replace")
        err = stderr.decode(errors="replace")
        log = _tail(log_file)
        code = proc.returncode
        if code < 0 or re.search(r"Process terminating with default action of signal", log):
            signum = -code if code < 0 else None
            match = re.search(r"default action of signal (\d+) \((\w+)\)", log)
            name = match.group(2) if match else (signal.Signals(signum).name if signum
                                                 else "a signal")
            raise CountFailure(f"{label}: crashed under valgrind ({name})"
                               + (f": {excerpt(err)}" if excerpt(err) else ""), "crash")
        refused = re.search(r"^valgrind: (.+)$", err + "\n" + log, re.MULTILINE)
        if refused:  # e.g. "this is not an executable" (valgrind then tries it with /bin/sh)
            raise CountFailure(f"{label}: valgrind could not run it ({excerpt(refused.group(1))})",
                               "start")
        if not out_file.exists():
            said = _valgrind_said(log) or excerpt(err) or f"exit status {code}"
            raise CountFailure(f"{label}: valgrind could not run it ({said})", "start")
        if code != 0:
            raise CountFailure(f"{label}: exited with status {code} under valgrind"
                               + (f": {excerpt(err)}" if excerpt(err) else ""), "exit")
        counts = parse_cachegrind_out(out_file.read_text(errors="replace"), label)
        segments = tuple(parse_cachegrind_out(segment_file(str(out_file), k).read_text(
            errors="replace"), label) for k in range(1, 1 + _segment_count(work)))
        return CountedRun(counts, out, err, in_force, segments)
    finally:
        if own:
            shutil.rmtree(work, ignore_errors=True)


def segment_file(out_file: str, k: int) -> Path:
    """Where callgrind writes the ``k``-th segment (from 1) of a run whose output file is
    ``out_file``: the file name with ``.k`` appended."""
    return Path(f"{out_file}.{k}")


def _segment_count(work: Path) -> int:
    numbers = sorted(int(p.suffix[1:]) for p in work.glob("cg.out.*") if p.suffix[1:].isdigit())
    if numbers != list(range(1, len(numbers) + 1)):
        raise CountFailure(f"callgrind's segment files are not numbered 1..n: {numbers}", "output")
    return len(numbers)
