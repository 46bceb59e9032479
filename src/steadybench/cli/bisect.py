"""``steadybench bisect``: find the commit that made a benchmark slower (docs/bisect.md)."""

from __future__ import annotations

import json
import sys
from typing import Any

import click

from ..defaults import AB_EXECUTION_TIME, AB_LAYOUT, LAYOUTS
from ..errors import ConfigurationError
from .measure import TIME_ONLY, counting, measure_option, refuse_with_counts
from .options import VerdictOptions, confidence_option, json_option, seed_option, threshold_option

#: a step's budget: more time than ab's 8.5 s, since each step decides at 1 − α/k; ab's 60
#: rounds, whose planned looks (13, 22, 36, 60 rounds at 99.3 %) come early enough that a clear
#: difference ends a step before its time is spent
BISECT_MAX_TIME = 20.0
BISECT_MAX_ROUNDS = 60
#: ``git bisect run``'s exit statuses
EXIT_GOOD, EXIT_BAD, EXIT_SKIP = 0, 1, 125


def _percent(value: float | None) -> str:
    return "?" if value is None else f"{value:+.1%}"


def step_line(step: Any, total: int, number: int, bound: int) -> str:
    """One step of the path: the candidate, its verdict and the change measured."""
    head = (f"step {number}/≤{bound}: {step.commit.short} [{step.position}/{total}] "
            f"{step.commit.subject[:50]!r}: {step.verdict}")
    if step.verdict == "skip":
        return f"{head} — {step.reason}"
    if step.exact:  # a count: exact, no interval, no rounds
        return f"{head} — {_percent(step.change)} (exact: {step.exact}), {step.reason}"
    return (f"{head} — {_percent(step.change)} [{_percent(step.low)}, {_percent(step.high)}], "
            f"{step.reason}, {step.rounds} rounds")


def _settings(opts: dict[str, Any], confidence: float, threshold: float) -> Any:
    from ..ab.session import ABSettings

    settings = ABSettings(confidence=confidence, threshold=threshold,
                          max_rounds=opts["max_rounds"], min_rounds=opts["min_rounds"],
                          max_time=opts["max_time"] or None, seed=opts["seed"])
    settings.check()
    return settings


def _threshold(opts: dict[str, Any], label: str, root: str) -> float:
    """--threshold, else the project's percentage for this benchmark (steadybench.toml)."""
    from ..history.thresholds import PERCENT, load_thresholds

    verdict = VerdictOptions.from_params(opts)
    if verdict.count_threshold is not None:
        raise ConfigurationError("--threshold in counts needs --measure instructions|cycles; "
                                 "on time give a percentage, e.g. 2%")
    if verdict.threshold_given:
        return verdict.threshold
    rule = load_thresholds(cwd=root).for_label(label)
    if rule.kind != PERCENT:
        click.echo(f"note: the threshold of {label} is in counts ({rule.text()}); bisect "
                   "measures time and uses 0%", err=True)
        return 0.0
    return rule.value


def _count_decision(opts: dict[str, Any], label: str, root: str) -> Any:
    """The count settings and the threshold of a search on counts: ``--threshold`` (a
    percentage, or counts per call: "1000 counts"), else the benchmark's rule in
    steadybench.toml, else that file's default (:data:`~steadybench.history.thresholds.
    DEFAULT_THRESHOLD` without one)."""
    from ..ab.bisect_run import CountDecision
    from ..history.thresholds import load_thresholds
    from .measure import count_settings

    refuse_with_counts(opts, TIME_ONLY["bisect"])
    settings = count_settings({**opts, "confidence": 0.95}, "layouts")  # of the fit's interval
    if opts["calls"] is not None:
        from dataclasses import replace

        settings = replace(settings, calls=opts["calls"])
    verdict = VerdictOptions.from_params(opts)
    if verdict.threshold_given:
        from ..history.thresholds import PERCENT, Threshold

        # counts per call ("5000 counts", as in steadybench.toml), or a fraction as for time
        rule = verdict.count_threshold or Threshold(PERCENT, verdict.threshold, "--threshold")
        return CountDecision(settings, rule, "--threshold")
    thresholds = load_thresholds(cwd=root)
    rule = thresholds.for_label(label)
    where = f"steadybench.toml: {rule.source}" if thresholds.path else "the default"
    return CountDecision(settings, rule, where)


