"""Fault matrix: the ``steadybench`` command line against generated faults, counted.

Every case runs ``python -m steadybench ARGS`` as a fresh subprocess, in a folder of its own,
with a time limit (a case still running then is a *hang*, and its process group is killed) and an
address-space limit (so a reader that slurps ``/dev/zero`` fails instead of filling the memory).
Then it is judged:

* **traceback**: ``Traceback (most recent call last)`` anywhere in its output;
* **internal error**: ``internal error`` in its standard error (a bug of steadybench's own);
* **hang**: it did not end within the case's time limit;
* **wrong status**: its exit status is not one the case allows (bad input: 2);
* **unclear**: it exited 2 (a bad input) without an ``error: ...`` line saying why;
* the category's own **metric**, counted by the case's check (settings left changed, outputs lost
  or stale, injection payloads that ran).

The cases are tables of scenarios per category, each built by a generator registered with
:func:`category` from a seeded :class:`random.Random` (``--seed``): random values, random
malformed files, random payloads. ``--quick`` samples a few of each table (about 200 cases,
some two minutes with two jobs); without it every table runs in full (about 1,100 cases). The
figures are printed per category at the end, with the failing cases; the exit status is 1 when
any failure was counted.

========================  ==========================================  =====================
category                  what is tried                               metric (target 0)
========================  ==========================================  =====================
fault scenarios           (the lead: machine-control faults)          settings left changed
bad inputs                every numeric option of every command with  tracebacks, internal
                          nan/inf/-1/huge/garbage; malformed option   errors, hangs (and
                          values; malformed and special files; hostile wrong statuses)
                          names and paths
interrupts                (the lead: signals while outputs are        outputs lost or stale
                          written)
injection payloads        shell payloads in ``--param`` values with   succeeded
                          ``--shell``, in every quoting context and
                          command form, and in the six hook forms
                          (``--prepare``... with and without
                          ``--shell``, bash's ``$'...'`` too); the
                          file each would create must not exist
credentials               passwords in history URLs and arguments     passwords shown or kept
                          (issue 27 item 7)
machine reads             planted governors: /dev/zero, a FIFO, a     outside files read or
                          link out, a hard link, 6 MB (item 10)       written
read-only                 history readers on missing stores, outputs  files created
                          in missing folders (item 18)
export injection          escapes, bidi and formulas in names, in     raw escapes or formulas
                          every export (item 17)
third pass                hangs under --in-process and at import,     results lost or wrong
                          a setsid child, ITERS counts to 10^12,
                          impossible times, 1e308, generator
                          benchmarks, os._exit (items 2, 12, 14, 15)
start-up and size         a signal at the entry point's first moment  lines printed at
                          (each ending signal); compare, report and   start-up
                          history import of 20,000 benchmarks (items
                          13, 16)
========================  ==========================================  =====================

Extending: write a generator ``def more(ctx: Context) -> list[Case]`` and decorate it with
``@category("bad inputs")`` (or a new key with its title and metric): its cases join that
category's table. A :class:`Case` may carry ``setup`` (make files in its folder first), ``check``
(count the category's failures afterwards), ``drive`` (act on the running process: wait for a
line, send a signal) and ``env``.

Usage: python benchmarks/fault_matrix.py [--seed N] [--quick] [--jobs J] [--timeout S]
       [--only CATEGORY] [--verbose]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import resource
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

#: address-space limit of every case (bytes): numpy and scipy fit, an endless read does not
MEMORY_LIMIT = 4 * 2**30
#: default time limit of one case (seconds)
CASE_TIMEOUT = 60.0


# ============================================================================ the model
@dataclass
class Case:
    """One run of the command line and what is right for it.

    Attributes:
        name: a short description, shown when the case fails.
        argv: the arguments of ``steadybench``; ``{dir}`` is replaced by the case's folder.
        expect: exit statuses that are right.
        setup: makes files in the case's folder before the run.
        check: after the run, counts the category's failures (0: none).
        drive: called with the running process (wait for a line, send a signal...).
        timeout: seconds before the case is a hang (default ``--timeout``).
        env: extra environment variables.
    """

    name: str
    argv: list[str]
    expect: tuple[int, ...] = (2,)
    setup: Callable[[Path], None] | None = None
    check: Callable[[Path, Outcome], int] | None = None
    drive: Callable[[subprocess.Popen], None] | None = None
    timeout: float | None = None
    env: dict[str, str] = field(default_factory=dict)


@dataclass
class Outcome:
    """What one case gave, judged."""

    case: Case
    code: int | None  # None: a hang
    out: str
    err: str
    seconds: float
    metric: int = 0

    @property
    def hang(self) -> bool:
        return self.code is None

    @property
    def traceback(self) -> bool:
        return "Traceback (most recent call last)" in self.out + self.err

    @property
    def internal(self) -> bool:
        return "internal error" in self.err

    @property
    def wrong_status(self) -> bool:
        return not self.hang and self.code not in self.case.expect

    @property
    def unclear(self) -> bool:
        errors = [ln for ln in self.err.splitlines() if ln.startswith("error:") and ln[6:].strip()]
        return self.code == 2 and not errors

    @property
    def failed(self) -> bool:
        return (self.hang or self.traceback or self.internal or self.wrong_status or self.unclear
                or self.metric > 0)

    def summary(self) -> str:
        flags = [name for name, bad in (("HANG", self.hang), ("traceback", self.traceback),
                                        ("internal error", self.internal),
                                        ("wrong status", self.wrong_status),
                                        ("unclear", self.unclear),
                                        ("metric", self.metric > 0)) if bad]
        lines = [ln for ln in self.err.splitlines() if ln.strip()]
        last = lines[-1][:160] if lines else ""
        expected = "/".join(map(str, self.case.expect))
        why = ", ".join(flags)
        name = self.case.name if len(self.case.name) <= 90 else self.case.name[:87] + "..."
        return f"{name}: exit {self.code} (expected {expected}; {why}) {last}"


@dataclass
class Context:
    """What the generators draw from: the seeded generator, the mode and the shared fixtures."""

    rng: random.Random
    quick: bool
    fixtures: Path

    def sample(self, items: list, quick: int, full: int | None = None) -> list:
        """``quick`` of ``items`` with --quick, else ``full`` (default: all), drawn at random."""
        limit = quick if self.quick else (full if full is not None else len(items))
        items = list(items)
        return items if limit >= len(items) else self.rng.sample(items, limit)


@dataclass
class Category:
    key: str
    title: str
    metric: str
    generators: list[Callable[[Context], list[Case]]] = field(default_factory=list)


#: key → category, in the order they are printed
CATEGORIES: dict[str, Category] = {}


def category(key: str, title: str | None = None, metric: str | None = None):
    """Register a generator of cases for category ``key`` (made on first use with ``title``
    and ``metric``, the name of what its cases' checks count)."""

    def register(fn: Callable[[Context], list[Case]]) -> Callable[[Context], list[Case]]:
        if key not in CATEGORIES:
            CATEGORIES[key] = Category(key, title or key, metric or "failures")
        CATEGORIES[key].generators.append(fn)
        return fn

    return register


# The four categories of the "Done when", in its order.
CATEGORIES["fault scenarios"] = Category("fault scenarios", "fault scenarios",
                                         "settings left changed")
CATEGORIES["bad inputs"] = Category("bad inputs", "bad inputs", "unclear errors")
CATEGORIES["interrupts"] = Category("interrupts", "interrupts", "outputs lost or stale")
CATEGORIES["injection payloads"] = Category("injection payloads", "injection payloads",
                                            "succeeded")


# ============================================================================ fixtures
BENCH_PY = """\
import steadybench as sb


@sb.benchmark
def tiny():
    return lambda: None
"""


def make_fixtures(folder: Path) -> None:
    """Files the cases share (read only): a benchmark file, sample files, a results file."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "bench.py").write_text(BENCH_PY)
    rng = random.Random(0)
    for name, scale in (("base.txt", 1.0), ("new.txt", 0.9)):
        (folder / name).write_text("".join(f"{scale * (1 + rng.random() / 10):.6f}\n"
                                           for _ in range(40)))
    (folder / "counts.csv").write_text("a,b,total\n1,0,1.0\n0,1,2.0\n1,1,3.1\n2,1,4.0\n")
    (folder / "commands.toml").write_text('[[command]]\nrun = "true"\n')
    results = folder / "results.json"
    subprocess.run(steadybench("exec", "-q", "--runs", "3", "--no-correction", "--json",
                               str(results), "--", "true"), check=True, cwd=folder,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.mkfifo(folder / "fifo")


def steadybench(*args: str) -> list[str]:
    return [sys.executable, "-m", "steadybench", *args]


# ============================================================================ running
def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    # the signals a case receives start at their defaults even when this script runs under
    # nohup or as a background job (which would hand them on ignored)
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, signal.SIG_DFL)


def run_case(case: Case, folder: Path, timeout: float) -> Outcome:
    """Run ``case`` in ``folder`` (made fresh) and judge it."""
    folder.mkdir(parents=True)
    if case.setup is not None:
        case.setup(folder)
    argv = steadybench(*(a.replace("{dir}", str(folder)) for a in case.argv))
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "COLUMNS": "120",
           **{k: v.replace("{dir}", str(folder)) for k, v in case.env.items()}}
    env.pop("STEADYBENCH_ROOT", None)
    t0 = time.monotonic()
    proc = subprocess.Popen(argv, cwd=folder, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env, start_new_session=True,
                            preexec_fn=_limit_memory)
    code: int | None
    try:
        if case.drive is not None:
            case.drive(proc)
        out, err = proc.communicate(timeout=case.timeout or timeout)
        code = proc.returncode
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        code = None
    outcome = Outcome(case, code, out.decode(errors="replace"), err.decode(errors="replace"),
                      time.monotonic() - t0)
    if case.check is not None:
        outcome.metric = case.check(folder, outcome)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)  # whatever the command left behind
    return outcome


# ============================================================================ fault scenarios
sys.path.insert(0, str(ROOT / "tests"))
from fake_machine import make_machine, snapshot  # noqa: E402

#: a benchmark that says (by a marker file) that it is measuring, with a thread of its own as
#: tuned runs have several (issue 12, item 1); ``END`` decides how it ends
TUNED_BENCH = """\
import os, sys, threading, time
import steadybench as sb

threading.Thread(target=threading.Event().wait, daemon=True).start()
MARK = {marker!r}
END = {end!r}
calls = 0


def work():
    global calls
    calls += 1
    if not os.path.exists(MARK):
        open(MARK, "w").close()
    if calls == 30 and END == "exit":
        sys.exit(0)
    if calls == 30 and END == "os._exit":
        os._exit(3)
    if calls == 30 and END == "BaseException":
        raise BaseException("user code")
    time.sleep(0.0005)


@sb.benchmark
def tuned():
    return work
"""

#: presets the scenarios tune with: the tune countermeasure (optionally naming the governor),
#: and the built-in ``managed`` (every countermeasure the fake machine supports)
TUNE_PRESETS = {
    "tune": 'countermeasures = ["tune"]\n',
    "tune schedutil": 'countermeasures = ["tune"]\n[tune]\ngovernor = "schedutil"\n',
    "managed": None,
}


def _status(names: list[str]) -> int:
    """The exit status after these signals: 128 + the signal, SIGTERM over SIGHUP over
    SIGINT (cli/__init__.py)."""
    return 143 if "TERM" in names else 129 if "HUP" in names else 130


def _random_machine(rng: random.Random) -> dict:
    """A fake machine's shape: CPUs, governor, boost and turbo knobs, ASLR, drawn at random."""
    return {"cpus": rng.choice([1, 2, 4, 8]),
            "governor": rng.choice(["powersave", "schedutil", "ondemand"]),
            "governors": "performance powersave schedutil ondemand",
            "boost": rng.choice([0, 1, None]), "no_turbo": rng.choice([None, 0, 1]),
            "min_khz": rng.choice([400000, 800000]), "cur_khz": rng.choice([800000, 2400000])}


def _machine_setup(shape: dict, preset: str, end: str = "normal",
                   extra: Callable[[Path], None] | None = None) -> Callable[[Path], None]:
    """Make the case's fake machine ``{dir}/root``, its snapshot ``before.json``, the bench and
    the preset file."""

    def setup(folder: Path) -> None:
        root = make_machine(folder / "root", **shape)
        (folder / "root" / "proc" / "sys" / "kernel" / "randomize_va_space").write_text("2\n")
        (folder / "bench.py").write_text(TUNED_BENCH.format(marker=str(folder / "sampling"),
                                                            end=end))
        text = TUNE_PRESETS[preset]
        if text is not None:
            (folder / "preset.toml").write_text(text)
        if extra is not None:
            extra(folder)
        (folder / "before.json").write_text(json.dumps(snapshot(root)))

    return setup


def _left_changed(folder: Path) -> int:
    """Files of the fake tree that differ from the snapshot taken before the run (+ missing)."""
    before = json.loads((folder / "before.json").read_text())
    after = snapshot(folder / "root")
    return sum(1 for k in set(before) | set(after) if before.get(k) != after.get(k))


def _reset_then_count(folder: Path, outcome: Outcome) -> int:
    """After a SIGKILL: ``system reset`` must bring every file back."""
    subprocess.run(steadybench("--root", str(folder / "root"), "system", "reset"), cwd=folder,
                   env=_case_env(folder), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   timeout=CASE_TIMEOUT)
    return _left_changed(folder)


def _case_env(folder: Path) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "XDG_STATE_HOME": str(folder / "state")}
    env.pop("STEADYBENCH_ROOT", None)
    return env


