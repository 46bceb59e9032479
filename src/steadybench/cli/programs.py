"""``steadybench exec``, ``steadybench iters`` and ``steadybench sweep``: external programs.

See ``docs/programs.md``. The measuring code lives in :mod:`steadybench.programs`; this module
only turns options into settings, prints the summary and writes the files.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

import click

from ..environment import capture_environment
from ..errors import BenchmarkFailed, ConfigurationError
from ..fleet.options import check_cluster_options, cluster_options, exec_on_cluster
from ..model.results import CaseResult, Results
from ..output.deferral import signals_held_from_session_end
from ..output.format import (
    case_estimate,
    estimate_ci_text,
    estimate_value_text,
    format_seconds,
    format_value,
)
from ..output.tables import style_option
from ..programs.choices import ORDERS
from ..programs.commands import (
    Command,
    check_placeholders,
    load_commands_file,
    parameter_sets,
    parse_param,
    parse_param_range,
)
from ..programs.process import CommandRunner
from ..targets.cli import (
    calibration_for,
    command_runner,
    machine_root,
    target_context,
    target_options,
)
from . import Interrupted
from .common import (
    TIME_LIMIT_HELP,
    output_options,
    pass_root,
    stdout_taken,
    write_outputs,
)
from .hyperfine_options import exec_stop_options, hyperfine_options
from .measure import TIME_ONLY, count_settings, counting, measure_option, refuse_with_counts
from .options import confidence_option, quiet_option, seed_option
from .profile import profile_options, profiling
from .validate import (
    NON_NEGATIVE_SECONDS,
    POSITIVE,
    POSITIVE_SECONDS,
    FiniteFloat,
    count,
    harden,
    not_empty,
)

if TYPE_CHECKING:  # rich and the measuring code load when a command runs: --help stays fast
    from rich.console import Console

    from ..programs.iters import ItersOptions


#: most bootstrap resamples of the slope's CI (each refits the line)
MAX_BOOTSTRAP = 100_000
#: most independent executions (--processes, --best-of)
MAX_PROCESSES = 10_000
#: most sizes per doubling of a --sizes grid
MAX_PER_OCTAVE = 1000
#: --outlier-threshold: positive, ``inf`` keeps every point
OUTLIER_THRESHOLD = FiniteFloat(min=0.0, min_open=True, allow_inf=True)


def _console() -> Console:
    from ..output.console import make_console

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
    from ..errors import SystemControlError
    from ..system.lock import TuningLock
    from ..system.presets import build_preset, changes_machine, machine_session

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


def _command_line() -> str:
    from ..redact import command_line

    return command_line()


def hyperfine_positionals(args: Sequence[str]) -> bool:
    """True when the positional arguments are hyperfine's: each one a whole command line
    (``exec "gzip -1 -c f" "gzip -9 -c f"``). That is so when the first argument holds a space
    and is not a file of that name; otherwise they are one command and its arguments
    (``exec -- gzip -1 -c f``)."""
    import os

    first = args[0]
    return any(ch.isspace() for ch in first) and not os.path.exists(first)


def _commands(args: Sequence[str], cmds: Sequence[str], names: Sequence[str],
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


def _reference(opts: dict[str, Any], commands: Sequence[Command]) -> Command | None:
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


def _param_sets(opts: dict[str, Any], commands: Sequence[Command],
                reserved: Sequence[str] = ()) -> list[dict[str, Any]]:
    params = [parse_param(p) for p in opts.get("param") or ()]
    params += [parse_param_range(p) for p in opts.get("param_range") or ()]
    for name, _ in params:
        if name in reserved:
            raise ConfigurationError(f"parameter {name!r} is set by the command itself")
    check_placeholders(commands, [n for n, _ in params], reserved)
    return parameter_sets(params)


def _finish(results: Results, opts: dict[str, Any], console: Console | None,
            interrupted: bool) -> None:
    """Write the files, print the summary, and end the way the outcome asks."""
    results.interrupted = results.interrupted or interrupted
    write_outputs(results, opts)
    if console is not None:
        _print_summary(results, console, opts.get("style") or "table",
                       stdout_taken(opts) or any(opts.get(f"export_{f}") == "-"
                                                 for f in ("json", "csv", "markdown")))
    if interrupted:
        raise Interrupted(said=console is not None)  # the summary said "partial results"
    if results.context.get("restore_failed"):
        from ..errors import SystemControlError

        raise SystemControlError(f"{results.context['restore_failed']} (the results were "
                                 "written)")
    failed = results.failed
    if failed:
        raise BenchmarkFailed(failed[0].errors[0] if len(failed) == 1 else
                              f"{len(failed)} benchmarks failed; first: {failed[0].errors[0]}")


def _print_summary(results: Results, console: Console, style: str = "table",
                   stdout_taken: bool = False) -> None:
    """The results table and the relative summary on standard output (``style``); the notes
    and warnings on ``console`` (standard error)."""
    from rich.markup import escape

    from ..output.console import make_console, print_indented
    from ..output.groups import comparison_text
    from ..output.loggers import status_markup
    from ..output.tables import Column, TableSpec, render

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


def _runner(opts: dict[str, Any], capture: bool) -> CommandRunner:
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


def _iters_settings(opts: dict[str, Any]) -> ItersOptions:
    """The sweep's settings; --runs and --target-cov build the same stop conditions as every
    other command (the run loop checks them), --max-time alone is the time budget."""
    from click.core import ParameterSource

    from ..programs.iters import ItersOptions
    from ..runner.stop import build_stop_condition

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
@click.command("exec", context_settings={"ignore_unknown_options": False})
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
@command_options
@click.option("--output", "output_path", type=click.Path(dir_okay=False),
              help="Append the commands' standard output to this file ('-': to ours, as "
                   "--show-output; default: discarded).")
@click.option("--timeout", type=POSITIVE_SECONDS,
              help="Seconds before one run is killed, with its whole process group (without "
                   "it, a run is killed at the hard --time-limit).")
@click.option("--ignore-failure", "-i", is_flag=True,
              help="Record runs with a non-zero exit status as failed and go on (left out of "
                   "the statistics) instead of failing the benchmark.")
@click.option("--no-correction", is_flag=True,
              help="Do not subtract the calibrated start-up cost of a process.")
@click.option("--order", type=click.Choice(ORDERS), default="round-robin", show_default=True,
              help="Interleaving of the commands, run by run.")
@click.option("--reference", "reference", metavar="COMMAND", default=None,
              help="As hyperfine: a command measured first, the others each compared with it "
                   "(instead of with the fastest).")
@click.option("--reference-name", default=None, metavar="NAME",
              help="Display name of --reference.")
@click.option("--sort", "sort_order", type=click.Choice(("auto", "command", "mean-time")),
              default="auto", show_default=True,
              help="As hyperfine: 'auto' lists the table by command and the comparison by "
                   "time, 'command' both by command, 'mean-time' both by time.")
@seed_option("--order random")
@click.option("--processes", type=count(min=1, max=MAX_PROCESSES), default=None,
              help="Repeat the whole measurement K times (independent executions); runs are "
                   "pooled.")
@click.option("--best-of", type=count(min=1, max=MAX_PROCESSES), default=None,
              help="Repeat the whole measurement K times and report the execution with the "
                   "smallest mean (labelled as such; favours lucky runs).")
@exec_stop_options
@hyperfine_options
@quiet_option()
@measure_option
@profile_options
@cluster_options
@style_option
@output_options
@pass_root
def exec_cmd(args: tuple[str, ...], root: str, **opts: Any) -> None:
    """Benchmark external commands: steadybench exec [OPTIONS] -- CMD ARG...

    As hyperfine, quoted command lines are commands of their own: steadybench exec
    "gzip -1 -c f" "gzip -9 -c f" compares two (an argument with a space that is not a file
    starts that form). Each run is a fresh process (no shell unless --shell); several commands
    (--cmd, repeated) are interleaved run by run. As hyperfine: at least 10 runs and 3 s per
    command, -r/-w/-m/-M, -n, --prepare/--setup/--cleanup/--conclude, --export-json/-csv/-markdown.
    """
    from ..programs.exec import ExecOptions, ExecSession
    from ..programs.hooks import Hook
    from .hyperfine_options import exec_stop_condition, few_runs_warning

    check_cluster_options(opts)
    if opts["no_shell"] and opts["shell"]:
        raise ConfigurationError("-N (no shell) and --shell exclude each other")
    commands = _commands(args, opts["cmds"], opts["names"] + opts["command_names"],
                         opts["shell"], opts["commands_file"])
    reference = _reference(opts, commands)
    if reference is not None:
        commands.insert(0, reference)
    for name in opts["command_names"]:
        if name.isdigit() and not opts["quiet"]:
            click.echo(f"note: -n {name} names a command (hyperfine's meaning); for a number "
                       f"of runs give -r {name}", err=True)
    param_sets = _param_sets(opts, commands)
    if counting(opts):
        refuse_with_counts(opts, TIME_ONLY["exec"])
        _count_programs(commands, param_sets, opts, "exec")
        return
    if opts["processes"] and opts["best_of"] and opts["processes"] != opts["best_of"]:
        raise ConfigurationError("--processes and --best-of disagree; give one of them")
    executions = opts["best_of"] or opts["processes"] or 1
    names = [c.name for c in commands]
    show = opts["show_output"]
    prepare = Hook.build("--prepare", opts["prepare"], names, show)
    conclude = Hook.build("--conclude", opts["conclude"], names, show)
    setup = Hook.build("--setup", [opts["setup"] or ""], names, show)
    cleanup = Hook.build("--cleanup", [opts["cleanup"] or ""], names, show)
    for hook in (prepare, conclude, setup, cleanup):
        if hook is not None:
            hook.check(param_sets)
    stop = exec_stop_condition(opts)
    settings = ExecOptions(
        stop=stop, warmup=opts.get("warmup") or 0,
        time_limit=opts["time_limit"], ignore_failure=opts["ignore_failure"],
        correct=not opts["no_correction"], order=opts["order"], seed=opts["seed"],
        processes=executions, best_of=bool(opts["best_of"]), confidence=opts["confidence"],
        max_time=opts.get("max_time"),
    )
    if show and not opts.get("output_path"):
        opts["output_path"] = "-"  # the commands write to our standard output
    runner = _runner(opts, capture=False)
    console = None if opts["quiet"] else _console()
    progress = None
    if console is not None:
        from ..output.progress import Budget, JobsProgress

        budget = (Budget(runs=opts["runs"]) if opts.get("runs") else
                  Budget(runs=opts["min_runs"],
                         seconds=0.0 if opts.get("target_cov") or opts.get("target_ci")
                         else opts["min_time"]))
        progress = JobsProgress(console, len(commands) * len(param_sets) * executions, budget,
                                _running_estimate)
    session = ExecSession(commands, param_sets, runner, settings, progress=progress,
                          **calibration_for(runner))
    if prepare is not None:
        session.before_run_actions.append(prepare.action())
    if conclude is not None:
        session.after_run_actions.append(conclude.action())
    context: dict[str, Any] = {}
    if console is not None:
        from rich.markup import escape

        console.print(f"exec: {len(commands) * len(param_sets)} case(s), stop when "
                      f"{escape(stop.describe())}", highlight=False)
    interrupted = False
    results = None
    with signals_held_from_session_end() as held:
        try:
            if opts.get("cluster"):  # one task per parameter set on a fleet host (docs/fleet.md)
                results = exec_on_cluster(commands, param_sets, runner, settings, opts)
            else:
                with machine_control(opts, root, context) as machine:
                    if machine is not None:
                        session.before_run = machine.before_run
                        session.after_run = machine.after_run
                    if setup is not None:
                        for c in commands:
                            for ps in param_sets:
                                setup.run(c.name, ps)
                    try:
                        results = session.run()
                    finally:
                        if progress is not None:
                            progress.stop()
                        if cleanup is not None:
                            for c in commands:
                                for ps in param_sets:
                                    cleanup.run(c.name, ps)
        except KeyboardInterrupt as exc:
            held.start()
            interrupted = True
            results = getattr(exc, "results", None)  # the fleet's partial results
        held.start()
        if results is None:  # results() finalizes the cases: only once, or warnings repeat
            results = session.results(interrupted=interrupted)
        for case in results.cases:
            warning = few_runs_warning(case.n, opts)
            if warning and warning not in case.warnings:
                case.warnings.append(warning)
        results.context.update(context, command_line=_command_line(), **target_context(runner))
        results.context["programs_summary"] = {
            "reference": reference.name if reference is not None else None,
            "sort": opts["sort_order"]}
        if profiling(opts) and not interrupted:
            _profile_programs(results, commands, param_sets, runner, opts)
        _export_hyperfine(results, opts)
        _finish(results, opts, console, interrupted)


def _profile_programs(results: Results, commands: Sequence[Command],
                      param_sets: Sequence[dict[str, Any]], runner: Any,
                      opts: dict[str, Any]) -> None:
    """``exec --profile``: after all measured runs, one more run of each command under a
    profiler (py-spy for a Python program, callgrind for any other: ``--profiler``), into the
    results' ``context["profiles"]`` and on the console."""
    from ..profiles.backend import ProfileBackend, take_profile
    from ..profiles.runner import collect
    from .profile import settings_for, write_out

    for case in results.cases:
        if case.errors or case.n == 0:
            continue
        match = [(c, ps) for c in commands for ps in param_sets
                 if c.name == case.benchmark and dict(ps) == dict(case.params)]
        if not match:
            continue
        command, ps = match[0]
        argv = runner.resolve(command.render(ps))
        backend = ProfileBackend(case.label, settings_for(opts, argv), argv=argv)
        got = take_profile(backend, opts.get("time_limit") or 600.0)
        key = "profile" if not hasattr(got, "reason") else "profile_failure"
        case.extra[key] = got if key == "profile" else got.message  # type: ignore[union-attr]
    lines = collect(results)
    from ..profiles.model import Profile

    lines += write_out(opts, {n: Profile.from_dict(raw) for n, raw in
                              results.context.get("profiles", {}).items() if "frames" in raw})
    if not opts["quiet"]:
        for line in lines:
            click.echo(line, err=True)


