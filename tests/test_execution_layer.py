"""The execution layer's contract: every backend through the same checks.

One driver (:func:`steadybench.execution.driver.run_executions`) runs K executions of a case
through a backend. Whatever the backend — a spawned worker interpreter, this process, a
command session, or a scripted fake — the driver must

* hold the hard time limit across all K executions (checked on an injected clock that each
  execution moves by ten seconds, so no test races the real clock);
* stop after a failing execution;
* on Ctrl-C, merge what was measured (the interrupted execution included), mark the case
  interrupted and re-raise;
* run the countermeasures of the four stages (benchmark stages once around all executions,
  closed on every exit path; run stages at every run of every execution);
* give each execution a typed, frozen record that survives the results file;
* merge the executions into one case with the one merge function.

Real backends start real processes; the tests assert structure (counts, records, reasons),
never speed. Waits are for conditions: Ctrl-C is raised from the progress callback once the
second execution has reported runs.
"""

from __future__ import annotations

import dataclasses
import json
import sys
import textwrap
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

import steadybench as sb
from steadybench.definitions import build_benchmarks, load_file, mark_origin
from steadybench.execution.backend import ExecutionRequest, Outcome
from steadybench.execution.backends import CommandBackend, InProcessBackend, WorkerBackend
from steadybench.execution.driver import StageActions, run_executions
from steadybench.methods import make_method
from steadybench.model.execution import EXECUTION_FIELDS, Execution
from steadybench.model.implementation import FunctionImplementation
from steadybench.model.parameters import Parameters
from steadybench.model.results import RUN_OK, CaseResult
from steadybench.processors import finalize_case
from steadybench.programs.commands import Command
from steadybench.programs.exec import ExecOptions, ExecSession
from steadybench.programs.process import CommandRunner
from steadybench.runner.actions import Action, RunContext
from steadybench.runner.stop import ElapsedTime, Runs

#: what an execution does: a few quick runs, a failure, or 0.3 s of runs (long enough for a
#: progress report, which comes after 0.1 s of an execution's runs)
KINDS = ("ok", "fail", "long")

COUNTER = '''
from pathlib import Path
from steadybench.runner.actions import Action


class CountRuns(Action):
    """Appends one line per call to a file (it travels to worker processes by pickle)."""

    def __init__(self, path, label):
        self.path, self.label = str(path), label

    def __call__(self, ctx):
        with open(self.path, "a") as out:
            out.write(self.label + "\\n")
'''


@dataclass
class Setup:
    """One backend ready to run: the backend, the case it fills, the method of its
    per-execution estimates, and whether a failed run stops the case."""

    backend: Any
    case: CaseResult
    method: Any = None
    stop_on_error: bool = True


class Scripted:
    """A fake backend: each execution's runs are made up (``kind`` as the real backends'),
    and Ctrl-C is what the progress callback raises, as in the real ones."""

    isolation = "scripted"
    cases = 1

    def __init__(self, kind: str) -> None:
        self.kind = kind

    def execute(self, request: ExecutionRequest) -> list[Outcome]:
        case = CaseResult("scripted", "scripted", {})
        outcome = Outcome(index=request.index, case=case)
        if self.kind == "fail":
            case.add_run("failed", {"wall_time": None})
            case.errors.append("broken")
            outcome.error = "broken"
            return [outcome]
        runs = 40 if self.kind == "long" else 5
        try:
            for i in range(runs):
                for action in request.before_run:
                    action(None)  # type: ignore[arg-type]
                value = 1e-3 * (1 + 0.01 * request.index + 0.001 * i)
                case.add_run(RUN_OK, {"wall_time": value})
                case.accumulate({"wall_time": value})
                for action in request.after_run:
                    action(None)  # type: ignore[arg-type]
                if request.progress is not None and i % 10 == 9:
                    request.progress(case.n)
        except KeyboardInterrupt as exc:
            case.interrupted = True
            outcome.interrupted, outcome.interrupt = True, exc
        case.stop_reason = f"{case.n} runs done"
        return [outcome]


def _runner(kind: str, **kw: Any) -> sb.Runner:
    stop = ElapsedTime(0.3) if kind == "long" else Runs(5)
    return sb.Runner(stop, method=make_method("auto"), **kw)