def _wait_for(path_of: Callable[[], Path], proc: subprocess.Popen, limit: float = 60) -> bool:
    """Poll until the child made the file, or exited, or ``limit`` seconds passed."""
    deadline = time.monotonic() + limit
    while not path_of().exists():
        if proc.poll() is not None or time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def _signals(names: list[str], proc: subprocess.Popen, gap: float = 0.0) -> None:
    for name in names:
        with contextlib.suppress(ProcessLookupError):
            proc.send_signal(getattr(signal, f"SIG{name}"))
        if gap:
            time.sleep(gap)


class _Folder:
    """The case's folder, known only once the case runs (``drive`` gets the process only)."""

    def __init__(self) -> None:
        self.path = Path("/nonexistent")

    def __call__(self, folder: Path) -> None:
        self.path = folder


def _tuned_case(name: str, rng: random.Random, *, mode: list[str], preset: str,
                end: str = "normal", runs: str = "100000", expect: tuple[int, ...] = (0,),
                drive: Callable[[Path, subprocess.Popen], None] | None = None,
                gate: str | None = None, after_kill: bool = False,
                extra: Callable[[Path], None] | None = None) -> Case:
    shape = _random_machine(rng)
    where = _Folder()
    setup_machine = _machine_setup(shape, preset, end, extra)

    def setup(folder: Path) -> None:
        where(folder)
        setup_machine(folder)

    preset_arg = "managed" if TUNE_PRESETS[preset] is None else "{dir}/preset.toml"
    argv = ["--root", "{dir}/root", "run", "{dir}/bench.py", "--preset", preset_arg, *mode,
            "--runs", runs, "--time-limit", "3600", "-q", "--json", "{dir}/r.json"]
    env = {"XDG_STATE_HOME": "{dir}/state"}
    if gate:
        env["STEADYBENCH_TEST_RESTORE_GATE"] = gate
    label = (f"{name} [{preset}, {' '.join(mode) or 'workers'}, {shape['cpus']} cpus "
             f"{shape['governor']} boost={shape['boost']} no_turbo={shape['no_turbo']}]")
    return Case(label, argv, expect, setup=setup, env=env,
                drive=(lambda proc: drive(where.path, proc)) if drive else None,
                check=(lambda folder, outcome: _reset_then_count(folder, outcome))
                if after_kill else (lambda folder, outcome: _left_changed(folder)))


def _planted_journal(kind: str) -> Callable[[Path], None]:
    """A journal ``system reset`` must refuse: writable by others, owned by another uid, or
    naming a file of the tree that is a symlink to a file outside it."""

    def extra(folder: Path) -> None:
        from steadybench.system.journal import Journal
        from steadybench.system.sysfs import SysRoot

        state = folder / "state" / "steadybench"
        state.mkdir(parents=True, mode=0o700)
        rel = "/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"
        if kind == "symlink":
            outside = folder / "outside.txt"
            outside.write_text("precious\n")
            target = folder / "root" / rel.lstrip("/")
            target.unlink()
            target.symlink_to(outside)
        journal = Journal(state / "tune.json", SysRoot(folder / "root"))
        journal.record(rel, b"performance\n", b"powersave\n", "governor")
        # an entry outside the allow-list, as a forger would add by hand
        (folder / "root" / "proc/sys/kernel/core_pattern").write_text("core\n")
        data = json.loads(journal.path.read_text())
        data["entries"].append({"path": "/proc/sys/kernel/core_pattern", "setting": "",
                                "original_b64": "fC9iaW4vc2ggLWMgJ3RvdWNoIHB3bmVkJwo=",
                                "new_b64": "Y29yZQo="})
        journal.path.write_text(json.dumps(data))
        if kind == "group-writable":
            os.chmod(journal.path, 0o666)
        elif kind == "other uid":
            os.chown(journal.path, 12345, 12345)

    return extra


