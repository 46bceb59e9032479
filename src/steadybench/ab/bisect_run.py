"""The live steps of ``steadybench bisect``: the commit range from git, each candidate checked out
and built in its own worktree, measured against the good revision with ``ab``'s protocol, and
recorded in the history.

The good revision is checked out and built once, in a worktree kept for the whole search; each
candidate gets a worktree of its own, removed after its step. The user's checkout, index and
branches are never touched, and every worktree is removed on every exit path (Ctrl-C included:
:func:`steadybench.ab.worktrees.worktrees`).
"""

from __future__ import annotations

import contextlib
import json
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from ..errors import ConfigurationError
from .bisect import BAD, GOOD, SKIP, Commit, Step
from .session import FAILED, ABResult, ABSession, ABSettings

_T = TypeVar("_T")


@dataclass(frozen=True)
class BisectTarget:
    """What is measured: a case of a benchmark file, where it lives in the repository, and how
    each revision is prepared."""

    root: str
    #: the file, relative to the repository's top level
    relative: str
    selector: str | None
    build: str | None = None
    python: str | None = None
    #: :class:`~steadybench.ab.variants.PythonVariant` options (execution time, warm-up...)
    options: dict[str, Any] = field(default_factory=dict)

    @property
    def label(self) -> str:
        """The name the steps are recorded under in the history: the case's name, or the file
        when it holds one case."""
        return self.selector or self.relative


def _git(args: list[str], root: str) -> str:
    proc = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, check=False)
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["failed"])[-1]
        raise ConfigurationError(f"git {' '.join(args)}: {last}")
    return proc.stdout


def resolve(rev: str, root: str) -> Commit:
    """The commit a revision names, with its subject line."""
    if not rev or rev.startswith("-"):
        raise ConfigurationError(f"not a git revision: {rev!r}")
    sha = _git(["rev-parse", "--verify", "-q", f"{rev}^{{commit}}"], root).strip()
    return Commit(sha, _git(["show", "-s", "--format=%s", sha], root).strip())


def commit_range(good: Commit, bad: Commit, root: str) -> list[Commit]:
    """The commits after ``good`` up to ``bad`` (included), oldest first, on the ancestry path
    between them; one clear line when ``good`` is not an ancestor of ``bad``."""
    check = subprocess.run(["git", "merge-base", "--is-ancestor", good.sha, bad.sha], cwd=root,
                           capture_output=True, check=False)
    if check.returncode != 0:
        raise ConfigurationError(f"the good revision {good.short} is not an ancestor of the bad "
                                 f"revision {bad.short}")
    out = _git(["log", "--reverse", "--ancestry-path", "--format=%H%x00%s",
                f"{good.sha}..{bad.sha}"], root)
    commits = []
    for line in out.splitlines():
        sha, _, subject = line.partition("\0")
        if sha:
            commits.append(Commit(sha, subject))
    if not commits:
        raise ConfigurationError(f"no commits between {good.short} and {bad.short}")
    return commits


def parse_range(text: str) -> tuple[str, str]:
    """``BEFORE..AFTER`` as ``history regressions`` prints a change's commit range."""
    before, sep, after = text.partition("..")
    if not sep or not before or not after or after.startswith("."):
        raise ConfigurationError(f"--range {text!r}: expected GOOD..BAD (as history regressions "
                                 "prints a change point, e.g. 82dff01d1e..5759aee567)")
    return before, after


def range_from_history(store: Any, label: str, machine: str | None = None,
                       confidence: float = 0.95) -> tuple[str, str, Any]:
    """The newest slowdown of ``label`` that ``history regressions`` finds in ``store`` (on any
    machine, or on ``machine``), the range to search for it ``(good, bad)``, and the change.

    The range is the records the change was tested on: from the first record of its window
    before to the last of its window after (up to :data:`~steadybench.history.regressions.
    WINDOW` records each side). A change point's place moves by a record or two with the noise
    (one slow record just before the real change draws it one commit early), while the windows'
    levels are what the test found different; the search costs a step or two more for it."""
    from ..history.finders import regressions
    from ..history.regressions import SLOWER

    found = [c for analysis in regressions(store, [label], machine, confidence=confidence)
             for c in analysis.changes if c.direction == SLOWER]
    usable = [c for c in found if c.before_commit and c.after_commit]
    if not usable:
        raise ConfigurationError(f"history {store.where}: no slowdown of {label!r} at "
                                 f"{confidence:.0%} confidence" + (" with commits" if found
                                                                   else ""))
    newest = max(usable, key=lambda c: c.after_record)
    points = [p for p in store.series(label, machine=newest.machine) if p.commit]
    ids = [p.record_id for p in points]
    if newest.after_record not in ids:
        return newest.before_commit, newest.after_commit, newest
    at = ids.index(newest.after_record)
    good = points[max(0, at - newest.n_before)].commit
    bad = points[min(len(points) - 1, at + newest.n_after - 1)].commit
    return good or newest.before_commit, bad or newest.after_commit, newest


