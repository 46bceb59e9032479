"""The profiled execution: one extra execution of a case, through the execution layer.

:class:`ProfileBackend` is a backend of :mod:`steadybench.execution` (the same contract as the
worker and count backends: an :class:`~steadybench.execution.backend.ExecutionRequest` in, one
:class:`~steadybench.execution.backend.Outcome` out, the time left respected, Ctrl-C returned
as ``interrupt``). It is run *beside* the measured executions, never instead of one: its
outcome's raw case holds the profile in ``extra["profile"]`` and no run, so nothing it does
can reach an estimate. :func:`take_profile` runs one such execution and gives the
:class:`~.model.Profile` or the :class:`~.model.ProfileFailure` (one line).

What is profiled:

* a Python case (``task``: :func:`steadybench.counts.python.task_bytes`): the process of
  :mod:`.child` run under py-spy (:mod:`.sampler`; every thread and the Python child
  processes), cut to the calls (:func:`case_profile`); per call = the profiled stretch's time /
  its calls, unless the caller scales it to the unprofiled estimate;
* a command (``argv``): one run under py-spy (a Python program; every thread and the Python
  child processes) or, with ``mode="callgrind"``, under callgrind (any program:
  instructions per function, exact).
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from ..execution.backend import ExecutionRequest, Outcome
from .model import SAMPLES, AllocStats, Frame, GcStats, Profile, ProfileFailure
from .sampler import DESIGN_EFFECT, RATE

MODES = ("sample", "callgrind")
#: seconds of profiled calls of a Python case (``--profile-time``): ~500 samples at
#: :data:`~.sampler.RATE`, a share's standard error at most 0.05 with the measured design effect
#: (sqrt(5 · 0.25 / 500); docs/profiles.md, "Choosing the sampler")
PROFILE_TIME = 2.0


@dataclass(frozen=True)
class ProfileSettings:
    """``--profile [sample|callgrind]`` and ``--profile-time``."""

    mode: str = "sample"
    seconds: float = PROFILE_TIME
    rate: int = RATE
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
        from .child import PREFIX
        from .sampler import SamplerError, explain, sample

        assert self.task is not None
        with tempfile.TemporaryDirectory(prefix="steadybench-profile-task-") as work:
            task_file = os.path.join(work, "task.pickle")
            with open(task_file, "wb") as fh:
                fh.write(self.task)
            argv = [self.python, "-m", "steadybench.profiles.child", task_file,
                    repr(self.settings.seconds)]
            try:
                got = sample(argv, timeout=time_left, rate=self.settings.rate, cwd=self.cwd,
                             env=self.env, allow_empty=True)
            except SamplerError as exc:
                return exc.failure
        # the child's report (its standard output and error pass through py-spy's)
        report = next((line[len(PREFIX):].strip() for line in reversed(got.stdout.splitlines())
                       if line.startswith(PREFIX)), None)
        said = next((line[len(PREFIX):].strip() for line in got.stderr.splitlines()
                     if line.startswith(PREFIX)), None)
        if report is None and said is not None:  # the user's code failed: it says how
            return ProfileFailure(f"profile not taken: {said}; the measurement is not "
                                  "affected", "missing" if "not installed" in said else "failed")
        if not got.samples:  # py-spy failed (not permitted, crashed): it says why
            return explain(got.stderr, got.returncode)
        if report is None:
            return ProfileFailure(f"profile not taken: the profiled process ended with status "
                                  f"{got.returncode}; the measurement is not affected",
                                  "failed")
        data = json.loads(report)
        return case_profile(got, data, rate=self.settings.rate, wall=got.wall_seconds,
                            hide_own=self.settings.hide_own)

    def _sample_command(self, time_left: float) -> Profile | ProfileFailure:
        from .filtering import fold_comprehensions, hide_own_frames
        from .sampler import SamplerError, sample

        assert self.argv is not None
        try:
            got = sample(self.argv, timeout=time_left, rate=self.settings.rate, cwd=self.cwd,
                         env=self.env)
        except SamplerError as exc:
            return exc.failure
        from .model import merge_stacks

        # the program's own threads as one; its Python child processes under a heading; a
        # sample with no Python frame yet (the interpreter starting) is said to be one
        raw = merge_stacks(((s.frames or NO_PYTHON_FRAME) if len(s.processes) <= 1
                            else (CHILD_PROCESSES, *(s.frames or NO_PYTHON_FRAME)), s.weight)
                           for s in got.samples)
        stacks, hidden = hide_own_frames(raw) if self.settings.hide_own else (raw, 0)
        stacks = fold_comprehensions(stacks)
        notes = ["the whole run, start-up included, sampled in wall time (every thread, "
                 "--threads); child processes that are Python programs are included "
                 "(py-spy --subprocesses), others are not"]
        if got.returncode != 0:
            notes.append(f"the profiled run ended with exit status {got.returncode}")
        if got.behind:
            notes.append(f"py-spy fell behind its rate of {self.settings.rate} Hz "
                         f"({got.behind[-1]})")
        return Profile(kind=SAMPLES, unit="s", profiler=f"py-spy {self.settings.rate} Hz",
                       stacks=stacks, calls=1, total_per_call=got.wall_seconds,
                       rate=float(self.settings.rate), wall_seconds=got.wall_seconds,
                       notes=tuple(notes), hidden_frames=hidden, design_effect=DESIGN_EFFECT)

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


#: the frames other threads' and child processes' samples are put under
OTHER_THREADS = Frame("(other threads)")
CHILD_PROCESSES = Frame("(child processes)")
NO_PYTHON_FRAME = (Frame("(no Python frame)"),)


def case_profile(got: Any, data: dict[str, Any], *, rate: int, wall: float,
                 hide_own: bool = True) -> Profile | ProfileFailure:
    """A Python case's profile from py-spy's samples of :mod:`.child` and the child's report.

    * The main thread of the profiled process: the stretch inside the marker
      (:func:`.filtering.calls_region`), steadybench's frames hidden.
    * Its other threads, under :data:`OTHER_THREADS`, and the Python processes it started,
      under :data:`CHILD_PROCESSES`: their samples carry no marker, so each is counted in
      proportion to the calls made inside it, ``calls / (calls + other_calls)`` (the warm-up
      and the allocation stretch are the other calls). That assumes such work is per call,
      as for a pool or a process the call hands its work to; work they do in set-up or
      teardown is counted too (docs/profiles.md, "What a profile covers").
    """
    from .filtering import calls_region, fold_comprehensions, hide_own_frames
    from .model import merge_stacks

    # the profiled process is py-spy's own child, the outermost process of every sample; its
    # main thread's native id is its process id (Linux)
    root = got.samples[0].processes[0][0] if got.samples and got.samples[0].processes else None
    calls = int(data["calls"])
    inside_share = calls / (calls + int(data.get("other_calls", 0)))
    main: list[tuple[tuple[Frame, ...], float]] = []
    others: list[tuple[tuple[Frame, ...], float]] = []
    thread_weight = process_weight = 0.0
    for s in got.samples:
        in_root = len(s.processes) <= 1
        if in_root and (s.thread is None or s.thread == root):
            main.append((s.frames, s.weight))
        elif in_root:
            others.append(((OTHER_THREADS, *s.frames), s.weight * inside_share))
            thread_weight += s.weight * inside_share
        else:
            others.append(((CHILD_PROCESSES, *s.frames), s.weight * inside_share))
            process_weight += s.weight * inside_share
    kept, hidden = calls_region(main, hide_own=hide_own)
    if hide_own:
        other_kept, other_hidden = hide_own_frames(others)
    else:
        other_kept, other_hidden = merge_stacks(others), 0
    # a thread's or process's sample with no frame but the heading (start-up, no Python
    # frame yet) is not the benchmark's work
    other_kept = tuple((st, w) for st, w in other_kept if len(st) > 1)
    stacks = fold_comprehensions((*kept, *other_kept))
    if not stacks:
        return ProfileFailure("profile not taken: no sample fell inside the calls (the "
                              "calls took less than one sampling interval); the "
                              "measurement is not affected", "empty")
    notes = ["py-spy samples wall time of every thread that runs or waits for a core "
             "(--threads, --idle off); Python child processes are followed (--subprocesses)"]
    if thread_weight > 0:
        notes.append(f"{thread_weight / sum(w for _, w in stacks):.0%} of the samples are "
                     "other threads', counted per call (the share of calls made in the "
                     "profiled stretch)")
    if process_weight > 0:
        notes.append(f"{process_weight / sum(w for _, w in stacks):.0%} of the samples are "
                     "child processes', counted per call (the share of calls made in the "
                     "profiled stretch)")
    if data.get("asynchronous"):
        notes.append("a coroutine function: each call is awaited in an event loop "
                     "(run_until_complete), whose own frames are in the profile")
    if got.behind:
        notes.append(f"py-spy fell behind its rate of {rate} Hz ({got.behind[-1]})")
    seconds = float(data["seconds"])
    total = sum(w for _, w in stacks)
    return Profile(kind=SAMPLES, unit="s", profiler=f"py-spy {rate} Hz",
                   stacks=stacks, calls=calls, total_per_call=seconds / calls,
                   profiled_per_call=seconds / calls, rate=float(rate), wall_seconds=wall,
                   sample_count=max(1, round(total)), design_effect=DESIGN_EFFECT,
                   gc=GcStats(int(data["gc_collections"]), float(data["gc_pause_seconds"])),
                   alloc=AllocStats(**data["alloc"]), notes=tuple(notes),
                   hidden_frames=hidden + other_hidden)


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