@category("fault scenarios")
def fault_scenarios(ctx: Context) -> list[Case]:
    """Machine-control faults on fake sysfs trees (never the real /sys), each on a machine of
    random shape: runs that end normally, signals while measuring, signals at a random file of
    the restore (paused there by ``STEADYBENCH_TEST_RESTORE_GATE``, so no race), SIGKILL and
    then ``system reset``, user code that exits, overlapping tuned runs, ``system tune`` then
    ``reset``, and planted journals. The check counts the tree's files left different from the
    snapshot taken before (and, after a SIGKILL, after ``system reset``)."""
    rng = ctx.rng
    modes = [["--in-process"], ["-p", "2"]]
    presets = list(TUNE_PRESETS)
    cases: list[Case] = []

    def pick() -> tuple[list[str], str]:
        return rng.choice(modes), rng.choice(presets)

    n = 3 if ctx.quick else 14
    for _ in range(n):  # ends normally
        mode, preset = pick()
        cases.append(_tuned_case("completes", rng, mode=mode, preset=preset, runs="5"))
    for _ in range(n):  # signals while measuring
        mode, preset = pick()
        names = rng.choice([["INT"], ["TERM"], ["HUP"], ["INT", "TERM"], ["INT", "INT"],
                            ["TERM", "INT"]])
        delay = rng.uniform(0, 0.3)

        def drive(folder: Path, proc: subprocess.Popen, names=names, delay=delay) -> None:
            if _wait_for(lambda: folder / "sampling", proc):
                time.sleep(delay)
                _signals(names, proc)

        status = _status(names)
        cases.append(_tuned_case(f"SIG{'+'.join(names)} while measuring", rng, mode=mode,
                                 preset=preset, expect=(status,), drive=drive))
    for _ in range(n):  # signals during the restore, before a random file
        mode, preset = pick()
        names = rng.choice([["TERM"], ["INT"], ["HUP"], ["INT", "TERM"], ["TERM", "HUP"]])
        k = rng.randrange(0, 3)

        def drive(folder: Path, proc: subprocess.Popen, names=names) -> None:
            if _wait_for(lambda: folder / "gate", proc):
                _signals(names, proc)

        status = _status(names)
        cases.append(_tuned_case(f"SIG{'+'.join(names)} before restoring file {k}", rng,
                                 mode=["--in-process"], preset=preset, runs="3",
                                 expect=(status, 0), drive=drive,
                                 gate=f"{k}:{','.join(names)}:{{dir}}/gate"))
    for _ in range(n):  # SIGKILL while measuring or during the restore, then system reset
        mode, preset = pick()
        during_restore = rng.random() < 0.5
        k = rng.randrange(0, 3)

        def drive(folder: Path, proc: subprocess.Popen, during_restore=during_restore) -> None:
            marker = folder / ("gate" if during_restore else "sampling")
            if _wait_for(lambda: marker, proc):
                time.sleep(0 if during_restore else rng.uniform(0, 0.2))
                _signals(["KILL"], proc)

        where = f"before restoring file {k}" if during_restore else "while measuring"
        cases.append(_tuned_case(f"SIGKILL {where}, then system reset", rng,
                                 mode=["--in-process"] if during_restore else mode,
                                 preset=preset, runs="3" if during_restore else "100000",
                                 expect=(-9, 0), drive=drive, after_kill=True,
                                 gate=f"{k}:USR2:{{dir}}/gate" if during_restore else None))
    for end in ("exit", "os._exit", "BaseException"):  # user code ends the process
        for mode in modes:
            preset = rng.choice(presets)
            # os._exit in-process ends steadybench itself: that is a SIGKILL-like death
            killed = end == "os._exit" and mode == ["--in-process"]
            cases.append(_tuned_case(f"benchmark calls {end}", rng, mode=mode, preset=preset,
                                     end=end, expect=(0, 1, 3), after_kill=killed))
    for _ in range(2 if ctx.quick else 6):  # a second tuned run while the first measures
        mode, preset = pick()

        def drive(folder: Path, proc: subprocess.Popen, preset=preset) -> None:
            if not _wait_for(lambda: folder / "sampling", proc):
                return
            arg = "managed" if TUNE_PRESETS[preset] is None else str(folder / "preset.toml")
            second = subprocess.run(
                steadybench("--root", str(folder / "root"), "run", str(folder / "bench.py"),
                            "--preset", arg, "--in-process", "--runs", "3", "-q"),
                cwd=folder, env=_case_env(folder), capture_output=True, timeout=CASE_TIMEOUT)
            (folder / "second.txt").write_text(f"{second.returncode}\n")
            _signals(["INT"], proc)

        def refused(folder: Path, outcome: Outcome) -> int:
            second = (folder / "second.txt")
            wrong = int(not second.exists() or second.read_text().strip() == "0")
            return _left_changed(folder) + wrong

        case = _tuned_case("second tuned run while the first measures", rng, mode=mode,
                           preset=preset, expect=(130,), drive=drive)
        case.check = refused
        cases.append(case)
    for _ in range(2 if ctx.quick else 6):  # system tune, then system reset
        shape = _random_machine(rng)
        setup = _machine_setup(shape, "tune")
        cases.append(Case(f"system tune, then reset [{shape['cpus']} cpus {shape['governor']}]",
                          ["--root", "{dir}/root", "system", "tune"], (0,), setup=setup,
                          env={"XDG_STATE_HOME": "{dir}/state"}, check=_reset_then_count))
    kinds = ["group-writable", "other uid", "symlink"] if os.geteuid() == 0 else \
        ["group-writable", "symlink"]
    for kind in kinds:  # planted journals: reset must change nothing
        setup = _machine_setup(_random_machine(rng), "tune", extra=_planted_journal(kind))

        def planted(folder: Path, outcome: Outcome) -> int:
            outside = folder / "outside.txt"
            changed = outside.exists() and outside.read_text() != "precious\n"
            return _left_changed(folder) + int(changed) + int((folder / "pwned").exists())

        cases.append(Case(f"system reset with a planted journal ({kind})",
                          ["--root", "{dir}/root", "system", "reset"], (0, 1, 2), setup=setup,
                          env={"XDG_STATE_HOME": "{dir}/state"}, check=planted))
    return cases


# ============================================================================ bad inputs
#: options that give a special value a documented meaning: ``--outlier-threshold inf`` keeps
#: every point (no robust refit)
ACCEPTED_SPECIAL = {"--outlier-threshold": ("inf",)}
#: values no numeric option accepts
REFUSED_NUMBERS = ["nan", "inf", "-inf", "1e400", "-1", "-1e-300", "abc", "", "1,5", "0x1p3"]
#: values that are refused by an int option, and not numbers at all for any option
REFUSED_INTEGERS = [str(10**30), "1e3", "9" * 400]
#: values an option may accept or refuse, but that must never crash or hang (a value that
#: is valid but asks for a long wait, such as --interval 1e9, is not a fault)
DOUBTFUL_NUMBERS = ["1e300", "1e-300", "0", "1e15"]


def _bases(fx: Path) -> dict[str, tuple[list[str], list[str]]]:
    """A quick, valid invocation of each command: (arguments before, arguments after) the
    option under test (a later option of the same name overrides the base's)."""
    py = ["--", "true"]
    return {
        "exec": (["exec", "-q", "--runs", "2", "--no-correction", "--time-limit", "5"], py),
        "iters": (["iters", "-q", "--shell", "--runs", "3", "--min-points", "3",
                   "--bootstrap", "0", "--time-limit", "5"], ["--", "echo BATCHTIME: {iters}e-6"]),
        "sweep": (["sweep", "-q", "--shell", "--sizes", "2,4,8", "--runs", "3", "--min-points",
                   "3", "--bootstrap", "0", "--time-limit", "5"],
                  ["--", "echo BATCHTIME: $(( {iters} * {size} ))e-6"]),
        "run": (["run", "-q", str(fx / "bench.py"), "-p", "1", "--runs", "3", "--time-limit",
                 "10"], []),
        "demo": (["demo", "--out", "{dir}/demo", "--max-time", "0.01", "-p", "1"], []),
        "compare": (["compare", "-q", str(fx / "base.txt"), str(fx / "new.txt")], []),
        "ab": (["ab", "-c", "-q", "true", "true", "--max-rounds", "12"], []),
        "report": (["report", str(fx / "results.json"), "-o", "{dir}/r.html"], []),
        "blocks": (["blocks", str(fx / "counts.csv")], []),
        "system show": (["system", "show", "--interval", "0"], []),
        "system check": (["system", "check", "--interval", "0"], []),
    }


#: commands whose valid runs take long (the whole demo suite): only values every option refuses
SLOW = {"demo"}
#: what a valid run of a command may exit with (system check: 1 when the machine is not fit)
VALID_STATUS = {"system check": (0, 1, 2), "ab": (0, 1, 2)}


def numeric_options() -> list[tuple[str, str, str]]:
    """(command path, option, "int" | "float") for every numeric option of every command, read
    from the command line itself, so a new option is tried as soon as it exists."""
    import click

    from steadybench.cli import cli

    found = []

    def walk(command: click.Command, path: str) -> None:
        for param in command.params:
            if not isinstance(param, click.Option) or param.is_flag or param.count:
                continue
            if isinstance(param.type, click.types.IntParamType):
                found.append((path, param.opts[-1], "int"))
            elif isinstance(param.type, click.types.FloatParamType):
                found.append((path, param.opts[-1], "float"))
        if isinstance(command, click.Group):
            for name, sub in command.commands.items():
                walk(sub, f"{path} {name}")

    ctx = click.Context(cli)
    for name in cli.list_commands(ctx):
        walk(cli.get_command(ctx, name), name)
    return found


@category("bad inputs")
def bad_numbers(ctx: Context) -> list[Case]:
    """Every numeric option of every command, with values it must refuse (one line, exit 2)
    and values it may accept (then a normal run), never a crash or a hang."""
    bases = _bases(ctx.fixtures)
    cases = []
    for path, option, kind in numeric_options():
        if path not in bases:
            continue
        before, after = bases[path]
        refused = REFUSED_NUMBERS + (REFUSED_INTEGERS if kind == "int" else [])
        accepted = ACCEPTED_SPECIAL.get(option, ())
        values = [(v, (2,)) for v in refused if v not in accepted]
        values += [(v, VALID_STATUS.get(path, (0, 1, 2))) for v in accepted]
        if path not in SLOW:
            values += [(v, VALID_STATUS.get(path, (0, 1, 2))) for v in DOUBTFUL_NUMBERS]
        for value, expect in ctx.sample(values, 1, 8):
            cases.append(Case(f"{path} {option} {value!r}", [*before, option, value, *after],
                              expect))
    return cases


#: (command path, option) → values that are malformed for it (exit 2)
MALFORMED_VALUES: dict[tuple[str, str], list[str]] = {
    ("exec", "--param"): ["x", "=1", "x=", "x=,", "1x=3", "x=1,,2", "x y=1", "iters=1"],
    ("exec", "--param-range"): ["x=1", "x=1:2:0", "x=2:1", "x=nan:1", "x=1:inf", "x=a:b",
                                "x=1:2:3:4", "x=-inf:0", "x=0:1:nan", "x=0:1e308:1e-308",
                                "x=0:1e9"],
    ("sweep", "--sizes"): ["", "..", "1..", "..8", "0..8", "-1..8", "8..2", "2^1e9", "nan",
                           "1e400", "a,b", "2^99999", "1..1e300", "1,2,,3", "2^-3"],
    ("exec", "--order"): ["sideways", ""],
    ("exec", "--cmd"): ["", "   ", "echo 'unbalanced", 'echo "unbalanced', "echo {nope}"],
    ("exec", "--name"): ["a", "b"],  # more names than commands
    ("compare", "--confidence"): ["nan", "inf", "150%", "-5%", "0", "1", "abc", "95%%", "1e400"],
    ("compare", "--threshold"): ["nan", "-1%", "inf%", "abc", "1e400%", "%"],
    ("compare", "--precision"): ["nan", "-1", "inf", "abc", "0"],
    ("compare", "--column"): ["0", "-1", "99", "nope"],
    ("ab", "--confidence"): ["nan", "inf", "150%", "-5%", "0", "1", "abc"],
    ("ab", "--threshold"): ["nan", "-1%", "inf%", "abc"],
    ("run", "--method-option"): ["m", "=3", "m=nan", "m=-1", "nope=1"],
    ("run", "--method"): ["bogus", ""],
    ("run", "-k"): ["zzz-matches-nothing"],
    ("exec", "--preset"): ["no-such-preset", ""],
}


