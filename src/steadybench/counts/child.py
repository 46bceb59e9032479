"""The counted process of a Python case: ``python -m steadybench.counts.child MODE < TASK``.

``TASK``, on standard input, is a pickled dict (how to find the case: a benchmark file by path,
or an importable callable; see :func:`steadybench.counts.python.task_bytes`). It comes on
standard input rather than as a file name so that the command line, which the interpreter
hashes and stores, is the same in every invocation. ``MODE`` is

* ``segments``: the process runs under callgrind, which writes its counts so far, and starts
  again from zero, each time the process enters the C function :data:`MARKER` (``getresgid``,
  which neither CPython nor common code calls). A second pickle on standard input says how many
  points ``P`` to count, the call count ``n`` (None: sized here) and callgrind's output file.
  The process loads the case, runs its set-up, collects and freezes the garbage collector's
  objects (so the calls' collections start from the same state in every process), then marks
  the end of segment 1 (start-up, imports, set-up); makes one call (segment 2, the probe: the
  first call's one-off costs land here); reads segment 2's instruction count from callgrind's
  file and sizes ``n`` from it (:func:`calls_for`; segment 3); makes ``n`` calls of warm-up
  (segment 4, not fitted: :data:`WARMUP`); then makes ``n, 2n, …, P·n``
  calls, one segment each (with the case's ``init_run`` and ``release_run`` hooks around each
  call, as the run loop does), each ended by a collection and the marker; then the teardown,
  the line ``calls n`` and the marker line :data:`DONE`. One process thus counts every point
  of the line fit (:mod:`steadybench.counts.fit`), so valgrind starts Python once per layout;
* ``check``: the case with one call, run natively before any counting: a case that fails
  fails fast, and the bytecode caches are written, so that every counted process loads the
  same files.

What the user's code raises (``SystemExit`` included) is one line on standard error, prefixed
``steadybench-count:``, and exit status 3. A missing marker after exit status 0 means the code
left the process early (``os._exit``). Only light modules are imported here: everything
this process does before the calls is counted, and costs valgrind time.
"""

from __future__ import annotations

import gc
import math
import os
import pickle
import sys
from collections.abc import Callable
from dataclasses import dataclass
from itertools import repeat
from typing import Any

#: exit status when the user's code failed (its message is on standard error)
USER_ERROR_STATUS = 3
#: standard error prefix of that message
PREFIX = "steadybench-count:"
#: the last line on standard output when the calls and the teardown finished
DONE = "steadybench-count: done"
#: the line before it that says the call count ``n`` used
CALLS = "steadybench-count: calls"
#: the C function whose entry ends a segment (callgrind ``--dump-before``); the process enters
#: it through ``os.getresgid()``
MARKER = "getresgid"
#: segments before the points: start-up and set-up, the probe call, the sizing of ``n``, the
#: warm-up
LEAD_SEGMENTS = 4
#: Why ``n`` calls are made, and counted apart, before the points. CPython's adaptive
#: interpreter (PEP 659) quickens a code object after a few calls and specialises each
#: instruction when its counter runs out (backing off exponentially when it fails), and the
#: allocator's pools settle: without a warm-up, all of that fell in the first point, whose
#: n calls of a JSON decode then counted 20,285 instructions more than the line through the
#: later points (``_PyCode_Quicken``, ``_Py_Specialize_*``, unspecialised dictionary and
#: method look-ups, by callgrind's functions): 0.018 % of the slope over n, 2n, 3n. After a
#: warm-up of n calls the excess was 1,600 (0.0016 %). Through the whole pipeline (``run
#: --measure instructions``, the warm-up and the points in one loop), the first point's excess
#: over the line through the other two went from 1,865 to 15 instructions for the loop of 40
#: additions (500 calls: 0.032 % to 0.00025 %) and from 1,057 to 122 for a JSON decode (100
#: calls: 0.020 % to 0.0023 %).
WARMUP = "n calls before the points, counted apart"
#: the counted calls of the smallest point, in instructions: ten million, far above the few
#: hundred instructions a segment's own harness costs, small enough to keep valgrind's run short
TARGET_COUNT = 10_000_000
#: the smallest point's calls at most
MAX_CALLS = 1_000_000


def calls_for(per_call: float, target: int = TARGET_COUNT, most: int = MAX_CALLS) -> int:
    """The smallest point's call count: ``target / per_call`` rounded down to 1, 2 or 5 times
    a power of ten (a readable number, and a deterministic one: ``per_call`` is itself a
    count), between 1 and ``most``."""
    want = max(1.0, target / max(per_call, 1.0))
    power = 10 ** math.floor(math.log10(want))
    step = max(m for m in (1, 2, 5) if m * power <= want)
    return int(min(most, step * power))


def _instructions_in(path: str) -> int:
    """The instruction count (``Ir``, the first event) of one callgrind segment file."""
    with open(path, encoding="ascii", errors="replace") as handle:
        for line in handle:
            if line.startswith("summary:"):
                return int(line.split()[1])
    raise RuntimeError(f"no summary line in {path}")


def _fail(message: str) -> None:
    sys.stderr.write(f"{PREFIX} {message}\n")
    sys.stderr.flush()
    os._exit(USER_ERROR_STATUS)


