"""The profiled process of a Python case: ``py-spy record ... -- python -m
steadybench.profiles.child TASK SECONDS`` (:mod:`.sampler` runs it; py-spy samples it from
outside, so nothing here samples).

``TASK`` is a file holding the pickled task of :func:`steadybench.counts.python.task_bytes`
(how to find the case). The process loads the case, runs its set-up and one warm-up call, then

1. calls it for ``SECONDS`` of wall time inside :func:`profiled_calls` (the frame that tells
   the main thread's samples of the calls from the rest; see :mod:`.filtering`) with the
   garbage collector **on**, each collection's pause timed through ``gc.callbacks`` (JMH's
   ``-prof gc``: collection is part of the cost, so it is measured rather than switched off
   as the measured executions do);
2. calls it again with ``tracemalloc`` tracing, up to :data:`ALLOC_CALLS` calls or a quarter
   of ``SECONDS``: each call's peak of traced memory above the level before it, and what it
   left allocated. This stretch lies outside the marker, so tracemalloc's own cost never
   reaches the main thread's profile;
3. runs the teardown and prints one line, :data:`PREFIX` followed by JSON (calls, seconds,
   collections, pauses, allocations, and how many calls were made outside the marker: work
   the case hands to other threads or processes carries no marker, and the parent counts it
   in proportion to the calls inside).

What the user's code raises is one line on standard error (``steadybench-profile: ...``) and
exit status 3.
"""

from __future__ import annotations

import gc
import inspect
import json
import os
import pickle
import sys
import time
from collections.abc import Callable
from typing import Any

PREFIX = "steadybench-profile:"
USER_ERROR_STATUS = 3
ALLOC_CALLS = 200


class _GcTimer:
    """Collections and their pauses, through ``gc.callbacks`` (start/stop of each)."""

    def __init__(self) -> None:
        self.collections = 0
        self.pause = 0.0
        self._started: float | None = None

    def __call__(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._started = time.perf_counter()
        elif self._started is not None:
            self.pause += time.perf_counter() - self._started
            self.collections += 1
            self._started = None


def profiled_calls(call: Callable[[], Any], hooks: tuple[Callable[[], Any], ...],
                   seconds: float) -> tuple[int, float]:
    """The benchmark's calls for ``seconds`` of wall time (at least one call): how many, and
    their wall time. Every sample of the main thread taken inside this frame is the
    benchmark's. Wall time ends it because py-spy samples wall time: a thread running or
    waiting for a core is sampled ``rate`` times a second, so the stretch gives as many
    samples on a busy machine as on an idle one. The clock is read between batches of calls
    that double until a batch lasts 1 ms, so that reading it is a negligible part of the
    profile."""
    clock = time.perf_counter
    calls = 0
    batch = 1
    start = clock()
    end = start + seconds
    while True:
        before = clock()
        if hooks:
            init, release = hooks
            for _ in range(batch):
                init()
                call()
                release()
        else:
            for _ in range(batch):
                call()
        calls += batch
        now = clock()
        if now >= end:
            break
        if now - before < 1e-3:
            batch *= 2
    return calls, now - start


def _allocations(call: Callable[[], Any], hooks: tuple[Callable[[], Any], ...],
                 seconds: float) -> dict[str, float]:
    import tracemalloc

    tracemalloc.start()
    peaks = retained = 0
    calls = 0
    end = time.perf_counter() + seconds
    try:
        while calls < ALLOC_CALLS and (calls == 0 or time.perf_counter() < end):
            if hooks:
                hooks[0]()
            tracemalloc.reset_peak()
            before = tracemalloc.get_traced_memory()[0]
            call()
            current, peak = tracemalloc.get_traced_memory()
            if hooks:
                hooks[1]()
            peaks += peak - before
            retained += current - before
            calls += 1
    finally:
        tracemalloc.stop()
    return {"calls": calls, "peak_bytes_per_call": peaks / calls,
            "retained_bytes_per_call": retained / calls}


def _fail(message: str) -> None:
    sys.stderr.write(f"{PREFIX} {message}\n")
    sys.stderr.flush()
    os._exit(USER_ERROR_STATUS)


def main(argv: list[str]) -> None:
    task_file, seconds_text = argv
    seconds = float(seconds_text)
    with open(task_file, "rb") as fh:
        task = pickle.load(fh)
    from ..counts.child import Stage, load_case

    stage = Stage()
    try:
        case = load_case(task, stage)
        implementation, call, hooks = case.implementation, case.call, case.hooks
        asynchronous = False
        if hooks:
            hooks[0]()
        first = call()  # warm-up: first-call costs (imports, caches) are not the benchmark's
        if inspect.iscoroutine(first):  # a coroutine function: each call awaited in a loop
            import asyncio

            loop = asyncio.new_event_loop()
            loop.run_until_complete(first)
            coroutine_function = call

            def call() -> Any:
                return loop.run_until_complete(coroutine_function())

            asynchronous = True
        if hooks:
            hooks[1]()
        gc.enable()
        timer = _GcTimer()
        gc.callbacks.append(timer)
        try:
            calls, elapsed = profiled_calls(call, hooks, seconds)
        finally:
            gc.callbacks.remove(timer)
        alloc = _allocations(call, hooks, max(0.05, seconds / 4))
        stage.name = "teardown"
        implementation.teardown()
    except BaseException as exc:  # noqa: BLE001 - contained: one line for the parent
        _fail(stage.failed(exc))
    result = {"calls": calls, "seconds": elapsed, "gc_collections": timer.collections,
              "gc_pause_seconds": timer.pause, "alloc": alloc,
              "asynchronous": asynchronous,
              # calls outside the marker: the warm-up and the allocation stretch
              "other_calls": 1 + alloc["calls"]}
    sys.stdout.write("\n" + PREFIX + " " + json.dumps(result) + "\n")
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    main(sys.argv[1:])