@category("bad inputs")
def malformed_values(ctx: Context) -> list[Case]:
    """Option values that are not numbers but are malformed (parameter specs, size grids,
    confidence texts, command lines)."""
    bases = _bases(ctx.fixtures)
    cases = []
    for (path, option), values in MALFORMED_VALUES.items():
        before, after = bases[path]
        if option == "--name":
            cases.append(Case(f"{path} --name ×3", [*before, "--name", "a", "--name", "b",
                                                    "--name", "c", *after]))
            continue
        if option == "--cmd":
            after = []
        if option in ("--param", "--param-range"):
            after = ["--", "echo", "{x}"]
        for value in ctx.sample(values, 2):
            cases.append(Case(f"{path} {option} {value!r}", [*before, option, value, *after]))
    return cases


# ---------------------------------------------------------------------------- files
def _random_bytes(rng: random.Random, size: int) -> bytes:
    return bytes(rng.randrange(256) for _ in range(size))


def _mutated_results(rng: random.Random, fixtures: Path) -> bytes:
    """The fixture results file with one field, chosen at random, given a value of the wrong
    kind (a string, a number, a list, null, a deep nest)."""
    data = json.loads((fixtures / "results.json").read_text())
    where = rng.choice(["top", "benchmark", "runs", "estimate"])
    holder = {"top": data, "benchmark": data["benchmarks"][0],
              "runs": data["benchmarks"][0]["runs"],
              "estimate": data["benchmarks"][0].get("estimate") or {}}[where]
    if not holder:
        holder = data
    key = rng.choice(sorted(holder))
    holder[key] = rng.choice(["x", 3, -1.5, [], ["x"], None, {"a": "b"}, [[[[[]]]]], True])
    return json.dumps(data).encode()


def file_contents(rng: random.Random, fixtures: Path) -> dict[str, Callable[[], bytes]]:
    """Name → maker of a malformed file."""
    return {
        "empty": lambda: b"",
        "random bytes": lambda: _random_bytes(rng, rng.randrange(1, 4096)),
        "NULs": lambda: b"\0" * rng.randrange(1, 5000),
        "invalid UTF-8": lambda: b"\xff\xfe\xfa" * 100,
        "deep JSON": lambda: b"[" * 100_000 + b"]" * 100_000,
        "deep JSON object": lambda: b'{"a":' * 50_000 + b"1" + b"}" * 50_000,
        "deep TOML": lambda: b"a = " + b"[" * 100_000 + b"]" * 100_000,
        "string entries": lambda: json.dumps({"schema_version": 1, "benchmarks": ["x", "y"]})
        .encode(),
        "mutated results": lambda: _mutated_results(rng, fixtures),
        "truncated results": lambda: (fixtures / "results.json").read_bytes()[
            :rng.randrange(1, (fixtures / "results.json").stat().st_size)],
        "NaN samples": lambda: b"1.0\nnan\ninf\n-inf\n1e400\n",
        "one huge line": lambda: b"9" * 1_000_000,
        "CR line ends": lambda: b"1.0\r2.0\r3.0\r",
    }


#: special paths given where a file is read: name → (the path, with {dir} for the case's
#: folder; what makes it there first)
SPECIAL_PATHS: dict[str, tuple[str, Callable[[Path], object] | None]] = {
    "/dev/zero": ("/dev/zero", None),
    "/dev/null": ("/dev/null", None),
    "a FIFO": ("{dir}/fifo", lambda d: os.mkfifo(d / "fifo")),
    "a folder": ("{dir}/sub", lambda d: (d / "sub").mkdir()),
    "missing": ("{dir}/missing", None),
    "a symlink loop": ("{dir}/loop", lambda d: (d / "loop").symlink_to(d / "loop")),
    "/proc/self/mem": ("/proc/self/mem", None),
}


def _readers(fx: Path) -> dict[str, Callable[[str], list[str]]]:
    """Name → the arguments that make a command read the file at a path."""
    return {
        "exec --file": lambda p: ["exec", "-q", "--runs", "1", "--file", p],
        "run": lambda p: ["run", "-q", p, "-p", "1", "--runs", "2"],
        "compare": lambda p: ["compare", "-q", p, str(fx / "base.txt")],
        "report": lambda p: ["report", p, "-o", "{dir}/r.html"],
        "blocks": lambda p: ["blocks", p],
        "exec --preset": lambda p: ["exec", "-q", "--runs", "1", "--preset", p, "--", "true"],
        "system check --preset": lambda p: ["system", "check", "--interval", "0", "--preset",
                                            p],
    }


@category("bad inputs")
def bad_files(ctx: Context) -> list[Case]:
    """Every file a command reads, given malformed contents and special paths (devices, a
    FIFO, a folder, a symlink loop): refused with one line, never read for ever."""
    readers = _readers(ctx.fixtures)
    contents = file_contents(ctx.rng, ctx.fixtures)
    cases = []
    for reader, args in readers.items():
        suffix = {"exec --file": ".toml", "run": ".py", "blocks": ".csv",
                  "exec --preset": ".toml", "system check --preset": ".toml"}.get(reader,
                                                                                  ".json")
        for what in ctx.sample(sorted(contents), 3):
            data = contents[what]()
            name = f"bad{suffix}"

            def setup(folder: Path, data: bytes = data, name: str = name) -> None:
                (folder / name).write_bytes(data)

            # a mutated results file may still be readable, an empty preset is the baseline:
            # then any normal end is right
            doubtful = what in ("mutated results", "NaN samples", "CR line ends") or (
                what == "empty" and "--preset" in reader)
            expect = (0, 1, 2) if doubtful else (2,) if reader != "system check --preset" \
                else (1, 2)
            cases.append(Case(f"{reader} <{what}>", args(f"{{dir}}/{name}"), expect,
                              setup=setup))
        for special in ctx.sample(sorted(SPECIAL_PATHS), 2):
            path, make = SPECIAL_PATHS[special]
            cases.append(Case(f"{reader} <{special}>", args(path), (2,),
                              setup=_maker(make)))
    # standard input: devices are accepted (documented), FIFOs and folders are not
    for special, expect in (("/dev/zero", (0,)), ("/dev/null", (0,)), ("a FIFO", (2,)),
                            ("a folder", (2,)), ("missing", (2,))):
        path, make = SPECIAL_PATHS[special]
        cases.append(Case(f"exec --input <{special}>",
                          ["exec", "-q", "--runs", "1", "--no-correction", "--input", path,
                           "--", "true"], expect, setup=_maker(make)))
    return cases


#: values of the wrong kind for a field of a results file (issue 27: report ended in an
#: internal error on an object for a name and a list for a number)
WRONG_KINDS: list[object] = [{"a": {"b": 1}}, [1, {"a": 2}], [[["x"]]], None, "x", 3.5, True]


def _field_holders(data: dict) -> dict[str, dict]:
    """Where the readers look: the top level, a benchmark, its runs, estimate and interval."""
    entry = data["benchmarks"][0]
    holders = {"top": data, "benchmark": entry}
    for part in ("runs", "estimate", "ci", "stats"):
        if isinstance(entry.get(part), dict):
            holders[part] = entry[part]
    return holders


@category("bad inputs")
def results_fields(ctx: Context) -> list[Case]:
    """Every field of a results file given each kind it must not have (an object, a list, a
    deep list, null, text, a number, a boolean), read by report, compare and show: one clear
    line and exit 2, or a normal end where the kind is harmless."""
    fixture = ctx.fixtures / "results.json"
    data = json.loads(fixture.read_text())
    fields = [(where, key) for where, holder in _field_holders(data).items()
              for key in sorted(holder)]
    readers = {"report": lambda p: ["report", p, "-o", "{dir}/r.html"],
               "compare": lambda p: ["compare", "-q", p, p],
               "show": lambda p: ["show", p, "--all"]}
    cases = []
    for where, key in ctx.sample(fields, 4):
        for wrong in ctx.sample(WRONG_KINDS, 1, 3):
            doc = json.loads(fixture.read_text())
            _field_holders(doc)[where][key] = wrong
            payload = json.dumps(doc).encode()
            reader = ctx.rng.choice(sorted(readers))

            def setup(folder: Path, payload: bytes = payload) -> None:
                (folder / "fields.json").write_bytes(payload)

            cases.append(Case(f"{reader} <{where}.{key} = {json.dumps(wrong)[:12]}>",
                              readers[reader]("{dir}/fields.json"), (0, 1, 2), setup=setup))
    return cases


def _maker(make: Callable[[Path], object] | None) -> Callable[[Path], None] | None:
    if make is None:
        return None

    def setup(folder: Path) -> None:
        make(folder)

    return setup


#: names of a benchmark, a command or a file that are hostile to terminals and file formats
HOSTILE_NAMES = ["\x1b[2J\x1b[31mred", "a\rb", "line\nbreak", "tab\tname", "x" * 5000,
                 "[link](http://x)", "<b>&amp;</b>", "\x07bell", "é ü 漢字", "-n", "--help",
                 "'; rm -rf /; '", "\u202eevil"]