def change_of(res: ABResult) -> tuple[float | None, float | None, float | None]:
    """time(candidate)/time(good) − 1 with its interval (the look's ratio is A/B)."""
    look = res.look
    if look is None or not look.estimate:
        return None, None, None
    low = 1.0 / look.high - 1.0 if look.high else None
    high = 1.0 / look.low - 1.0 if look.low else None
    return 1.0 / look.estimate - 1.0, low, high


def judge(commit: Commit, position: int, verdict: str, change: float | None,
          low: float | None, high: float | None, rounds: int, why: str,
          threshold: float) -> Step:
    """A step's verdict from the A/B verdict: slower is bad; faster or unchanged within the
    threshold is good; undecided at the budget is judged by the estimate against the threshold
    (the nearer side) and says so."""
    if verdict == "slower":
        return Step(commit, position, BAD, change, low, high, rounds, f"slower ({why})")
    if verdict in ("faster", "equivalent"):
        words = "faster" if verdict == "faster" else f"unchanged within ±{threshold:.1%}"
        return Step(commit, position, GOOD, change, low, high, rounds, f"{words} ({why})")
    if threshold > 0 and change is not None and change >= threshold:
        return Step(commit, position, BAD, change, low, high, rounds,
                    f"undecided ({why}): the estimate is above the midpoint "
                    f"{threshold:+.1%}", decided=False)
    where = (f"the estimate is below the midpoint {threshold:+.1%}" if threshold > 0
             else "not found slower")
    return Step(commit, position, GOOD, change, low, high, rounds, f"undecided ({why}): {where}",
                decided=False)


#: the bad end's step gets this many times the budget of a step: it decides whether there is
#: anything to find, and a slowdown it misses ends the search with "no regression"
FIRST_BUDGET = 2