@click.command("bisect")
@click.argument("target", metavar="FILE[::NAME]")
@click.option("--good", default=None, help="A revision without the slowdown.")
@click.option("--bad", default=None, help="A revision with it (default: HEAD).")
@click.option("--range", "range_", metavar="GOOD..BAD", default=None,
              help="The range as history regressions prints a change point "
                   "(82dff01d1e..5759aee567), instead of --good/--bad.")
@click.option("--from-history", is_flag=True,
              help="The newest slowdown history regressions finds for this benchmark (in "
                   "--history-url's store), searched over the records it was tested on, "
                   "instead of --good/--bad.")
@click.option("--build", default=None,
              help="Shell command run in each revision's worktree before measuring; a failure "
                   "skips the commit (git bisect's 125).")
@click.option("--step", "step_mode", is_flag=True,
              help="git bisect run mode: measure HEAD against --good once and exit 0 (good), "
                   "1 (slower) or 125 (build failed): git bisect run steadybench bisect --step "
                   "--good REV FILE::NAME.")
@click.option("--steps", type=click.IntRange(min=1), default=None,
              help="With --step: the number of steps the confidence is shared over (default: "
                   "⌈log₂ n⌉ + 1 for the n commits of git bisect's range).")
@confidence_option("Each step runs at 1 − (1 − confidence)/steps.", of="the whole search")
@threshold_option("A candidate is bad when slower beyond this (0.02 or 2%; on counts also "
                  "'5000 counts' per call); default: the benchmark's threshold in "
                  "steadybench.toml, else 2%.", counts=True)
@click.option("--max-rounds", type=click.IntRange(min=2), default=BISECT_MAX_ROUNDS,
              show_default=True, help="Budget of each step: rounds.")
@click.option("--max-time", type=float, default=BISECT_MAX_TIME, show_default=True,
              help="Budget of each step: seconds of rounds (0: rounds only).")
@click.option("--min-rounds", type=click.IntRange(min=2), default=None,
              help="Rounds before a step's first look.")
@click.option("--execution-time", type=float, default=AB_EXECUTION_TIME, show_default=True,
              help="Seconds of sampling in each execution.")
@click.option("--warmup", type=click.IntRange(min=0), default=1, show_default=True,
              help="Warm-up samples in each execution.")
@click.option("--time-limit", type=float, default=120.0, show_default=True,
              help="Hard limit in seconds for one execution.")
@click.option("--layout", type=click.Choice(LAYOUTS), default=AB_LAYOUT, show_default=True,
              help="Hidden factors of the executions (as ab --layout).")
@click.option("--python", default=None,
              help="Interpreter of the workers (a path, or relative to each worktree).")
@click.option("--clock", type=click.Choice(["perf_counter", "thread_time", "process_time"]),
              default="perf_counter", show_default=True,
              help="Clock of the samples: thread_time counts only the benchmark's own CPU "
                   "time, so other processes on a busy machine add no noise (for CPU-bound "
                   "code; it leaves out waiting for I/O).")
@seed_option("the random order of rounds")
@click.option("--history-url", "history_url", metavar="URL", envvar="STEADYBENCH_HISTORY_URL",
              default=None, help="History store the steps are recorded in (default: "
                                 ".steadybench/history.sqlite of the repository).")
@click.option("--no-history", is_flag=True, help="Do not record the steps.")
@json_option("the path and the answer")
@measure_option
@click.option("--calls", type=click.IntRange(min=1), default=None,
              help="With --measure instructions|cycles: calls of the smallest counted point "
                   "(points at 1, 2, 3 × N; default: sized from counts of 0 and 1 call, one "
                   "or two more processes under valgrind per revision).")
