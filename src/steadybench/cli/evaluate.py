"""``steadybench evaluate``: Rancid's evaluation of the managed method against the baseline
(Afonso & Almeida §VI), in one command. See ``docs/evaluate.md``."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ..errors import BenchmarkFailed, ConfigurationError, SystemControlError
from ..fleet.options import check_cluster_options, cluster_options
from ..targets.cli import machine_root, target_options
from . import Interrupted
from .common import TIME_LIMIT_HELP, output_options, positive, write_outputs
from .measure import measure_option
from .options import confidence_option, quiet_option, seed_option
from .validate import count, not_empty

if TYPE_CHECKING:
    from ..evaluate.session import EvaluationSession, Target


def _target(args: tuple[str, ...], cmds: tuple[str, ...], shell: bool, opts: dict[str, Any]
            ) -> Target:
    """A single argument ending in ``.py`` is a benchmark file; anything else is a command.
    With ``--target`` the commands run on the device (one runner for the whole session)."""
    from ..evaluate.session import CommandTarget, FileTarget
    from .run import parse_key_values

    if len(args) == 1 and args[0].endswith(".py") and not cmds:
        if opts.get("target"):
            raise ConfigurationError(
                f"--target {opts['target']}: a benchmark file cannot run on the device (it "
                "runs in this Python); evaluate a command there instead: --target ... -- PROG "
                "(--push PROG to copy it)")
        if opts.get("push"):
            raise ConfigurationError("--push needs --target (files are copied to the target)")
        return FileTarget(args[0], opts.get("select"), opts.get("method"),
                          parse_key_values(opts.get("method_option") or (), "--method-option"))
    if opts.get("select") or opts.get("method") or opts.get("method_option"):
        raise ConfigurationError("-k, --method and --method-option apply to a benchmark file")
    from ..programs.commands import Command

    commands = []
    if args:
        commands.append(Command.from_line(" ".join(args), shell=True) if shell
                        else Command.from_args(list(args)))
    commands += [Command.from_line(c, shell=shell) for c in cmds]
    if not commands:
        raise ConfigurationError("nothing to evaluate: give a benchmark file (FILE.py), a "
                                 "command after --, or --cmd")
    names = [c.name for c in commands]
    if len(set(names)) != len(names):
        raise ConfigurationError("a command is given twice")
    runner = None
    if opts.get("target") or opts.get("push"):
        from ..programs.process import CommandRunner
        from ..targets.cli import command_runner

        runner = command_runner(opts, lambda: CommandRunner(shell=shell,
                                                            timeout=opts.get("timeout")))
        for c in commands:  # every program must be there before anything is tuned
            runner.resolve(c.render({}))
    return CommandTarget(commands, shell=shell, timeout=opts.get("timeout"), runner=runner)


def _progress(quiet: bool):
    def show(record: Any, done: int, total: int) -> None:
        if quiet:
            return
        from ..output.format import format_value

        median = record.median()
        where = "long" if record.series == "long" else f"launch {record.launch + 1}"
        text = (f"[{done}/{total}] {record.case.label} {record.preset} {where}: "
                f"median {format_value(median, record.case.unit)}"
                + (" (interrupted)" if record.case.interrupted else ""))
        click.echo(text, err=True)

    return show


def _finish(session: EvaluationSession, title: str, opts: dict[str, Any],
            context: dict[str, Any] | None = None) -> None:
    """Analyse what ran, write the outputs and print the tables, signals held back
    (``context``: more for the results' context: the target, the fleet host)."""
    from ..evaluate.analysis import analyse, evaluation_results
    from ..evaluate.tables import table_lines

    options = session.options
    presets = {}
    for role, name in (("baseline", options.baseline), ("managed", options.managed)):
        records = [r for r in session.records if r.role == role]
        record = records[0].case.extra.get("preset") if records else None
        presets[role] = record or {"preset": name, "applied": [], "skipped": [],
                                   "note": "no execution ran"}
    units = session.target.units()
    evaluation, cases = analyse(units, session.records, session.schedule, options, presets,
                                session.interrupted)
    results = evaluation_results(title, evaluation, cases, opts.get("command_line"))
    results.context.update(context or {})
    host = (results.context.get("fleet") or {}).get("host")
    if host:  # the fleet host that measured every execution
        for case in results.cases:
            case.extra["host"] = host
    write_outputs(results, opts)
    if not opts.get("quiet"):
        for line in table_lines(evaluation.to_dict()):
            click.echo(line)


@click.command("evaluate", context_settings={"ignore_unknown_options": False})
@click.argument("what", nargs=-1, metavar="[TARGET]...")
@click.option("--cmd", "cmds", multiple=True, metavar="LINE",
              help="A command line to evaluate instead of a file (repeatable).")
@click.option("--shell", is_flag=True, help="Run the command through /bin/sh -c.")
@click.option("--timeout", type=float, callback=positive,
              help="Kill one run of a command after this many seconds.")
@click.option("--baseline-preset", "baseline", default="baseline", show_default=True,
              callback=not_empty, metavar="NAME|FILE",
              help="The preset the managed one is compared with.")
@click.option("--managed-preset", "managed", default="managed", show_default=True,
              callback=not_empty, metavar="NAME|FILE",
              help="The preset under evaluation (every countermeasure this machine supports).")
@click.option("--launches", "-p", type=count(min=2, max=100_000), default=30,
              show_default=True,
              help="Independent executions of each preset (the paper's 30 launches).")
@click.option("--runs", "-n", type=count(min=1, max=10**9), default=50, show_default=True,
              help="Measured runs in each launch (the paper's 50 iterations).")
@click.option("--long", "long_runs", type=count(min=0, max=10**9), default=0,
              show_default=True,
              help="Also one long execution of each preset with this many runs (Table 2; "
              "0: none, Table 2 then pools the launches).")
@click.option("--warmup", type=count(min=0, max=10**9), default=1, show_default=True,
              help="Warm-up runs at the start of each execution, left out.")
@click.option("--order", type=click.Choice(["random", "alternate"]), default="random",
              show_default=True,
              help="Order inside each block of one execution per preset: random (randomised "
              "blocks) or alternate (baseline, managed, baseline...).")
@seed_option("the random order")
@click.option("--time-limit", type=float, default=600.0, show_default=True,
              callback=positive,
              help=TIME_LIMIT_HELP + " A case is a benchmark case under one preset (its "
                   "launches together; the long runs on their own).")
@confidence_option(of="the intervals")
@click.option("--highlight-abs", type=float, default=1e-3, show_default=True,
              help="Absolute change (seconds) over which, together with --highlight-rel, "
              "a table cell is highlighted (the paper's 1 ms).")
@click.option("--highlight-rel", type=float, default=0.01, show_default=True,
              help="Relative change over which, together with --highlight-abs, a cell is "
              "highlighted (the paper's 1%).")
@click.option("-k", "select", metavar="PATTERN",
              help="Evaluate only the benchmarks of the file matching PATTERN.")
@click.option("--method", default=None, help="Measurement method for the file's benchmarks.")
@click.option("--method-option", multiple=True, metavar="NAME=VALUE",
              help="Option of the measurement method (repeatable).")
@click.option("--wait-lock", is_flag=True,
              help="When another tuned run holds the machine's tuning lock, wait for it.")
@quiet_option()
@measure_option
@target_options
@cluster_options
@output_options
@click.pass_context
def evaluate_cmd(ctx: click.Context, what: tuple[str, ...], cmds: tuple[str, ...],
                 shell: bool, **opts: Any) -> None:
    """Evaluate the managed preset against the baseline (Rancid §VI): K interleaved launches
    of each, Tables 2 and 3, Figs. 15 and 16, and runs that jump between levels.

    TARGET is a benchmark file (FILE.py) or a command (after --). With --target the commands
    run, are timed and the presets are applied on the device; with --cluster the whole
    evaluation runs on one fleet host (docs/evaluate.md)."""
    from ..evaluate.session import EvaluateOptions, EvaluationSession
    from ..output.deferral import DeferredSignals

    check_counts(opts["measure"], what, cmds, opts)
    _check_places(opts)
    root = (ctx.obj or {}).get("root", "/")
    options = EvaluateOptions(
        baseline=opts["baseline"], managed=opts["managed"], launches=opts["launches"],
        runs=opts["runs"], long_runs=opts["long_runs"], warmup=opts["warmup"],
        order=opts["order"], seed=opts["seed"], time_limit=opts["time_limit"],
        confidence=opts["confidence"], highlight_abs=_nonneg(opts["highlight_abs"],
                                                             "--highlight-abs"),
        highlight_rel=_nonneg(opts["highlight_rel"], "--highlight-rel"),
        root=root, wait_lock=bool(opts.get("wait_lock")), measure=opts["measure"])
    from ..redact import command_line

    opts["command_line"] = command_line()
    tgt = _target(what, cmds, shell, opts)
    title = Path(what[0]).stem if len(what) == 1 and what[0].endswith(".py") \
        else "evaluate"
    context: dict[str, Any] = {}
    if opts.get("target"):
        options.root = machine_root(opts["target"], root)  # the device's sys/proc
        from ..targets.cli import target_context

        context.update(target_context(getattr(tgt, "runner", None)))
    session = EvaluationSession(tgt, options, _progress(bool(opts.get("quiet"))))
    try:
        if opts.get("cluster"):
            from ..fleet.evaluate import evaluate_on_cluster

            context.update(evaluate_on_cluster(session, opts))
        else:
            session.run()
    except KeyboardInterrupt:
        session.interrupted = True
        if session.records:
            with DeferredSignals():
                _finish(session, title, opts, context)
        _report_unrestored(session)
        raise Interrupted() from None
    with DeferredSignals():
        _finish(session, title, opts, context)
    if session.restore_failures:
        from ..system.journal import restore_heading

        raise SystemControlError(f"{restore_heading(session.restore_failures)} (the results "
                                 "were written): " + "; ".join(session.restore_failures))
    failed = [r for r in session.records if r.case.errors]
    if failed:
        first = failed[0]
        raise BenchmarkFailed(f"{len(failed)} of {len(session.records)} executions failed "
                              f"(the results were written); first: {first.case.label} "
                              f"{first.preset}: {first.case.errors[0]}")


def check_counts(measure: str, what: tuple[str, ...], cmds: tuple[str, ...],
                 opts: dict[str, Any]) -> None:
    """``evaluate --measure instructions|cycles`` counts a benchmark file's cases here, one
    counted process per launch (:mod:`steadybench.evaluate.counts`); what it cannot count is
    refused in one line: commands (``exec --measure`` counts those), a device (valgrind
    runs here) and a fleet host, and ``--long``."""
    if measure == "time":
        return
    from ..evaluate.counts import check_count_options

    if cmds or not (len(what) == 1 and what[0].endswith(".py")):
        raise ConfigurationError(f"evaluate --measure {measure} counts the cases of a benchmark "
                                 f"file (FILE.py); count a command with 'steadybench exec "
                                 f"--measure {measure}'")
    for name in ("target", "cluster"):
        if opts.get(name):
            raise ConfigurationError(f"evaluate --measure {measure} with --{name}: counts are "
                                     "made under valgrind on this machine; drop --" + name)
    check_count_options(opts["long_runs"])


def _check_places(opts: dict[str, Any]) -> None:
    """--target and --cluster: where the evaluation runs, one at a time."""
    check_cluster_options(opts)
    for name in ("every_host", "hosts_report"):
        if opts.get("cluster") and opts.get(name):
            raise ConfigurationError(f"--{name.replace('_', '-')} with evaluate: an evaluation "
                                     "runs on one host (run evaluate once per host)")
    if opts.get("cluster") and opts.get("target"):
        raise ConfigurationError("--cluster with --target: give one place to run (a fleet "
                                 "host controls its own machine)")


def _report_unrestored(session: EvaluationSession) -> None:
    from ..system.journal import restore_heading

    for line in session.restore_failures:
        click.echo(f"error: {restore_heading(session.restore_failures)}: {line}", err=True)


def _nonneg(value: float, option: str) -> float:
    if not value >= 0:
        raise ConfigurationError(f"{option} must not be negative, got {value}")
    return value


commands = [evaluate_cmd]
