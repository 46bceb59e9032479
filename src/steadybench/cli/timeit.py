"""``steadybench timeit [-s SETUP] STMT [STMT ...] [--vs STMT ...]``: the one-liner, as
``python -m timeit`` users expect it, without a benchmark file.

As in ``python -m timeit`` (and ``pyperf timeit``), several STMT arguments are the lines of one
statement; a rival statement to compare with is given with ``--vs`` (repeatable).
One statement is measured as ``run`` measures a benchmark (independent worker processes, the
estimate with its interval, the table). Several statements are compared as ``ab`` compares two
variants: each statement after the first against the first, in rounds of fresh executions in
random order until the verdict is decided at the stated confidence or the budget is spent
(:mod:`steadybench.ab`); then every statement's executions together give the plain-words
summary, fastest first (:mod:`steadybench.output.relative`).
"""

from __future__ import annotations

import tempfile
from typing import Any

import click

from ..errors import ConfigurationError
from .common import TIME_LIMIT_HELP, pass_root
from .measure import TIME_ONLY, measure_option, refuse_with_counts
from .options import confidence_option, quiet_option, seed_option
from .profile import profile_options
from .validate import harden


def _measure_one(path: str, opts: dict[str, Any]) -> None:
    from .run import run_definitions

    run_opts = {"time_limit": opts["time_limit"], "confidence": opts["confidence"],
                "quiet": opts["quiet"], "style": opts["style"], "json_path": opts["json_path"],
                "window": 20, "preset": opts["preset"], "root": opts["root"],
                **{k: opts[k] for k in ("profile", "profiler", "profile_time", "profile_out")}}
    run_definitions(path, run_opts, title="timeit")


def _count(path: str, opts: dict[str, Any]) -> int:
    """``--measure instructions|cycles``: every statement counted as ``run --measure`` counts
    a benchmark; with several, each compared with the first in words
    (:mod:`steadybench.counts.verdict`), and once that counts are not time."""
    from ..counts.backend import NOT_TIME
    from ..counts.verdict import judge, side_of
    from .run import run_definitions

    run_opts = {"time_limit": opts["time_limit"], "confidence": opts["confidence"],
                "quiet": opts["quiet"], "style": opts["style"], "json_path": opts["json_path"],
                "measure": opts["measure"]}
    results = run_definitions(path, run_opts, title="timeit")
    cases = [c for c in results.cases if c.estimate is not None and c.estimate.ok]
    if len(cases) >= 2:
        first = cases[0]
        for other in cases[1:]:
            verdict = judge(f"{other.implementation} vs {first.implementation}",
                            first.estimate.unit, side_of(first.estimate),
                            side_of(other.estimate))
            click.echo(verdict.sentence.replace("B executes", f"{other.implementation!r} "
                                                "executes").replace("than A", "than "
                                                f"{first.implementation!r}"))
        click.echo(f"note: {NOT_TIME}")
    return 0


def _compare(path: str, names: list[str], opts: dict[str, Any]) -> int:
    """Each statement after the first against the first, as ``ab`` compares, with the
    machine control of ``--preset`` around all comparisons."""
    from ..ab.variants import PythonVariant
    from .programs import machine_control

    common = {"execution_time": opts["execution_time"], "warmup": 1,
              "time_limit": opts["time_limit"], "confidence": opts["confidence"]}
    values: dict[str, list[float]] = {name: [] for name in names}
    verdicts: list[str] = []
    first = PythonVariant("A", path, names[0], **common)
    first.check()
    with machine_control(opts, opts["root"], {}) as machine:
        failed = _rounds(first, path, names, opts, common, machine, values, verdicts)
    _print_statement_table(names, values, opts)
    _summary(names, values, verdicts, opts)
    return 1 if failed else 0