class LiveSteps:
    """Runs the steps of one search, keeping the good revision's worktree open meanwhile. Use
    as a context manager; calling it measures one candidate (:data:`steadybench.ab.bisect.
    Measure`)."""

    def __init__(self, target: BisectTarget, good: Commit, settings: ABSettings,
                 history: Any = None, progress: Any = None,
                 announce: Callable[[Commit], None] | None = None,
                 first_budget: int = FIRST_BUDGET) -> None:
        self.target = target
        self.first_budget = first_budget
        #: called when a candidate is checked out and built, as its measuring starts
        self.announce = announce
        self.good = good
        self.settings = settings
        #: an open :class:`~steadybench.history.store.HistoryStore`, or None
        self.history = history
        self.progress = progress
        self._stack = contextlib.ExitStack()
        self._good_tree: Any = None
        #: records added to the history, per step
        self.recorded: list[int] = []
        #: steps measured so far
        self.measured = 0
        #: the change of the first candidate found slower (the bad end): the midpoint of the
        #: later steps is half of it
        self.reference: float | None = None

    def __enter__(self) -> LiveSteps:
        from .worktrees import worktrees

        try:
            (self._good_tree,) = self._stack.enter_context(
                worktrees([self.good.sha], self.target.build, self.target.root))
        except BaseException:
            self._stack.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self._stack.close()

    def _variant(self, label: str, tree: Any) -> Any:
        from .variants import worktree_variant

        variant = worktree_variant(label, tree, self.target.relative, self.target.selector,
                                   self.target.python, **self.target.options)
        variant.check()
        return variant

    def _in_tree(self, commit: Commit, position: int,
                 measure: Callable[[Any], _T]) -> _T | Step:
        """``measure(candidate)`` with the variant B of ``commit``, inside its built worktree,
        once the commit is announced; a SKIP step when it does not build or its variant cannot
        be made (e.g. the file is not in that commit)."""
        from .worktrees import BuildFailed, worktrees

        try:
            with worktrees([commit.sha], self.target.build, self.target.root) as (tree,):
                try:
                    candidate = self._variant("B", tree)
                except ConfigurationError as exc:
                    return Step(commit, position, SKIP, reason=f"cannot be measured: {exc}")
                if self.announce is not None:
                    self.announce(commit)
                return measure(candidate)
        except BuildFailed as exc:
            return Step(commit, position, SKIP, reason=f"build failed: {exc.reason}")

    def settings_now(self) -> ABSettings:
        """The A/B settings of the next step. The first (the bad end) has ``first_budget``
        times the budget. After the bad end was found slower by Δ, a
        candidate is judged against the midpoint Δ/2 (or the threshold, when larger): "slower"
        beyond it is bad, "unchanged within ±Δ/2" (equivalence) is good, each at the step's
        confidence."""
        from dataclasses import replace

        if not self.measured and self.first_budget != 1:  # the bad end: anything to find?
            return replace(self.settings, max_rounds=self.settings.max_rounds * self.first_budget,
                           max_time=None if self.settings.max_time is None
                           else self.settings.max_time * self.first_budget)
        if self.reference is None or self.reference <= 0:
            return self.settings
        return replace(self.settings, threshold=max(self.settings.threshold,
                                                    self.reference / 2.0), equivalence=True)

    def __call__(self, commit: Commit, position: int) -> Step:
        settings = self.settings_now()
        res = self._in_tree(commit, position, lambda candidate: ABSession(
            self._variant("A", self._good_tree), candidate, settings,
            progress=self.progress).run())
        if isinstance(res, Step):
            return res
        if res.interim:
            raise KeyboardInterrupt
        if res.verdict == FAILED:
            if res.failures["A"]:  # the good revision itself: no step can be measured
                raise ConfigurationError(f"the good revision {self.good.short} failed: "
                                         f"{res.failures['A'][-1]}")
            return Step(commit, position, SKIP, reason=f"could not be measured: {res.reason}")
        self.measured += 1
        change, low, high = change_of(res)
        self._record(res, commit)
        step = judge(commit, position, res.verdict, change, low, high, len(res.paired),
                     res.reason, settings.threshold)
        if self.reference is None and step.verdict == BAD:
            self.reference = change
        return step

    def _record(self, res: ABResult, commit: Commit) -> None:
        """Both sides in the history, each at its own commit, under the benchmark's name."""
        if self.history is None:
            return
        from ..history.ab_record import results_from_ab
        from ..history.git import GitInfo
        from ..output.results_io import results_to_json

        for side, sha in (("A", self.good.sha), ("B", commit.sha)):
            data = json.loads(results_to_json(results_from_ab(
                res, "steadybench bisect", names={side: self.target.label})))
            if not data.get("benchmarks"):
                continue
            rec = self.history.add(data, name="bisect", command="steadybench bisect",
                                   git=GitInfo(commit=sha, dirty=False), cwd=self.target.root)
            self.recorded.append(int(rec.id))


@dataclass(frozen=True)
class CountDecision:
    """How a counted step decides (``bisect --measure instructions|cycles``): the count's
    settings, and the threshold a candidate's count must exceed the good revision's by to be
    bad: a fraction (``kind`` percent) or counts per call, with where it comes from."""

    settings: Any
    #: a :class:`~steadybench.history.thresholds.Threshold`
    threshold: Any
    #: "--threshold", "steadybench.toml" (with the rule) or "the default"
    source: str

    def fraction(self, base: float) -> float:
        """The threshold relative to the good revision's count ``base``."""
        from ..history.thresholds import COUNTS

        if self.threshold.kind == COUNTS:
            return self.threshold.value / base if base > 0 else 0.0
        return float(self.threshold.value)

    def text(self) -> str:
        """E.g. "more instructions than the good revision beyond +2% (--threshold)"."""
        from ..history.thresholds import COUNTS

        amount = (f"{self.threshold.value:,g} {self.settings.measure} per call"
                  if self.threshold.kind == COUNTS else f"{self.threshold.value:+.2%}")
        return (f"more {self.settings.measure} than the good revision beyond {amount} "
                f"({self.source})")


