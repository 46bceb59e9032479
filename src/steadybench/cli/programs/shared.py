"""What ``exec``, ``iters`` and ``sweep`` share: the options every command takes, the machine
control around a measurement, the commands and parameter sets read from the arguments, counting
instead of timing, and the summary and files written at the end."""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

import click

from ...environment import capture_environment
from ...errors import BenchmarkFailed, ConfigurationError
from ...model.results import CaseResult, Results
from ...output.format import (
    case_estimate,
    estimate_ci_text,
    estimate_value_text,
    format_seconds,
    format_value,
)
from ...programs.commands import (
    Command,
    check_placeholders,
    load_commands_file,
    parameter_sets,
    parse_param,
    parse_param_range,
)
from ...programs.process import CommandRunner
from ...targets.cli import (
    command_runner,
    machine_root,
    target_options,
)
from .. import Interrupted
from ..common import (
    TIME_LIMIT_HELP,
    stdout_taken,
    write_outputs,
)
from ..measure import count_settings
from ..options import confidence_option, quiet_option, seed_option
from ..validate import (
    NON_NEGATIVE_SECONDS,
    POSITIVE,
    POSITIVE_SECONDS,
    FiniteFloat,
    count,
    not_empty,
)

if TYPE_CHECKING:  # rich and the measuring code load when a command runs: --help stays fast
    from rich.console import Console

    from ...programs.iters import ItersOptions



#: most bootstrap resamples of the slope's CI (each refits the line)
MAX_BOOTSTRAP = 100_000
#: most independent executions (--processes, --best-of)
MAX_PROCESSES = 10_000
#: most sizes per doubling of a --sizes grid
MAX_PER_OCTAVE = 1000
#: --outlier-threshold: positive, ``inf`` keeps every point
OUTLIER_THRESHOLD = FiniteFloat(min=0.0, min_open=True, allow_inf=True)


def stderr_console() -> Console:
    from ...output.console import make_console

    return make_console(stderr=True)


@contextlib.contextmanager
def machine_control(opts: dict[str, Any], root: str, results_context: dict[str, Any]
                    ) -> Iterator[Any]:
    """Machine control (``--preset``) around the measurement of all three commands: the
    preset's countermeasures are set up before, restored after on every exit path, and recorded
    in ``results_context["machine"]``. Yields the :class:`MachineSession` (None without a
    preset), whose ``before_run`` the caller runs before each measured process."""
    preset = opts.get("preset")
    if not preset:
        yield None
        return
    from ...errors import SystemControlError
    from ...system.lock import TuningLock
    from ...system.presets import build_preset, changes_machine, machine_session

    sysroot = machine_root(opts.get("target"), root)
    measured = False
    try:
        with contextlib.ExitStack() as stack:
            # a preset that changes the machine holds its tuning lock for the whole measurement,
            # taken before the preset reads the machine (issue 27 item 11: exec took none, measured
            # on after another run restored, and recorded that run's tuning as its own)
            if changes_machine(build_preset(preset, sysroot).record):
                lock = TuningLock(sysroot)
                lock.acquire(bool(opts.get("wait_lock")),
                             on_wait=lambda line: click.echo(line, err=True))
                stack.callback(lock.release)
            session = stack.enter_context(machine_session(preset, sysroot))
            results_context["machine"] = session.record
            if not opts.get("quiet"):
                applied = ", ".join(a["name"] for a in session.record["applied"]) or "none"
                click.echo(f"preset {session.record['preset']}: applied {applied}", err=True)
                for skip in session.record["skipped"]:
                    click.echo(f"  skipped {skip['name']}: {skip['reason']}", err=True)
            yield session
            measured = True
    except SystemControlError as exc:
        if not measured:
            raise
        # a setting could not be put back (issue 27 item 9): the measurement is kept and
        # written, the failure is recorded with it, and _finish ends with it after the files
        results_context["restore_failed"] = str(exc)


def recorded_command_line() -> str:
    from ...redact import command_line

    return command_line()


