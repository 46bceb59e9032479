"""The counted process of a Python case: ``python -m steadybench.counts.child TASK MODE``.

``TASK`` is a file holding a pickled :class:`~steadybench.runner.worker.WorkerTask` (how to find
the case: a benchmark file by path, or an importable callable). ``MODE`` is

* a call count ``N``: load the case, run its set-up, call it ``N`` times (with its ``init_run``
  and ``release_run`` hooks around each call, as the run loop does), run its teardown, then
  write the marker file ``TASK.done``. Everything but the ``N`` calls is the same at every ``N``,
  so it lands in the line fit's intercept (:mod:`steadybench.counts.fit`);
* ``calibrate``: the same, natively, calling until ``CALIBRATE_S`` seconds have passed, and
  printing ``per_call: SECONDS``. It also warms the bytecode caches, so the counted processes
  all load the same files.

What the user's code raises (``SystemExit`` included) is one line on standard error, prefixed
``steadybench-count:``, and exit status 3. A marker file missing after exit status 0 means the
code left the process early (``os._exit``). Only light modules are imported here: everything
this process does before the calls is counted in the intercept, and costs valgrind time.
"""

from __future__ import annotations

import os
import pickle
import sys
import time

#: exit status when the user's code failed (its message is on standard error)
USER_ERROR_STATUS = 3
#: standard error prefix of that message
PREFIX = "steadybench-count:"
#: seconds of calls in calibrate mode (at least one call)
CALIBRATE_S = 0.05
#: at most this many calls in calibrate mode
CALIBRATE_MAX_CALLS = 1_000_000


def _fail(message: str) -> None:
    sys.stderr.write(f"{PREFIX} {message}\n")
    sys.stderr.flush()
    os._exit(USER_ERROR_STATUS)


def main(argv: list[str]) -> None:
    task_file, mode = argv
    from ..runner.loop import describe_exception
    from ..runner.worker import _load_implementation

    with open(task_file, "rb") as f:
        task = pickle.load(f)
    if task.cwd:
        os.chdir(task.cwd)
    for entry in reversed(task.sys_path):
        if entry not in sys.path:
            sys.path.insert(0, entry)
    stage = "loading the benchmark"
    try:
        implementation = _load_implementation(task)
        stage = "set-up"
        implementation.setup(task.params)
        stage = "a call"
        init, call = implementation.init_run, implementation.run
        release = implementation.release_run
        if mode == "calibrate":
            calls = 0
            t0 = time.perf_counter()
            while True:
                init()
                call()
                release()
                calls += 1
                elapsed = time.perf_counter() - t0
                if elapsed >= CALIBRATE_S or calls >= CALIBRATE_MAX_CALLS:
                    break
            print(f"per_call: {elapsed / calls!r}", flush=True)
        else:
            for _ in range(int(mode)):
                init()
                call()
                release()
        stage = "teardown"
        implementation.teardown()
    except BaseException as exc:  # noqa: BLE001 - contained: one line for the parent
        what = ("called sys.exit(" + repr(exc.code) + ")" if isinstance(exc, SystemExit)
                else describe_exception(exc))
        _fail(f"{stage} failed: {what}")
    with open(task_file + ".done", "w") as f:
        f.write(mode)
    sys.stdout.flush()
    # leave at once: the user's atexit handlers and threads are not part of the count
    os._exit(0)


if __name__ == "__main__":
    main(sys.argv[1:])