def _count_programs(commands: Sequence[Command], param_sets: Sequence[dict[str, Any]],
                    opts: dict[str, Any], command: str) -> None:
    """``exec``/``iters`` with ``--measure instructions|cycles``: each command counted under
    valgrind (steadybench.counts.programs); a failing command is one line, the others go on."""
    from ..counts.programs import count_command, count_iters
    from ..counts.valgrind import find_valgrind
    from ..processors.base import finalize_case
    from ..programs.iters import iters_argv

    valgrind = find_valgrind()
    settings = count_settings(opts, "processes" if command == "exec" else "layouts")
    runner = _runner(opts, capture=True)
    console = None if opts["quiet"] else _console()
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
    results.context.update(command_line=_command_line(), measure=settings.measure)
    _finish(results, opts, console, interrupted)


def _count_sweep(command: Command, sizes: Sequence[int], values: dict[str, Any],
                 runner: CommandRunner, opts: dict[str, Any]) -> None:
    """``sweep --measure instructions|cycles``: the count per iteration at every size (the
    ITERS line of each, steadybench.counts.programs), then the growth class of the counts."""
    from ..counts.programs import count_iters
    from ..counts.valgrind import find_valgrind
    from ..processors.base import finalize_case
    from ..programs.iters import iters_argv
    from ..programs.sweep import fit_complexity

    valgrind = find_valgrind()
    settings = count_settings(opts, "layouts")
    console = None if opts["quiet"] else _console()
    cases: list[CaseResult] = []
    interrupted = False
    try:
        for size in sizes:
            ps = {**values, "size": size}
            case = CaseResult(benchmark=command.name, implementation=command.name,
                              params=dict(ps), method="count", unit=settings.measure)
            cases.append(case)
            count_iters(case, valgrind, lambda n, ps=ps: runner.resolve(
                iters_argv(command, n, ps)), settings)
            finalize_case(case, (), None, settings.confidence)
            if console is not None:
                console.print(f"  size {size}: {estimate_value_text(case_estimate(case))} per "
                              "iteration", highlight=False, markup=False)
            if case.errors:
                break
    except KeyboardInterrupt:
        interrupted = True
    done = [c for c in cases if c.estimate is not None and c.estimate.ok]
    table: dict[str, Any] = {"sizes": [c.params["size"] for c in done],
                             "count": [c.estimate.value for c in done],
                             "unit": settings.measure, "complexity": None}
    try:
        table["complexity"] = fit_complexity(table["sizes"], table["count"])
    except ConfigurationError as exc:
        table["complexity_error"] = str(exc)
    results = Results(suite="sweep", cases=cases, environment=capture_environment(),
                      interrupted=interrupted)
    results.context.update(command_line=_command_line(), sweep=table, measure=settings.measure)
    _finish(results, opts, console, interrupted)