@category("bad inputs")
def hostile_names_and_paths(ctx: Context) -> list[Case]:
    """Hostile names (terminal escapes, line breaks, huge) and output paths that cannot be
    written (/proc, /dev/full, a folder): one line and exit 2, or a normal run."""
    cases = []
    for name in ctx.sample(HOSTILE_NAMES, 3):
        cases.append(Case(f"exec --name {name[:20]!r}",
                          ["exec", "-q", "--runs", "2", "--no-correction", "--name", name,
                           "--json", "{dir}/r.json", "--markdown", "{dir}/r.md", "--xml",
                           "{dir}/r.xml", "--", "true"], (0,)))
        bench = f"import steadybench as sb\n\n\n@sb.benchmark(name={name!r})\n" \
                "def f():\n    return lambda: None\n"
        cases.append(Case(f"run <benchmark named {name[:20]!r}>",
                          ["run", "-q", "{dir}/b.py", "-p", "1", "--runs", "2", "--json",
                           "{dir}/r.json"], (0, 2),
                          setup=lambda folder, b=bench: (folder / "b.py").write_text(b)))
    paths = {"/proc/version": (2,), "/proc/sys/new.json": (2,), "{dir}": (2,),
             "/dev/full": (1, 2), "{dir}/new/deeper/r.json": (2,),  # no folder made (item 18)
             "{dir}/line\nbreak.json": (0,), "{dir}/" + "x" * 300 + ".json": (2,)}
    for path in ctx.sample(sorted(paths), 3):
        fmt = ctx.rng.choice(["--json", "--csv", "--xml", "--markdown", "--report"])
        cases.append(Case(f"exec {fmt} {path[:40]!r}",
                          ["exec", "-q", "--runs", "2", "--no-correction", fmt, path, "--",
                           "true"], paths[path]))
    for args, expect in ((["--root", "/nonexistent", "system", "show"], (2,)),
                         (["--root", "/etc/passwd", "system", "show"], (2,)),
                         (["demo", "--out", "/proc/sys"], (2,)),
                         (["demo", "--out", "/dev/null"], (2,)),
                         (["exec", "--output", "/proc/version", "--", "true"], (2,)),
                         (["exec", "--", "/no/such/program"], (2,)),
                         (["exec", "--", "/etc/passwd"], (2,)),
                         (["exec", "--", "{dir}"], (2,)),
                         (["exec", "--", "{dir}/script.sh"], (2,)),
                         (["exec", "-q", "--runs", "1", "--no-correction", "--", "sh", "-c",
                           "head -c 2000 /dev/zero >&2; printf '\\033[2J' >&2; exit 3"], (1,)),
                         (["exec", "-q", "--runs", "1", "--no-correction", "--cmd",
                           "x" * 100_000], (2,)),
                         (["nosuchcommand"], (2,)),
                         (["exec", "--no-such-option"], (2,))):
        def setup(folder: Path) -> None:
            script = folder / "script.sh"
            script.write_text("#!/no/such/interp\necho hi\n")
            script.chmod(0o755)

        cases.append(Case(" ".join(a[:30] for a in args)[:70], args, expect, setup=setup))
    return cases


@category("bad inputs")
def hanging_commands(ctx: Context) -> list[Case]:
    """Commands that never end, without ``--timeout``: the hard time limit and the
    ``--max-time`` budget must end them (exit 1, a failed run)."""
    never = ["sleep", "100000"]
    return [
        Case("exec --time-limit 1 (never ends)",
             ["exec", "-q", "--no-correction", "--time-limit", "1", "--", *never], (1,),
             timeout=30),
        Case("exec --max-time 1 (never ends)",
             ["exec", "-q", "--no-correction", "--max-time", "1", "--", *never], (1,),
             timeout=30),
        Case("exec -i --max-time 0.5 (never ends)",
             ["exec", "-q", "-i", "--no-correction", "--max-time", "0.5", "--time-limit", "2",
              "--", *never], (1,), timeout=30),
        Case("iters --time-limit 1 --timeout 60 (never ends)",
             ["iters", "-q", "--time-limit", "1", "--timeout", "60", "--", *never], (1,),
             timeout=30),
    ]


# ============================================================================ interrupts
#: every output a run can write, and how a fresh one is recognised
RUN_OUTPUTS = {"--json": "r.json", "--xml": "r.xml", "--csv": "r.csv", "--markdown": "r.md",
               "--report": "r.html"}
STALE = "stale output of a previous run\n"

#: a benchmark with two cases that says when it measures (the signal comes after that)
INTERRUPTED_BENCH = """\
import os, time
import steadybench as sb

MARK = {marker!r}


def work():
    if not os.path.exists(MARK):
        open(MARK, "w").close()
    time.sleep(0.0002)


@sb.benchmark(n=[1, 2])
def sampled(n):
    return work
"""


def _fresh(path: Path, option: str) -> bool:
    """The output exists, is not the stale one, and is well formed for its kind."""
    import xml.etree.ElementTree as ET

    if not path.exists():
        return False
    text = path.read_text(encoding="utf-8", errors="replace")
    if text == STALE:
        return False
    try:
        if option in ("--json", "--export-json"):
            data = json.loads(text)
            return isinstance(data, dict)
        if option == "--xml":
            ET.fromstring(text)
            return True
    except ValueError:
        return False
    except ET.ParseError:
        return False
    if option == "--csv":
        return text.startswith("benchmark,") or text.startswith("command,")
    if option == "--markdown":
        return text.lstrip().startswith(("#", "|"))
    return "<html" in text


def _outputs_check(outputs: dict[str, str]) -> Callable[[Path, Outcome], int]:
    def check(folder: Path, outcome: Outcome) -> int:
        return sum(not _fresh(folder / name, option) for option, name in outputs.items())

    return check


def _stale_outputs(outputs: dict[str, str], bench: str | None = None
                   ) -> Callable[[Path], None]:
    def setup(folder: Path) -> None:
        for name in outputs.values():
            (folder / name).write_text(STALE)
        if bench is not None:
            (folder / "bench.py").write_text(bench.format(marker=str(folder / "sampling")))

    return setup


@category("interrupts")
def interrupts(ctx: Context) -> list[Case]:
    """Signals at random moments once a run measures: SIGINT, SIGTERM, SIGHUP and pairs of
    them (a second Ctrl-C lands during the writing of the partial results as often as not),
    random delays, a random subset of the outputs, in-process and in worker processes, for
    ``run`` and ``exec``. Every output asked for was first written as a stale file: the check
    counts outputs missing, still stale, or malformed (``outputs lost or stale``)."""
    rng = ctx.rng
    cases: list[Case] = []
    count = 6 if ctx.quick else 40
    for i in range(count):
        program = "exec" if i % 4 == 3 else "run"
        names = rng.choice([["INT"], ["TERM"], ["HUP"], ["INT", "INT"], ["INT", "TERM"],
                            ["TERM", "TERM"]])
        gap = rng.choice([0.0, 0.001, 0.01, 0.05])
        delay = rng.uniform(0, 0.5)
        chosen = rng.sample(list(RUN_OUTPUTS), rng.randint(1, len(RUN_OUTPUTS)))
        if program == "exec":
            chosen = [o for o in chosen if o != "--xml"] or ["--json"]
        outputs = {o: RUN_OUTPUTS[o] for o in chosen}
        where = _Folder()
        if program == "run":
            mode = rng.choice([["--in-process"], ["-p", "2"]])
            argv = ["run", "{dir}/bench.py", *mode, "--runs", "100000", "--time-limit",
                    "3600", "-q"]
            setup_files = _stale_outputs(outputs, INTERRUPTED_BENCH)
        else:
            mode = []
            argv = ["exec", "-q", "--runs", "100000", "--no-correction", "--time-limit",
                    "3600", "--shell", "--cmd", "touch {dir}/sampling"]
            setup_files = _stale_outputs(outputs)
        for option, name in outputs.items():
            argv += [option, "{dir}/" + name]

        def setup(folder: Path, setup_files=setup_files, where=where) -> None:
            where(folder)
            setup_files(folder)

        late: list[bool] = []

        def drive(proc: subprocess.Popen, names=names, gap=gap, delay=delay,
                  where=where, outputs=outputs, late=late) -> None:
            if _wait_for(lambda: where.path / "sampling", proc):
                time.sleep(delay)
                _signals(names, proc, gap)
                late.append(all(_fresh(where.path / n, o) for o, n in outputs.items()))

        statuses = _pair_statuses(names)
        label = (f"{program} {' '.join(mode)} SIG{'+'.join(names)} after {delay:.2f} s "
                 f"(gap {gap:g} s), outputs {' '.join(chosen)}")
        cases.append(Case(label, argv, statuses, setup=setup, drive=drive,
                          check=_late_pair_check(_outputs_check(outputs), statuses, late)))
    return cases


def _pair_statuses(names: list[str]) -> tuple[int, ...]:
    """The statuses that can be right after ``names`` sent in turn: the strongest signal's
    (:func:`_status`), and for a weaker signal followed by a stronger one also the first's.

    The second signal may come after the command ended: its outputs written, its word
    ("interrupted") said, its status chosen, Python in its final teardown, where a signal is
    ignored so as not to kill the process (entry.py, issue 27 item 16). The command ended by
    the first signal then, and says so with its status (130). Under load the sender's gap
    (a ``time.sleep``) stretches well past the shutdown of a run writing one small output:
    SIGINT then SIGTERM "50 ms" apart gave 130 at load 8-11. :func:`_late_pair_check` still
    requires the strong status whenever the command cannot have ended before the second
    signal (its outputs not all written when it was sent)."""
    strong, first = _status(names), _status(names[:1])
    return (strong,) if strong == first else (strong, first)


def _late_pair_check(check: Callable[[Path, Outcome], int], statuses: tuple[int, ...],
                     late: list[bool]) -> Callable[[Path, Outcome], int]:
    """``check``, plus one failure when the command gave the first signal's status although
    its outputs were not all written when the last signal was sent (``late`` says whether
    they were, measured by the driver right after sending): that signal came while the
    command was still working, so the stronger status is the only right one."""
    def judged(folder: Path, outcome: Outcome) -> int:
        early = bool(late) and not late[-1]
        wrong = len(statuses) > 1 and outcome.code == statuses[1] and early
        return check(folder, outcome) + int(wrong)

    return judged


def fault_control(folder: Path, timeout: float) -> bool:
    """The settings detector works: ``system tune`` without a reset leaves files changed."""
    setup = _machine_setup(_random_machine(random.Random(0)), "tune")
    case = Case("control", ["--root", "{dir}/root", "system", "tune"], (0,), setup=setup,
                env={"XDG_STATE_HOME": "{dir}/state"},
                check=lambda folder, outcome: _left_changed(folder))
    return run_case(case, folder, timeout).metric > 0


