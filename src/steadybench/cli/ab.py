"""``steadybench ab A B``: a live A/B comparison in interleaved fresh processes."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from typing import Any

import click

from ..defaults import AB_EXECUTION_TIME, AB_LAYOUT, AB_MAX_ROUNDS, AB_MAX_TIME, LAYOUTS
from ..errors import ConfigurationError
from ..fleet.options import check_cluster_options, cluster_options
from ..history.options import history_options, record_from_opts, wants_history
from .common import TIME_LIMIT_HELP, pass_root
from .measure import TIME_ONLY, counting, measure_option, refuse_with_counts
from .options import (
    VerdictOptions,
    confidence_option,
    equivalence_option,
    json_option,
    quiet_option,
    seed_option,
    threshold_option,
)
from .profile import profile_options, profiling


def _split_target(text: str) -> tuple[str, str | None]:
    """``FILE`` or ``FILE::NAME``."""
    path, sep, name = text.partition("::")
    return path, (name or None) if sep else None


@contextlib.contextmanager
def _variants(a: str, b: str | None, opts: dict[str, Any]) -> Iterator[tuple[Any, Any]]:
    """Build both variants (and the git worktrees they live in, removed afterwards)."""
    from ..ab.variants import CommandVariant, PythonVariant

    b = a if b is None else b
    limit = opts["time_limit"]
    if opts["command"]:
        for flag in ("python_a", "python_b", "rev_a", "rev_b"):
            if opts[flag]:
                raise ConfigurationError(f"--{flag.replace('_', '-')} applies to benchmark "
                                         "files, not to --command")
        yield (CommandVariant("A", a, shell=opts["shell"], time_limit=limit,
                              capture=opts["check_output"]),
               CommandVariant("B", b, shell=opts["shell"], time_limit=limit,
                              capture=opts["check_output"]))
        return
    common = {"execution_time": opts["execution_time"], "warmup": opts["warmup"],
              "time_limit": limit, "confidence": opts["confidence"], "layout": opts["layout"]}
    revs = (opts["rev_a"], opts["rev_b"])
    if any(revs):
        from ..ab.variants import worktree_variant
        from ..ab.worktrees import repository_relative, repository_root, worktrees

        if not all(revs):
            raise ConfigurationError("give both --rev-a and --rev-b")
        root = repository_root()
        targets = [_split_target(target) for target in (a, b)]
        rels = [(repository_relative(path, root), name) for path, name in targets]
        with worktrees(list(revs), opts["build"], root) as trees:
            yield tuple(worktree_variant(label, tree, rel, name,
                                         py or opts["python"], **common)
                        for label, tree, (rel, name), py in
                        zip("AB", trees, rels, (opts["python_a"], opts["python_b"]),
                            strict=True))
        return
    if opts["build"]:
        raise ConfigurationError("--build applies with --rev-a and --rev-b")
    pa, na = _split_target(a)
    pb, nb = _split_target(b)
    yield (PythonVariant("A", pa, na, python=opts["python_a"] or opts["python"], **common),
           PythonVariant("B", pb, nb, python=opts["python_b"] or opts["python"], **common))


def _check_outputs(va: Any, vb: Any) -> str | None:
    out_a, out_b = va.probe_output(), vb.probe_output()
    if out_a != out_b:
        def short(text: str) -> str:
            text = text.strip().replace("\n", "⏎")
            return text[:60] + ("…" if len(text) > 60 else "")
        return f"A and B give different results: A {short(out_a)!r}, B {short(out_b)!r}"
    return None


def _check_b(b: str | None, opts: dict[str, Any]) -> None:
    """B may be left out only when something else tells A from B (interpreters, revisions) or
    an A/A check is asked for with --aa; A against itself is never run by accident."""
    differs = any(opts[flag] for flag in ("python_a", "python_b", "rev_a", "rev_b"))
    if opts["aa"]:
        if b is not None:
            raise ConfigurationError("--aa runs A against itself: give A only, not B")
        if differs:
            raise ConfigurationError("--aa runs A against itself: leave out --python-a/-b "
                                     "and --rev-a/-b")
    elif b is None and not differs:
        raise ConfigurationError("ab needs two variants, A and B (or --python-a/-b, "
                                 "--rev-a/-b); for an A/A check of A against itself add --aa")


@click.command("ab")
@click.argument("a")
@click.argument("b", required=False)
@click.option("--command", "-c", "command", is_flag=True,
              help="A and B are command lines (one execution = one run of the command).")
@click.option("--shell", is_flag=True, help="With --command: run the lines through /bin/sh.")
@click.option("--python", default=None,
              help="Interpreter for both variants (a path or a name on PATH).")
@click.option("--python-a", default=None, help="Interpreter of A (e.g. venv-old/bin/python).")
@click.option("--python-b", default=None, help="Interpreter of B.")
@click.option("--rev-a", default=None, help="Git revision of A: checked out in a worktree.")
@click.option("--rev-b", default=None, help="Git revision of B.")
@click.option("--build", default=None,
              help="Shell command run in each worktree before measuring (with --rev-a/-b), "
                   "e.g. 'python -m venv .venv && .venv/bin/pip install -q -e .'.")
@confidence_option()
@threshold_option()
@equivalence_option("ab stops then.")
@click.option("--max-rounds", type=click.IntRange(min=2), default=AB_MAX_ROUNDS,
              show_default=True,
              help="Budget: rounds (each executes A once and B once).")
@click.option("--max-time", type=float, default=AB_MAX_TIME, show_default=True,
              help="Budget: seconds of rounds; stops at the next round (0: rounds only).")
@click.option("--min-rounds", type=click.IntRange(min=2), default=None,
              help="Rounds before the first look (default 12, or fewer with a smaller budget).")
@click.option("--execution-time", type=float, default=AB_EXECUTION_TIME, show_default=True,
              help="Seconds of sampling in each execution of a benchmark file.")
@click.option("--layout", type=click.Choice(LAYOUTS), default=AB_LAYOUT,
              show_default=True,
              help="Hidden factors of the executions of a benchmark file: 'fixed' runs A and B "
                   "of a round under the same hash seed, environment size and addresses (ASLR "
                   "off), so layout effects cancel in their ratio; 'design' leaves ASLR on; "
                   "'random' draws seed and size afresh.")
@click.option("--warmup", type=click.IntRange(min=0), default=1, show_default=True,
              help="Warm-up samples in each execution of a benchmark file.")
@click.option("--time-limit", type=float, default=120.0, show_default=True,
              help=TIME_LIMIT_HELP + " Here a case is a variant: A's executions of every "
                   "round together.")
@click.option("--aa", "aa", is_flag=True,
              help="A/A check: run A against itself (no B), to see what this machine calls a "
                   "difference between identical variants.")
@click.option("--duet", is_flag=True,
              help="Run A and B at the same time, pinned to different cores (paired ratios).")
@click.option("--check-output", is_flag=True,
              help="First check that A and B give the same result (return value or output).")
@seed_option("the random order of rounds")
@click.option("--fail-on", type=click.Choice(["slower", "change", "never"]), default="never",
              show_default=True, help="Exit with status 1 when B is slower (or changed).")
@json_option("every round and the verdict")
@quiet_option("the verdict line only")
@click.option("--preset", metavar="NAME|FILE", default=None,
              help="Machine countermeasures around the whole comparison: baseline, managed, or "
                   "a preset file (docs/machine-control.md); restored on every exit path.")
@measure_option
@profile_options
@click.option("--verbose", "-v", is_flag=True,
              help="Also say how the verdict was reached (the sequential method, its looks, "
                   "the order of rounds).")
@cluster_options
@history_options
@pass_root
def ab_cmd(a: str, b: str | None, root: str, **opts: Any) -> int:
    """Compare A and B live: rounds of fresh executions in random order, until the verdict is
    decided at the stated confidence or the budget is spent.

    A and B are benchmark files (FILE or FILE::NAME; B defaults to A with --python-a/-b,
    --rev-a/-b or --aa), or command lines with --command. The answer reads "B is 1.052×
    faster than A [1.041, 1.063] at 95%", the faster variant first. Stopping early never
    raises the chance of calling identical variants different above 1 − confidence
    (docs/comparison.md).
    """
    from ..ab.report import quiet_line, summary_lines, to_json
    from ..ab.session import FAILED, ABSession, ABSettings
    from ..fileio import atomic_write_text
    from ..output.console import echo
    from .programs import machine_control

    check_cluster_options(opts)
    _check_b(b, opts)
    verdict_options = VerdictOptions.from_params(opts)
    confidence = verdict_options.level
    if opts["max_time"] == 0:
        opts["max_time"] = None
    for name in ("max_time", "execution_time", "time_limit"):
        if opts[name] is not None and not (0 < opts[name] < float("inf")):
            raise ConfigurationError(f"--{name.replace('_', '-')} must be positive, got "
                                     f"{opts[name]}")
    settings = ABSettings(confidence=confidence,
                          threshold=verdict_options.threshold,
                          equivalence=verdict_options.equivalence,
                          max_rounds=opts["max_rounds"], min_rounds=opts["min_rounds"],
                          max_time=opts["max_time"], duet=opts["duet"],
                          seed=verdict_options.seed)
    settings.check()
    quiet = opts["quiet"]

    shown: list[int] = []

    def progress(res: Any) -> None:
        if quiet or res.look is None or res.look.rounds in shown:
            return
        from ..ab.report import progress_line

        shown.append(res.look.rounds)
        click.echo(progress_line(res), err=True)

    if counting(opts):
        refuse_with_counts(opts, TIME_ONLY["ab"])
    if profiling(opts) and opts.get("cluster"):
        raise ConfigurationError("--profile profiles on this machine; leave out --cluster")
    with _variants(a, b, opts) as (va, vb):
        va.check()
        vb.check()
        if counting(opts):  # counts are exact: no rounds, one count of each (ab_counts)
            return _ab_counts(va, vb, opts)
        warnings = []
        if opts["check_output"]:
            differs = _check_outputs(va, vb)
            if differs:
                warnings.append(differs)
                click.echo(f"warning: {differs}", err=True)
        if opts.get("cluster"):  # rounds as tasks on fleet hosts (docs/fleet.md)
            from ..fleet.ab import ab_command_on_cluster

            if opts["preset"]:
                raise ConfigurationError("--preset applies on this machine; on a fleet, give "
                                         "the hosts' workers their preset ('steadybench "
                                         "worker --preset')")
            return ab_command_on_cluster(va, vb, settings, opts, progress, warnings)
        session = ABSession(va, vb, settings, progress=progress)
        for label, variant in (("A", va), ("B", vb)):
            if getattr(variant, "revision", None):
                session.result.variants[label]["revision"] = variant.revision
        if not quiet:
            click.echo(f"ab: A {va.description}\n    B {vb.description}\n"
                       f"    up to {settings.max_rounds} rounds"
                       + (f" or {settings.max_time:g} s" if settings.max_time else "")
                       + ", random order in each round", err=True)
        with machine_control(opts, root, {}) as machine:
            session.use_machine(machine)
            res = session.run()
        res.warnings.extend(warnings)
        pair = _profile_pair(va, vb, res, opts) if profiling(opts) else None
    if opts["json_path"]:
        text = to_json(res)
        if opts["json_path"] == "-":
            sys.stdout.write(text)
        else:
            atomic_write_text(opts["json_path"], text)
    if wants_history(opts) and not res.interim:  # after the file: a broken history costs none
        from ..history.ab_record import results_from_ab

        record_from_opts(results_from_ab(res, "steadybench ab"), opts)
    lines = [quiet_line(res)] if quiet else summary_lines(res, verbose=opts["verbose"])
    if opts["json_path"] != "-":
        for line in lines:
            # 80 columns: long lines (the method) wrap with an indent
            echo(line)
        if pair is not None:  # after the verdict, the reason
            for line in [*pair.lines(), *_profile_files(opts, pair)]:
                echo(line)
        for w in res.warnings:
            click.echo(f"warning: {w}", err=True)
    if res.interim or opts.get("profile_interrupted"):
        from . import Interrupted

        raise Interrupted()
    if res.verdict == FAILED:
        return 1
    if opts["fail_on"] == "slower" and res.verdict == "slower":
        return 1
    if opts["fail_on"] == "change" and res.verdict in ("faster", "slower"):
        return 1
    return 0


def _profile_pair(va: Any, vb: Any, res: Any, opts: dict[str, Any]) -> Any:
    """``ab --profile``: after the rounds (never during them), one profiled execution of A and
    of B, each scaled to its median unprofiled time; stored in the result's ``profiles``."""
    from ..ab.report import medians
    from ..profiles.pair import profile_variants
    from .profile import settings_for

    if res.interim:
        return None
    settings = settings_for(opts, getattr(va, "argv", None))
    if not opts["quiet"]:
        click.echo(f"profiling A and B once each ({settings.mode}), outside the measured "
                   "rounds", err=True)
    try:
        pair = profile_variants(va, vb, settings, opts["time_limit"], medians(res))
    except KeyboardInterrupt:  # the rounds are complete: they are written, then exit 130
        click.echo("profile interrupted: not taken; the comparison is written", err=True)
        opts["profile_interrupted"] = True
        return None
    res.profiles = pair.to_dict()
    return pair


