"""The counted process of a Python case: ``python -m steadybench.counts.child MODE < TASK``.

``TASK``, on standard input, is a pickled dict (how to find the case: a benchmark file by path,
or an importable callable; see :func:`steadybench.counts.python.task_bytes`). It comes on
standard input rather than as a file name so that the command line, which the interpreter
hashes and stores, is the same in every invocation. ``MODE`` is

* a call count ``N``: load the case, run its set-up, collect and freeze the garbage collector's
  objects (so the calls' collections start from the same state in every process), call it
  ``N`` times (with its ``init_run`` and ``release_run`` hooks around each call, as the run
  loop does), run its teardown, then print the marker line :data:`DONE`. Everything but the
  ``N`` calls is the same at every ``N``, so it lands in the line fit's intercept
  (:mod:`steadybench.counts.fit`);
* ``check``: the same with one call, run natively before any counting: a case that fails
  fails fast, and the bytecode caches are written, so that every counted process loads the
  same files.

What the user's code raises (``SystemExit`` included) is one line on standard error, prefixed
``steadybench-count:``, and exit status 3. A missing marker after exit status 0 means the code
left the process early (``os._exit``). Only light modules are imported here: everything
this process does before the calls is counted in the intercept, and costs valgrind time.
"""

from __future__ import annotations

import gc
import os
import pickle
import sys
from typing import Any

#: exit status when the user's code failed (its message is on standard error)
USER_ERROR_STATUS = 3
#: standard error prefix of that message
PREFIX = "steadybench-count:"
#: the last line on standard output when the calls and the teardown finished
DONE = "steadybench-count: done"


def _fail(message: str) -> None:
    sys.stderr.write(f"{PREFIX} {message}\n")
    sys.stderr.flush()
    os._exit(USER_ERROR_STATUS)


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


def main(argv: list[str]) -> None:
    (mode,) = argv
    task = pickle.load(sys.stdin.buffer)
    if task["cwd"]:
        os.chdir(task["cwd"])
    for entry in reversed(task["sys_path"]):
        if entry not in sys.path:
            sys.path.insert(0, entry)
    from ..model.implementation import Implementation

    stage = "loading the benchmark"
    try:
        implementation = _load_implementation(task)
        stage = "set-up"
        implementation.setup(task["params"])
        stage = "a call"
        call = implementation.run
        hooks = [getattr(implementation, name) for name in ("init_run", "release_run")
                 if getattr(type(implementation), name) is not getattr(Implementation, name)]
        count = 1 if mode == "check" else int(mode)
        # The collector from the same state before the calls in every process: a collection
        # now empties the generations (their counters restart at zero), and freeze() keeps the
        # start-up's and set-up's objects out of the calls' collections. Otherwise how much the
        # imports allocated (which varies a little between invocations) decides where in the
        # calls the collections fall, and a full collection is ~10^5 instructions: one moved
        # changed a count per call by 3 % in 1 of 10 invocations here.
        gc.collect()
        gc.freeze()
        if hooks:  # the run loop's order: init_run, the call, release_run
            init, release = implementation.init_run, implementation.release_run
            for _ in range(count):
                init()
                call()
                release()
        else:  # no per-call hooks: nothing but the call in the loop, so the harness per call
            for _ in range(count):  # is one loop step and one call (the slope keeps it)
                call()
        stage = "teardown"
        implementation.teardown()
    except BaseException as exc:  # noqa: BLE001 - contained: one line for the parent
        what = ("called sys.exit(" + repr(exc.code) + ")" if isinstance(exc, SystemExit)
                else f"{type(exc).__name__}: {exc}")
        _fail(f"{stage} failed: {what}")
    sys.stdout.write("\n" + DONE + "\n")
    sys.stdout.flush()
    # leave at once: the user's atexit handlers and threads are not part of the count
    os._exit(0)


if __name__ == "__main__":
    main(sys.argv[1:])