# ============================================================================ injection
#: payloads that create FILE when their text reaches a shell as code (no commas: a --param
#: value list splits there)
SHELL_PAYLOADS = [
    "$(touch FILE)", ";touch FILE", "`touch FILE`", "a|touch FILE", "a&&touch FILE",
    "'; touch FILE; '", '"; touch FILE; "', '\\"; touch FILE; \\"', "$(touch FILE)'\"",
    "a\ntouch FILE", "x > /dev/null; touch FILE #", "'$(touch FILE)'", '"$(touch FILE)"',
    "\\'; touch FILE; \\'", "a'\"`touch FILE`\"'",
]
#: pieces that random payloads are assembled from
_OPENERS = ["", ";", "&&", "||", "|", "\n", "'", '"', "`", "$(", ")", " ", "\\", "'\"", "#"]
_CLOSERS = ["", ";", "`", ")", "'", '"', " #", "\n", "&"]
#: shell lines: the placeholder in every quoting context ({x} is the value)
SHELL_TEMPLATES = [
    "echo {x}", "echo '{x}'", 'echo "{x}"', "echo pre{x}post", "echo \"$(echo {x})\"",
    "echo \"$(echo '{x}')\"", "echo \"$(echo \"{x}\")\"", "echo $(echo {x})", "test {x} != y",
    "echo {x} # '{x}'", "printf '%s' \"a{x}b\" > /dev/null",
]
#: shell lines where no quoting keeps a value literal: refused unless {x!raw}
REFUSED_TEMPLATES = ["echo `echo {x}`", "echo ${y:-{x}}", "cat <<E\n{x}\nE"]


def _random_payload(rng: random.Random) -> str:
    core = rng.choice(["touch FILE", "$(touch FILE)", "`touch FILE`"])
    return rng.choice(_OPENERS) + rng.choice(["", " "]) + core + rng.choice(_CLOSERS)


def _payload_case(name: str, template: str, payload: str, form: str,
                  expect: tuple[int, ...] = (0,)) -> Case:
    """One payload in one template, given in one form: ``--cmd``, after ``--``, or a commands
    file (``run`` or ``args``); the check counts the payload's file if it was made."""
    marker = "{dir}/pwned"
    value = payload.replace("FILE", marker)
    common = ["exec", "-q", "--shell", "--runs", "1", "--no-correction", "--time-limit", "10",
              "--param", f"x={value}"]
    setup = None
    if form == "--cmd":
        argv = [*common, "--cmd", template]
    elif form == "after --":
        argv = [*common, "--", template]
    else:
        entry = f"run = {json.dumps(template)}" if form == "file run" else \
            f"args = {json.dumps(template.split(' '))}"

        def setup(folder: Path, entry: str = entry) -> None:
            (folder / "commands.toml").write_text(f"[[command]]\n{entry}\n")

        argv = [*common, "--file", "{dir}/commands.toml"]
    return Case(f"{name} {form}: {template!r} x={payload!r}", argv, expect, setup=setup,
                check=lambda folder, outcome: int((folder / "pwned").exists()))


@category("injection payloads")
def shell_injection(ctx: Context) -> list[Case]:
    """``--param`` values with ``--shell``: known and random payloads × every quoting context
    × every way of giving a command. None may create its file."""
    payloads = SHELL_PAYLOADS + [_random_payload(ctx.rng) for _ in range(40)]
    forms = ["--cmd", "after --", "file run", "file args"]
    combos = [(t, p, f) for t in SHELL_TEMPLATES for p in payloads for f in forms
              if "," not in p]
    # a value with a line break in a comment is refused (exit 2): it would end the comment
    cases = [_payload_case("shell", t, p, f, (0, 2) if "#" in t else (0,))
             for t, p, f in ctx.sample(combos, 40, 400)]
    for template in REFUSED_TEMPLATES:
        payload = ctx.rng.choice(SHELL_PAYLOADS)
        cases.append(_payload_case("refused", template, payload, "--cmd", (2,)))
    # without --shell a value is one argument: never code
    for payload in ctx.sample(SHELL_PAYLOADS, 3, 8):
        case = _payload_case("no shell", "echo {x}", payload, "--cmd")
        case.argv.remove("--shell")
        cases.append(case)
    return cases


#: hook lines (issue 27 item 6), bash's $'...' included: one placeholder per payload parameter
HOOK_TEMPLATES = ["echo {x}", "echo '{x}'", 'echo "{x}"', "echo pre{x}post",
                  "echo \"$(echo {x})\"", "echo $'{x}'", "echo $'a{x}b'"]
#: the six hook forms: each option for all commands, and --prepare/--conclude per command
HOOK_FORMS = {"--prepare": 1, "--conclude": 1, "--setup": 1, "--cleanup": 1,
              "--prepare per command": 2, "--conclude per command": 2}
#: payloads that end a $'...' string in bash (an escaped quote there)
ANSI_PAYLOADS = ["\\'; touch FILE; '", "\\'$(touch FILE)'"]


@category("injection payloads")
def hook_injection(ctx: Context) -> list[Case]:
    """``--param`` values in ``--prepare``/``--conclude``/``--setup``/``--cleanup`` lines (always
    ``/bin/sh -c``), with and without ``--shell``: none may create its file."""
    payloads = [p for p in SHELL_PAYLOADS + ANSI_PAYLOADS if "," not in p]
    combos = [(t, p, f, sh) for t in HOOK_TEMPLATES for p in payloads for f in HOOK_FORMS
              for sh in (False, True)]
    cases = []
    for template, payload, form, shell in ctx.sample(combos, 30, 300):
        option = form.split()[0]
        value = payload.replace("FILE", "{dir}/pwned")
        commands = ["--cmd", "true A {x}"] + (["--cmd", "true B {x}"]
                                              if HOOK_FORMS[form] == 2 else [])
        argv = ["exec", "-q", "--runs", "1", "--no-correction", "--time-limit", "10",
                *(["--shell"] if shell else []), *commands, "--param", f"x={value}",
                *[a for _ in range(HOOK_FORMS[form]) for a in (option, template)]]
        cases.append(Case(f"hook {form}{' --shell' if shell else ''}: {template!r} "
                          f"x={payload!r}", argv, (0,),
                          check=lambda folder, outcome: int((folder / "pwned").exists())))
    return cases


def injection_control(folder: Path, timeout: float) -> bool:
    """The detector works: the raw form, which inserts a value as shell code on purpose,
    does create the payload's file."""
    case = _payload_case("control", "true {x!raw}", "&& touch FILE", "--cmd")
    return run_case(case, folder, timeout).metric == 1


# ============================================================================ issue 27
CATEGORIES["credentials"] = Category("credentials", "credentials", "passwords shown or kept")
CATEGORIES["machine reads"] = Category("machine reads", "machine reads",
                                       "outside files read or written")
CATEGORIES["read-only"] = Category("read-only", "read-only commands", "files created")
CATEGORIES["export injection"] = Category("export injection", "export injection",
                                          "raw escapes or formulas")

SECRET = "Sup3rS3cret"


def _leaks(folder: Path, outcome: Outcome) -> int:
    """Places the secret is shown or kept: the output, and any file's name or content."""
    count = int(SECRET in outcome.out + outcome.err)
    for path in folder.rglob("*"):
        count += SECRET in path.name
        if path.is_file() and path.stat().st_size < 50_000_000:
            count += SECRET.encode() in path.read_bytes()
    return count


@category("credentials")
def credentials(ctx: Context) -> list[Case]:
    """Passwords in history URLs (issue 27 item 7): never printed, never in a results file, a
    report or a file name; a libpq keyword string is PostgreSQL, never a SQLite path."""
    urls = [f"postgresql://ci:{SECRET}@127.0.0.1:1/db", f"postgres://ci:p@{SECRET}@127.0.0.1:1/d",
            f"postgresql://127.0.0.1:1/db?password={SECRET}&connect_timeout=2",
            f"host=127.0.0.1 port=1 dbname=d password={SECRET} connect_timeout=2",
            f"host=127.0.0.1 port=1 password='{SECRET} x' connect_timeout=2",
            f"mysql://u:{SECRET}@h/db", f"sqlite:///{{dir}}/h.sqlite?password={SECRET}",
            f"{{dir}}/h.sqlite password={SECRET}"]
    cases = []
    for url in urls:
        cases.append(Case(f"history list {url!r}", ["history", "list", "--history-url", url],
                          (1, 2), check=_leaks))
        cases.append(Case(f"exec recording to {url!r}",
                          ["exec", "--runs", "2", "--no-correction", "--json", "{dir}/r.json",
                           "--csv", "{dir}/r.csv", "--report", "{dir}/r.html",
                           "--history-url", url, "--", "true"], (1, 2), check=_leaks,
                          timeout=120))
    cases.append(Case("a password in a command's arguments",
                      ["exec", "--runs", "2", "--no-correction", "--json", "{dir}/r.json",
                       "--", "echo", f"postgresql://u:{SECRET}@h/db"], (0,), check=_leaks))
    return ctx.sample(cases, 8)


def _planted_machine(kind: str) -> Callable[[Path], None]:
    def setup(folder: Path) -> None:
        root = make_machine(folder / "m")
        target = root / "sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"
        target.unlink()
        outside = folder / "outside"
        outside.write_text(f"root:x:0:0:{SECRET}:/root:/bin/sh\n")
        if kind == "dev-zero":
            target.symlink_to("/dev/zero")
        elif kind == "fifo":
            os.mkfifo(target)
        elif kind == "outside link":
            target.symlink_to(outside)
        elif kind == "hard link":
            os.link(outside, target)
        elif kind == "huge":
            target.write_bytes(b"performance " * 500_000)
    return setup


def _outside_touched(folder: Path, outcome: Outcome) -> int:
    outside = folder / "outside"
    changed = outside.exists() and SECRET not in outside.read_text()
    return int(changed) + int(SECRET in outcome.out + outcome.err)