def bisect_cmd(target: str, **opts: Any) -> int:
    """Find the first commit between a good and a bad revision that made FILE[::NAME] slower.

    Each step measures a candidate against the good revision with ab's sequential protocol;
    the confidence is shared over the at most ⌈log₂ n⌉ + 1 steps (Bonferroni). Exit status: 1
    when a first slower commit is named, 0 when there is no regression (with --step: 0 good,
    1 slower, 125 skipped). Records each step in the history. With --measure instructions or
    cycles each step is exact (counted under valgrind, no rounds, no confidence level) and the
    decision is the threshold.
    """
    from ..ab.bisect import max_steps, step_confidence
    from ..ab.bisect_run import BisectTarget, parse_range, resolve
    from ..ab.worktrees import repository_relative, repository_root
    from .ab import _split_target

    for name in ("execution_time", "time_limit"):
        if not 0 < opts[name] < float("inf"):
            raise ConfigurationError(f"--{name.replace('_', '-')} must be positive")
    if opts["max_time"] < 0:
        raise ConfigurationError("--max-time must be positive (0: rounds only)")
    overall = VerdictOptions.from_params(opts).level
    if opts["range_"]:
        if opts["good"] or opts["bad"]:
            raise ConfigurationError("give --range or --good/--bad, not both")
        opts["good"], opts["bad"] = parse_range(opts["range_"])
    if opts["from_history"] and (opts["good"] or opts["bad"]):
        raise ConfigurationError("give --from-history, --range or --good/--bad, one of them")
    if not opts["good"] and not opts["from_history"]:
        raise ConfigurationError("give --good REV (a revision without the slowdown), --range "
                                 "or --from-history")
    root = repository_root()
    path, selector = _split_target(target)
    bisect_target = BisectTarget(
        root, repository_relative(path, root), selector, opts["build"], opts["python"],
        {"execution_time": opts["execution_time"], "warmup": opts["warmup"],
         "time_limit": opts["time_limit"], "layout": opts["layout"], "clock": opts["clock"]})
    if opts["from_history"]:
        from ..ab.bisect_run import range_from_history
        from ..history.store import HistoryStore

        with HistoryStore.open(opts["history_url"], cwd=root) as store:
            opts["good"], opts["bad"], change = range_from_history(store, bisect_target.label)
        click.echo(f"history: {change.label} on {change.machine}: {change.magnitude:+.1%} in "
                   f"{change.commit_range}; searched from {opts['good'][:10]} to "
                   f"{opts['bad'][:10]}, the {change.n_before} + {change.n_after} records it "
                   "was tested on (a change point's place moves with the noise)")
    good = resolve(opts["good"], root)
    if counting(opts):
        return _on_counts(bisect_target, good, opts, root)
    if opts["calls"] is not None:
        raise ConfigurationError("--calls applies with --measure instructions|cycles")
    threshold = _threshold(opts, bisect_target.label, root)
    if opts["step_mode"]:
        steps = opts["steps"] or _git_bisect_steps(good, root)
        settings = _settings(opts, step_confidence(overall, steps), threshold)
        return _one_step(bisect_target, good, resolve("HEAD", root), settings, opts)
    from ..ab.bisect_run import commit_range

    bad = resolve(opts["bad"] or "HEAD", root)
    commits = commit_range(good, bad, root)
    bound = max_steps(len(commits))
    settings = _settings(opts, step_confidence(overall, bound), threshold)
    click.echo(f"bisect: {len(commits)} commits after {good.short} (good) up to {bad.short} "
               f"(bad); at most {bound} steps, each at {settings.confidence:.4%} "
               f"({overall:.0%} overall, Bonferroni)")
    return _search(bisect_target, good, commits, settings, overall, bound, opts)


def _on_counts(target: Any, good: Any, opts: dict[str, Any], root: str) -> int:
    """``bisect --measure instructions|cycles``: every step exact (:class:`~steadybench.ab.
    bisect_run.CountSteps`); the same path, answer, exit statuses and history as on time."""
    from ..ab.bisect import max_steps
    from ..ab.bisect_run import CountSteps, commit_range, resolve
    from ..counts.valgrind import find_valgrind

    decision = _count_decision(opts, target.label, root)
    valgrind = find_valgrind()  # before any worktree or history: missing → one line, exit 2
    store = None
    try:
        if opts["step_mode"]:
            head = resolve("HEAD", root)
            store = _history(opts, root)
            with CountSteps(target, good, decision, store, _announce(good), valgrind) as live:
                step = live(head, 1)
            click.echo(step_line(step, 1, 1, 1).replace("step 1/≤1: ", "bisect step: "))
            click.echo(f"note: {_not_time()}")
            if opts["json_path"]:
                _write_json(opts["json_path"], {"kind": "steadybench-bisect-step",
                                                "good": good.sha, "step": _step_dict(step),
                                                **_count_fields(decision)})
            return {"bad": EXIT_BAD, "skip": EXIT_SKIP}.get(step.verdict, EXIT_GOOD)
        bad = resolve(opts["bad"] or "HEAD", root)
        commits = commit_range(good, bad, root)
        bound = max_steps(len(commits))
        click.echo(f"bisect: {len(commits)} commits after {good.short} (good) up to "
                   f"{bad.short} (bad); at most {bound} steps, each counting "
                   f"{decision.settings.measure} under valgrind: exact, so no confidence level "
                   f"and no Bonferroni; a candidate is bad when it executes "
                   f"{decision.text()}")
        store = _history(opts, root)
        live = CountSteps(target, good, decision, store, _announce(good), valgrind)
        return _run_search(live, good, commits, 1.0, bound, opts, decision)
    finally:
        if store is not None:
            store.close()