def _profile_files(opts: dict[str, Any], pair: Any) -> list[str]:
    from .profile import write_out

    return write_out(opts, dict(pair.profiles))


def _ab_counts(va: Any, vb: Any, opts: dict[str, Any]) -> int:
    """``ab --measure instructions|cycles``: A and B each counted once (their count is the same
    in every round, so rounds would add nothing), then the verdict on counts in words
    (:mod:`steadybench.counts.verdict`) and the ``--fail-on`` gate."""
    import json

    from ..counts.backend import NOT_TIME
    from ..counts.valgrind import find_valgrind
    from ..counts.variants import count_failure, count_variant
    from ..counts.verdict import check_identities, judge, side_of
    from ..fileio import atomic_write_text
    from .measure import count_settings

    valgrind = find_valgrind()
    settings = count_settings(opts, "layouts")
    cases = [count_variant(variant, settings, valgrind) for variant in (va, vb)]
    failed = [(c, why) for c in cases if (why := count_failure(c)) is not None]
    for case, why in failed:
        click.echo(f"error: {case.label}: {why}", err=True)
    if failed:
        return 1
    a_case, b_case = cases
    verdict = judge(f"{va.description} vs {vb.description}" if opts["quiet"] else "B vs A",
                    settings.measure, side_of(a_case.estimate), side_of(b_case.estimate),
                    VerdictOptions.from_params(opts).threshold)
    warnings = check_identities(a_case.extra.get("counts", {}).get("identity"),
                                b_case.extra.get("counts", {}).get("identity"), "A and B")
    if opts["json_path"]:
        doc = {"kind": "steadybench-ab-counts", "verdict": verdict.to_dict(),
               "A": a_case.to_dict(), "B": b_case.to_dict(), "warnings": warnings,
               "note": NOT_TIME}
        text = json.dumps(doc, indent=1, default=str) + "\n"
        if opts["json_path"] == "-":
            sys.stdout.write(text)
        else:
            atomic_write_text(opts["json_path"], text)
    if opts["json_path"] != "-":
        if not opts["quiet"]:
            click.echo(f"A {va.description}: {a_case.estimate.value:,.1f} {settings.measure} "
                       f"per {a_case.estimate.fields.get('per', 'call')}")
            click.echo(f"B {vb.description}: {b_case.estimate.value:,.1f} {settings.measure} "
                       f"per {b_case.estimate.fields.get('per', 'call')}")
        click.echo(verdict.sentence)
        for w in warnings:
            click.echo(f"warning: {w}", err=True)
        click.echo(f"note: {NOT_TIME}")
    if opts["fail_on"] == "slower" and verdict.verdict == "slower":
        return 1
    if opts["fail_on"] == "change" and verdict.verdict in ("faster", "slower"):
        return 1
    return 0


commands = [ab_cmd]
