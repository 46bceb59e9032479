"""``steadybench run FILE.py``: run the benchmarks a Python file defines."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from .. import defaults
from ..errors import BenchmarkFailed, ConfigurationError, SystemControlError
from ..fleet.options import check_cluster_options, cluster_options, run_manager
from ..output.tables import style_option
from ..registry import methods
from . import Interrupted
from .common import (
    output_options,
    stdout_taken,
    stop_condition_from,
    stop_options,
    write_outputs,
)
from .measure import TIME_ONLY, count_settings, counting, measure_option, refuse_with_counts
from .options import quiet_option
from .profile import profile_options, profiling
from .validate import count, harden, not_empty

#: most independent executions per benchmark (-p)
MAX_PROCESSES = 10_000

if TYPE_CHECKING:  # the run itself imports them: --help stays fast
    from ..definitions import BenchmarkSpec
    from ..manager import Manager
    from ..model.results import Results
    from ..runner.runner import Runner
    from ..system.lock import TuningLock


def parse_key_values(items: tuple[str, ...], option: str) -> dict[str, Any]:
    """``("m=20", "threshold=3.5")`` → ``{"m": 20, "threshold": 3.5}`` (numbers converted)."""
    out: dict[str, Any] = {}
    for item in items:
        key, sep, raw = item.partition("=")
        if not sep or not key:
            raise ConfigurationError(f"{option} {item!r}: expected NAME=VALUE")
        value: Any = raw
        for convert in (int, float):
            try:
                value = convert(raw)
                break
            except ValueError:
                continue
        out[key.strip().replace("-", "_")] = value
    return out


def make_runner_factory(opts: dict[str, Any]):
    """A function giving each benchmark spec its Runner from the command-line options.

    By default each benchmark runs as :data:`~steadybench.defaults.PROCESSES` independent
    executions, and the stop condition applies inside each execution; ``--in-process`` runs
    it in this process (debugging: not isolated).
    """
    from ..clocks import get_clock
    from ..runner.runner import Runner
    from ..runner.stop import ElapsedTime

    if counting(opts):  # a count backend instead of the clock (steadybench.counts)
        from ..counts.python import CountRunner
        from ..counts.valgrind import find_valgrind

        find_valgrind()  # missing: one line and exit 2 before anything runs
        settings = count_settings(opts)
        return lambda spec: CountRunner(settings)
    processes = executions_per_case(opts)
    stop = stop_condition_from(opts)
    if processes > 1 and not any(opts.get(k) for k in ("runs", "max_time", "target_cov",
                                                        "target_ci")):
        stop = ElapsedTime(defaults.EXECUTION_TIME)
    cli_method_options = parse_key_values(opts.get("method_option") or (), "--method-option")
    warmup = opts.get("warmup")

    def runner_for(spec: BenchmarkSpec | None) -> Runner:
        method_name = opts.get("method") or (spec.method if spec else None) or defaults.METHOD
        options = {**(spec.method_options if spec else {}), **cli_method_options}
        return Runner(
            stop,
            warmup=defaults.WARMUP if warmup is None else warmup,
            method=build_method(method_name, options),
            keep_samples=not opts.get("stream"),
            processes=processes,
            time_limit=opts["time_limit"],
            confidence=opts.get("confidence", 0.95),
            layout=opts.get("layout") or defaults.LAYOUT,
            **({"clock": get_clock(opts["clock"])} if opts.get("clock") else {}),
        )

    return runner_for


def build_method(name: str, options: dict[str, Any]):
    """The measurement method called ``name`` with ``options``."""
    from ..methods import make_method

    return make_method(name, **options)


def apply_machine_preset(manager: Manager, preset: str, root: str, quiet: bool = False,
                         wait_lock: bool = False) -> TuningLock | None:
    """Add a machine-control preset's countermeasures to every runner of the manager's
    benchmarks, its monitor meters to the manager, and its record to the results' context.

    When the preset tunes the machine, take the machine's tuning lock for the whole run (issue
    12, item 2) and return it (the caller releases it after the last restore): while another
    tuned run holds it this raises LockBusy naming the holder, or waits with ``wait_lock``.
    """
    from ..system.lock import TuningLock
    from ..system.presets import build_preset, changes_machine
    from ..system.sysfs import SysRoot

    plan = build_preset(preset, root)
    lock = None
    if changes_machine(plan.record):
        lock = TuningLock(SysRoot(root))
        if lock.acquire(wait_lock, on_wait=lambda line: click.echo(line, err=True)):
            plan = build_preset(preset, root)  # waited: the machine was the holder's, tuned
    runners = {id(c.runner): c.runner for b in manager.benchmarks for c in b.configurations}
    for runner in runners.values():
        for stage, action in plan.actions:
            runner.add_action(stage, action)
    for meter in plan.meters:
        manager.add_meter(meter)
    manager.context["machine"] = plan.record
    if not quiet:
        applied = ", ".join(a["name"] for a in plan.record["applied"]) or "none"
        click.echo(f"preset {plan.record['preset']}: applied {applied}", err=True)
        for skip in plan.record["skipped"]:
            click.echo(f"  skipped {skip['name']}: {skip['reason']}", err=True)
    return lock


def unrestored(results: Results) -> list[str]:
    """The machine settings a tuned run could not put back, one line per case (issue 12, item
    6: the run went on and wrote its outputs; this makes its exit status non-zero)."""
    cases_by_message: dict[str, list[str]] = {}
    for case in results.cases:
        machine = case.extra.get("machine")
        if isinstance(machine, dict) and machine.get("restore_failed"):
            cases_by_message.setdefault(str(machine["restore_failed"]), []).append(case.label)
    return [f"{', '.join(labels)}: {message}" for message, labels in cases_by_message.items()]


def executions_per_case(opts: dict[str, Any]) -> int:
    """The executions (fresh worker processes) of each case: ``-p``, one with
    ``--in-process``, else the default."""
    return 1 if opts.get("in_process") else int(opts.get("processes") or defaults.PROCESSES)


def case_budget(opts: dict[str, Any]) -> float | None:
    """Expected seconds per case, for the ETA: the time budget of one execution times the
    executions (None when the stop rule has no time budget)."""
    if counting(opts):
        return None  # counts take as long as valgrind takes; no time budget
    processes = executions_per_case(opts)
    if opts.get("max_time"):
        return float(opts["max_time"]) * processes
    if processes > 1 and not any(opts.get(k) for k in ("runs", "target_cov", "target_ci")):
        return defaults.EXECUTION_TIME * processes
    return None


def expected_duration(benchmarks: list[Any], opts: dict[str, Any]) -> float | None:
    """Check that every case can finish within its hard limit (``--time-limit`` covers all the
    executions of a case), and return the expected seconds of the whole run (None when the
    stop rule gives no bound, e.g. --target-cov).

    Each execution takes ``--max-time``, or ``--runs`` samples of at least the method's
    shortest sample (``auto``: 1 ms), or the default budget; a case takes ``--processes`` of
    them, one after another. A case that cannot finish is refused at once (one line) rather
    than killed at its limit minutes later (issue 28, item 5)."""
    processes = executions_per_case(opts)
    cases = [(config, params) for b in benchmarks for config, params in b.cases()]
    if not cases:
        return None
    total = 0.0
    for config, _ in cases:
        runner = config.runner
        if opts.get("max_time"):
            per_execution = float(opts["max_time"])
            what = f"--max-time {opts['max_time']:g} s"
        elif opts.get("runs"):
            sample_ns = getattr(runner.method, "min_sample_ns", None) or 0.0
            if not sample_ns:
                return None
            warmup = defaults.WARMUP if opts.get("warmup") is None else opts["warmup"]
            per_execution = (opts["runs"] + warmup) * sample_ns / 1e9
            what = (f"--runs {opts['runs']} samples of at least {sample_ns / 1e6:g} ms "
                    f"({runner.method.name})")
        elif processes > 1 and not any(opts.get(k) for k in ("target_cov", "target_ci")):
            per_execution, what = defaults.EXECUTION_TIME, f"{defaults.EXECUTION_TIME:g} s"
        else:
            return None
        case_seconds = processes * per_execution
        limit = getattr(runner, "time_limit", None)
        if limit is not None and case_seconds > limit:
            raise ConfigurationError(
                f"{what} in each of {processes} executions is at least {case_seconds:.4g} s "
                f"per benchmark, beyond --time-limit {limit:g} s (which covers all the "
                "executions of a benchmark): lower --runs, --max-time or -p, or raise "
                "--time-limit")
        total += case_seconds
    return total


def _profiling(runner_for: Any, opts: dict[str, Any]) -> Any:
    from ..profiles.runner import ProfilingRunner
    from .profile import settings_for

    settings = settings_for(opts)
    return lambda spec: ProfilingRunner(runner_for(spec), settings)


def _show_profiles(results: Results, opts: dict[str, Any]) -> None:
    """The profiles into the results' context (written with them), and on the console."""
    from ..profiles.runner import collect
    from .profile import write_out

    lines = collect(results)
    from ..profiles.model import Profile

    written = write_out(opts, {name: Profile.from_dict(raw) for name, raw in
                               results.context.get("profiles", {}).items() if "frames" in raw})
    if not opts.get("quiet"):
        for line in [*lines, *written]:
            click.echo(line, err=stdout_taken(opts))


