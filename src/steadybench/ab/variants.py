"""What ``steadybench ab`` compares: a variant is something that can be executed once, in a
fresh process, and gives one time.

* :class:`PythonVariant` — one case of a benchmark file (``FILE`` or ``FILE::NAME``), measured
  in a fresh worker interpreter (:mod:`steadybench.runner.workers`: random hash seed and
  environment size, calibrated samples, the median per call). The interpreter may be another
  Python or another virtual environment, and the file may live in a git worktree of another
  revision (:mod:`steadybench.ab.worktrees`).
* :class:`CommandVariant` — a command line; one execution is one run of the command, timed
  from its start to its exit (as hyperfine times it).

One execution = one independent process, so each round of the A/B protocol gives one value per
variant (randomised multiple interleaved trials: Abedi & Brecht, ICPE 2017). A variant's
``time_limit`` is the hard limit of all its executions together (the execution layer's one
meaning of ``--time-limit``): each execution gets the time left, and none starts once it is spent.
"""

from __future__ import annotations

import os
import pickle
import shutil
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..defaults import AB_LAYOUT
from ..errors import ConfigurationError
from ..programs.commands import Command
from ..programs.process import CommandRunner


@dataclass
class Outcome:
    """One execution of a variant: its time per call (seconds), or why there is none."""

    value: float | None
    error: str | None = None
    interrupted: bool = False
    #: measured runs (samples) inside the execution
    runs: int = 0
    #: what the execution printed, when an output check was asked for
    output: str | None = None
    #: the execution's own record (a worker's per-execution entry, or the command's figures),
    #: as written to the JSON report
    record: dict[str, Any] = field(default_factory=dict)


def steadybench_root() -> str:
    """The directory that holds the ``steadybench`` package, so that another interpreter can
    start a worker from this very copy of steadybench."""
    return str(Path(__file__).resolve().parents[2])