def _running_estimate(case: CaseResult) -> str:
    """The mean of the raw run times so far (the start-up correction comes at the end)."""
    raw = case.values("wall_time_raw")
    return f"mean {format_seconds(sum(raw) / len(raw))} so far" if raw else ""


def _export_hyperfine(results: Results, opts: dict[str, Any]) -> None:
    from ..programs.hyperfine import write_export

    for fmt in ("json", "csv", "markdown"):
        path = opts.get(f"export_{fmt}")
        if path:
            write_export(results, fmt, path)


# ---------------------------------------------------------------------------- iters
@click.command("iters")
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
@command_options
@iters_options(default_time=3.0)
@measure_option
@style_option
@output_options
@pass_root
def iters_cmd(args: tuple[str, ...], root: str, **opts: Any) -> None:
    """The ITERS protocol: steadybench iters [OPTIONS] -- PROG ARG...

    PROG takes an iteration count (at {iters}, or as its first argument), runs its workload
    that many times and prints 'BATCHTIME: <seconds>'. The count is swept and BATCHTIME fitted
    on it: slope = time per iteration, intercept = shared overhead.
    """
    from rich.markup import escape

    from ..output.loggers import eta_text
    from ..programs.iters import finish_iters_case, sweep_iters

    commands = _commands(args, opts["cmds"], opts["names"], opts["shell"],
                         opts["commands_file"])
    param_sets = _param_sets(opts, commands, reserved=("iters",))
    if counting(opts):
        refuse_with_counts(opts, TIME_ONLY["iters"])
        _count_programs(commands, param_sets, opts, "iters")
        return
    settings = _iters_settings(opts)
    runner = _runner(opts, capture=True)
    for c in commands:  # every command must be runnable before anything is measured
        for ps in param_sets:
            runner.resolve(c.render({**ps, "iters": 1}))
    console = None if opts["quiet"] else _console()
    cases: list[CaseResult] = []
    context: dict[str, Any] = {}
    interrupted = False
    total = len(commands) * len(param_sets)
    with signals_held_from_session_end() as held:
        try:
            with machine_control(opts, root, context) as machine:
                before_run = machine.before_run if machine is not None else None
                after_run = machine.after_run if machine is not None else None
                for command in commands:
                    for ps in param_sets:
                        case = CaseResult(benchmark=command.name, implementation=command.name,
                                          params=dict(ps), method="iters")
                        cases.append(case)
                        if console is not None:
                            done = len(cases) - 1
                            eta = eta_text((total - done) * settings.max_time)
                            console.print(f"  case {done + 1} of {total}: {escape(case.label)} "
                                          f"(budget {settings.max_time:g} s; ETA {eta})",
                                          highlight=False)
                        sweep_iters(command, runner, settings, ps, case, before_run=before_run,
                                    after_run=after_run)
                        finish_iters_case(case, settings)
                        if console is not None:
                            est = case_estimate(case)
                            console.print(f"    {estimate_value_text(est)} per iteration "
                                          f"{estimate_ci_text(est)} ({case.runs_recorded} "
                                          "points)", highlight=False)
                        if case.errors:
                            break
                    else:
                        continue
                    break
        except KeyboardInterrupt:
            held.start()
            interrupted = True
            for case in cases:
                if case.interrupted:
                    finish_iters_case(case, settings)
        held.start()
        results = Results(suite="iters", cases=cases, environment=capture_environment(),
                          interrupted=interrupted)
        results.context.update(context, command_line=_command_line(), **target_context(runner),
                               programs={
            "command": "iters", "commands": [c.text for c in commands],
            "shell": opts["shell"], "timeout": opts["timeout"],
            "options": cases[0].extra.get("iters_options") if cases else None})
        _finish(results, opts, console, interrupted)