@category("machine reads")
def machine_reads(ctx: Context) -> list[Case]:
    """Planted machine files (issue 27 item 10): a governor that is /dev/zero, a FIFO, a link out
    of the root, a hard link to an outside file, a 6 MB file; ``system show/check/tune``
    neither hang, print the outside file, nor write through the link."""
    cases = []
    for kind in ("dev-zero", "fifo", "outside link", "hard link", "huge"):
        for command in (["system", "show", "--interval", "0"], ["system", "show", "--json"],
                        ["system", "check", "--interval", "0"], ["system", "tune", "--dry-run"],
                        ["system", "tune"]):
            cases.append(Case(f"{kind}: {' '.join(command)}",
                              ["--root", "{dir}/m", *command], (0, 1, 2),
                              setup=_planted_machine(kind), check=_outside_touched,
                              env={"XDG_STATE_HOME": "{dir}/state"}))
    return ctx.sample(cases, 10)


def _created(folder: Path, outcome: Outcome) -> int:
    return sum(1 for p in folder.rglob("*") if p.name != "fixture.json")


@category("read-only")
def read_only(ctx: Context) -> list[Case]:
    """Commands that only read create nothing (issue 27 item 18): every history reader on a
    missing store, and outputs in missing folders."""
    cases = []
    for args in (["list"], ["show", "HEAD"], ["trend", "x"], ["export", "#1"],
                 ["regressions"], ["noise"]):
        for url in ([], ["--history-url", "{dir}/h.sqlite"],
                    ["--history-url", "sqlite:///{dir}/\x01"]):
            cases.append(Case(f"history {' '.join(args + url)}", ["history", *args, *url],
                              (1, 2), check=_created))
    for option in ("--json", "--csv", "--xml", "--markdown", "--report"):
        cases.append(Case(f"exec {option} in a missing folder",
                          ["exec", "--runs", "2", "--no-correction", option,
                           "{dir}/a/b/out.file", "--", "true"], (2,), check=_created))
    return ctx.sample(cases, 8)


#: names that carry escapes, bidi overrides, line breaks and spreadsheet formulas
EXPORT_NAMES = ["\x1b]0;pwned\x07title", "\x1b[2J\x1b[31mred", "bidi\u202eevil",
                "line\nbreak", "=HYPERLINK(\"http://x.test\",\"x\")", "+1+1", "@SUM(A1)",
                "c1\x9b31m", "pipe | cell"]
RAW = ["\x1b", "\x9b", "\u202e", "\x07"]


