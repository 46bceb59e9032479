"""Running Rancid's evaluation (§VI): two presets, K independent executions each, interleaved.

For every benchmark case, :class:`EvaluationSession` runs K *launches* of each preset (the
paper: 30 launches of 50 runs, §VI-C), in blocks: block k runs one execution of each preset, in
a random order (``order="random"``, randomised blocks) or always baseline first
(``order="alternate"``, ABAB). Drift of the machine over the session then hits both presets
alike instead of deciding the comparison. Optionally it then runs one long execution of each
preset (``long_runs``; the paper's two-hour runs, §VI-A), in a random order too.

Each execution is one fresh worker process (the execution layer's
:class:`~steadybench.execution.backends.WorkerBackend`),
so the launches are independent (own hash seed, memory layout). A preset is built anew for each
execution (:func:`steadybench.system.presets.build_preset`) and its before-benchmark
countermeasures (tune, pin, priority, quiet, settle) are applied in this process around that
execution only, its per-run ones (cool-down, warm-up, GC) in the worker: so every managed
execution starts from a tuned machine and every baseline one from the untouched machine. Every
setting goes through the system layer's journal and is restored after each execution on every
exit path (Ctrl-C and SIGTERM included: the actions' ``close`` runs in ``finally``), and
``steadybench system reset`` restores from the journal after a ``kill -9``. The machine's tuning
lock is held for the whole session when a preset tunes, so no other tuned run interleaves.

A target says what one execution runs: :class:`FileTarget` (a benchmark file's cases) or
:class:`CommandTarget` (an external command, as ``exec`` runs it).
"""

from __future__ import annotations

import copy
import dataclasses
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..errors import ConfigurationError, SteadybenchError
from ..model.results import PRIMARY_METRIC, RUN_OK, CaseResult
from .case_parts import contained, preset_summary

ORDERS = ("random", "alternate")
#: the paper's reproducibility design: 30 launches of 50 runs (§VI-C)
LAUNCHES = 30
RUNS = 50


@dataclass
class EvaluateOptions:
    """Settings of one evaluation (see ``docs/evaluate.md``)."""

    baseline: str = "baseline"
    managed: str = "managed"
    launches: int = LAUNCHES
    runs: int = RUNS
    long_runs: int = 0
    warmup: int = 1
    order: str = "random"
    seed: int | None = None
    #: hard limit, seconds, of one case: a benchmark case's launches under one preset together
    #: (each long run has its own)
    time_limit: float = 600.0
    confidence: float = 0.95
    highlight_abs: float = 1e-3
    highlight_rel: float = 0.01
    #: the machine to tune: a folder (``--root``) or a SysRoot (a remote target's, --target)
    root: Any = "/"
    wait_lock: bool = False
    #: ``time``, or a count measure: each launch is then one counted process (.counts)
    measure: str = "time"

    def __post_init__(self) -> None:
        if self.order not in ORDERS:
            raise ConfigurationError(f"--order must be one of {', '.join(ORDERS)}, "
                                     f"not {self.order!r}")
        if self.launches < 2:
            raise ConfigurationError(f"--launches must be at least 2 (a spread across "
                                     f"executions needs two), got {self.launches}")
        if self.runs < 1:
            raise ConfigurationError(f"--runs must be at least 1, got {self.runs}")
        if self.long_runs < 0:
            raise ConfigurationError(f"--long must not be negative, got {self.long_runs}")
        if self.warmup < 0:
            raise ConfigurationError(f"--warmup must not be negative, got {self.warmup}")
        if not self.time_limit > 0:
            raise ConfigurationError(f"--time-limit must be positive, got {self.time_limit}")
        if not 0 < self.confidence < 1:
            raise ConfigurationError(f"--confidence must be between 0 and 1, got "
                                     f"{self.confidence}")
        if self.baseline == self.managed:
            raise ConfigurationError(f"the baseline and managed presets are the same "
                                     f"({self.baseline!r}): nothing to compare")

    @property
    def presets(self) -> tuple[str, str]:
        return self.baseline, self.managed


@dataclass
class Unit:
    """One benchmark case of a target (a function at one parameter set, or a command)."""

    index: int
    benchmark: str
    implementation: str
    params: dict[str, Any]
    payload: Any = None
    #: the measurement method whose estimate the pooled launches get (None: the mean)
    method: Any = None

    @property
    def label(self) -> str:
        inner = ",".join(f"{k}={v}" for k, v in self.params.items())
        name = self.benchmark if self.implementation in (self.benchmark, "") else \
            f"{self.benchmark}/{self.implementation}"
        return f"{name}[{inner}]" if inner else name


