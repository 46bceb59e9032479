"""``steadybench exec``: benchmark commands the way hyperfine does (its options, its JSON),
each case's interval from independent executions (``--processes``). See ``docs/programs.md``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import click

from ...errors import ConfigurationError
from ...fleet.options import check_cluster_options, cluster_options, exec_on_cluster
from ...model.results import CaseResult, Results
from ...output.deferral import signals_held_from_session_end
from ...output.format import (
    format_seconds,
)
from ...output.tables import style_option
from ...programs.choices import ORDERS
from ...programs.commands import (
    Command,
)
from ...targets.cli import (
    calibration_for,
    target_context,
)
from ..common import (
    output_options,
    pass_root,
)
from ..hyperfine_options import exec_stop_options, hyperfine_options
from ..measure import TIME_ONLY, counting, measure_option, refuse_with_counts
from ..options import quiet_option, seed_option
from ..profile import profile_options, profiling
from ..validate import (
    POSITIVE_SECONDS,
    count,
)
from .shared import (
    MAX_PROCESSES,
    command_list,
    command_options,
    count_programs,
    finish,
    machine_control,
    param_sets_of,
    recorded_command_line,
    reference_command,
    runner_for,
    stderr_console,
)


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
    from ...programs.exec import ExecOptions, ExecSession
    from ...programs.hooks import Hook
    from ..hyperfine_options import exec_stop_condition, few_runs_warning

    check_cluster_options(opts)
    if opts["no_shell"] and opts["shell"]:
        raise ConfigurationError("-N (no shell) and --shell exclude each other")
    commands = command_list(args, opts["cmds"], opts["names"] + opts["command_names"],
                         opts["shell"], opts["commands_file"])
    reference = reference_command(opts, commands)
    if reference is not None:
        commands.insert(0, reference)
    for name in opts["command_names"]:
        if name.isdigit() and not opts["quiet"]:
            click.echo(f"note: -n {name} names a command (hyperfine's meaning); for a number "
                       f"of runs give -r {name}", err=True)
    param_sets = param_sets_of(opts, commands)
    if counting(opts):
        refuse_with_counts(opts, TIME_ONLY["exec"])
        count_programs(commands, param_sets, opts, "exec")
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
    runner = runner_for(opts, capture=False)
    console = None if opts["quiet"] else stderr_console()
    progress = None
    if console is not None:
        from ...output.progress import Budget, JobsProgress

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
        results.context.update(context, command_line=recorded_command_line(),
                               **target_context(runner))
        results.context["programs_summary"] = {
            "reference": reference.name if reference is not None else None,
            "sort": opts["sort_order"]}
        if profiling(opts) and not interrupted:
            _profile_programs(results, commands, param_sets, runner, opts)
        _export_hyperfine(results, opts)
        finish(results, opts, console, interrupted)


def _profile_programs(results: Results, commands: Sequence[Command],
                      param_sets: Sequence[dict[str, Any]], runner: Any,
                      opts: dict[str, Any]) -> None:
    """``exec --profile``: after all measured runs, one more run of each command under a
    profiler (py-spy for a Python program, callgrind for any other: ``--profiler``), into the
    results' ``context["profiles"]`` and on the console."""
    from ...profiles.backend import ProfileBackend, take_profile
    from ...profiles.runner import collect
    from ..profile import settings_for, write_out

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
    from ...profiles.model import Profile

    lines += write_out(opts, {n: Profile.from_dict(raw) for n, raw in
                              results.context.get("profiles", {}).items() if "frames" in raw})
    if not opts["quiet"]:
        for line in lines:
            click.echo(line, err=True)


def _running_estimate(case: CaseResult) -> str:
    """The mean of the raw run times so far (the start-up correction comes at the end)."""
    raw = case.values("wall_time_raw")
    return f"mean {format_seconds(sum(raw) / len(raw))} so far" if raw else ""


def _export_hyperfine(results: Results, opts: dict[str, Any]) -> None:
    from ...programs.hyperfine import write_export

    for fmt in ("json", "csv", "markdown"):
        path = opts.get(f"export_{fmt}")
        if path:
            write_export(results, fmt, path)


# ---------------------------------------------------------------------------- iters