def hyperfine_positionals(args: Sequence[str]) -> bool:
    """True when the positional arguments are hyperfine's: each one a whole command line
    (``exec "gzip -1 -c f" "gzip -9 -c f"``). That is so when the first argument holds a space
    and is not a file of that name; otherwise they are one command and its arguments
    (``exec -- gzip -1 -c f``)."""
    import os

    first = args[0]
    return any(ch.isspace() for ch in first) and not os.path.exists(first)


def command_list(args: Sequence[str], cmds: Sequence[str], names: Sequence[str],
              shell: bool, file: str | None = None) -> list[Command]:
    commands: list[Command] = []
    if args and hyperfine_positionals(args):
        commands += [Command.from_line(a, shell=shell) for a in args]
    elif args:
        commands.append(Command.from_line(" ".join(args), shell=True) if shell
                        else Command.from_args(list(args)))
    commands += [Command.from_line(c, shell=shell) for c in cmds]
    if file:
        commands += load_commands_file(file, shell)
    if not commands:
        raise ConfigurationError("no command given (write it after --, or use --cmd or --file)")
    if names:
        if len(names) > len(commands):
            raise ConfigurationError(f"{len(names)} --name options for {len(commands)} commands")
        commands = [dataclasses.replace(c, name=n) for n, c in zip(names, commands)] + \
            commands[len(names):]
    seen: set[str] = set()
    for c in commands:
        if c.name in seen:
            raise ConfigurationError(f"command {c.name!r} is given twice (use --name)")
        seen.add(c.name)
    return commands


def reference_command(opts: dict[str, Any], commands: Sequence[Command]) -> Command | None:
    """hyperfine's ``--reference CMD`` (and ``--reference-name``): one more command, measured
    first, that the others are compared with."""
    line = opts.get("reference")
    if line is None:
        if opts.get("reference_name"):
            raise ConfigurationError("--reference-name names --reference; give --reference")
        return None
    ref = Command.from_line(line, name=opts.get("reference_name") or None, shell=opts["shell"])
    if any(c.name == ref.name for c in commands):
        raise ConfigurationError(f"--reference {ref.name!r} is also one of the commands "
                                 "(give it once, or use --reference-name)")
    return ref


def param_sets_of(opts: dict[str, Any], commands: Sequence[Command],
                reserved: Sequence[str] = ()) -> list[dict[str, Any]]:
    params = [parse_param(p) for p in opts.get("param") or ()]
    params += [parse_param_range(p) for p in opts.get("param_range") or ()]
    for name, _ in params:
        if name in reserved:
            raise ConfigurationError(f"parameter {name!r} is set by the command itself")
    check_placeholders(commands, [n for n, _ in params], reserved)
    return parameter_sets(params)


def finish(results: Results, opts: dict[str, Any], console: Console | None,
            interrupted: bool) -> None:
    """Write the files, print the summary, and end the way the outcome asks."""
    results.interrupted = results.interrupted or interrupted
    write_outputs(results, opts)
    if console is not None:
        print_summary(results, console, opts.get("style") or "table",
                       stdout_taken(opts) or any(opts.get(f"export_{f}") == "-"
                                                 for f in ("json", "csv", "markdown")))
    if interrupted:
        raise Interrupted(said=console is not None)  # the summary said "partial results"
    if results.context.get("restore_failed"):
        from ...errors import SystemControlError

        raise SystemControlError(f"{results.context['restore_failed']} (the results were "
                                 "written)")
    failed = results.failed
    if failed:
        raise BenchmarkFailed(failed[0].errors[0] if len(failed) == 1 else
                              f"{len(failed)} benchmarks failed; first: {failed[0].errors[0]}")


