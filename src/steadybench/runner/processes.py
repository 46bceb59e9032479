"""Independent rounds: one case run as R worker processes, one after another.

Runs inside one process share its state (allocator, caches, JIT-like warm paths, address-space
layout), so they are not independent; Touati et al. (source ``003``, §2) therefore treat
repeated *executions of the program* as the independent observations, and source ``000``
repeats whole program runs. With ``Runner(processes=R)`` each case is run by R forked workers in
turn; each worker measures with the runner's settings and returns its raw case and its own
estimate. The parent merges them into one :class:`CaseResult` whose runs are the pooled samples
(so every method, processor and stop report works on them as usual) and whose ``processes``
lists the per-process estimates; the method's ``finish`` then adds the between-process spread
next to the within-process one (:func:`process_spread`).

Workers are forked (``multiprocessing`` "fork" context, Linux/macOS), so closures and lambdas
need no pickling. Ctrl-C reaches the workers too (same process group): a worker returns what it
measured so far, the parent terminates it if it does not, merges the partial results and
re-raises ``KeyboardInterrupt``; no worker outlives the parent's handling of it. Progress
callbacks are not forwarded from the workers.
"""

from __future__ import annotations

import contextlib
import math
import multiprocessing
import os
from array import array
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from scipy import stats as sps

from ..errors import ConfigurationError
from ..model.results import CaseResult

if TYPE_CHECKING:
    from ..meters.base import Meter
    from ..model.implementation import Implementation
    from ..model.parameters import Parameters
    from .runner import ProgressCallback, Runner

#: seconds the parent waits for an interrupted worker to send its partial results
INTERRUPT_GRACE_S = 2.0


def _worker(runner: Runner, implementation: Implementation, params: Parameters,
            meters: Sequence[Meter], benchmark: str | None, conn: Any) -> None:
    from ..processors.base import finalize_case

    runner.processes = 1
    interrupted = False
    message: dict[str, Any]
    try:
        try:
            case = runner.execute(implementation, params, meters, benchmark=benchmark)
        except KeyboardInterrupt:
            interrupted = True
            case = runner.last_case
        if case is None:
            message = {"case": None, "estimate": None, "interrupted": interrupted}
        else:
            own = CaseResult.from_dict(case.to_dict())
            try:
                finalize_case(own, (), runner.method, getattr(runner, "confidence", 0.95))
                estimate = own.estimate
            except Exception as exc:  # the estimate is informative; the raw case still counts
                estimate = {"value": None, "error": f"{type(exc).__name__}: {exc}"}
            message = {"case": case.to_dict(), "estimate": estimate, "interrupted": interrupted,
                       "pid": os.getpid()}
    except BaseException as exc:  # report anything else as the worker's error
        message = {"case": None, "estimate": None, "interrupted": interrupted,
                   "error": f"{type(exc).__name__}: {exc}"}
    with contextlib.suppress(Exception):
        conn.send(message)
        conn.close()


def _stop(proc: Any) -> None:
    """Make sure a worker is gone: terminate, then kill, and reap it."""
    if proc.is_alive():
        proc.terminate()
        proc.join(1.0)
    if proc.is_alive():
        proc.kill()
    proc.join(1.0)


def run_in_processes(runner: Runner, implementation: Implementation, params: Parameters,
                     meters: Sequence[Meter] = (), benchmark: str | None = None,
                     progress: ProgressCallback | None = None) -> CaseResult:
    """Run one case as ``runner.processes`` workers in turn and merge their results."""
    count = int(runner.processes)
    if count < 1:
        raise ConfigurationError(f"processes must be at least 1, got {count}")
    try:
        ctx = multiprocessing.get_context("fork")
    except ValueError:
        raise ConfigurationError("independent processes need the 'fork' start method, which "
                                 "this platform lacks") from None
    parts: list[dict[str, Any]] = []
    name = benchmark or implementation.name
    for index in range(count):
        receiver, sender = ctx.Pipe(duplex=False)
        proc = ctx.Process(target=_worker, name=f"steadybench-{name}-{index}",
                           args=(runner, implementation, params, meters, benchmark, sender),
                           daemon=True)
        proc.start()
        sender.close()
        try:
            try:
                message = receiver.recv()
            except EOFError:
                message = {"case": None, "estimate": None, "interrupted": False,
                           "error": f"worker process exited with status {proc.exitcode}"}
            proc.join()
        except KeyboardInterrupt:
            message = None
            with contextlib.suppress(Exception):
                if receiver.poll(INTERRUPT_GRACE_S):
                    message = receiver.recv()
            _stop(proc)
            if message is not None:
                message["interrupted"] = True
                parts.append(message)
            case = merge_cases(runner, implementation, params, benchmark, parts, count)
            case.interrupted = True
            case.stop_reason = "interrupted"
            runner.last_case = case
            raise
        finally:
            receiver.close()
            _stop(proc)
        message["index"] = index
        parts.append(message)
        if message.get("interrupted"):
            # The worker saw Ctrl-C first: stop here like the parent would.
            case = merge_cases(runner, implementation, params, benchmark, parts, count)
            case.interrupted = True
            case.stop_reason = "interrupted"
            runner.last_case = case
            raise KeyboardInterrupt
    case = merge_cases(runner, implementation, params, benchmark, parts, count)
    runner.last_case = case
    return case


