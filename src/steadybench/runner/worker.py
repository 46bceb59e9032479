"""The worker side of independent executions: ``python -m steadybench.runner.worker``.

A worker is a fresh interpreter started by :mod:`steadybench.runner.workers`. It reads one
pickled :class:`WorkerTask` from standard input, rebuilds the benchmark (importing the
benchmark file, or unpickling an importable callable), runs set-up, calibration, warm-up and
samples with an ordinary in-process :class:`~steadybench.runner.runner.Runner`, and sends its
raw case back over the pipe named by ``STEADYBENCH_WORKER_FD``.

Messages are length-prefixed pickles (4-byte big-endian length): ``("ready", pid)`` once the
task is read, ``("progress", runs, elapsed_s)`` about ten times a second, and finally
``("result", payload)``. Anything the user's code does is contained here: ``sys.exit``, a
``BaseException`` subclass or an error while loading becomes an error in the payload; the parent
notices ``os._exit``, a crash (a signal) or a hang from the outside.

This module imports only light modules at start: the worker's start-up is part of every
execution's cost.
"""

from __future__ import annotations

import os
import pickle
import signal
import struct
import sys
from dataclasses import dataclass, field
from typing import Any, BinaryIO

#: environment variable naming the file descriptor messages go to
FD_VARIABLE = "STEADYBENCH_WORKER_FD"
#: environment variable whose random length varies the environment size per execution
PAD_VARIABLE = "STEADYBENCH_ENV_PAD"
#: environment variable asking the worker to run with address-space randomisation off (set by
#: the parent under the fixed layout design; see :mod:`steadybench.runner.layout`)
FIXED_LAYOUT_VARIABLE = "STEADYBENCH_FIXED_LAYOUT"
#: Linux personality flag ADDR_NO_RANDOMIZE (``personality(2)``)
ADDR_NO_RANDOMIZE = 0x0040000


@dataclass
class WorkerTask:
    """What one worker needs: where the benchmark comes from and how to measure it.

    ``origin`` is ``(file, benchmark title, implementation name)`` for benchmarks defined in a
    file; otherwise ``implementation`` holds the pickled implementation (its code importable by
    module name). ``runner`` is a pickled in-process Runner carrying only per-run actions.
    """

    benchmark: str
    params: Any  # a steadybench Parameters
    runner: bytes
    meters: bytes
    origin: tuple[str, str, str] | None = None
    implementation: bytes | None = None
    sys_path: list[str] = field(default_factory=list)
    cwd: str | None = None
    #: the case's hard time limit, seconds (the parent enforces it)
    time_limit: float = 600.0
    #: (file, selector): the worker finds the file's one case that matches the selector
    #: (``steadybench ab``, whose variant may live in another interpreter or checkout)
    select: tuple[str, str | None] | None = None
    #: the interpreter to start (default: the parent's own); read by the parent only
    python: str | None = None
    #: environment variables set for the worker on top of the parent's; parent only
    env: dict[str, str] | None = None
    #: how executions' hash seeds, environment sizes and address-space randomisation are
    #: chosen: "design" or "random" (:mod:`steadybench.runner.layout`); parent only
    layout: str = "design"


def write_message(stream: BinaryIO, message: Any) -> None:
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(struct.pack(">I", len(data)) + data)
    stream.flush()


def _load_implementation(task: WorkerTask) -> Any:
    if task.select is not None:
        from ..definitions import find_single_case

        implementation, task.params, _ = find_single_case(*task.select)
        return implementation
    if task.origin is not None:
        from ..definitions import find_implementation

        return find_implementation(*task.origin)
    assert task.implementation is not None
    return pickle.loads(task.implementation)