@dataclass
class ExecutionRecord:
    """One execution of the session: which case, preset, series (``launches`` or ``long``),
    launch index, its place in the schedule, its wall-clock start and length, and its case."""

    unit: int
    preset: str
    role: str
    series: str
    launch: int
    position: int
    started: float
    seconds: float
    case: CaseResult

    def values(self) -> list[float]:
        return self.case.values(PRIMARY_METRIC, RUN_OK)

    def median(self) -> float | None:
        import statistics

        values = self.values()
        return statistics.median(values) if values else None


class Target(Protocol):
    """What an evaluation runs: its cases, and one execution of a case under a preset."""

    description: str

    def units(self) -> list[Unit]: ...

    def execute(self, unit: Unit, preset: str, runs: int,
                options: EvaluateOptions) -> CaseResult:
        """One independent execution of ``unit`` with ``preset`` applied around it and
        restored before returning (also when it raises); ``runs`` measured runs. On
        KeyboardInterrupt, ``last_case`` holds what was measured."""
        ...


class FileTarget:
    """The cases of a benchmark file (the short form and module-level Benchmark objects),
    selected with ``pattern`` like ``run -k``; each execution is one worker process."""

    def __init__(self, path: str, pattern: str | None = None, method: str | None = None,
                 method_options: dict[str, Any] | None = None) -> None:
        from ..definitions import build_benchmarks, load_file, mark_origin, matches
        from ..methods import make_method
        from ..runner.runner import Runner

        definitions = load_file(path)
        options = dict(method_options or {})

        def runner_for(spec: Any) -> Runner:
            from .. import defaults

            name = method or (spec.method if spec else None) or defaults.METHOD
            return Runner(method=make_method(name, **{**(spec.method_options if spec else {}),
                                                      **options}))

        benchmarks = build_benchmarks(definitions.specs, runner_for, pattern)
        benchmarks += [b for b in definitions.benchmarks if matches(pattern, b.title)]
        mark_origin(benchmarks, path)
        if not benchmarks:
            raise ConfigurationError(f"-k {pattern!r} selects no benchmark (defined: "
                                     f"{', '.join(definitions.names())})")
        self.description = str(path)
        #: what made this target, so a fleet host can make it again (steadybench.fleet.evaluate)
        self.path, self.pattern, self.method = str(path), pattern, method
        self.method_options = dict(method_options or {})
        self._units: list[Unit] = []
        for bench in benchmarks:
            for config, params in bench.cases():
                self._units.append(Unit(len(self._units), bench.title,
                                        config.implementation.name, params.to_dict(),
                                        (config, params), config.runner.method))
        self.last_case: CaseResult | None = None
        #: the counts backends of the cases (``--measure instructions|cycles``)
        self._counted: Any = None

    def units(self) -> list[Unit]:
        return list(self._units)

    def _count(self, unit: Unit, preset: str, options: EvaluateOptions) -> CaseResult:
        """One launch counted (:mod:`.counts`): the k-th execution of a case under a preset
        counts it in layout k."""
        from .counts import CountedLaunches

        if self._counted is None:
            self._counted = CountedLaunches()

        def started(case: CaseResult) -> None:
            self.last_case = case

        return self._counted.execute(unit, preset, options, started)

    def execute(self, unit: Unit, preset: str, runs: int,
                options: EvaluateOptions) -> CaseResult:
        from ..execution.backends import WorkerBackend
        from ..execution.driver import StageActions, run_executions
        from ..processors.base import finalize_case
        from ..runner.actions import RunContext
        from ..runner.runner import Runner
        from ..runner.stop import RunState, build_stop_condition
        from ..system.presets import build_preset

        if options.measure != "time":
            return self._count(unit, preset, options)
        config, params = unit.payload
        self.last_case = None
        runner = Runner(build_stop_condition(runs=runs), warmup=options.warmup,
                        method=copy.deepcopy(config.runner.method), processes=1,
                        time_limit=options.time_limit, confidence=options.confidence,
                        max_runs=runs)
        plan = build_preset(preset, options.root)
        for stage, action in plan.actions:
            runner.add_action(stage, action)
        implementation = config.implementation
        case = runner.new_case(implementation, params, unit.benchmark)
        self.last_case = case
        ctx = RunContext(implementation, params, case, RunState(), runner.clock, runner.sleep)
        try:
            backend = WorkerBackend(runner, implementation, params, plan.meters, unit.benchmark)
            run_executions(backend, case, 1, time_limit=runner.time_limit, method=runner.method,
                           confidence=options.confidence,
                           stop_on_error=implementation.error_policy == "stop",
                           actions=StageActions.of_runner(runner.actions, ctx),
                           hard_limits=runner.hard_limits())
        finally:
            with contained(case):
                finalize_case(case, (), runner.method, options.confidence)
        case.extra["preset"] = preset_summary(plan.record)
        return case


