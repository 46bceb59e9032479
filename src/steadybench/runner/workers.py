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

The parent pools the workers' runs into one case (so processors and plots work as usual) and
lists one entry per execution in ``case.processes``; :func:`steadybench.methods.base.
build_estimate` then makes the headline across executions.
"""

from __future__ import annotations

import contextlib
import math
import os
import pickle
import re
import select
import signal
import struct
import subprocess
import sys
import time
from array import array
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import ConfigurationError
from ..model.results import CaseResult
from .layout import aslr_off_for_children, layout_for
from .worker import FD_VARIABLE, FIXED_LAYOUT_VARIABLE, PAD_VARIABLE, WorkerTask

if TYPE_CHECKING:
    from ..meters.base import Meter
    from ..model.implementation import Implementation
    from ..model.parameters import Parameters
    from .runner import ProgressCallback, Runner

#: seconds an interrupted worker gets to send its partial results
INTERRUPT_GRACE_S = 5.0
#: seconds a worker may run past the case's hard time limit before it is killed
KILL_GRACE_S = 2.0
#: lines of a failed worker's standard error kept for the message
STDERR_TAIL_LINES = 8


@dataclass
class Execution:
    """What one worker process gave: its raw case, its calibrated method, how it ended."""

    index: int
    pid: int | None = None
    hash_seed: int = 0
    env_pad: int = 0
    #: "design" or "random" (:mod:`steadybench.runner.layout`)
    layout: str = "random"
    #: ASLR was off for this execution (None: not known yet)
    aslr_off: bool | None = None
    case: CaseResult | None = None
    method: Any = None
    interrupted: bool = False
    error: str | None = None
    frames: list[str] = field(default_factory=list)
    runs_seen: int = 0
    #: the Ctrl-C (or SIGTERM) the parent received while this worker ran, re-raised after merging
    interrupt: BaseException | None = None


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
        self.execution = Execution(index=index, hash_seed=layout.hash_seed,
                                   env_pad=layout.env_pad, layout=task.layout)
        env = dict(os.environ)
        env.update(task.env or {})
        env["PYTHONHASHSEED"] = str(self.execution.hash_seed)
        env[PAD_VARIABLE] = "x" * self.execution.env_pad
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
                  progress: ProgressCallback | None, base_case: CaseResult,
                  runs_before: int, estimate: float | None = None) -> Execution:
    """Run one worker until it returns its result, dies, or passes ``deadline`` (monotonic).
    ``estimate`` (the value so far, from earlier executions) is handed to ``progress``."""
    from .stop import RunState

    worker = _Worker(task, index)
    execution = worker.execution
    started = time.monotonic()
    try:
        try:
            while worker.result is None and not worker.closed:
                now = time.monotonic()
                if now >= deadline:
                    worker.signal_group(signal.SIGKILL)
                    execution.error = (f"killed at the hard time limit ({task.time_limit:g} s "
                                       "for the case): the set-up or the benchmark did not "
                                       "return in time")
                    break
                for message in worker.pump(min(deadline - now, 0.25)):
                    kind = message[0]
                    if kind == "ready":
                        execution.pid = message[1]
                    elif kind == "progress":
                        execution.runs_seen = int(message[1])
                        if progress is not None:
                            state = RunState(runs=runs_before + execution.runs_seen,
                                             elapsed_ns=int((time.monotonic() - started) * 1e9),
                                             estimate=estimate)
                            progress(base_case, state)
                    elif kind == "result":
                        worker.result = message[1]
        except KeyboardInterrupt as exc:
            # Forward the interrupt; the worker returns what it measured so far.
            execution.interrupt = exc
            worker.signal_group(signal.SIGINT)
            limit = time.monotonic() + INTERRUPT_GRACE_S
            with contextlib.suppress(Exception):
                while worker.result is None and not worker.closed and time.monotonic() < limit:
                    for message in worker.pump(limit - time.monotonic()):
                        if message[0] == "result":
                            worker.result = message[1]
            execution.interrupted = True
        _take_result(execution, worker)
    finally:
        worker.finish()
    if execution.interrupted and execution.case is None:
        # Ctrl-C reached the worker before it could answer (during its start-up, say): an
        # interrupted execution, not a crash; its start-up traceback is not the user's
        execution.error = None
    elif execution.case is None and execution.error is None:
        tail = " | ".join(line.decode(errors="replace").strip()
                          for line in worker.stderr_tail if line.strip())
        execution.error = (f"worker process {_exit_description(worker.proc)} before returning "
                           "its results (os._exit() or a crash in the benchmark?)"
                           + (f": {tail}" if tail else ""))
    return execution


def _take_result(execution: Execution, worker: _Worker) -> None:
    result = worker.result
    if result is None:
        return
    execution.pid = result.get("pid", execution.pid)
    execution.case = result.get("case")
    execution.method = result.get("method")
    execution.interrupted = execution.interrupted or bool(result.get("interrupted"))
    if not (execution.interrupted and result.get("error") == "interrupted"):
        execution.error = execution.error or result.get("error")
    execution.frames = list(result.get("frames") or [])
    if "layout" in result:
        execution.aslr_off = result["layout"] == "done"


def summarize_reasons(reasons: Sequence[str]) -> str:
    """Why the executions stopped, in one short clause: each distinct rule once, with how many
    executions it stopped. A reason's measured value ("CoV 2.51% <= 3.00%") differs in every
    execution, so it is left out of the summary ("CoV <= 3.00%"); each execution's own reason
    stays in ``case.processes``."""
    counts = Counter(_MEASURED.sub("<= ", r) for r in reasons if r)
    if not counts:
        return ""
    if len(counts) == 1:
        return f"; each: {next(iter(counts))}"
    return "; " + ", ".join(f"{rule} ({n})" for rule, n in counts.most_common())


#: the measured figure before a stop rule's threshold: "2.51% <= " in "CoV 2.51% <= 3.00%"
_MEASURED = re.compile(r"-?\d+(?:\.\d+)?(?:e-?\d+)?%? <= ")


def run_in_workers(runner: Runner, implementation: Implementation, params: Parameters,
                   meters: Sequence[Meter] = (), benchmark: str | None = None,
                   progress: ProgressCallback | None = None,
                   merged: CaseResult | None = None, *, task: WorkerTask | None = None,
                   on_execution: Callable[[Execution], bool | None] | None = None
                   ) -> CaseResult:
    """Run one case as ``runner.processes`` spawned workers in turn and merge their results.

    The case's hard time limit (``runner.time_limit``) covers all its workers together; each
    worker is told the time left, and killed :data:`KILL_GRACE_S` after it. ``task`` is a
    ready-made task (a fleet host receives it from the client, :mod:`steadybench.fleet.task`);
    ``on_execution`` sees each execution as soon as it ended (the fleet streams it off the
    host, so a host that dies later does not take it along); returning False stops the case.
    """
    count = int(runner.processes)
    if task is None:
        task = make_task(runner, implementation, params, meters, benchmark)
    if merged is None:
        merged = runner.new_case(implementation, params, benchmark)
    runner.last_case = merged
    executions: list[Execution] = []
    deadline = time.monotonic() + runner.time_limit
    for index in range(count):
        left = deadline - time.monotonic()
        if left <= 0:
            merged.warnings.append(
                f"stopped by the hard time limit ({runner.time_limit:g} s) after "
                f"{index} of {count} executions")
            break
        task.runner = pickle.dumps(runner.worker_runner(time_limit=left))
        runs_before = sum(e.case.n for e in executions if e.case is not None)
        execution = run_execution(task, index, deadline + KILL_GRACE_S, progress, merged,
                                  runs_before, _value_so_far(executions))
        executions.append(execution)
        if on_execution is not None and on_execution(execution) is False:
            merged.interrupted = True  # the caller stopped the case (a fleet task cancelled)
            break
        if execution.interrupt is not None:
            merge_executions(runner, merged, executions, count)
            merged.interrupted = True
            merged.stop_reason = "interrupted"
            raise execution.interrupt
        case = execution.case
        if case is None or case.n == 0 or (case.errors and implementation.error_policy == "stop"):
            # The code cannot run (load error, crash, a failed run) or hung: later executions
            # would do the same.
            break
    merge_executions(runner, merged, executions, count)
    return merged


def _value_so_far(executions: Sequence[Execution]) -> float | None:
    """The median of the finished executions' sample medians: a progress display's "current
    estimate" (the headline itself is made by the method when the case ends)."""
    import statistics

    medians = []
    for execution in executions:
        values = execution.case.values() if execution.case is not None else []
        if values:
            medians.append(statistics.median(values))
    return statistics.median(medians) if medians else None