# ---------------------------------------------------------------------------- sweep
@click.command("sweep")
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
@command_options
@click.option("--sizes", required=True, metavar="LO..HI | N1,N2,...",
              help="Sizes for {size}: a logarithmic grid like 2^3..2^20, or a list.")
@click.option("--per-octave", type=count(min=1, max=MAX_PER_OCTAVE), default=1,
              show_default=True,
              help="Sizes per doubling in a LO..HI grid.")
@click.option("--table", "table_path", type=click.Path(dir_okay=False),
              help="Write the size table here (.tsv, .csv or .json by extension).")
@iters_options(default_time=1.0)
@measure_option
@style_option
@output_options
@pass_root
def sweep_cmd(args: tuple[str, ...], root: str, **opts: Any) -> None:
    """Size sweep: steadybench sweep --sizes 2^3..2^16 [OPTIONS] -- PROG ... {size} ...

    Runs the ITERS protocol at every size, tabulates mean, stddev, geomean, geostdev and R²,
    and names the growth class (O(1) ... O(n^3)) that fits the means best.
    """
    from ..output.loggers import eta_text
    from ..programs.sweep import parse_sizes, run_size_sweep, sweep_table, write_table

    sizes = parse_sizes(opts["sizes"], opts["per_octave"])
    commands = _commands(args, opts["cmds"], opts["names"], opts["shell"],
                         opts["commands_file"])
    if len(commands) != 1:
        raise ConfigurationError("sweep measures one command at a time")
    command = commands[0]
    param_sets = _param_sets(opts, commands, reserved=("iters", "size"))
    if len(param_sets) != 1:
        raise ConfigurationError("sweep takes single --param values (one value per name)")
    settings = _iters_settings(opts)
    runner = _runner(opts, capture=True)
    if "size" not in command.placeholders():
        raise ConfigurationError(f"command {command.text!r} has no {{size}} placeholder "
                                 "(write {size} where the size goes)")
    runner.resolve(command.render({**param_sets[0], "iters": 1, "size": sizes[0]}))
    if counting(opts):
        refuse_with_counts(opts, TIME_ONLY["sweep"])
        _count_sweep(command, sizes, param_sets[0], runner, opts)
        return
    console = None if opts["quiet"] else _console()

    shown: list[int] = []

    def show(case: CaseResult) -> None:
        if console is not None:
            shown.append(1)
            left = len(sizes) - len(shown)
            console.print(f"  size {case.params.get('size')} ({len(shown)} of {len(sizes)}): "
                          f"{estimate_value_text(case_estimate(case))} per iteration "
                          f"{estimate_ci_text(case_estimate(case))} ({case.runs_recorded} "
                          f"points)" + (f"; ETA {eta_text(left * settings.max_time)}"
                                        if left else ""), highlight=False)

    cases: list[CaseResult] = []
    context: dict[str, Any] = {}
    interrupted = False
    with signals_held_from_session_end() as held:
        try:
            with machine_control(opts, root, context) as machine:
                run_size_sweep(command, sizes, runner, settings, param_sets[0], show, cases,
                               before_run=machine.before_run if machine is not None else None,
                               after_run=machine.after_run if machine is not None else None)
        except KeyboardInterrupt:
            held.start()
            interrupted = True
        held.start()
        results = Results(suite="sweep", cases=cases, environment=capture_environment(),
                          interrupted=interrupted)
        table = sweep_table(cases)
        results.context.update(context, command_line=_command_line(), sweep=table,
                               **target_context(runner), programs={
            "command": "sweep", "commands": [command.text], "sizes": sizes,
            "shell": opts["shell"], "timeout": opts["timeout"]})
        if opts.get("table_path"):
            write_table(table, opts["table_path"])
        _finish(results, opts, console, interrupted)


#: every numeric option validated, the shared ones (stop options) too: see cli/validate.py
commands = [harden(c) for c in (exec_cmd, iters_cmd, sweep_cmd)]