class CommandTarget:
    """External commands, each execution one ``exec`` session of ``runs`` runs of the command
    (one process per run, ``wait4`` accounting), with the preset applied around it through
    :func:`steadybench.system.presets.machine_session`.

    ``runner`` runs the commands: by default a fresh local
    :class:`~steadybench.programs.process.CommandRunner` per execution; with ``--target`` one
    :class:`~steadybench.targets.remote_run.RemoteCommandRunner` for the whole session (its
    work folder and pushed files on the device), so every run is started and timed on the
    device while ``options.root`` (the device's SysRoot) is tuned around the execution.

    The times are whole-process wall times: ``exec``'s start-up correction is off by default
    (``correct``), because its estimate, made anew in every execution, would add its own noise
    to the spread across executions that Table 3 measures.
    """

    def __init__(self, commands: Sequence[Any], *, shell: bool = False,
                 timeout: float | None = None, correct: bool = False,
                 runner: Any = None) -> None:
        if not commands:
            raise ConfigurationError("no command to evaluate")
        self.description = " | ".join(c.name for c in commands)
        self._commands = list(commands)
        self._shell = shell
        self._timeout = timeout
        self._correct = correct
        self._runner = runner
        #: called before each run; raises KeyboardInterrupt to stop between runs, as Ctrl-C
        self.check_stop: Callable[[], None] | None = None
        self.last_case: CaseResult | None = None

    @property
    def runner(self) -> Any:
        """The runner given (None: a local one per execution)."""
        return self._runner

    @property
    def commands(self) -> list[Any]:
        return list(self._commands)

    @property
    def shell(self) -> bool:
        return self._shell

    @property
    def timeout(self) -> float | None:
        return self._timeout

    def units(self) -> list[Unit]:
        return [Unit(i, c.name, "", {}, c) for i, c in enumerate(self._commands)]

    def execute(self, unit: Unit, preset: str, runs: int,
                options: EvaluateOptions) -> CaseResult:
        from ..programs.exec import ExecOptions, ExecSession
        from ..programs.process import CommandRunner
        from ..runner.stop import build_stop_condition
        from ..system.presets import machine_session

        runner = self._runner or CommandRunner(shell=self._shell, timeout=self._timeout)
        exec_options = ExecOptions(stop=build_stop_condition(runs=runs), warmup=options.warmup,
                                   time_limit=options.time_limit, correct=self._correct,
                                   confidence=options.confidence, max_runs=runs)
        self.last_case = None
        with machine_session(preset, options.root) as machine:
            session = ExecSession([unit.payload], [{}], runner, exec_options)
            session.before_run = machine.before_run
            session.after_run = machine.after_run
            if self.check_stop is not None:
                check = self.check_stop

                def before_run() -> None:
                    check()  # raises KeyboardInterrupt to stop (a fleet task cancelled)
                    machine.before_run()

                session.before_run = before_run
            try:
                results = session.run()
            except KeyboardInterrupt:
                partial = session.results(interrupted=True)
                if partial.cases:
                    self.last_case = partial.cases[0]
                    self.last_case.extra["preset"] = preset_summary(machine.record)
                raise
        case = results.cases[0]
        case.extra["preset"] = preset_summary(machine.record)
        # what the session's countermeasures did (the files tuned...), as a runner records it
        case.extra["machine"] = dict(machine.record.get("session") or {})
        self.last_case = case
        return case


@dataclass
class ScheduleItem:
    unit: int
    preset: str
    series: str
    launch: int


def make_schedule(units: Sequence[Unit], options: EvaluateOptions,
                  rng: random.Random) -> list[ScheduleItem]:
    """The order of every execution: per case, ``launches`` blocks of one execution of each
    preset (shuffled per block, or baseline first with ``alternate``), then the long
    executions (shuffled)."""
    items: list[ScheduleItem] = []
    for unit in units:
        for launch in range(options.launches):
            order = list(options.presets)
            if options.order == "random":
                rng.shuffle(order)
            items += [ScheduleItem(unit.index, p, "launches", launch) for p in order]
        if options.long_runs:
            order = list(options.presets)
            rng.shuffle(order)
            items += [ScheduleItem(unit.index, p, "long", 0) for p in order]
    return items