def run_task(task: WorkerTask, out: BinaryIO) -> None:
    """Measure the task's case and send the result (the body of :func:`main`)."""
    from .loop import describe_exception, user_frames

    if task.cwd:
        os.chdir(task.cwd)
    for entry in reversed(task.sys_path):
        if entry not in sys.path:
            sys.path.insert(0, entry)
    payload: dict[str, Any] = {"layout": os.environ.get(FIXED_LAYOUT_VARIABLE, "random"),
                               "pid": os.getpid(), "case": None, "method": None,
                               "interrupted": False, "error": None, "frames": []}
    try:
        implementation = _load_implementation(task)
        runner = pickle.loads(task.runner)
        meters = pickle.loads(task.meters)
    except BaseException as exc:  # noqa: BLE001 - contained and reported
        if isinstance(exc, KeyboardInterrupt):
            payload["interrupted"] = True
        payload["error"] = ("could not load the benchmark in a worker process: "
                            + describe_exception(exc, "benchmark file"))
        payload["frames"] = user_frames(exc)
        write_message(out, ("result", payload))
        return

    def progress(case: Any, state: Any) -> None:
        write_message(out, ("progress", state.runs, state.elapsed))

    try:
        case = runner.execute(implementation, task.params, meters,
                              benchmark=task.benchmark, progress=progress)
    except KeyboardInterrupt:
        payload["interrupted"] = True
        case = runner.last_case
    except BaseException as exc:  # noqa: BLE001 - user code must not end the worker silently
        case = runner.last_case
        payload["error"] = describe_exception(exc)
        payload["frames"] = user_frames(exc)
    payload["case"] = case
    payload["method"] = runner.method
    write_message(out, ("result", payload))


def _without_aslr() -> None:
    """Under the fixed layout design the worker must run with the Linux personality
    ADDR_NO_RANDOMIZE, so that its memory layout is decided by its environment size alone. The
    parent normally starts it so (:func:`steadybench.runner.layout.aslr_off_for_children`);
    otherwise (an interpreter started some other way) the worker re-executes itself once with
    it. Where the personality cannot be set (not Linux, a sandbox refusing it) the worker goes
    on with randomisation on and says so in the variable the parent reads back."""
    if os.environ.get(FIXED_LAYOUT_VARIABLE) != "1" or not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        current = libc.personality(0xFFFFFFFF)
        if current == -1:
            raise OSError(ctypes.get_errno(), "personality")
        if current & ADDR_NO_RANDOMIZE:
            os.environ[FIXED_LAYOUT_VARIABLE] = "done"
            return
        if libc.personality(current | ADDR_NO_RANDOMIZE) == -1:
            raise OSError(ctypes.get_errno(), "personality")
    except (OSError, AttributeError):
        os.environ[FIXED_LAYOUT_VARIABLE] = "aslr-on"
        return
    os.environ[FIXED_LAYOUT_VARIABLE] = "done"
    os.execv(sys.executable, [sys.executable, "-m", "steadybench.runner.worker"])


def _interrupt_once(signum: int, frame: Any) -> None:
    """The first SIGINT raises KeyboardInterrupt; later ones are ignored. Ctrl-C at a terminal
    reaches the worker twice (from the terminal, to the whole group, and forwarded by the
    parent): a second KeyboardInterrupt while the partial results are being sent would end the
    worker with a traceback and no results, and the case would look crashed (issue 28)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    raise KeyboardInterrupt


def main() -> None:
    _without_aslr()
    # The parent forwards Ctrl-C (and SIGTERM) as SIGINT. A worker started by a process that
    # ignores SIGINT (a background job of a script) inherits the ignore, and Python then installs
    # no handler: restore the one that raises KeyboardInterrupt, so partial samples come back.
    signal.signal(signal.SIGINT, _interrupt_once)
    out = os.fdopen(int(os.environ[FD_VARIABLE]), "wb")
    write_message(out, ("ready", os.getpid()))
    try:
        task = pickle.load(sys.stdin.buffer)
        run_task(task, out)
    except KeyboardInterrupt:
        write_message(out, ("result", {"pid": os.getpid(), "case": None, "method": None,
                                       "interrupted": True, "error": "interrupted",
                                       "frames": []}))
    finally:
        out.flush()
        # Leave at once: user code's atexit handlers or threads must not keep a worker alive.
        os._exit(0)


if __name__ == "__main__":
    main()