def merge_cases(runner: Runner, implementation: Implementation, params: Parameters,
                benchmark: str | None, parts: list[dict[str, Any]], planned: int) -> CaseResult:
    """Pool the workers' runs into one case and list the per-process estimates."""
    merged = runner.new_case(implementation, params, benchmark)
    reasons: list[str] = []
    for part in parts:
        index = part.get("index", len(merged.processes))
        data = part.get("case")
        if data is None:
            merged.errors.append(f"process {index}: {part.get('error', 'no result')}")
            continue
        case = CaseResult.from_dict(data)
        _append_runs(merged, case)
        for name, acc in case.stream.items():
            mine = merged.stream.get(name)
            merged.stream[name] = acc if mine is None else mine.merge(acc)
        merged.units.update(case.units)
        for text in case.warnings:
            if text not in merged.warnings:
                merged.warnings.append(text)
        for text in case.errors:
            labelled = f"process {index}: {text}"
            if labelled not in merged.errors:
                merged.errors.append(labelled)
        if case.stop_reason:
            reasons.append(case.stop_reason)
        est = part.get("estimate") or {}
        merged.processes.append({
            "index": index,
            "pid": part.get("pid"),
            "value": est.get("value"),
            "ci_low": est.get("ci_low"),
            "ci_high": est.get("ci_high"),
            "confidence": est.get("confidence"),
            "n": case.n,
            "stop_reason": case.stop_reason,
            "interrupted": bool(part.get("interrupted")),
            "estimate": est,
        })
    done = sum(1 for p in parts if p.get("case") is not None)
    unique = sorted(set(reasons))
    merged.stop_reason = f"{done} of {planned} processes" + (
        f"; each: {unique[0]}" if len(unique) == 1 else
        f"; {', '.join(unique)}" if unique else "")
    merged.extra["processes"] = {"planned": planned, "completed": done}
    return merged


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


def process_spread(processes: list[dict[str, Any]], estimate: dict[str, Any]) -> dict[str, Any]:
    """Between-process spread of the per-process values next to the within-process one.

    * ``between_process_sd``: standard deviation of the per-process values (R − 1);
    * ``between_process_ci``: Student-t interval of the mean of the per-process values (R ≥ 2),
      at the pooled estimate's confidence: the interval that treats processes as the
      independent observations (``003`` §2);
    * ``within_process_se``: root mean square of the per-process standard errors, each taken as
      its CI half-width over the normal quantile (an approximation when a process had few runs);
    * ``spread_ratio``: between-process sd / within-process se. Near 1 when processes agree as
      well as their own noise predicts; well above 1 (``processes_disagree`` above 3) means
      each process settles on its own value and in-process CIs are too narrow.
    """
    values = [p["value"] for p in processes if p.get("value") is not None]
    out: dict[str, Any] = {"processes": len(processes),
                           "process_values": [p.get("value") for p in processes]}
    confidence = estimate.get("confidence") or 0.95
    if len(values) >= 2:
        arr = np.asarray(values, dtype=float)
        sd = float(arr.std(ddof=1))
        mean = float(arr.mean())
        half = float(sps.t.ppf(0.5 + confidence / 2, arr.size - 1)) * sd / math.sqrt(arr.size)
        out.update(between_process_mean=mean, between_process_sd=sd,
                   between_process_ci=[mean - half, mean + half])
    else:
        out.update(between_process_mean=values[0] if values else None, between_process_sd=None,
                   between_process_ci=None)
    z = float(sps.norm.ppf(0.5 + confidence / 2))
    ses = [(p["ci_high"] - p["ci_low"]) / 2 / z for p in processes
           if p.get("ci_low") is not None and p.get("ci_high") is not None]
    within = math.sqrt(sum(s * s for s in ses) / len(ses)) if ses else None
    out["within_process_se"] = within
    sd = out.get("between_process_sd")
    ratio = sd / within if sd is not None and within else None
    out["spread_ratio"] = ratio
    out["processes_disagree"] = bool(ratio is not None and ratio > 3.0)
    return out