def print_summary(results: Results, console: Console, style: str = "table",
                   stdout_taken: bool = False) -> None:
    """The results table and the relative summary on standard output (``style``); the notes
    and warnings on ``console`` (standard error)."""
    from rich.markup import escape

    from ...output.console import make_console, print_indented
    from ...output.groups import comparison_text
    from ...output.loggers import status_markup
    from ...output.tables import Column, TableSpec, render

    out = make_console(stderr=stdout_taken)
    iters_mode = any(c.method.startswith("iters") for c in results.cases)
    counts_mode = bool(results.cases) and all(c.method == "count" for c in results.cases)
    if counts_mode:
        spec = TableSpec([Column("command", justify="left"), Column("counted"),
                          Column("estimate"), Column("CI"), Column("per"),
                          Column("fixed part", drop=1),
                          Column("status", justify="left", wrap=True)])
    elif iters_mode:
        spec = TableSpec([Column("command", justify="left"), Column("points"),
                          Column("slope (per iter)"), Column("CI"),
                          Column("intercept", drop=2), Column("R²", drop=3),
                          Column("power", drop=1),
                          Column("status", justify="left", wrap=True)])
    else:
        spec = TableSpec([Column("command", justify="left"), Column("runs"),
                          Column("estimate"), Column("CI"), Column("stdev", drop=1),
                          Column("raw mean", drop=2), Column("user", drop=4),
                          Column("sys", drop=5), Column("max RSS", drop=3),
                          Column("status", justify="left", wrap=True)])
    shown = (results.context.get("programs_summary") or {})
    cases = list(results.cases)
    if shown.get("sort") == "mean-time":  # hyperfine's --sort mean-time
        def time_of(case: CaseResult) -> float:
            est = case_estimate(case)
            return est.value if est is not None and est.value is not None else float("inf")

        cases.sort(key=time_of)
    for case in cases:
        status = status_markup(case)
        est = case_estimate(case)
        if counts_mode:
            intercept = est.figure("intercept") if est else None
            spec.add_row(escape(case.label), str(case.n), estimate_value_text(est),
                         estimate_ci_text(est), str(est.figure("per") if est else "—"),
                         format_value(intercept, case.unit), status)
        elif iters_mode:
            fit = case.extra.get("fit") or {}
            loglog = fit.get("loglog") or {}
            r2 = fit.get("r2")
            power = loglog.get("power")
            spec.add_row(escape(case.label), str(case.runs_recorded),
                         estimate_value_text(est), estimate_ci_text(est),
                         format_seconds(est.figure("intercept") if est else None),
                         "—" if r2 is None else f"{r2:.4f}",
                         "—" if power is None else f"{power:.3f}", status)
        else:
            rss = case.stream.get("max_rss")
            spec.add_row(
                escape(case.label), str(case.n), estimate_value_text(est),
                estimate_ci_text(est), format_value(case.stats.get("stdev"), case.unit),
                format_seconds(est.figure("raw_mean") if est else None),
                format_seconds(case.stream["user_time"].mean if "user_time" in case.stream
                               else None),
                format_seconds(case.stream["sys_time"].mean if "sys_time" in case.stream
                               else None),
                f"{rss.max / 2**20:.1f} MiB" if rss and rss.n else "—", status)
    render(spec, out, style)
    confidence = next((float(e.confidence) for c in results.cases
                       if (e := case_estimate(c)) is not None and e.confidence), 0.95)
    for line in comparison_text(results.cases, confidence, commands=True,
                                reference=shown.get("reference"),
                                by_time=shown.get("sort") != "command"):
        print_indented(out, line)
    if len(results.cases) > 1 and not iters_mode:  # why a command is in no comparison
        below = [c.label for c in results.cases
                 if not c.errors and (e := case_estimate(c)) is not None and e.value is not None
                 and e.value <= 0]
        if below:
            print_indented(out, f"no comparison for {', '.join(below)}: the start-up "
                                "correction is larger than the command's own time (estimate "
                                "≤ 0); measure more work per run, or --no-correction")
    cal = (results.context.get("programs") or {}).get("calibration") or []
    if cal and cal[0]:
        console.print(f"start-up cost subtracted: {format_seconds(cal[0]['mean'])} "
                      f"(mean of {cal[0]['runs']} runs of {' '.join(cal[0]['command'])}); "
                      "'estimate' is corrected, 'raw mean' is not", highlight=False)
    sweep = results.context.get("sweep")
    if sweep and sweep.get("complexity"):
        cx = sweep["complexity"]
        out.print(f"growth: best fit {cx['best']}, coefficient {cx['coefficient']:.4g} "
                  f"{sweep.get('unit', 's')}")
    # one line per warning, naming every command it concerns (not the same line per command)
    by_warning: dict[str, list[str]] = {}
    for case in results.cases:
        for warning in case.warnings:
            by_warning.setdefault(warning, []).append(case.label)
    for warning, labels in by_warning.items():
        who = labels[0] if len(labels) == 1 else f"{len(labels)} commands"
        console.print(f"[yellow]warning[/yellow] {escape(who)}: {escape(warning)}")
    if results.interrupted:
        console.print("[yellow]interrupted: partial results[/yellow]")


