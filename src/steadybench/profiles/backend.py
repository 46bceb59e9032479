"""The profiled execution: one extra execution of a case, through the execution layer.

:class:`ProfileBackend` is a backend of :mod:`steadybench.execution` (the same contract as the
worker and count backends: an :class:`~steadybench.execution.backend.ExecutionRequest` in, one
:class:`~steadybench.execution.backend.Outcome` out, the time left respected, Ctrl-C returned
as ``interrupt``). It is run *beside* the measured executions, never instead of one: its
outcome's raw case holds the profile in ``extra["profile"]`` and no run, so nothing it does
can reach an estimate. :func:`take_profile` runs one such execution and gives the
:class:`~.model.Profile` or the :class:`~.model.ProfileFailure` (one line).

What is profiled:

* a Python case (``task``: :func:`steadybench.counts.python.task_bytes`): the calls of
  :mod:`.child` under its CPU-time sampler, cut to the calls (:mod:`.filtering`); per call = the
  profiled stretch's time / its calls, unless the caller scales it to the unprofiled estimate;
* a command (``argv``): one run under py-spy (a Python program; ``--subprocesses`` so that
  its children are covered) or, with ``mode="callgrind"``, under callgrind (any program:
  instructions per function, exact).
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from ..execution.backend import ExecutionRequest, Outcome
from .model import SAMPLES, AllocStats, Frame, GcStats, Profile, ProfileFailure

MODES = ("sample", "callgrind")
#: seconds of profiled calls of a Python case (``--profile-time``)
PROFILE_TIME = 1.0


@dataclass(frozen=True)
class ProfileSettings:
    """``--profile [sample|callgrind]`` and ``--profile-time``."""

    mode: str = "sample"
    seconds: float = PROFILE_TIME
    rate: int = 1000
    hide_own: bool = True


class ProfileBackend:
    """One profiled execution of one case (module docstring). Give ``task`` (a Python case)
    or ``argv`` (a command)."""

    isolation = "one profiled process, not measured"
    cases = 1

    def __init__(self, label: str, settings: ProfileSettings, *, task: bytes | None = None,
                 python: str | None = None, argv: Sequence[str] | None = None,
                 cwd: str | None = None, env: dict[str, str] | None = None) -> None:
        if (task is None) == (argv is None):
            raise ValueError("give a task or an argv")
        self.label, self.settings = label, settings
        self.task, self.argv = task, list(argv) if argv is not None else None
        self.python = python or sys.executable
        self.cwd, self.env = cwd, dict(env or {})

    def execute(self, request: ExecutionRequest) -> list[Outcome]:
        from ..model.results import CaseResult

        case = CaseResult(self.label, self.label, method="profile")
        try:
            profile = self._profile(request.time_left)
        except KeyboardInterrupt as exc:
            return [Outcome(request.index, None, error="interrupted", interrupted=True,
                            interrupt=exc)]
        if isinstance(profile, ProfileFailure):
            case.extra["profile_failure"] = profile
            return [Outcome(request.index, case, error=profile.message)]
        case.extra["profile"] = profile
        return [Outcome(request.index, case)]

    # -- the two kinds ---------------------------------------------------------------------
    def _profile(self, time_left: float) -> Profile | ProfileFailure:
        if self.settings.mode == "callgrind":
            return self._callgrind(time_left)
        if self.task is not None:
            return self._sample_case(time_left)
        return self._sample_command(time_left)

    def _sample_case(self, time_left: float) -> Profile | ProfileFailure:
        import subprocess

        from ..programs.process import kill_group
        from .child import PREFIX
        from .filtering import calls_region, fold_comprehensions

        assert self.task is not None
        interval = 1.0 / self.settings.rate
        with tempfile.TemporaryDirectory(prefix="steadybench-profile-task-") as work:
            task_file = os.path.join(work, "task.pickle")
            with open(task_file, "wb") as fh:
                fh.write(self.task)
            argv = [self.python, "-m", "steadybench.profiles.child", task_file,
                    repr(self.settings.seconds), repr(interval)]
            started = time.perf_counter()
            try:
                proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                        stdin=subprocess.DEVNULL, text=True, cwd=self.cwd,
                                        env={**os.environ, **self.env}, start_new_session=True)
            except OSError as exc:
                return ProfileFailure(f"profile not taken: {self.python}: "
                                      f"{exc.strerror or exc}", "failed")
            try:
                stdout, stderr = proc.communicate(timeout=max(time_left, 0.001))
            except BaseException as exc:
                kill_group(proc.pid)
                proc.communicate()
                if isinstance(exc, subprocess.TimeoutExpired):
                    return ProfileFailure(
                        f"profile not taken: the profiled execution did not end within "
                        f"{time_left:g} s (killed); the measurement is not affected", "timeout")
                raise
            wall = time.perf_counter() - started
        report = next((line[len(PREFIX):].strip() for line in reversed(stdout.splitlines())
                       if line.startswith(PREFIX)), None)
        if proc.returncode != 0 or report is None:
            said = next((line[len(PREFIX):].strip() for line in stderr.splitlines()
                         if line.startswith(PREFIX)), None)
            why = said or f"the profiled process ended with status {proc.returncode}"
            reason = "missing" if said and "not installed" in said else "failed"
            return ProfileFailure(f"profile not taken: {why}; the measurement is not affected",
                                  reason)
        data = json.loads(report)
        raw = [(tuple(Frame(str(f[0]), str(f[1]), int(f[2])) for f in stack), float(weight))
               for stack, weight in data["stacks"]]
        stacks, hidden = calls_region(raw, hide_own=self.settings.hide_own)
        stacks = fold_comprehensions(stacks)
        if not stacks:
            return ProfileFailure("profile not taken: no sample fell inside the calls (the "
                                  "calls took less than one sampling interval); the "
                                  "measurement is not affected", "empty")
        calls = int(data["calls"])
        inside = sum(weight for _, weight in stacks)
        whole = sum(weight for _, weight in raw) or inside
        notes = []
        if data.get("asynchronous"):
            notes.append("a coroutine function: each call is awaited in an event loop "
                         "(run_until_complete), whose own frames are in the profile")
        if int(data.get("threads", 1)) > 1:
            notes.append(f"{data['threads']} threads were alive: only the main thread is "
                         "sampled")
        return Profile(kind=SAMPLES, unit="s", profiler="CPU-time sampler (ITIMER_PROF)",
                       stacks=stacks, calls=calls, total_per_call=float(data["seconds"]) / calls,
                       profiled_per_call=float(data["seconds"]) / calls,
                       rate=float(self.settings.rate), wall_seconds=wall,
                       sample_count=max(1, round(int(data["samples"]) * inside / whole)),
                       gc=GcStats(int(data["gc_collections"]), float(data["gc_pause_seconds"])),
                       alloc=AllocStats(**data["alloc"]), notes=tuple(notes),
                       hidden_frames=hidden)

    def _sample_command(self, time_left: float) -> Profile | ProfileFailure:
        from .filtering import fold_comprehensions, hide_own_frames
        from .sampler import SamplerError, sample

        assert self.argv is not None
        try:
            got = sample(self.argv, timeout=time_left, rate=self.settings.rate, cwd=self.cwd,
                         env=self.env, subprocesses=True)
        except SamplerError as exc:
            return exc.failure
        stacks, hidden = hide_own_frames(got.stacks) if self.settings.hide_own else (
            got.stacks, 0)
        stacks = fold_comprehensions(_one_process(stacks))
        notes = ["the whole run, start-up included, sampled in wall time; child processes "
                 "that are Python programs are included (py-spy --subprocesses), others are "
                 "not"]
        if got.returncode != 0:
            notes.append(f"the profiled run ended with exit status {got.returncode}")
        return Profile(kind=SAMPLES, unit="s", profiler=f"py-spy {self.settings.rate} Hz",
                       stacks=stacks, calls=1, total_per_call=got.wall_seconds,
                       rate=float(self.settings.rate), wall_seconds=got.wall_seconds,
                       notes=tuple(notes), hidden_frames=hidden)

    def _callgrind(self, time_left: float) -> Profile | ProfileFailure:
        import shutil

        from .callgrind import CallgrindError, profile_of, run

        if self.argv is None:
            return ProfileFailure("profile not taken: --profiler callgrind profiles a command "
                                  "(a compiled program); a Python case is profiled by "
                                  "sampling (--profiler sample or auto); the measurement is "
                                  "not affected", "unsupported")
        valgrind = shutil.which(os.environ.get("STEADYBENCH_VALGRIND") or "valgrind")
        if valgrind is None:
            return ProfileFailure("profile not taken: valgrind not found (apt-get install "
                                  "valgrind); the measurement is not affected", "missing")
        try:
            graph, status = run(valgrind, self.argv, timeout=time_left, cwd=self.cwd,
                                env=self.env)
        except CallgrindError as exc:
            return exc.failure
        notes = ["instructions of the whole run (start-up included), counted by callgrind: "
                 "exact, not time; child processes are not followed"]
        if status != 0:
            notes.append(f"the profiled run ended with exit status {status}")
        return profile_of(graph, notes)


def _one_process(stacks: Any) -> Any:
    """py-spy ``--subprocesses`` puts a ``process PID:"command"`` frame first; with a single
    process it says nothing and is dropped (its own samples: no Python frame yet)."""
    from .model import merge_stacks

    roots = {stack[0] for stack, _ in stacks
             if stack and stack[0].function.startswith("process ") and not stack[0].file}
    if len(roots) != 1:
        return stacks
    out = []
    for stack, weight in stacks:
        inner = stack[1:] if stack and stack[0] in roots else stack
        out.append((inner or (Frame("(no Python frame)"),), weight))
    return merge_stacks(out)


def take_profile(backend: ProfileBackend, time_left: float) -> Profile | ProfileFailure:
    """One profiled execution through the execution layer (the request a driver makes);
    Ctrl-C is re-raised after the profiled process was stopped."""
    from ..execution.backends import single_execution

    outcome = single_execution(backend, 0, time_left)
    if outcome.interrupt is not None:
        raise outcome.interrupt
    if outcome.case is not None and "profile" in outcome.case.extra:
        return outcome.case.extra["profile"]
    if outcome.case is not None and "profile_failure" in outcome.case.extra:
        return outcome.case.extra["profile_failure"]
    return ProfileFailure(outcome.error or "profile not taken", "failed")


def for_variant(variant: Any, settings: ProfileSettings) -> ProfileBackend:
    """The profile backend of an ``ab`` variant (:mod:`steadybench.ab.variants`)."""
    if hasattr(variant, "argv"):
        if not variant.argv:
            variant.check()
        return ProfileBackend(variant.label, settings, argv=variant.argv, cwd=variant.cwd)
    from ..counts.python import task_bytes
    from ..model.implementation import Implementation
    from ..model.parameters import Parameters
    from .filtering import PACKAGE_DIR

    task = task_bytes(Implementation(variant.label), Parameters(), variant.label,
                      (variant.path, variant.selector), variant.cwd,
                      tuple(variant.extra_path or ()))
    env: dict[str, str] = {}
    if variant.python or variant.extra_path:
        env["PYTHONPATH"] = os.pathsep.join([os.path.dirname(PACKAGE_DIR),
                                             *variant.extra_path])
    return ProfileBackend(variant.label, settings, task=task, python=variant.python, env=env,
                          cwd=variant.cwd)


def rescaled(profile: Profile, per_call: float | None) -> Profile:
    """A time profile scaled to the unprofiled estimate (seconds per call), when there is one:
    the profile divides the measured cost, and the profiler's own slowdown drops out."""
    if per_call is None or profile.kind != SAMPLES or not per_call > 0:
        return profile
    return replace(profile, total_per_call=per_call)