def run_definitions(file: str, opts: dict[str, Any], title: str | None = None) -> Results:
    """Load ``file``, run its benchmarks with the options, write the outputs, return Results."""
    from ..definitions import build_benchmarks, load_file, mark_origin, matches
    from ..manager import Manager
    from ..output.console import make_console
    from ..output.loggers import ConsoleLogger
    from ..output.writing import outputs_before_signals
    from ..processors.base import TukeyOutlierFilter
    from ..processors.machine import MachineStateFlagger

    definitions = load_file(file, time_limit=opts.get("time_limit"))
    pattern = opts.get("select")
    runner_for = make_runner_factory(opts)
    if profiling(opts):  # one extra, profiled execution after each case's measured ones
        runner_for = _profiling(runner_for, opts)
    benchmarks = build_benchmarks(definitions.specs, runner_for, pattern)
    benchmarks += [b for b in definitions.benchmarks if matches(pattern, b.title)]
    mark_origin(benchmarks, file)
    if not benchmarks:
        raise ConfigurationError(
            f"-k {pattern!r} selects no benchmark (defined: {', '.join(definitions.names())})"
        )
    expected = expected_duration(benchmarks, opts)
    if expected is not None and expected > 5 and not opts.get("quiet"):
        from ..output.loggers import eta_text

        # a lower bound: interpreter start-up, calibration and samples longer than the
        # method's shortest come on top; two lines, so that 80 columns do not break it
        processes = executions_per_case(opts)
        click.echo(f"expected: at least {eta_text(expected)} of measuring, {processes} "
                   f"execution{'s' if processes != 1 else ''} per case\n"
                   "  (--runs and --max-time apply to each execution)", err=True)
    action = "remove" if opts.get("remove_outliers") else "mark"
    manager = Manager(
        title or Path(file).stem,
        benchmarks=benchmarks,
        processors=[TukeyOutlierFilter(action=action), MachineStateFlagger()],
        loggers=[] if opts.get("quiet") else [ConsoleLogger(
            style=opts.get("style") or "table", case_budget=case_budget(opts),
            out=make_console(stderr=True) if stdout_taken(opts) else None)],
        confidence=opts.get("confidence", 0.95),
    )
    manager.context["command"] = opts.get("command_line")
    if opts.get("track_memory"):
        from ..meters.base import PeakMemoryMeter

        manager.add_meter(PeakMemoryMeter())
    if opts.get("in_process"):
        manager.context["isolation"] = "in-process"
        if not opts.get("quiet"):
            click.echo("in-process (--in-process): not isolated; for debugging only, the "
                       "interval describes one execution", err=True)
    elif counting(opts):
        manager.context["isolation"] = "counted processes under valgrind"
        manager.context["measure"] = opts["measure"]
    else:
        manager.context["isolation"] = "spawned worker processes"
    lock = None
    if opts.get("preset"):
        quiet = bool(opts.get("quiet"))
        lock = apply_machine_preset(manager, opts["preset"], opts.get("root", "/"), quiet,
                                    bool(opts.get("wait_lock")))
    # from the end of the session until the outputs are written, signals wait (issue 12, item 8)
    with outputs_before_signals(manager) as keeper:
        try:
            results = run_manager(manager, opts)
        except KeyboardInterrupt as exc:  # PartialResults, or a signal in the last loggers
            results = keeper.partial(exc)
            write_outputs(results, opts)
            from ..system.journal import restore_heading

            lost = unrestored(results)
            for line in lost:
                click.echo(f"error: {restore_heading(lost)}: {line}", err=True)
            raise Interrupted(said=not opts.get("quiet")) from None  # the logger said it
        finally:
            if lock is not None:  # every tuned file was restored (or journaled) by now
                lock.release()
        if profiling(opts):
            _show_profiles(results, opts)
        write_outputs(results, opts)
    if "no_baseline" in opts:  # the options of run (not of commands reusing this function)
        from ..history.last_run import report_and_keep
        from ..output.console import echo

        for line in report_and_keep(results, opts):
            if not opts.get("quiet"):
                echo(line, err=stdout_taken(opts))  # wrapped between words, indent kept
    failed = results.failed
    lost = unrestored(results)
    if lost:
        also = f"; also {len(failed)} benchmark(s) failed" if failed else ""
        from ..system.journal import restore_heading

        raise SystemControlError(f"{restore_heading(lost)} (the results were written): "
                                 f"{'; '.join(lost)}{also}")
    if failed:
        from ..output.tracebacks import debug_text, error_location

        names = ", ".join(c.label for c in failed)
        where = error_location(failed[0], failed[0].errors[0])
        error = BenchmarkFailed(f"{len(failed)} benchmark(s) failed: {names} "
                                f"({failed[0].errors[0]})" + (f" {where}" if where else ""))
        error.user_tracebacks = [t for c in failed if (t := debug_text(c))]  # type: ignore[attr-defined]
        raise error
    return results