def runner_for(opts: dict[str, Any], capture: bool) -> CommandRunner:
    # with --target, a runner with the same settings on the device (steadybench.targets)
    return command_runner(opts, lambda: CommandRunner(
        shell=opts["shell"], timeout=opts.get("timeout"), input_path=opts.get("input_path"),
        output_path=None if capture else opts.get("output_path"), capture_stdout=capture))


# ---------------------------------------------------------------------------- shared options
def command_options(fn):
    """--cmd, --file, --name, --shell, --input, --param, --param-range."""
    options = [
        click.option("--cmd", "cmds", multiple=True, metavar="COMMAND",
                     help="A command line to benchmark (repeatable); split like a shell would, "
                          "run without one unless --shell."),
        click.option("--file", "commands_file", type=click.Path(dir_okay=False),
                     help="A TOML file of commands: [[command]] tables with run = \"...\" (or "
                          "args = [...]) and an optional name."),
        click.option("--name", "names", multiple=True,
                     help="Display name of each command, in order (repeatable)."),
        click.option("--shell", is_flag=True,
                     help="Run commands through /bin/sh -c (its start-up is then calibrated "
                          "and subtracted too)."),
        click.option("--input", "input_path", type=click.Path(dir_okay=False),
                     help="File given as standard input (default: none, /dev/null)."),
        click.option("--param", multiple=True, metavar="NAME=V1,V2,...",
                     help="Values of the {NAME} placeholder (repeatable; every combination "
                          "is measured)."),
        click.option("--param-range", multiple=True, metavar="NAME=START:STOP[:STEP]",
                     help="A range of values of {NAME}, STOP included."),
        click.option("--preset", metavar="NAME|FILE", callback=not_empty,
                     help="Machine countermeasures: baseline, managed, or a preset file "
                          "(docs/machine-control.md)."),
        click.option("--wait-lock", is_flag=True,
                     help="When another tuned run holds the machine's tuning lock, wait for it "
                          "instead of refusing."),
    ]
    for option in reversed(options):
        fn = option(fn)
    return target_options(fn)


def iters_options(default_time: float):
    def decorate(fn):
        options = [
            click.option("--max-time", type=POSITIVE_SECONDS, default=default_time,
                         show_default=True, help="Time budget of one ITERS sweep in seconds."),
            click.option("--threshold", type=NON_NEGATIVE_SECONDS, default=1e-3,
                         show_default=True,
                         help="BATCHTIME (s) up to which the count doubles; then it grows "
                              "×1.2+1."),
            click.option("--min-points", type=count(min=3), default=8, show_default=True,
                         help="Points measured at least, whatever the budget."),
            click.option("--max-points", type=count(min=3), default=500, show_default=True,
                         help="Points measured at most (the hard run limit)."),
            click.option("--runs", "-n", type=count(min=1),
                         help="Stop after this many points (with --max-time only when that "
                              "is given too)."),
            click.option("--target-cov", type=POSITIVE,
                         help="Stop when the CoV of the last --window per-iteration times is "
                              "at most this."),
            click.option("--window", type=count(min=2), default=20,
                         show_default=True, help="Sliding window of points for --target-cov."),
            click.option("--warmup", type=count(min=0), default=0, show_default=True,
                         help="Runs of the program at the first count, left out of the fit."),
            click.option("--time-limit", type=POSITIVE_SECONDS, default=600.0,
                         show_default=True,
                         help=TIME_LIMIT_HELP + " A case is one sweep."),
            click.option("--timeout", type=POSITIVE_SECONDS, default=60.0, show_default=True,
                         help="Seconds before one run is killed (with its process group)."),
            confidence_option(of="the slope's interval"),
            click.option("--bootstrap", type=count(min=0, max=MAX_BOOTSTRAP), default=2000,
                         show_default=True,
                         help="Bootstrap resamples for the slope's CI (0: Student-t CI)."),
            seed_option("the bootstrap", default=0),
            click.option("--outlier-threshold", type=OUTLIER_THRESHOLD, default=6.0,
                         show_default=True,
                         help="Robust refit: drop points farther from the line than this many "
                              "median absolute deviations ('inf': keep all)."),
            quiet_option(),
        ]
        for option in reversed(options):
            fn = option(fn)
        return fn

    return decorate