@dataclass
class EvaluationSession:
    """Runs the schedule of an evaluation; :attr:`records` holds every execution done (the
    interrupted one too), so an interrupted session still yields its partial evaluation."""

    target: Target
    options: EvaluateOptions
    on_execution: Callable[[ExecutionRecord, int, int], None] | None = None
    records: list[ExecutionRecord] = field(default_factory=list)
    schedule: list[ScheduleItem] = field(default_factory=list)
    interrupted: bool = False
    restore_failures: list[str] = field(default_factory=list)
    #: (unit, preset, series) → the monotonic time its hard limit ends (from its first launch)
    deadlines: dict[tuple[int, str, str], float] = field(default_factory=dict)
    #: seconds, for the hard limits (time.monotonic; a simulated clock in tests)
    clock: Callable[[], float] = time.monotonic

    def time_left(self, item: ScheduleItem) -> float:
        """What is left of the hard time limit of ``item``'s case: its launches under its
        preset share one (``--time-limit``'s one meaning); every long run has its own."""
        now = self.clock()
        if item.series == "long":
            return self.options.time_limit
        key = (item.unit, item.preset, item.series)
        deadline = self.deadlines.setdefault(key, now + self.options.time_limit)
        return deadline - now

    def run(self) -> list[ExecutionRecord]:
        from ..system.lock import TuningLock
        from ..system.presets import build_preset, changes_machine
        from ..system.sysfs import SysRoot

        options = self.options
        # Check both presets before anything runs: a typo in a preset file fails at once.
        tunes = False
        for preset in options.presets:
            record = build_preset(preset, options.root).record
            tunes = tunes or changes_machine(record)
        units = self.target.units()
        self.schedule = make_schedule(units, options, random.Random(options.seed))
        root = options.root if isinstance(options.root, SysRoot) else SysRoot(options.root)
        lock = TuningLock(root) if tunes else None
        if lock is not None:
            lock.acquire(options.wait_lock)
        try:
            for position, item in enumerate(self.schedule):
                self._one(units[item.unit], item, position)
        except KeyboardInterrupt:
            self.interrupted = True
            raise
        finally:
            if lock is not None:
                lock.release()
        return self.records

    def _one(self, unit: Unit, item: ScheduleItem, position: int) -> None:
        options = self.options
        runs = options.long_runs if item.series == "long" else options.runs
        role = "baseline" if item.preset == options.baseline else "managed"
        started = time.time()
        t0 = time.monotonic()
        case: CaseResult | None = None
        left = self.time_left(item)
        try:
            if left <= 0:
                case = CaseResult(unit.benchmark, unit.implementation, dict(unit.params))
                case.errors.append(f"not started: the hard time limit ({options.time_limit:g} s "
                                   f"for the launches of {unit.label} under {item.preset}) "
                                   "was spent")
                case.stop_reason = "time limit"
                return
            if left < options.time_limit:
                options = dataclasses.replace(options, time_limit=left)
            case = self.target.execute(unit, item.preset, runs, options)
        except ConfigurationError:
            raise
        except SteadybenchError as exc:
            # machine control failed around this execution (its settings were restored by
            # the actions' close): the execution is failed, the session goes on
            case = getattr(self.target, "last_case", None)
            if case is None or case.benchmark != unit.benchmark:
                case = CaseResult(unit.benchmark, unit.implementation, dict(unit.params))
            case.errors.append(str(exc))
            case.stop_reason = case.stop_reason or "error"
        finally:
            if case is None:
                case = getattr(self.target, "last_case", None)
            if case is not None:
                record = ExecutionRecord(unit.index, item.preset, role, item.series,
                                         item.launch, position, started,
                                         time.monotonic() - t0, case)
                self.records.append(record)
                failed = (case.extra.get("machine") or {}).get("restore_failed")
                if failed:
                    self.restore_failures.append(f"{unit.label} ({item.preset}): {failed}")
                if self.on_execution is not None:
                    self.on_execution(record, len(self.records), len(self.schedule))


def pool_cases(cases: Sequence[CaseResult], params: dict[str, Any]) -> CaseResult:
    """The launches of one case under one preset as one case, for the results file: each
    launch is one execution (its runs pooled, its record in ``processes``), merged by the
    execution layer's one merge."""
    from ..execution.backend import Outcome
    from ..execution.merge import merge_executions

    first = cases[0]
    pooled = CaseResult(benchmark=first.benchmark, implementation=first.implementation,
                        params=params, method=first.method, unit=first.unit)
    outcomes = []
    for index, case in enumerate(cases):
        inner = case.processes[0] if len(case.processes) == 1 else None
        outcomes.append(Outcome(index=index, case=case,
                                layout=inner.layout if inner is not None else None,
                                spread=inner.spread if inner is not None else None,
                                interrupted=case.interrupted))
    merge_executions(pooled, outcomes, len(cases), isolation="launches (a fresh worker or "
                     "command session each, the preset applied around it)")
    pooled.interrupted = any(c.interrupted for c in cases)
    return pooled