@click.command("run")
@click.argument("file", type=click.Path(dir_okay=False))
@stop_options
@click.option(
    "--stream",
    is_flag=True,
    help="Keep streaming statistics only (O(1) memory; no raw samples, no medians).",
)
@click.option(
    "-k",
    "select",
    metavar="PATTERN",
    help="Run only benchmarks whose name contains PATTERN or matches it as a glob.",
)
@click.option(
    "--method",
    default=None,
    callback=lambda ctx, param, value: None if value is None else methods.canonical(value),
    help="Measurement method (default auto: calibrated samples, median): "
    + ", ".join(methods.builtin_names()) + ", or one a plug-in registers (docs/extending.md).",
)
@click.option(
    "--method-option",
    multiple=True,
    metavar="NAME=VALUE",
    help="Option of the measurement method (repeatable), e.g. m=20.",
)
@click.option(
    "--remove-outliers",
    is_flag=True,
    help="Remove Tukey outliers from the statistics (default: only mark them).",
)
@click.option(
    "-p",
    "--processes",
    type=count(min=1, max=MAX_PROCESSES),
    default=None,
    help="Independent executions per benchmark: fresh worker processes, each with its own "
    "hash seed and environment size, run one after another; the interval is across them "
    f"(Kalibera & Jones 2013). Default: {defaults.PROCESSES}.",
)
@click.option(
    "--layout",
    type=click.Choice(defaults.LAYOUTS),
    default=None,
    help="How executions' hash seeds, environment sizes and address-space randomisation are "
    "chosen: 'design' gives execution i the same seed and size in every invocation, so "
    "repeated runs average over the same ones; 'fixed' also turns ASLR off (the same "
    "addresses every time, but not those of ordinary runs: slower here by 5-12%); 'random' "
    "draws seed and size afresh, as pyperf does. Default: design.",
)
@click.option(
    "--clock",
    type=click.Choice(["perf_counter", "thread_time", "process_time"]),
    default=None,
    help="Clock of the samples: thread_time counts only the benchmark's own CPU time, so other "
    "processes on a busy machine (a shared CI runner) add no noise; for CPU-bound code (waiting "
    "for I/O or sleeping is left out). Default: perf_counter.",
)
@click.option(
    "--in-process",
    is_flag=True,
    help="Measure in this process (for debugging: not isolated; the interval describes "
    "one execution only).",
)
@click.option(
    "--preset",
    metavar="NAME|FILE",
    callback=not_empty,
    help="Machine countermeasures: baseline, managed, or a preset file (docs/machine-control.md).",
)
@click.option(
    "--wait-lock",
    is_flag=True,
    help="When another tuned run holds the machine's tuning lock, wait for it instead of "
    "refusing.",
)
@click.option("--no-baseline", is_flag=True,
              help="Neither print the change since the last run nor keep this run's result.")