def worker_setup(tmp_path: Path, kind: str) -> Setup:
    path = tmp_path / "bench.py"
    path.write_text(textwrap.dedent("""
        import steadybench as sb

        @sb.benchmark
        def work():
            return lambda: sum(range(100))

        @sb.benchmark
        def bad():
            def f():
                raise ValueError("broken")
            return f
    """))
    runner = _runner(kind)
    name = "bad" if kind == "fail" else "work"
    benchmarks = build_benchmarks(load_file(path).specs, lambda spec: runner, name)
    mark_origin(benchmarks, path)
    impl = benchmarks[0].configurations[0].implementation
    case = runner.new_case(impl, Parameters(), name)
    return Setup(WorkerBackend(runner, impl, Parameters(), (), name), case, runner.method)


def in_process_setup(tmp_path: Path, kind: str) -> Setup:
    def factory() -> Callable[[], Any]:
        if kind == "fail":
            def broken() -> None:
                raise ValueError("broken")
            return broken
        return lambda: sum(range(100))

    runner = _runner(kind)
    impl = FunctionImplementation(factory, name="work")
    case = runner.new_case(impl, Parameters(), "work")
    return Setup(InProcessBackend(runner, impl, Parameters(), (), "work"), case, runner.method)


def command_setup(tmp_path: Path, kind: str) -> Setup:
    line = {"ok": "true", "fail": "false", "long": "sleep 0.01"}[kind]
    stop = ElapsedTime(0.3) if kind == "long" else Runs(5)
    session = ExecSession([Command.from_line(line)], [{}], CommandRunner(),
                          ExecOptions(stop=stop, correct=False))
    return Setup(CommandBackend(session), session.merged[0], None)


def scripted_setup(tmp_path: Path, kind: str) -> Setup:
    return Setup(Scripted(kind), CaseResult("scripted", "scripted", {}), None)


BACKENDS = {"worker": worker_setup, "in-process": in_process_setup,
            "command": command_setup, "scripted": scripted_setup}


class Ticking:
    """Wraps a backend: records each request, and moves the driver's clock by ``step``
    seconds per execution."""

    def __init__(self, backend: Any, step: float = 0.0) -> None:
        self.backend = backend
        self.isolation = backend.isolation
        self.cases = backend.cases
        self.step = step
        self.now = 1000.0
        self.requests: list[ExecutionRequest] = []

    def clock(self) -> float:
        return self.now

    def execute(self, request: ExecutionRequest) -> Sequence[Outcome]:
        self.requests.append(request)
        try:
            return self.backend.execute(request)
        finally:
            self.now += self.step


@dataclass
class Counting(Action):
    """Counts calls and closes of one stage's action (in this process)."""

    calls: list[str] = field(default_factory=list)
    label: str = ""
    closed: int = 0

    def __call__(self, ctx: RunContext) -> None:
        self.calls.append(self.label)

    def close(self, ctx: RunContext) -> None:
        self.closed += 1