def _rounds(first: Any, path: str, names: list[str], opts: dict[str, Any],
            common: dict[str, Any], machine: Any, values: dict[str, list[float]],
            verdicts: list[str]) -> bool:
    """The comparisons; True when one failed. Ctrl-C ends with :class:`Interrupted`."""
    from ..ab.report import answer_phrase, medians, progress_line
    from ..ab.session import FAILED, ABSession, ABSettings
    from ..ab.variants import PythonVariant
    from ..output.format import format_seconds

    confidence = opts["confidence"]
    failed = False
    for k, name in enumerate(names[1:], 2):
        other = PythonVariant("B", path, name, **common)
        other.check()
        settings = ABSettings(confidence=confidence, max_rounds=opts["max_rounds"],
                              max_time=opts["max_time"], seed=opts["seed"])
        if not opts["quiet"]:
            click.echo(f"timeit: statement {k} of {len(names)} against statement 1, up to "
                       f"{settings.max_rounds} rounds or {settings.max_time:g} s", err=True)

        def progress(res: Any, name: str = name) -> None:
            if not opts["quiet"] and res.look is not None:
                click.echo(progress_line(res, subject=name, other=names[0]), err=True)

        res = ABSession(first, other, settings, progress=progress, machine=machine).run()
        for rnd in res.paired:
            values[names[0]].append(rnd.outcomes["A"].value)  # type: ignore[arg-type]
            values[name].append(rnd.outcomes["B"].value)  # type: ignore[arg-type]
        if res.verdict == FAILED:
            failed = True
            verdicts.append(f"{name}: failed — {res.reason}")
            for label in ("A", "B"):
                for failure in res.failures[label][:1]:
                    verdicts.append(f"  {names[0] if label == 'A' else name}: {failure}")
                    if label == "B" and ("UnboundLocalError" in failure
                                         or "NameError" in failure):
                        verdicts.append("  hint: each --vs statement runs on its own; the lines "
                                        "of one statement are STMT arguments (as python -m "
                                        "timeit), set-up goes in -s")
        elif res.look is not None:
            lk = res.look
            phrase = answer_phrase(lk.estimate, lk.low, lk.high, subject=name,
                                   other=names[0])
            m = medians(res)  # the absolute times beside the ratio
            times = (f"{names[0]} {format_seconds(m['A'])}, {name} {format_seconds(m['B'])}: "
                     if m["A"] is not None and m["B"] is not None else "")
            # the phrase names the faster statement; the session's own word ("slower": the
            # --vs statement against the first) would read as a contradiction beside it
            word = "" if res.verdict in ("faster", "slower") else f": {res.verdict}"
            verdicts.append(f"{times}{phrase} at {confidence:.0%}{word} "
                            f"({len(res.paired)} rounds, {res.reason})")
        if res.interim:
            from . import Interrupted

            raise Interrupted()
    return failed


