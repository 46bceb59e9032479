"""Independent executions: one case measured in K fresh worker processes, one after another.

Samples inside one process share its state (hash seed, memory layout, allocator, caches), so
they are not independent of each other; only repeated executions are (Touati et al., source
``003`` §2; Kalibera & Jones, ISMM 2013). Layout effects alone move results by several percent
(Mytkowicz et al., "Producing wrong data without doing anything obviously wrong", ASPLOS 2009).
So each execution here is a **spawned** interpreter (``python -m steadybench.runner.worker``),
never a fork:

* its own randomised ``PYTHONHASHSEED`` and an environment padded by a random 0–4095 bytes,
  so hash-order and stack-alignment effects average out over executions;
* its own process group, so the parent can kill it and everything it started;
* set-up, calibration, warm-up and samples all happen in the worker, which returns its raw case
  over a pipe (:mod:`steadybench.runner.worker`).

The parent enforces the case's hard time limit: a worker still running past it is killed with
its process group and recorded as failed, so a hung set-up or benchmark cannot hang the run.
Whatever user code does (``sys.exit``, ``os._exit``, a ``BaseException``, a segfault) ends at
most its own worker and is reported in one line, the user's traceback frames kept in
``case.extra["tracebacks"]``. Ctrl-C (or SIGTERM, which the CLI turns into it) is forwarded to
the worker, which returns what it measured; the parent merges it and re-raises.

This module is the plumbing of one worker (:func:`run_execution`); the execution layer runs K
of them (:class:`steadybench.execution.backends.WorkerBackend` through
:func:`steadybench.execution.driver.run_executions`) and merges them into one case.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import pickle
import select
import signal
import struct
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from ..errors import ConfigurationError
from ..execution.backend import Outcome
from ..model.execution import ProcessLayout
from .layout import aslr_off_for_children, layout_for
from .worker import FD_VARIABLE, FIXED_LAYOUT_VARIABLE, PAD_VARIABLE, WorkerTask

if TYPE_CHECKING:
    from ..meters.base import Meter
    from ..model.implementation import Implementation
    from ..model.parameters import Parameters
    from .runner import Runner

#: seconds an interrupted worker gets to send its partial results
INTERRUPT_GRACE_S = 5.0
#: seconds a worker may run past the case's hard time limit before it is killed
KILL_GRACE_S = 2.0
#: lines of a failed worker's standard error kept for the message
STDERR_TAIL_LINES = 8


def make_task(runner: Runner, implementation: Implementation, params: Parameters,
              meters: Sequence[Meter], benchmark: str | None) -> WorkerTask:
    """The pickled description of the case a worker measures; a ConfigurationError when the
    code cannot be sent to a fresh interpreter."""
    inner = runner.worker_runner()
    try:
        runner_bytes = pickle.dumps(inner)
        meter_bytes = pickle.dumps(list(meters))
    except Exception as exc:
        raise ConfigurationError(
            f"{benchmark or implementation.name}: the runner's settings cannot be sent to a "
            f"worker process ({type(exc).__name__}: {exc}); use --in-process") from None
    task = WorkerTask(benchmark=benchmark or implementation.name, params=params,
                      runner=runner_bytes, meters=meter_bytes, sys_path=list(sys.path),
                      cwd=os.getcwd(), time_limit=runner.time_limit,
                      layout=getattr(runner, "layout", "design"))
    if implementation.origin is not None:
        task.origin = implementation.origin
    else:
        try:
            task.implementation = pickle.dumps(implementation)
        except Exception as exc:
            raise ConfigurationError(
                f"{implementation.name}: independent processes need code a fresh interpreter "
                "can import (a benchmark file, or a function defined at module level); "
                f"this one cannot be sent ({type(exc).__name__}: {exc}); use processes=1"
            ) from None
    return task


class _Worker:
    """One running worker process and the parent's reading of its messages."""

    def __init__(self, task: WorkerTask, index: int) -> None:
        layout = layout_for(index, task.layout)
        self.outcome = Outcome(index=index, layout=ProcessLayout(
            hash_seed=layout.hash_seed, env_pad=layout.env_pad, layout=task.layout))
        self.pid: int | None = None
        env = dict(os.environ)
        env.update(task.env or {})
        env["PYTHONHASHSEED"] = str(layout.hash_seed)
        env[PAD_VARIABLE] = "x" * layout.env_pad
        env.pop(FIXED_LAYOUT_VARIABLE, None)
        if layout.fixed:
            env[FIXED_LAYOUT_VARIABLE] = "1"
        read_fd, write_fd = os.pipe()
        env[FD_VARIABLE] = str(write_fd)
        try:
            with aslr_off_for_children(layout.fixed):
                self.proc = subprocess.Popen(
                    [task.python or sys.executable, "-m", "steadybench.runner.worker"],
                    stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                    env=env, pass_fds=(write_fd,), start_new_session=True)
        finally:
            os.close(write_fd)
        self.fd = read_fd
        self.closed = False  # the worker closed its end of the message pipe
        self.buffer = b""
        self.stderr_tail: list[bytes] = []
        self.result: dict[str, Any] | None = None
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(pickle.dumps(task))
            self.proc.stdin.close()
        except BrokenPipeError:
            pass  # the worker died at start; its exit status tells why

    def pump(self, timeout: float) -> list[tuple[Any, ...]]:
        """Read what is available within ``timeout`` seconds; return complete messages."""
        assert self.proc.stderr is not None
        fds = [self.fd, self.proc.stderr.fileno()]
        ready, _, _ = select.select(fds, [], [], max(timeout, 0.0))
        if self.proc.stderr.fileno() in ready:
            chunk = os.read(self.proc.stderr.fileno(), 65536)
            if chunk:
                self.stderr_tail = (self.stderr_tail + chunk.splitlines())[-STDERR_TAIL_LINES:]
        messages = []
        if self.fd in ready:
            chunk = os.read(self.fd, 1 << 20)
            if not chunk:
                self.closed = True
            self.buffer += chunk
            while len(self.buffer) >= 4:
                (size,) = struct.unpack(">I", self.buffer[:4])
                if len(self.buffer) < 4 + size:
                    break
                messages.append(pickle.loads(self.buffer[4:4 + size]))
                self.buffer = self.buffer[4 + size:]
        return messages

    def signal_group(self, signum: int) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signum)

    def finish(self) -> None:
        """Make sure the worker and its group are gone, and release the pipes."""
        if self.proc.poll() is None:
            self.signal_group(signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(5.0)
        self.signal_group(signal.SIGKILL)  # anything the benchmark left in its group
        with contextlib.suppress(OSError):
            os.close(self.fd)
        if self.proc.stderr is not None:
            self.proc.stderr.close()


def _exit_description(proc: subprocess.Popen[bytes]) -> str:
    code = proc.returncode
    if code is None:
        return "did not exit"
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"was killed by {name}"
    return f"exited with status {code}"


def run_execution(task: WorkerTask, index: int, deadline: float,
                  progress: Callable[[int], None] | None = None) -> Outcome:
    """Run one worker until it returns its result, dies, or passes ``deadline`` (monotonic);
    ``progress(runs)`` hears the measured runs the worker has made so far. Ctrl-C is forwarded
    to the worker, whose partial result comes back with ``interrupt`` set."""
    worker = _Worker(task, index)
    outcome = worker.outcome
    try:
        try:
            while worker.result is None and not worker.closed:
                now = time.monotonic()
                if now >= deadline:
                    worker.signal_group(signal.SIGKILL)
                    outcome.error = (f"killed at the hard time limit ({task.time_limit:g} s "
                                     "for the case): the set-up or the benchmark did not "
                                     "return in time")
                    break
                for message in worker.pump(min(deadline - now, 0.25)):
                    kind = message[0]
                    if kind == "ready":
                        worker.pid = message[1]
                    elif kind == "progress":
                        outcome.runs_seen = int(message[1])
                        if progress is not None:
                            progress(outcome.runs_seen)
                    elif kind == "result":
                        worker.result = message[1]
        except KeyboardInterrupt as exc:
            # Forward the interrupt; the worker returns what it measured so far.
            outcome.interrupt = exc
            worker.signal_group(signal.SIGINT)
            limit = time.monotonic() + INTERRUPT_GRACE_S
            with contextlib.suppress(Exception):
                while worker.result is None and not worker.closed and time.monotonic() < limit:
                    for message in worker.pump(limit - time.monotonic()):
                        if message[0] == "result":
                            worker.result = message[1]
            outcome.interrupted = True
        _take_result(worker)
    finally:
        worker.finish()
    if outcome.interrupted and outcome.case is None:
        # Ctrl-C reached the worker before it could answer (during its start-up, say): an
        # interrupted execution, not a crash; its start-up traceback is not the user's
        outcome.error = None
    elif outcome.case is None and outcome.error is None:
        tail = " | ".join(line.decode(errors="replace").strip()
                          for line in worker.stderr_tail if line.strip())
        outcome.error = (f"worker process {_exit_description(worker.proc)} before returning "
                         "its results (os._exit() or a crash in the benchmark?)"
                         + (f": {tail}" if tail else ""))
    return outcome


def _take_result(worker: _Worker) -> None:
    outcome, result = worker.outcome, worker.result
    aslr_off = None
    if result is not None:
        worker.pid = result.get("pid", worker.pid)
        outcome.case = result.get("case")
        outcome.method = result.get("method")
        outcome.interrupted = outcome.interrupted or bool(result.get("interrupted"))
        if not (outcome.interrupted and result.get("error") == "interrupted"):
            outcome.error = outcome.error or result.get("error")
        outcome.frames = list(result.get("frames") or [])
        counts = result.get("counts")  # a counting worker's events (name -> count)
        if isinstance(counts, dict):
            outcome.counts = {str(k): float(v) for k, v in counts.items()}
        if "layout" in result:
            aslr_off = result["layout"] == "done"
    if outcome.layout is not None:
        outcome.layout = dataclasses.replace(outcome.layout, pid=worker.pid, aslr_off=aslr_off)