@pytest.fixture(params=sorted(BACKENDS))
def backend_name(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def counter_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """A module with a picklable counting action, importable here and in workers."""
    folder = tmp_path / "helpers"
    folder.mkdir()
    (folder / "sb_counting_action.py").write_text(COUNTER)
    monkeypatch.syspath_prepend(str(folder))
    import importlib

    module = importlib.import_module("sb_counting_action")
    yield module
    sys.modules.pop("sb_counting_action", None)


def test_records_and_merge(tmp_path, backend_name):
    setup = BACKENDS[backend_name](tmp_path, "ok")
    run_executions(setup.backend, setup.case, 3, time_limit=600.0, method=setup.method)
    case = setup.case
    records = case.processes
    assert [r.index for r in records] == [0, 1, 2]
    assert all(isinstance(r, Execution) for r in records)
    assert all(r.ok and r.value > 0 and r.n > 0 and r.error is None for r in records)
    with pytest.raises(dataclasses.FrozenInstanceError):
        records[0].value = 1.0  # type: ignore[misc]
    # the record's shape: every field named, the file's keys, a lossless round trip
    assert set(EXECUTION_FIELDS) >= {"index", "value", "ci_low", "ci_high", "within_cov", "n",
                                     "layout", "host", "counts", "stop_reason", "error"}
    for record in records:
        data = record.to_dict()
        assert {"index", "value", "ci_low", "ci_high", "confidence", "within_cov", "n",
                "stop_reason", "interrupted", "error"} <= set(data)
        assert Execution.from_dict(json.loads(json.dumps(data))) == record
    if backend_name == "worker":
        assert all(r.layout is not None and r.layout.pid for r in records)
        assert len({r.layout.hash_seed for r in records}) == 3
    if backend_name == "command":
        assert all(r.spread is not None and r.spread.mean == pytest.approx(r.value)
                   for r in records)
    # the merge: every execution's runs pooled, the count of executions, the estimate across
    assert case.n == sum(r.n for r in records)
    assert case.stop_reason.startswith("3 of 3 executions")
    assert case.extra["executions"]["planned"] == 3
    assert case.extra["executions"]["completed"] == 3
    finalize_case(case, (), setup.method, 0.95)
    est = case.estimate
    assert est.level == "executions" and est.n_executions == 3
    assert est.fields["execution_values"] == [r.value for r in records]
    back = CaseResult.from_dict(json.loads(json.dumps(case.to_dict())))
    assert back.processes == records


def test_deadline_across_all_executions(tmp_path, backend_name):
    setup = BACKENDS[backend_name](tmp_path, "ok")
    ticking = Ticking(setup.backend, step=10.0)
    run_executions(ticking, setup.case, 5, time_limit=25.0, method=setup.method,
                   clock=ticking.clock)
    # executions start at 0, 10 and 20 s; none starts once the 25 s are spent
    assert [r.time_left for r in ticking.requests] == [25.0, 15.0, 5.0]
    assert len(setup.case.processes) == 3
    assert any("hard time limit (25 s) after 3 of 5 executions" in w
               for w in setup.case.warnings)
    assert setup.case.stop_reason.startswith("3 of 5 executions")


def test_a_failing_execution_stops_the_case(tmp_path, backend_name):
    setup = BACKENDS[backend_name](tmp_path, "fail")
    run_executions(setup.backend, setup.case, 4, time_limit=600.0, method=setup.method)
    case = setup.case
    assert len(case.processes) == 1
    assert case.errors and any("broken" in e or "false" in e for e in case.errors), case.errors
    record = case.processes[0]
    assert not record.ok
    assert case.stop_reason.startswith("0 of 4 executions")


def test_ctrl_c_returns_the_partial_case(tmp_path, backend_name):
    setup = BACKENDS[backend_name](tmp_path, "long")
    ticking = Ticking(setup.backend)

    def progress(case: CaseResult, state: Any) -> None:
        if len(ticking.requests) == 2:  # the second execution has made runs: Ctrl-C
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_executions(ticking, setup.case, 4, time_limit=600.0, method=setup.method,
                       progress=progress)
    case = setup.case
    assert case.interrupted and case.stop_reason == "interrupted"
    assert [r.index for r in case.processes] == [0, 1]
    first, second = case.processes
    assert first.ok and not first.interrupted
    assert second.interrupted
    assert case.n == first.n + second.n and case.n > first.n  # the partial runs are kept


def test_countermeasures_of_the_four_stages(tmp_path, backend_name, counter_module):
    setup = BACKENDS[backend_name](tmp_path, "ok")
    log = tmp_path / "runs.log"
    calls: list[str] = []
    before_b, after_b = Counting(calls, "before_benchmark"), Counting(calls, "after_benchmark")
    stages = StageActions(before_benchmark=[before_b],
                          before_run=[counter_module.CountRuns(log, "before_run")],
                          after_run=[counter_module.CountRuns(log, "after_run")],
                          after_benchmark=[after_b])
    run_executions(setup.backend, setup.case, 2, time_limit=600.0, method=setup.method,
                   actions=stages)
    assert calls == ["before_benchmark", "after_benchmark"]
    assert before_b.closed == after_b.closed == 1
    lines = log.read_text().split()
    # every measured run of every execution had its run-stage actions (warm-up runs too)
    assert lines.count("before_run") >= setup.case.n
    assert lines.count("after_run") >= setup.case.n


def test_benchmark_stage_actions_are_closed_after_ctrl_c(tmp_path):
    setup = scripted_setup(tmp_path, "long")
    before_b = Counting(label="before_benchmark")

    def progress(case: CaseResult, state: Any) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_executions(setup.backend, setup.case, 3, time_limit=600.0,
                       actions=StageActions(before_benchmark=[before_b]), progress=progress)
    assert before_b.closed == 1 and len(setup.case.processes) == 1


def test_old_entries_load_and_are_written_back_unchanged():
    # the three shapes files have held: a worker's, exec's, and an ab history record's
    worker = {"index": 0, "pid": 41, "hash_seed": 7, "env_pad": 12, "layout": "design",
              "aslr_off": None, "value": 1e-6, "ci_low": 0.9e-6, "ci_high": 1.1e-6,
              "confidence": 0.95, "within_cov": 0.01, "n": 50, "calls_per_sample": 1000,
              "stop_reason": "50 runs done", "interrupted": False, "error": None,
              "figures": {"T_i": 1e-7}}
    exec_entry = {"index": 1, "n": 4, "mean": 0.002, "stdev": 1e-5, "median": 0.002,
                  "raw_mean": 0.003, "startup": 0.001, "stop_reason": "4 runs done",
                  "value": 0.002, "within_cov": 0.005}
    bare = {"index": 2, "value": 0.5, "future_key": [1, 2]}
    case = CaseResult.from_dict({"name": "b", "processes": [worker, exec_entry, bare]})
    first, second, third = case.processes
    assert first.layout is not None and first.layout.pid == 41 and first.figures == {"T_i": 1e-7}
    assert second.spread is not None and second.spread.raw_mean == 0.003
    assert third.value == 0.5 and third.other == {"future_key": [1, 2]}
    written = case.to_dict()["processes"]
    assert written[0] == worker
    assert {k: written[1][k] for k in exec_entry} == exec_entry
    assert written[2]["future_key"] == [1, 2] and written[2]["value"] == 0.5
    # the record is read by attribute only, and dicts given to a case become records
    assert first.value == 1e-6 and first.layout is not None
    with pytest.raises(TypeError):
        first["value"]  # type: ignore[index]
    made = CaseResult("b", "b", {}, processes=[{"value": 1.0}, {"value": 2.0}])
    assert [p.value for p in made.processes] == [1.0, 2.0]
    assert [p.index for p in made.processes] == [0, 1]


def test_the_backend_example_of_docs_extending_runs(capsys):
    """docs/extending.md's backend example, run as written."""
    import re

    doc = (Path(__file__).resolve().parents[1] / "docs" / "extending.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", doc, flags=re.S)
    example = next(b for b in blocks if "class Replay" in b)
    namespace: dict[str, Any] = {}
    exec(compile(example, "extending.md", "exec"), namespace)  # noqa: S102
    out = capsys.readouterr().out.splitlines()
    assert out == ["3 of 3 executions; each: 2 runs replayed", "[1.05, 1.25, 0.95]"]
    merged = namespace["merged"]
    assert [e.index for e in merged.processes] == [0, 1, 2]


def test_exec_interrupted_while_calibrating_keeps_the_executions_before():
    """Ctrl-C before any command of an execution ran (while its start-up cost is measured):
    the executions before it are the partial case, and the interrupt is not lost."""
    from steadybench.programs.calibration import Calibration

    calls = []

    def calibrate(runner: Any) -> Calibration:
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return Calibration(["true"], [1e-4, 1e-4])

    session = ExecSession([Command.from_line("true")], [{}], CommandRunner(),
                          ExecOptions(stop=Runs(3), processes=3), calibrate_fn=calibrate)
    with pytest.raises(KeyboardInterrupt):
        session.run()
    (case,) = session.results(interrupted=True).cases
    assert case.interrupted and len(case.processes) == 1 and case.n == 3


def test_a_failing_after_benchmark_action_keeps_the_executions(tmp_path):
    class Broken(Action):
        def __call__(self, ctx: RunContext) -> None:
            raise RuntimeError("could not restore")

    setup = scripted_setup(tmp_path, "ok")
    before_b = Counting(label="before_benchmark")
    with pytest.raises(RuntimeError, match="could not restore"):
        run_executions(setup.backend, setup.case, 2, time_limit=600.0,
                       actions=StageActions(before_benchmark=[before_b],
                                            after_benchmark=[Broken()]))
    assert len(setup.case.processes) == 2 and setup.case.n == 10
    assert before_b.closed == 1