def merge_executions(runner: Runner, merged: CaseResult, executions: Sequence[Execution],
                     planned: int) -> CaseResult:
    """Pool the workers' runs into ``merged`` and list one entry per execution.

    Each execution's own estimate (its median, slope...) is made here, in the parent, with the
    worker's calibrated method at the runner's confidence level.
    """
    from ..processors.base import finalize_case

    reasons: list[str] = []
    tracebacks = merged.extra.setdefault("tracebacks", [])
    for execution in executions:
        case = execution.case
        if execution.error and execution.error not in merged.errors:
            merged.errors.append(execution.error)  # which execution: see case.processes
            entry = {"error": execution.error, "frames": execution.frames}
            if execution.frames and entry not in tracebacks:
                tracebacks.append(entry)
        if case is None:
            merged.processes.append(_entry(execution, None))
            continue
        _append_runs(merged, case)
        for name, acc in case.stream.items():
            mine = merged.stream.get(name)
            merged.stream[name] = acc if mine is None else mine.merge(acc)
        merged.units.update(case.units)
        for text in case.warnings:
            if text not in merged.warnings:
                merged.warnings.append(text)
        for text in case.errors:
            if text not in merged.errors:
                merged.errors.append(text)
        for item in case.extra.get("tracebacks", []):
            if item not in tracebacks:
                tracebacks.append(item)
        _merge_costs(merged, case)
        if case.stop_reason:
            reasons.append(case.stop_reason)
        # The worker's case is not used after this: its estimate is made on it directly.
        own = case
        method = execution.method if execution.method is not None else runner.method
        try:
            finalize_case(own, (), method, runner.confidence)
        except Exception as exc:  # the estimate is informative; the raw runs still count
            own.errors.append(f"{type(exc).__name__}: {exc}")
        merged.processes.append(_entry(execution, own))
        if execution.method is not None and hasattr(execution.method, "options"):
            merged.extra.setdefault("method_options", []).append(execution.method.options())
    if not tracebacks:
        merged.extra.pop("tracebacks", None)
    done = sum(1 for e in executions if e.case is not None and e.case.n > 0)
    merged.stop_reason = f"{done} of {planned} executions" + summarize_reasons(reasons)
    merged.extra["executions"] = {"planned": planned, "completed": done,
                                  "isolation": "spawned worker processes"}
    merged.extra["hard_limits"] = {"time_s": runner.time_limit, "runs": runner.max_runs,
                                   "stop": runner.stop.describe()}
    return merged