class _Deadline:
    """The hard time limit of all of a variant's executions, from its first one."""

    def __init__(self, label: str, seconds: float,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.label, self.seconds, self.clock = label, seconds, clock
        self.deadline: float | None = None

    def left(self) -> float:
        now = self.clock()
        if self.deadline is None:
            self.deadline = now + self.seconds
        return self.deadline - now

    def spent(self) -> Outcome:
        return Outcome(None, f"stopped by the hard time limit ({self.seconds:g} s for all "
                             f"executions of {self.label})")


class PythonVariant:
    """One case of a benchmark file, executed in fresh worker processes.

    Args:
        label: "A" or "B".
        path: the benchmark file.
        selector: picks one case (``-k`` rules); None when the file has exactly one.
        python: the interpreter (default: this one).
        cwd: the working directory of the workers (a worktree for a git revision).
        extra_path: directories put first on the workers' ``PYTHONPATH``.
        execution_time: seconds of sampling per execution, after ``warmup`` samples.
        clock: the clock of the samples by name (``thread_time``: CPU time, which other
            processes on a busy machine do not add to); default ``perf_counter``.
        layout: how the executions' hidden factors are chosen (:mod:`steadybench.runner.layout`);
            by default ``fixed``: execution i of A and execution i of B share hash seed,
            environment size and, with ASLR off, code and data addresses, so that what the
            layout does to both cancels in their ratio (see ``docs/comparison.md``).
    """

    kind = "python"

    def __init__(self, label: str, path: str, selector: str | None = None, *,
                 python: str | None = None, cwd: str | None = None,
                 extra_path: tuple[str, ...] = (), execution_time: float = 0.1,
                 warmup: int = 1, time_limit: float = 120.0, confidence: float = 0.95,
                 layout: str | None = None, clock: str | None = None) -> None:
        from ..clocks import get_clock

        self.label = label
        #: the clock of the samples (a name of :data:`steadybench.clocks.CLOCKS`; None: the
        #: default, ``perf_counter``)
        self.clock = get_clock(clock)
        self.path = str(Path(path).resolve())
        self.selector = selector
        self.python = _interpreter(python) if python else None
        self.cwd = cwd
        self.extra_path = extra_path
        self.execution_time = execution_time
        self.warmup = warmup
        self.time_limit = time_limit
        self.confidence = confidence
        self.layout = layout or AB_LAYOUT
        self._runner: Any = None
        self._task: Any = None
        self._merged: Any = None
        self._executions = 0
        #: the git revision the file was checked out at (``--rev-a``/``--rev-b``, ``bisect``)
        self.revision: str | None = None
        self._deadline = _Deadline(label, time_limit)

    @property
    def description(self) -> str:
        text = self.path + (f"::{self.selector}" if self.selector else "")
        if self.python:
            text += f" (python {self.python})"
        if self.cwd:
            text += f" (in {self.cwd})"
        return text

    @property
    def foreign(self) -> bool:
        """True when the workers may not import what this process imports (another interpreter
        or another checkout): they then resolve the case themselves."""
        return self.python is not None or self.cwd is not None

    def check(self) -> None:
        """Fail early, with one line, when the file cannot be benchmarked."""
        if not Path(self.path).is_file():
            raise ConfigurationError(f"{self.label}: {self.path}: no such file")
        if not self.foreign:
            from ..definitions import find_single_case

            find_single_case(self.path, self.selector)

    def _prepare(self) -> None:
        from .. import defaults
        from ..methods import make_method
        from ..model.implementation import Implementation
        from ..model.parameters import Parameters
        from ..runner.runner import Runner
        from ..runner.stop import ElapsedTime
        from ..runner.worker import WorkerTask

        self._runner = Runner(ElapsedTime(self.execution_time), warmup=self.warmup,
                              method=make_method(defaults.METHOD), time_limit=self.time_limit,
                              processes=1, confidence=self.confidence, layout=self.layout,
                              clock=self.clock)
        env: dict[str, str] = {}
        sys_path: list[str] = []
        if self.foreign:
            entries = [steadybench_root(), *self.extra_path]
            if os.environ.get("PYTHONPATH"):
                entries.append(os.environ["PYTHONPATH"])
            env["PYTHONPATH"] = os.pathsep.join(entries)
        else:
            sys_path = list(sys.path)
        self._task = WorkerTask(benchmark=self.label, params=Parameters(),
                                runner=pickle.dumps(self._runner.worker_runner()),
                                meters=pickle.dumps([]), sys_path=sys_path,
                                cwd=self.cwd or os.getcwd(), time_limit=self.time_limit,
                                select=(self.path, self.selector), python=self.python,
                                env=env or None)
        self._merged = self._runner.new_case(Implementation(self.label), Parameters(),
                                             self.label)

    def execute(self) -> Outcome:
        """One execution in a fresh worker; a KeyboardInterrupt is re-raised after the worker
        has been stopped."""
        from ..execution.backends import WorkerBackend, single_execution
        from ..execution.merge import merge_executions

        if self._task is None:
            self._prepare()
        left = self._deadline.left()
        if left <= 0:
            return self._deadline.spent()
        backend = WorkerBackend(self._runner, task=self._task)
        execution = single_execution(backend, self._executions, left)
        self._executions += 1
        merge_executions(self._merged, [execution], self._executions,
                         method=self._runner.method, confidence=self.confidence)
        record = self._merged.processes[-1]
        if execution.interrupt is not None:
            raise execution.interrupt
        error = execution.error
        if record.value is None and error is None:
            # the worker ran, the benchmark's code did not: say what it raised
            error = (execution.case.errors[0] if execution.case is not None
                     and execution.case.errors else "the execution gave no value")
        return Outcome(record.value if error is None else None, error, execution.interrupted,
                       record.n, record=record.to_dict())

    def probe_output(self) -> str:
        """What one call of the case returns (``repr``), from a fresh interpreter."""
        import subprocess

        env = dict(os.environ)
        if self._task is not None and self._task.env:
            env.update(self._task.env)
        elif self.foreign:
            env["PYTHONPATH"] = os.pathsep.join([steadybench_root(), *self.extra_path])
        proc = subprocess.run([self.python or sys.executable, "-m", "steadybench.ab.probe",
                               self.path, self.selector or ""], capture_output=True, text=True,
                              cwd=self.cwd, env=env, timeout=self.time_limit)
        if proc.returncode != 0:
            tail = proc.stderr.strip().splitlines()[-1:] or ["no output"]
            return f"<failed: {tail[0]}>"
        return proc.stdout


class CommandVariant:
    """A command line; one execution is one run, timed from start to exit."""

    kind = "command"

    def __init__(self, label: str, line: str, *, shell: bool = False, cwd: str | None = None,
                 time_limit: float = 120.0, capture: bool = False) -> None:
        self.label = label
        self.command = Command.from_line(line, shell=shell)
        self.cwd = cwd
        self.runner = CommandRunner(shell=shell, timeout=time_limit, capture_stdout=capture,
                                    cwd=cwd)
        self.argv: list[str] = []
        self._deadline = _Deadline(label, time_limit)

    @property
    def description(self) -> str:
        return self.command.text + (f" (in {self.cwd})" if self.cwd else "")

    def check(self) -> None:
        self.argv = self.runner.resolve(list(self.command.template))

    def execute(self) -> Outcome:
        if not self.argv:
            self.check()
        left = self._deadline.left()
        if left <= 0:
            return self._deadline.spent()
        run = self.runner.run(self.argv, timeout=left)
        record = {"wall_time": run.wall_ns / 1e9, "user_time": run.user_time,
                  "system_time": run.sys_time, "exit_code": run.exit_code}
        if not run.ok:
            why = run.describe_failure()
            tail = f": {run.stderr_tail.strip()}" if run.stderr_tail.strip() else ""
            return Outcome(None, f"{self.command.text}: {why}{tail}", runs=1, record=record)
        return Outcome(run.wall_ns / 1e9, runs=1, output=run.stdout, record=record)

    def probe_output(self) -> str:
        saved = self.runner.capture_stdout
        self.runner.capture_stdout = True
        try:
            outcome = self.execute()
        finally:
            self.runner.capture_stdout = saved
        return outcome.output if outcome.output is not None else f"<failed: {outcome.error}>"


def worktree_variant(label: str, tree: Any, relative: str, selector: str | None,
                     python: str | None = None, **options: Any) -> PythonVariant:
    """The case ``relative``::``selector`` of a benchmark file as checked out in ``tree`` (a
    :class:`~steadybench.ab.worktrees.Worktree`): its workers run in the worktree with its
    ``src`` directory (when there is one) and its top level first on the path, so they import
    that revision's code. ``python`` may be relative to the worktree (its own venv)."""
    if python and not Path(python).is_absolute() and (Path(tree.path) / python).exists():
        python = str(Path(tree.path) / python)
    src = Path(tree.path) / "src"
    extra = (str(src),) if src.is_dir() else ()
    variant = PythonVariant(label, str(Path(tree.path) / relative), selector, python=python,
                            cwd=tree.path, extra_path=(*extra, tree.path), **options)
    variant.revision = f"{tree.revision} ({tree.commit[:12]})"
    return variant


def _interpreter(python: str) -> str:
    """An interpreter given by path or by name on PATH, checked now (one clear line)."""
    found = python if os.sep in python else shutil.which(python)
    if not found or not os.path.isfile(found) or not os.access(found, os.X_OK):
        raise ConfigurationError(f"python interpreter not found or not executable: {python}")
    return os.path.abspath(found)


Variant = PythonVariant | CommandVariant