@click.option("--baseline", metavar="NAME", default=None,
              help="Print the change against the result saved as NAME (--save-baseline) "
                   "instead of the last run, and keep NAME as it is.")
@click.option("--save-baseline", metavar="NAME", default=None,
              help="Keep this run's result as NAME (default: 'last', in "
                   ".steadybench/baselines; docs/comparison.md).")
@click.option(
    "--track-memory",
    is_flag=True,
    help="Also record each run's peak Python heap (tracemalloc, as pyperf's --tracemalloc; "
    "pyperf's --track-memory reads the process's memory instead). Tracing slows the code: "
    "compare times without it.",
)
@quiet_option()
@measure_option
@profile_options
@cluster_options
@style_option
@output_options
def run_cmd(file: str, **opts: Any) -> None:
    """Run the benchmarks defined in FILE (a Python file)."""
    if opts.get("in_process") and opts.get("processes"):
        raise ConfigurationError("--in-process and --processes exclude each other")
    refuse_with_counts(opts, TIME_ONLY["run"])
    if profiling(opts) and opts.get("cluster"):
        raise ConfigurationError("--profile profiles on this machine; leave out --cluster")
    check_cluster_options(opts)
    ctx = click.get_current_context()
    opts["command_line"] = ctx.command_path + " " + file
    opts["root"] = (ctx.obj or {}).get("root", "/")
    run_definitions(file, opts)


run_cmd.help = f"{run_cmd.help}\n\n{defaults.describe()}"

#: every numeric option validated, the shared stop options too: see cli/validate.py
commands = [harden(run_cmd)]