def _merge_costs(merged: CaseResult, case: CaseResult) -> None:
    """Add up what the per-run countermeasures cost in each execution (cool-down, warm-up...:
    ``extra["machine"]["costs"]``, :func:`steadybench.system.actions._cost`)."""
    costs = case.extra.get("machine", {}).get("costs")
    if not isinstance(costs, dict):
        return
    into = merged.extra.setdefault("machine", {}).setdefault("costs", {})
    for name, cost in costs.items():
        have = into.setdefault(name, {"time_s": 0.0, "rounds": 0, "runs": 0, "max_s": 0.0})
        have["time_s"] = round(have["time_s"] + cost.get("time_s", 0.0), 9)
        have["rounds"] += cost.get("rounds", 0)
        have["runs"] += cost.get("runs", 0)
        have["max_s"] = max(have["max_s"], cost.get("max_s", 0.0))


def _entry(execution: Execution, own: CaseResult | None) -> dict[str, Any]:
    est = own.estimate if own is not None else None
    names = getattr(execution.method, "execution_figures", ()) if est is not None else ()
    figures = {name: est.figure(name) for name in names
               if isinstance(est.figure(name), (int, float))} if est is not None else {}
    return {
        "index": execution.index,
        "pid": execution.pid,
        "hash_seed": execution.hash_seed,
        "env_pad": execution.env_pad,
        "layout": execution.layout,
        "aslr_off": execution.aslr_off,
        "value": est.value if est is not None and est.ok else None,
        "ci_low": est.ci_low if est is not None else None,
        "ci_high": est.ci_high if est is not None else None,
        "confidence": est.confidence if est is not None else None,
        "within_cov": (est.within_cov if est is not None and est.within_cov is not None
                       else own.stats.get("cov") if own is not None else None),
        "n": own.n if own is not None else 0,
        "calls_per_sample": est.figure("executions") if est is not None else None,
        "stop_reason": own.stop_reason if own is not None else "",
        "interrupted": execution.interrupted,
        "error": execution.error,
        **({"figures": figures} if figures else {}),
    }


def _append_runs(merged: CaseResult, case: CaseResult) -> None:
    if not (merged.keep_samples and case.keep_samples):
        return
    before = len(merged.status)
    added = len(case.status)
    merged.status.extend(case.status)
    merged.outlier.extend(case.outlier)
    for name in set(merged.metrics) | set(case.metrics):
        column = merged.metrics.get(name)
        if column is None:
            column = merged.metrics[name] = array("d", [math.nan]) * before
        other = case.metrics.get(name)
        column.extend(other if other is not None else array("d", [math.nan]) * added)