class CountSteps(LiveSteps):
    """The steps of a search on counts: the good revision is counted once (its count is the
    same at every step), each candidate once, both under valgrind with
    :func:`steadybench.counts.variants.count_variant` (what ``ab --measure`` does), and the
    candidate judged by :func:`steadybench.counts.verdict.judge`: bad when it executes more
    than the good revision beyond the threshold (and beyond the counts' layout spread and fit
    slack), good otherwise. Exact: no rounds, no confidence level. The good revision's count is
    recorded in the history once, each candidate's at its commit."""

    def __init__(self, target: BisectTarget, good: Commit, decision: CountDecision,
                 history: Any = None, announce: Callable[[Commit], None] | None = None,
                 valgrind: Any = None) -> None:
        from ..counts.valgrind import find_valgrind

        super().__init__(target, good, None, history, announce=announce, first_budget=1)
        self.decision = decision
        #: found before any worktree is made: without valgrind, one line and exit 2
        self.valgrind = valgrind or find_valgrind()
        #: the good revision's counted case, once counted
        self.good_case: Any = None

    def _count(self, variant: Any) -> Any:
        from ..counts.variants import count_variant

        return count_variant(variant, self.decision.settings, self.valgrind,
                             name=self.target.label)

    def good_count(self) -> Any:
        """The good revision's case, counted at the first step and kept."""
        if self.good_case is None:
            from ..counts.variants import count_failure

            case = self._count(self._variant("A", self._good_tree))
            why = count_failure(case)
            if why is not None:
                raise ConfigurationError(f"the good revision {self.good.short} could not be "
                                         f"counted: {why}")
            self.good_case = case
            self._record_case(case, self.good.sha)
        return self.good_case

    def __call__(self, commit: Commit, position: int) -> Step:
        from ..counts.variants import count_failure
        from ..counts.verdict import FEWER, MORE, check_identities, judge, side_of
        out = self._in_tree(commit, position,
                            lambda candidate: (self.good_count(), self._count(candidate)))
        if isinstance(out, Step):
            return out
        good, case = out
        why = count_failure(case)
        if why is not None:
            return Step(commit, position, SKIP, reason=f"could not be counted: {why}")
        self.measured += 1
        self._record_case(case, commit.sha)
        unit = self.decision.settings.measure
        base = side_of(good.estimate)
        verdict = judge(commit.short, unit, base, side_of(case.estimate),
                        self.decision.fraction(base.value))
        exact = (f"{verdict.difference:+,.0f}" if abs(verdict.difference) >= 10
                 else f"{verdict.difference:+,.2f}")
        bad = verdict.verdict == MORE
        reason = {MORE: f"more {unit} beyond {verdict.allowed:.2%}",
                  FEWER: f"fewer {unit} beyond {verdict.allowed:.2%}"}.get(
            verdict.verdict, f"the same {unit} within {verdict.allowed:.2%}")
        differs = check_identities((good.extra.get("counts") or {}).get("identity"),
                                   (case.extra.get("counts") or {}).get("identity"),
                                   "the good revision and the candidate")
        if differs:
            reason += "; " + "; ".join(differs)
        return Step(commit, position, BAD if bad else GOOD, verdict.change, None, None, 0,
                    reason, exact=f"{exact} {unit} per {base.per}")

    def _record_case(self, case: Any, sha: str) -> None:
        """One counted case in the history at its commit, under the benchmark's name."""
        if self.history is None:
            return
        from ..environment import capture_environment
        from ..history.git import GitInfo
        from ..model.results import Results
        from ..output.results_io import results_to_json

        results = Results(suite="bisect", cases=[case], environment=capture_environment(),
                          context={"command": "steadybench bisect",
                                   "measure": self.decision.settings.measure})
        rec = self.history.add(json.loads(results_to_json(results)), name="bisect",
                               command="steadybench bisect", git=GitInfo(commit=sha, dirty=False),
                               cwd=self.target.root)
        self.recorded.append(int(rec.id))