def _not_time() -> str:
    """Said once wherever a verdict on counts is printed."""
    from ..counts.backend import NOT_TIME

    return NOT_TIME


def _count_fields(decision: Any) -> dict[str, Any]:
    """What the JSON adds on counts: the measure, the threshold and where it comes from."""
    return {"measure": decision.settings.measure, "exact": True,
            "threshold": {"kind": decision.threshold.kind, "value": decision.threshold.value,
                          "source": decision.source},
            "note": _not_time()}


def _git_bisect_steps(good: Any, root: str) -> int:
    """Steps of the search git bisect is running: ⌈log₂ n⌉ + 1 for its range (refs/bisect/bad
    to the good revision), or 1 outside a git bisect."""
    from ..ab.bisect import max_steps
    from ..ab.bisect_run import commit_range, resolve

    try:
        bad = resolve("refs/bisect/bad", root)
        return max_steps(len(commit_range(good, bad, root)))
    except ConfigurationError:
        return 1


def _history(opts: dict[str, Any], root: str) -> Any:
    if opts["no_history"]:
        return None
    from ..history.store import HistoryStore

    return HistoryStore.open(opts["history_url"], cwd=root)


def _announce(good: Any) -> Any:
    def say(commit: Any) -> None:
        click.echo(f"  measuring {commit.short} against {good.short}…", err=True)
    return say


def _one_step(target: Any, good: Any, head: Any, settings: Any, opts: dict[str, Any]) -> int:
    from ..ab.bisect import BAD, SKIP
    from ..ab.bisect_run import LiveSteps

    store = _history(opts, target.root)
    try:
        with LiveSteps(target, good, settings, store, announce=_announce(good),
                       first_budget=1) as live:
            step = live(head, 1)
    finally:
        if store is not None:
            store.close()
    click.echo(step_line(step, 1, 1, 1).replace("step 1/≤1: ", "bisect step: "))
    if opts["json_path"]:
        _write_json(opts["json_path"], {"kind": "steadybench-bisect-step",
                                        "good": good.sha, "step": _step_dict(step),
                                        "step_confidence": settings.confidence})
    return {BAD: EXIT_BAD, SKIP: EXIT_SKIP}.get(step.verdict, EXIT_GOOD)


def _search(target: Any, good: Any, commits: list[Any], settings: Any, overall: float,
            bound: int, opts: dict[str, Any]) -> int:
    from ..ab.bisect_run import LiveSteps

    store = _history(opts, target.root)
    try:
        live = LiveSteps(target, good, settings, store, announce=_announce(good))
        return _run_search(live, good, commits, overall, bound, opts)
    finally:
        if store is not None:
            store.close()


def _run_search(live: Any, good: Any, commits: list[Any], overall: float, bound: int,
                opts: dict[str, Any], decision: Any = None) -> int:
    """The search with ``live``'s steps (time or counts), its path printed as it goes, then
    the answer, the JSON and the exit status."""
    from ..ab.bisect import bisect

    taken: list[Any] = []

    def shown(step: Any) -> None:
        taken.append(step)
        click.echo(step_line(step, len(commits), len(taken), bound))

    level = 1.0 if decision is not None else live.settings.confidence
    try:
        with live:
            result = bisect(good, commits, live, level, on_step=shown)
    except KeyboardInterrupt:
        from . import Interrupted

        click.echo(f"bisect: interrupted after {len(taken)} step(s); the repository and its "
                   "worktrees are as they were", err=True)
        raise Interrupted() from None
    for line in answer_lines(result, overall, decision):
        click.echo(line)
    if opts["json_path"]:
        _write_json(opts["json_path"], to_document(result, overall, decision))
    return EXIT_BAD if result.found else EXIT_GOOD


