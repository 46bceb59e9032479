"""``steadybench sweep``: ``iters`` over a range of sizes, with the growth class of the
time per iteration. See ``docs/programs.md``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import click

from ...environment import capture_environment
from ...errors import ConfigurationError
from ...model.results import CaseResult, Results
from ...output.deferral import signals_held_from_session_end
from ...output.format import (
    case_estimate,
    estimate_ci_text,
    estimate_value_text,
)
from ...output.tables import style_option
from ...programs.commands import (
    Command,
)
from ...programs.process import CommandRunner
from ...targets.cli import (
    target_context,
)
from ..common import (
    output_options,
    pass_root,
)
from ..measure import TIME_ONLY, count_settings, counting, measure_option, refuse_with_counts
from ..validate import (
    count,
)
from .shared import (
    MAX_PER_OCTAVE,
    command_list,
    command_options,
    finish,
    iters_options,
    iters_settings,
    machine_control,
    param_sets_of,
    recorded_command_line,
    runner_for,
    stderr_console,
)


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
    from ...output.loggers import eta_text
    from ...programs.sweep import parse_sizes, run_size_sweep, sweep_table, write_table

    sizes = parse_sizes(opts["sizes"], opts["per_octave"])
    commands = command_list(args, opts["cmds"], opts["names"], opts["shell"],
                         opts["commands_file"])
    if len(commands) != 1:
        raise ConfigurationError("sweep measures one command at a time")
    command = commands[0]
    param_sets = param_sets_of(opts, commands, reserved=("iters", "size"))
    if len(param_sets) != 1:
        raise ConfigurationError("sweep takes single --param values (one value per name)")
    settings = iters_settings(opts)
    runner = runner_for(opts, capture=True)
    if "size" not in command.placeholders():
        raise ConfigurationError(f"command {command.text!r} has no {{size}} placeholder "
                                 "(write {size} where the size goes)")
    runner.resolve(command.render({**param_sets[0], "iters": 1, "size": sizes[0]}))
    if counting(opts):
        refuse_with_counts(opts, TIME_ONLY["sweep"])
        _count_sweep(command, sizes, param_sets[0], runner, opts)
        return
    console = None if opts["quiet"] else stderr_console()

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
        results.context.update(context, command_line=recorded_command_line(), sweep=table,
                               **target_context(runner), programs={
            "command": "sweep", "commands": [command.text], "sizes": sizes,
            "shell": opts["shell"], "timeout": opts["timeout"]})
        if opts.get("table_path"):
            write_table(table, opts["table_path"])
        finish(results, opts, console, interrupted)


def _count_sweep(command: Command, sizes: Sequence[int], values: dict[str, Any],
                 runner: CommandRunner, opts: dict[str, Any]) -> None:
    """``sweep --measure instructions|cycles``: the count per iteration at every size (the
    ITERS line of each, steadybench.counts.programs), then the growth class of the counts."""
    from ...counts.programs import count_iters
    from ...counts.valgrind import find_valgrind
    from ...processors.base import finalize_case
    from ...programs.iters import iters_argv
    from ...programs.sweep import fit_complexity

    valgrind = find_valgrind()
    settings = count_settings(opts, "layouts")
    console = None if opts["quiet"] else stderr_console()
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
    results.context.update(command_line=recorded_command_line(), sweep=table,
                           measure=settings.measure)
    finish(results, opts, console, interrupted)
