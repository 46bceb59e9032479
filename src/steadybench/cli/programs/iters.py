"""``steadybench iters``: a program that reports its own iteration counts (the differential
method: time against iterations, the slope per iteration). See ``docs/programs.md``."""

from __future__ import annotations

from typing import Any

import click

from ...environment import capture_environment
from ...model.results import CaseResult, Results
from ...output.deferral import signals_held_from_session_end
from ...output.format import (
    case_estimate,
    estimate_ci_text,
    estimate_value_text,
)
from ...output.tables import style_option
from ...targets.cli import (
    target_context,
)
from ..common import (
    output_options,
    pass_root,
)
from ..measure import TIME_ONLY, counting, measure_option, refuse_with_counts
from .shared import (
    command_list,
    command_options,
    count_programs,
    finish,
    iters_options,
    iters_settings,
    machine_control,
    param_sets_of,
    recorded_command_line,
    runner_for,
    stderr_console,
)


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

    from ...output.loggers import eta_text
    from ...programs.iters import finish_iters_case, sweep_iters

    commands = command_list(args, opts["cmds"], opts["names"], opts["shell"],
                         opts["commands_file"])
    param_sets = param_sets_of(opts, commands, reserved=("iters",))
    if counting(opts):
        refuse_with_counts(opts, TIME_ONLY["iters"])
        count_programs(commands, param_sets, opts, "iters")
        return
    settings = iters_settings(opts)
    runner = runner_for(opts, capture=True)
    for c in commands:  # every command must be runnable before anything is measured
        for ps in param_sets:
            runner.resolve(c.render({**ps, "iters": 1}))
    console = None if opts["quiet"] else stderr_console()
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
        results.context.update(context, command_line=recorded_command_line(),
                               **target_context(runner),
                               programs={
            "command": "iters", "commands": [c.text for c in commands],
            "shell": opts["shell"], "timeout": opts["timeout"],
            "options": cases[0].extra.get("iters_options") if cases else None})
        finish(results, opts, console, interrupted)


# ---------------------------------------------------------------------------- sweep