def enter_task(task: dict[str, Any]) -> None:
    """Stand where the benchmark's own process stood: its working directory and the entries
    of its ``sys.path`` (a counted or profiled child imports the file as the parent did)."""
    if task["cwd"]:
        os.chdir(task["cwd"])
    for entry in reversed(task["sys_path"]):
        if entry not in sys.path:
            sys.path.insert(0, entry)


def _load_implementation(task: dict) -> Any:
    """The case's implementation, found as a worker finds it (without importing the runner
    package, whose imports would be counted)."""
    if task["select"] is not None:
        from ..definitions import find_single_case

        implementation, task["params"], _ = find_single_case(*task["select"])
        return implementation
    if task["origin"] is not None:
        from ..definitions import find_implementation

        return find_implementation(*task["origin"])
    return pickle.loads(task["implementation"])


class Stage:
    """What a child process is doing, for the one line it writes when the user's code fails."""

    def __init__(self) -> None:
        self.name = "loading the benchmark"

    def failed(self, exc: BaseException) -> str:
        what = ("called sys.exit(" + repr(exc.code) + ")" if isinstance(exc, SystemExit)
                else f"{type(exc).__name__}: {exc}")
        return f"{self.name} failed: {what}"


@dataclass(frozen=True)
class LoadedCase:
    """A case loaded and set up in a child process, ready for its calls."""

    implementation: Any
    call: Callable[[], Any]
    #: ``(init_run, release_run)`` when the case defines them (the run loop calls them around
    #: each call), else ``()``
    hooks: tuple[Callable[[], Any], ...]


def load_case(task: dict[str, Any], stage: Stage) -> LoadedCase:
    """Stand where the benchmark's process stood (:func:`enter_task`), load the case, run its
    set-up: the start of every child that calls a case (counted here, profiled in
    :mod:`steadybench.profiles.child`). ``stage`` follows along for the failure message."""
    enter_task(task)
    from ..model.implementation import Implementation

    stage.name = "loading the benchmark"
    implementation = _load_implementation(task)
    stage.name = "set-up"
    implementation.setup(task["params"])
    stage.name = "a call"
    hooks: tuple[Callable[[], Any], ...] = ()
    if any(getattr(type(implementation), name) is not getattr(Implementation, name)
           for name in ("init_run", "release_run")):
        hooks = (implementation.init_run, implementation.release_run)
    return LoadedCase(implementation, implementation.run, hooks)


def main(argv: list[str]) -> None:
    (mode,) = argv
    task = pickle.load(sys.stdin.buffer)
    spec = pickle.load(sys.stdin.buffer) if mode == "segments" else None
    stage = Stage()
    try:
        case = load_case(task, stage)
        implementation, call = case.implementation, case.call
        if case.hooks:  # the run loop's order: init_run, the call, release_run
            init, release = case.hooks

            def calls(count: int) -> None:
                for _ in repeat(None, count):
                    init()
                    call()
                    release()
        else:  # no per-call hooks: nothing but the call in the loop, so the harness per call
            def calls(count: int) -> None:  # is one loop step and one call (the slope keeps it)
                for _ in repeat(None, count):  # repeat: no int objects made per step
                    call()
        # The collector from the same state before the calls in every process: a collection
        # now empties the generations (their counters restart at zero), and freeze() keeps the
        # start-up's and set-up's objects out of the calls' collections. Otherwise how much the
        # imports allocated (which varies a little between invocations) decides where in the
        # calls the collections fall, and a full collection is ~10^5 instructions: one moved
        # changed a count per call by 3 % in 1 of 10 invocations here.
        gc.collect()
        gc.freeze()
        n = 1
        if spec is None:
            calls(1)
        else:
            mark = os.getresgid
            mark()  # segment 1: start-up, imports, set-up
            calls(1)
            gc.collect()
            mark()  # segment 2: the probe, one call
            if os.path.exists(f"{spec['out_file']}.3"):  # the call itself entered MARKER
                _fail(f"the code calls {MARKER}(), steadybench's marker between counted "
                      "segments, so its calls cannot be counted apart; measure it with "
                      "--measure time")
            stage.name = "sizing the call count"
            # read in every process, also when ``calls`` fixes n: a process that sized n and
            # one that did not then run the same code before the points (reading the file
            # leaves the allocator in another state: the first of an evaluation's launches,
            # the one that sized n, counted 0.015 % more per call than the others in the
            # same layout)
            probe = _instructions_in(f"{spec['out_file']}.2")
            n = spec["calls"] or calls_for(probe)
            stage.name = "a call"
            # the warm-up (n calls, not fitted: see WARMUP), then the points; one loop, so
            # that every point's segment runs the same harness code: the loop's set-up and
            # first step fall in the warm-up (in a loop of the points alone they fell in the
            # first point: 1,865 instructions more than the line through the others for a
            # loop of 40 additions, 0.03 % of its 500 calls)
            multiples = [1, *range(1, spec["points"] + 1)]
            gc.collect()
            mark()  # segment 3: sizing n
            for k in multiples:
                calls(k * n)
                gc.collect()
                mark()  # segment 4: the warm-up; segment 4 + k: k·n calls
        stage.name = "teardown"
        implementation.teardown()
    except BaseException as exc:  # noqa: BLE001 - contained: one line for the parent
        _fail(stage.failed(exc))
    sys.stdout.write(f"\n{CALLS} {n}\n{DONE}\n")
    sys.stdout.flush()
    # leave at once: the user's atexit handlers and threads are not part of the count
    os._exit(0)


if __name__ == "__main__":
    main(sys.argv[1:])