def iters_settings(opts: dict[str, Any]) -> ItersOptions:
    """The sweep's settings; --runs and --target-cov build the same stop conditions as every
    other command (the run loop checks them), --max-time alone is the time budget."""
    from click.core import ParameterSource

    from ...programs.iters import ItersOptions
    from ...runner.stop import build_stop_condition

    stop = None
    if opts.get("runs") or opts.get("target_cov"):
        ctx = click.get_current_context(silent=True)
        timed = ctx is not None and ctx.get_parameter_source("max_time") not in (
            ParameterSource.DEFAULT, None)
        stop = build_stop_condition(runs=opts.get("runs"),
                                    max_time=opts["max_time"] if timed else None,
                                    target_cov=opts.get("target_cov"),
                                    window=opts.get("window", 20),
                                    confidence=opts["confidence"])
    return ItersOptions(max_time=opts["max_time"], threshold=opts["threshold"],
                        min_points=opts["min_points"], max_points=opts["max_points"],
                        confidence=opts["confidence"], bootstrap=opts["bootstrap"],
                        seed=opts["seed"], outlier_threshold=opts["outlier_threshold"],
                        stop=stop, warmup=opts.get("warmup") or 0,
                        time_limit=opts.get("time_limit", 600.0))


# ---------------------------------------------------------------------------- exec

def count_programs(commands: Sequence[Command], param_sets: Sequence[dict[str, Any]],
                    opts: dict[str, Any], command: str) -> None:
    """``exec``/``iters`` with ``--measure instructions|cycles``: each command counted under
    valgrind (steadybench.counts.programs); a failing command is one line, the others go on."""
    from ...counts.programs import count_command, count_iters
    from ...counts.valgrind import find_valgrind
    from ...processors.base import finalize_case
    from ...programs.iters import iters_argv

    valgrind = find_valgrind()
    settings = count_settings(opts, "processes" if command == "exec" else "layouts")
    runner = runner_for(opts, capture=True)
    console = None if opts["quiet"] else stderr_console()
    cases: list[CaseResult] = []
    interrupted = False
    try:
        for c in commands:
            for ps in param_sets:
                case = CaseResult(benchmark=c.name, implementation=c.name, params=dict(ps),
                                  method="count", unit=settings.measure)
                cases.append(case)
                if console is not None:
                    console.print(f"  counting {c.name} under valgrind ({settings.measure})",
                                  highlight=False, markup=False)
                if command == "exec":
                    count_command(case, valgrind, runner.resolve(c.render(ps)), settings)
                else:
                    count_iters(case, valgrind,
                                lambda n, c=c, ps=ps: runner.resolve(iters_argv(c, n, ps)),
                                settings)
                finalize_case(case, (), None, settings.confidence)
    except KeyboardInterrupt:
        interrupted = True
    results = Results(suite=command, cases=cases, environment=capture_environment(),
                      interrupted=interrupted)
    results.context.update(command_line=recorded_command_line(), measure=settings.measure)
    finish(results, opts, console, interrupted)