def _number(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True


def _raw_in_exports(folder: Path, outcome: Outcome) -> int:
    import csv
    import io

    count = 0
    for path in folder.glob("r.*"):
        text = path.read_text(errors="replace")
        count += sum(c in text for c in RAW)
        if path.suffix == ".csv":
            for row in list(csv.reader(io.StringIO(text)))[1:]:
                count += sum(cell.startswith(("=", "+", "-", "@")) and not _number(cell)
                             for cell in row)
    count += sum(c in outcome.out + outcome.err for c in RAW)
    return count


@category("export injection")
def export_injection(ctx: Context) -> list[Case]:
    """Hostile command names in every export (issue 27 item 17): no raw escape, no bidi
    override, no spreadsheet formula, one Markdown row per command."""
    cases = []
    for name in EXPORT_NAMES:
        cases.append(Case(f"exports of {name!r}",
                          ["exec", "--runs", "2", "--no-correction", "-n", name,
                           "--csv", "{dir}/r.csv", "--xml", "{dir}/r.xml",
                           "--markdown", "{dir}/r.md", "--export-csv", "{dir}/r.hf.csv",
                           "--export-markdown", "{dir}/r.hf.md", "--report", "{dir}/r.html",
                           "--", "true"], (0,), check=_raw_in_exports, timeout=120))
    return ctx.sample(cases, 5)


# ============================================================================ issue 27, rest
CATEGORIES["third pass"] = Category("third pass", "third pass", "results lost or wrong")

#: benchmarks that never return, each ``{kind}`` a case of its own (issue 27 item 12)
HANG_KINDS = {
    "sleep": "lambda: time.sleep(3600)",
    "busy loop": "busy",
    "C-level regex": "lambda: re.match(r'(a+)+$', 'a' * 40 + 'b')",
    "signals blocked": "blocked",
}
HANG_BENCH = """\
import re, signal, time
import steadybench as sb

def busy():
    while True:
        pass

def blocked():
    signal.pthread_sigmask(signal.SIG_BLOCK,
                           set(signal.Signals) - {{signal.SIGKILL, signal.SIGSTOP}})
    while True:
        pass

@sb.benchmark
def fast():
    return lambda: sum(range(100))

@sb.benchmark
def hung():
    {factory}
    return {measured}
"""
#: an ITERS program whose BATCHTIME is tiny against its run time (item 2); $2: a spike factor
TINY_ITERS = """#!/bin/sh
exec awk -v n="$1" -v s="${2:-1}" 'BEGIN { srand(); f = (rand() < 0.2) ? s : 1
  printf "BATCHTIME: %.17g\\n", n * 1e-15 * f }'
"""


def _write(name: str, text: str, mode: int = 0o644) -> Callable[[Path], None]:
    def setup(folder: Path) -> None:
        (folder / name).write_text(text)
        (folder / name).chmod(mode)
    return setup


def _results_kept(name: str, bench: str | None = None) -> Callable[[Path, Outcome], int]:
    """1 when the results file ``name`` is missing, or misses the benchmark ``bench``."""
    def check(folder: Path, outcome: Outcome) -> int:
        path = folder / name
        if not path.exists():
            return 1
        if bench is None:
            return 0
        data = json.loads(path.read_text())
        return int(not any(b["name"] == bench and b["n"] > 0 for b in data["benchmarks"]))
    return check


def _fit_made(name: str, cases: int) -> Callable[[Path, Outcome], int]:
    """Cases of the ITERS results file ``name`` without a positive slope (a failed fit)."""
    def check(folder: Path, outcome: Outcome) -> int:
        path = folder / name
        if not path.exists():
            return cases
        found = json.loads(path.read_text())["benchmarks"]
        good = sum(bool((b.get("estimate") or {}).get("value")) and not b.get("errors")
                   for b in found)
        return cases - good + int("singular" in outcome.err)
    return check


def _setsid_child_dead(folder: Path, outcome: Outcome) -> int:
    try:
        pid = int((folder / "pid").read_text())
    except (OSError, ValueError):
        return 1
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return 0
    if state not in ("Z", "X"):
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
        return 1
    return 0


def _bad_results(value: str, where: str) -> Callable[[Path], None]:
    def setup(folder: Path) -> None:
        data = json.loads((folder.parent.parent / "fixtures" / "results.json").read_text())
        b = data["benchmarks"][0]
        if where == "samples":
            b["samples"] = ["__V__"] * max(1, len(b.get("samples") or []))
        elif where == "stats":
            b["stats"]["median"] = "__V__"
        else:
            b["estimate"]["value"] = "__V__"
        (folder / "bad.json").write_text(json.dumps(data).replace('"__V__"', value))
    return setup


@category("third pass")
def third_pass(ctx: Context) -> list[Case]:
    """Issue 27 items 2, 12, 14 and 15 (the part done in the last session's rest): hangs under
    ``--in-process --time-limit`` and at import, a ``setsid`` child, ITERS counts up to 10^12,
    impossible times in results files and near the float limit, generator benchmarks and
    ``os._exit`` at import, a benchmark that closes its standard output."""
    cases = []
    for kind, measured in HANG_KINDS.items():
        cases.append(Case(f"--in-process hang: {kind}",
                          ["run", "--in-process", "--max-time", "0.5", "--time-limit", "1",
                           "--json", "{dir}/r.json", "{dir}/hang.py"], (1,),
                          setup=_write("hang.py", HANG_BENCH.format(factory="pass",
                                                                    measured=measured)),
                          check=_results_kept("r.json", "fast")))
    cases.append(Case("--in-process hang in the factory",
                      ["run", "--in-process", "--max-time", "0.5", "--time-limit", "1",
                       "--json", "{dir}/r.json", "{dir}/hang.py"], (1,),
                      setup=_write("hang.py", HANG_BENCH.format(factory="time.sleep(3600)",
                                                                measured="None")),
                      check=_results_kept("r.json", "fast")))
    for mode in (["-p", "2"], ["--in-process"]):
        cases.append(Case(f"hang at import {' '.join(mode)}",
                          ["run", *mode, "--time-limit", "1", "{dir}/hang.py"], (2,),
                          setup=_write("hang.py", "import time\ntime.sleep(3600)\n")))
        cases.append(Case(f"os._exit(5) at import {' '.join(mode)}",
                          ["run", *mode, "--runs", "3", "{dir}/leave.py"], (2,),
                          setup=_write("leave.py", "import os\nos._exit(5)\n")))
        cases.append(Case(f"generator benchmark {' '.join(mode)}",
                          ["run", *mode, "--runs", "3", "--json", "{dir}/r.json",
                           "{dir}/gen.py"], (1, 2),
                          setup=_write("gen.py", "import steadybench as sb\n\ndef g():\n"
                                                 "    yield 1\n\n@sb.benchmark\ndef gen():\n"
                                                 "    return g\n")))
        cases.append(Case(f"benchmark raises KeyboardInterrupt {' '.join(mode)}",
                          ["run", *mode, "--runs", "3", "--json", "{dir}/r.json",
                           "{dir}/kbi.py"], (1,),
                          setup=_write("kbi.py", "import steadybench as sb\n\ndef f():\n"
                                                 "    raise KeyboardInterrupt\n\n"
                                                 "@sb.benchmark\ndef kbi():\n    return f\n"),
                          check=_results_kept("r.json")))
        cases.append(Case(f"benchmark closes fd 1 {' '.join(mode)}",
                          ["run", *mode, "--runs", "3", "--json", "{dir}/r.json",
                           "{dir}/close.py"], (1,),
                          setup=_write("close.py", "import os\nimport steadybench as sb\n\n"
                                                   "@sb.benchmark\ndef closer():\n"
                                                   "    return lambda: os.close(1)\n"),
                          check=_results_kept("r.json")))
    cases.append(Case("exec --time-limit with a setsid child",
                      ["exec", "-q", "--no-correction", "--time-limit", "1", "--",
                       "{dir}/escape.sh", "{dir}/pid"], (1,),
                      setup=_write("escape.sh", "#!/bin/sh\nsetsid sh -c 'echo $$ > \"$0\"; "
                                                "exec sleep 1000' \"$1\" &\nwait\n", 0o755),
                      check=_setsid_child_dead))
    for spikes in ("1", "5"):
        cases.append(Case(f"iters to 10^12 counts, spikes x{spikes}",
                          ["iters", "-q", "--min-points", "44", "--max-points", "44",
                           "--json", "{dir}/r.json", "--", "{dir}/tiny.sh", "{iters}",
                           spikes], (0,),
                          setup=_write("tiny.sh", TINY_ITERS, 0o755),
                          check=_fit_made("r.json", 1), timeout=180))
    cases.append(Case("sweep --sizes 100,1000,10000 --report at 10^12 counts",
                      ["sweep", "-q", "--sizes", "100,1000,10000", "--min-points", "44",
                       "--max-points", "44", "--report", "{dir}/r.html", "--json",
                       "{dir}/r.json", "--", "{dir}/tiny.sh", "{iters}", "1", "{size}"], (0,),
                      setup=_write("tiny.sh", TINY_ITERS, 0o755),
                      check=_fit_made("r.json", 3), timeout=300))
    values = ["1e308", "NaN", "Infinity", "-Infinity", "-1", '"abc"', "true", "null"]
    combos = [(v, w, c) for v in values for w in ("samples", "stats", "estimate")
              for c in ("report", "compare", "show")]
    for value, where, command in ctx.sample(combos, 12):
        if value == "null" and where != "samples":
            continue  # an undefined statistic or estimate is allowed
        argv = {"report": ["report", "{dir}/bad.json", "-o", "{dir}/r.html"],
                "compare": ["compare", "{dir}/../../fixtures/results.json", "{dir}/bad.json"],
                "show": ["show", "{dir}/bad.json"]}[command]
        cases.append(Case(f"{command}: {where} = {value}", argv, (2,),
                          setup=_bad_results(value, where)))
    cases.append(Case("plan with 1e308", ["plan", "--ci-width", "1%", "{dir}/p.txt"], (2,),
                      setup=_write("p.txt", "1\n2\n1e308\n3\n4\n")))
    for rows in ("1,2,1e308\n2,1,1e308\n3,3,1e308\n1,1,5\n",
                 "1e308,2,1\n2,1e308,1\n3,3,2\n1,1,5\n"):
        cases.append(Case(f"blocks with 1e308: {rows.splitlines()[0]}",
                          ["blocks", "{dir}/c.csv"], (2,),
                          setup=_write("c.csv", "a,b,total\n" + rows)))
    return cases


# ============================================================================ the report
@dataclass
class Tally:
    tried: int = 0
    tracebacks: int = 0
    internal: int = 0
    hangs: int = 0
    wrong: int = 0
    unclear: int = 0
    metric: int = 0
    failures: list[Outcome] = field(default_factory=list)

    def add(self, outcome: Outcome) -> None:
        self.tried += 1
        self.tracebacks += outcome.traceback
        self.internal += outcome.internal
        self.hangs += outcome.hang
        self.wrong += outcome.wrong_status
        self.unclear += outcome.unclear
        self.metric += outcome.metric
        if outcome.failed:
            self.failures.append(outcome)

    @property
    def bad(self) -> int:
        return self.tracebacks + self.internal + self.hangs + self.wrong + self.unclear + \
            self.metric


def report(tallies: dict[str, Tally], verbose: bool, seconds: float, seed: int,
           quick: bool) -> str:
    header = (f"{'category':<20} {'tried':>6} {'tracebacks':>10} {'internal errors':>15} "
              f"{'hangs':>6} {'wrong status':>12} {'unclear':>8}  metric")
    lines = [f"fault matrix: seed {seed}{', quick' if quick else ''}, "
             f"{sum(t.tried for t in tallies.values())} cases in {seconds:.0f} s", "", header,
             "-" * len(header)]
    for key, tally in tallies.items():
        cat = CATEGORIES[key]
        lines.append(f"{key:<20} {tally.tried:>6} {tally.tracebacks:>10} {tally.internal:>15} "
                     f"{tally.hangs:>6} {tally.wrong:>12} {tally.unclear:>8}  "
                     f"{cat.metric}: {tally.metric}")
    for key, tally in tallies.items():
        if not tally.failures:
            continue
        lines += ["", f"{key}: {len(tally.failures)} failing case(s)"]
        shown = tally.failures if verbose else tally.failures[:15]
        lines += ["  " + o.summary().replace("\n", "\\n") for o in shown]
        if len(shown) < len(tally.failures):
            lines.append(f"  ... and {len(tally.failures) - len(shown)} more (--verbose)")
    return "\n".join(lines)


def build(ctx: Context, only: Iterable[str] | None) -> dict[str, list[Case]]:
    wanted = set(only) if only else set(CATEGORIES)
    return {key: [case for gen in cat.generators for case in gen(ctx)]
            for key, cat in CATEGORIES.items() if key in wanted}


# ============================================================================ start-up, sizes
CATEGORIES["start-up and size"] = Category("start-up and size", "start-up and size",
                                           "lines printed at start-up")

#: the shell's status after each ending signal
ENDING = {"SIGINT": 130, "SIGTERM": 143, "SIGHUP": 129}


def _at_start_up(signame: str) -> Callable[[subprocess.Popen], None]:
    """Wait for the entry point's ``ready`` (``STEADYBENCH_TEST_HOLD_START=1``: said on the
    standard output just after its guard, before any other import), then send ``signame``."""

    def drive(proc: subprocess.Popen) -> None:
        assert proc.stdout is not None
        ready, _, _ = select.select([proc.stdout], [], [], 60)
        if ready and proc.stdout.readline() == b"ready\n":
            proc.send_signal(getattr(signal, signame))

    return drive


def _quiet(folder: Path, outcome: Outcome) -> int:
    """1 when the interrupted start-up printed anything (it should end in silence)."""
    return int(bool(outcome.err.strip() or outcome.out.strip()))


def _many_cases(entries: int) -> Callable[[Path], None]:
    """A results file of ``entries`` benchmarks of three samples each, no estimate."""

    def setup(folder: Path) -> None:
        rng = random.Random(entries)
        benchmarks = [{"name": f"bench{i:07d}", "implementation": "x",
                       "samples": [round(1e-3 + rng.random() * 1e-4, 7) for _ in range(3)]}
                      for i in range(entries)]
        (folder / "big.json").write_text(json.dumps({"schema_version": 1, "suite": "large",
                                                     "benchmarks": benchmarks}))

    return setup


@category("start-up and size")
def start_up_and_size(ctx: Context) -> list[Case]:
    """Issue 27 items 13 and 16 (the rest): a signal at the first moment of the entry point
    (every command, every ending signal: exit 128 + N, nothing printed) and results files of
    many benchmarks through compare, report and history import (no hang, no traceback, a
    record made). ``benchmarks/memory_large_inputs.py`` measures the 10^6-entry sizes."""
    cases = []
    commands = [["--version"], ["exec", "--runs", "1", "--", "true"],
                ["compare", "a.txt", "b.txt"], ["system", "show"]]
    for argv in ctx.sample(commands, 2):
        for signame, status in ENDING.items():
            cases.append(Case(f"{signame} at the first moment: {argv[0]}", argv, (status,),
                              check=_quiet, drive=_at_start_up(signame),
                              env={"STEADYBENCH_TEST_HOLD_START": "1"}))
    entries = 2000 if ctx.quick else 20000
    for name, argv in (("compare", ["compare", "big.json", "big.json"]),
                       ("report", ["report", "big.json", "-o", "{dir}/big.html"]),
                       ("history import", ["history", "import", "big.json", "--history-url",
                                           "sqlite:///{dir}/h.sqlite"])):
        cases.append(Case(f"{name} of {entries} benchmarks", argv, (0,),
                          setup=_many_cases(entries), timeout=600))
    return cases


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=1, help="seed of the random choices (1)")
    parser.add_argument("--quick", action="store_true", help="a sample of each table")
    parser.add_argument("--jobs", type=int, default=2, help="cases run at once (2)")
    parser.add_argument("--timeout", type=float, default=CASE_TIMEOUT,
                        help=f"seconds before a case is a hang ({CASE_TIMEOUT:g})")
    parser.add_argument("--only", action="append", choices=sorted(CATEGORIES),
                        help="run only this category (repeatable)")
    parser.add_argument("--verbose", action="store_true", help="list every failing case")
    args = parser.parse_args()

    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="steadybench-faults-") as tmp:
        work = Path(tmp)
        make_fixtures(work / "fixtures")
        ctx = Context(random.Random(args.seed), args.quick, work / "fixtures")
        plan = build(ctx, args.only)
        if "injection payloads" in plan and not injection_control(work / "control",
                                                                   args.timeout):
            print("injection detector broken: the raw-form control made no file",
                  file=sys.stderr)
            return 2
        if "fault scenarios" in plan and not fault_control(work / "fault-control",
                                                           args.timeout):
            print("settings detector broken: an unrestored `system tune` changed no file",
                  file=sys.stderr)
            return 2
        tallies = {key: Tally() for key in plan}
        jobs = [(key, i, case) for key, cases in plan.items() for i, case in enumerate(cases)]
        with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            futures = [(key, pool.submit(run_case, case, work / "cases" / f"{n:05d}",
                                         args.timeout))
                       for n, (key, _, case) in enumerate(jobs)]
            for key, future in futures:
                tallies[key].add(future.result())
        shutil.rmtree(work / "cases", ignore_errors=True)
    print(report(tallies, args.verbose, time.monotonic() - t0, args.seed, args.quick))
    return 1 if any(t.bad for t in tallies.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