def _summary(names: list[str], values: dict[str, list[float]], verdicts: list[str],
             opts: dict[str, Any]) -> None:
    """Every statement's executions together in plain words, then the verdicts."""
    from ..model.estimate import Estimate
    from ..output.relative import Variant, summary_lines

    confidence = opts["confidence"]
    variants = []
    for name in names:
        xs = sorted(values[name])
        if len(xs) >= 2:
            median = xs[len(xs) // 2] if len(xs) % 2 else (xs[len(xs) // 2 - 1]
                                                           + xs[len(xs) // 2]) / 2
            variants.append(Variant(name, Estimate(value=median, unit="s"), xs))
    # with two statements the verdict line below is the one comparison (with the sequential
    # interval that decided it); a second interval of the same ratio would only confuse
    summary = summary_lines(variants, confidence) if len(names) > 2 or not verdicts else []
    from ..output.console import echo

    for line in summary:
        echo(line)
    for line in verdicts:
        echo(line, err=opts["quiet"])


def _print_statement_table(names: list[str], values: dict[str, list[float]],
                           opts: dict[str, Any]) -> None:
    import statistics

    from ..output.console import console_text, make_console
    from ..output.format import format_seconds
    from ..output.tables import Column, TableSpec, render

    spec = TableSpec([Column("statement", justify="left"), Column("executions"),
                      Column("median"), Column("min", drop=1), Column("max", drop=2)])
    for name in names:
        xs = values[name]
        spec.add_row(console_text(name), str(len(xs)),
                     format_seconds(statistics.median(xs)) if xs else "—",
                     format_seconds(min(xs)) if xs else "—",
                     format_seconds(max(xs)) if xs else "—")
    render(spec, make_console(), opts["style"])


@click.command("timeit")
@click.argument("statements", nargs=-1, required=True, metavar="STMT [STMT ...]")
@click.option("--vs", "rivals", multiple=True, metavar="STMT",
              help="A statement to compare with STMT (repeatable; its lines joined with a "
                   "newline or ';').")
@click.option("-s", "--setup", multiple=True, metavar="SETUP",
              help="Set-up code, run once before the measurement and not timed (repeatable: "
                   "one line each, as in python -m timeit).")
@click.option("--name", "names", multiple=True,
              help="Display name of each statement, in order (default: the statement).")
@confidence_option(of="the intervals and of the verdicts")
@click.option("--max-time", type=float, default=8.0, show_default=True,
              help="Several statements: seconds of rounds per comparison.")
@click.option("--max-rounds", type=click.IntRange(min=2), default=40, show_default=True,
              help="Several statements: rounds per comparison at most.")
@click.option("--execution-time", type=float, default=0.03, show_default=True,
              help="Several statements: seconds of sampling in each execution.")
@click.option("--time-limit", type=float, default=120.0, show_default=True,
              help=TIME_LIMIT_HELP + " A case is a statement.")
@seed_option("the random order of rounds")
@click.option("--json", "json_path", type=click.Path(dir_okay=False),
              help="One statement: write the results as JSON ('-' for stdout).")
@click.option("--style", type=click.Choice(("table", "plain", "markdown")), default="table",
              show_default=True, help="How the results table is printed.")
@quiet_option("the results only")
@click.option("--preset", metavar="NAME|FILE", default=None,
              help="Machine countermeasures around the measurement: baseline, managed, or a "
                   "preset file (docs/machine-control.md); restored on every exit path.")
@measure_option
@profile_options
@pass_root
def timeit_cmd(statements: tuple[str, ...], root: str, **opts: Any) -> int:
    """Time Python statements: steadybench timeit [-s SETUP] STMT [STMT ...] [--vs STMT]

    As python -m timeit: several STMT arguments are the lines of one statement. Its time per
    call comes with an interval (independent worker processes). With --vs, each rival is
    compared with it as 'steadybench ab' does, then "B is 1.52× faster than A [1.49, 1.55]",
    fastest first. Example (a statement of two lines against a rival):

    \b
      steadybench timeit -s "parts = [str(i) for i in range(1000)]" \\
        's = ""' 'for p in parts: s += p' --vs '"".join(parts)'
    """
    from ..oneliner import check_syntax, display_names, write_statements_file

    opts["root"] = root
    for name in ("max_time", "execution_time", "time_limit"):
        if not 0 < opts[name] < float("inf"):
            raise ConfigurationError(f"--{name.replace('_', '-')} must be positive, got "
                                     f"{opts[name]}")
    # python -m timeit's convention: the arguments are the lines of one statement
    statements = ("\n".join(statements), *opts["rivals"])
    if len(opts["names"]) > len(statements):
        raise ConfigurationError(f"{len(opts['names'])} --name options for {len(statements)} "
                                 "statements")
    setup = "\n".join(opts["setup"])
    check_syntax(setup, statements)
    names = display_names(statements, opts["names"])
    if len(set(names)) != len(names):
        raise ConfigurationError("two statements have the same --name")
    with tempfile.TemporaryDirectory(prefix="steadybench-timeit-") as tmp:
        path = str(write_statements_file(tmp, setup, statements, names))
        if opts["profile"] and (opts["measure"] != "time" or len(statements) > 1):
            raise ConfigurationError("timeit --profile profiles one statement measured in "
                                     "time (for two, use 'steadybench ab --profile')")
        if opts["measure"] != "time":
            refuse_with_counts(opts, TIME_ONLY["timeit"])
            return _count(path, opts)
        if len(statements) == 1:
            _measure_one(path, opts)
            return 0
        if opts["json_path"]:
            raise ConfigurationError("--json applies to one statement (several are compared "
                                     "as 'ab' compares; use 'steadybench ab --json')")
        return _compare(path, names, opts)


commands = [harden(timeit_cmd)]