def answer_lines(result: Any, overall: float, decision: Any = None) -> list[str]:
    """The end of the output: the commit, its message, the change and the confidence (on
    counts, ``decision`` given: the exact difference and the threshold, then once that counts
    are not time)."""
    if decision is not None:
        return _count_answer(result, decision)
    measured = sum(1 for s in result.steps if s.verdict != "skip")
    confidence = (f"{result.overall_confidence:.1%} overall ({measured} steps at "
                  f"{result.step_confidence:.4%} each, Bonferroni)")
    undecided = [s for s in result.steps if s.verdict != "skip" and not s.decided]
    caveat = ([f"  note: {len(undecided)} step(s) ended undecided at their budget and were "
               "judged by their estimate (the confidence holds for the decided ones; raise "
               "--max-time)"] if undecided else [])
    if result.first_bad is not None:
        ev = result.evidence
        return [f"first slower commit: {result.first_bad.sha}",
                f"  message: {result.first_bad.subject}",
                f"  change: {_percent(ev.change)} [{_percent(ev.low)}, {_percent(ev.high)}] "
                f"against {result.good.short}" if ev else "  change: —",
                f"  confidence: {confidence}", *caveat]
    if result.candidates:
        return ["the first slower commit is one of (the others were skipped): "
                + ", ".join(c.short for c in result.candidates), f"  confidence: {confidence}",
                *caveat]
    last = result.steps[-1] if result.steps else None
    measured_text = (f": {result.bad.short} measured {_percent(last.change)} "
                     f"[{_percent(last.low)}, {_percent(last.high)}]") if last else ""
    return [f"no regression between {result.good.short} and {result.bad.short}{measured_text}, "
            f"at {result.step_confidence:.4%}"]


def _count_answer(result: Any, decision: Any) -> list[str]:
    """The answer of a search on counts."""
    rule = (f"  decision: counts are exact (no confidence level, no Bonferroni); bad = "
            f"{decision.text()}")
    note = f"note: {_not_time()}"
    if result.first_bad is not None:
        ev = result.evidence
        return [f"first commit with more {decision.settings.measure}: {result.first_bad.sha}",
                f"  message: {result.first_bad.subject}",
                f"  change: {_percent(ev.change)} (exact: {ev.exact}) against "
                f"{result.good.short}" if ev else "  change: —", rule, note]
    if result.candidates:
        return ["the first commit with more counts is one of (the others were skipped): "
                + ", ".join(c.short for c in result.candidates), rule, note]
    last = result.steps[-1] if result.steps else None
    measured = (f": {result.bad.short} counted {_percent(last.change)} (exact: {last.exact})"
                if last is not None and last.exact else
                f": {result.bad.short} {last.reason}" if last is not None else "")
    return [f"no regression between {result.good.short} and {result.bad.short}{measured}",
            rule, note]


def _step_dict(step: Any) -> dict[str, Any]:
    return {"commit": step.commit.sha, "subject": step.commit.subject,
            "position": step.position, "verdict": step.verdict, "decided": step.decided,
            "change": step.change,
            "low": step.low, "high": step.high, "rounds": step.rounds, "reason": step.reason,
            **({"exact": step.exact} if step.exact else {})}


def to_document(result: Any, overall: float, decision: Any = None) -> dict[str, Any]:
    """The path and the answer as JSON; on counts (``decision`` given) the confidences are
    null (the steps are exact) and the measure and threshold are added."""
    doc = _document(result, overall)
    if decision is not None:
        doc.update(_count_fields(decision), requested_confidence=None, step_confidence=None,
                   overall_confidence=None)
    return doc


def _document(result: Any, overall: float) -> dict[str, Any]:
    return {"kind": "steadybench-bisect", "good": result.good.sha, "bad": result.bad.sha,
            "commits": result.commits, "requested_confidence": overall,
            "step_confidence": result.step_confidence,
            "overall_confidence": result.overall_confidence,
            "steps": [_step_dict(s) for s in result.steps],
            "undecided_steps": sum(1 for s in result.steps
                                   if s.verdict != "skip" and not s.decided),
            "first_bad": result.first_bad.sha if result.first_bad else None,
            "first_bad_subject": result.first_bad.subject if result.first_bad else None,
            "candidates": [c.sha for c in result.candidates]}


def _write_json(path: str, doc: dict[str, Any]) -> None:
    from ..fileio import atomic_write_text

    text = json.dumps(doc, indent=1) + "\n"
    if path == "-":
        sys.stdout.write(text)
    else:
        atomic_write_text(path, text)


commands = [bisect_cmd]
