"""Find the first commit that made a benchmark slower: a binary search over a commit range
whose every step is a live A/B verdict at a stated confidence.

Each step measures a candidate commit against the known-good revision with ``ab``'s sequential
protocol (:class:`~steadybench.ab.session.ABSession`: rounds of fresh executions in random order,
stopped at the first decided look), each revision checked out in its own worktree
(:mod:`steadybench.ab.worktrees`). A candidate is **bad** when it is slower than the good
revision at the step's confidence (and beyond the threshold), **good** otherwise, and
**skipped** when its build fails (``git bisect``'s status 125).

The search first confirms that the bad end is slower than the good one (else "no regression
between …"), then halves the range: at most ⌈log₂ n⌉ + 1 steps for n commits. The overall
confidence is kept by Bonferroni's inequality: each step runs at 1 − α/k with k that bound, so
the chance that any step calls an unchanged commit slower is at most α (more steps, after
skipped commits, are counted in the confidence reported). On counts (``--measure
instructions|cycles``, :class:`steadybench.ab.bisect_run.CountSteps`) a step is exact: no
confidence level and no Bonferroni apply, and the decision is the threshold. The
assumptions, stated: the commits of the range are ordered (``git rev-list
--ancestry-path``, oldest first; a merge's side branch is searched in that order), and the
slowdown, once introduced, stays.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

BAD = "bad"
GOOD = "good"
SKIP = "skip"


@dataclass(frozen=True)
class Commit:
    """A commit of the range: its hash and its subject line."""

    sha: str
    subject: str = ""

    @property
    def short(self) -> str:
        return self.sha[:10]


@dataclass(frozen=True)
class Step:
    """One measured candidate: its verdict against the good revision."""

    commit: Commit
    #: position of the commit in the range (1 = the first commit after the good revision)
    position: int
    verdict: str
    #: time(candidate) / time(good) − 1, with its interval at the step's confidence
    change: float | None = None
    low: float | None = None
    high: float | None = None
    rounds: int = 0
    #: the A/B verdict in words, or why the commit was skipped
    reason: str = ""
    #: False when the budget ended the step before a verdict at its confidence: the verdict
    #: is then the side the estimate lies on
    decided: bool = True
    #: on counts (``--measure instructions|cycles``): the exact difference against the good
    #: revision, e.g. "+495,504 instructions per call" (no interval: a count has no noise)
    exact: str = ""


@dataclass(frozen=True)
class BisectResult:
    """The path taken and the answer: ``first_bad`` (None when no regression was found, or when
    skipped commits leave several candidates, listed in ``candidates``)."""

    good: Commit
    bad: Commit
    commits: int
    steps: tuple[Step, ...]
    step_confidence: float
    first_bad: Commit | None
    candidates: tuple[Commit, ...] = ()
    #: the step that measured ``first_bad`` against the good revision
    evidence: Step | None = None

    @property
    def overall_confidence(self) -> float:
        """Bonferroni over the steps taken: 1 − steps · α_step."""
        measured = sum(1 for s in self.steps if s.verdict != SKIP)
        return max(0.0, 1.0 - measured * (1.0 - self.step_confidence))

    @property
    def found(self) -> bool:
        return self.first_bad is not None


def max_steps(commits: int) -> int:
    """The most steps a range of ``commits`` commits (the bad end included) takes without
    skips: the bad end's confirmation and ⌈log₂ n⌉ halvings."""
    return math.ceil(math.log2(commits)) + 1 if commits > 1 else 1


def step_confidence(confidence: float, steps: int) -> float:
    """Bonferroni: each of ``steps`` verdicts at 1 − α/steps keeps the family at 1 − α."""
    return 1.0 - (1.0 - confidence) / max(1, steps)


Measure = Callable[[Commit, int], Step]


def bisect(good: Commit, commits: Sequence[Commit], measure: Measure, confidence: float,
           on_step: Callable[[Step], None] | None = None) -> BisectResult:
    """Search ``commits`` (oldest first, the bad end last) for the first bad one.

    ``measure(commit, position)`` runs one step and returns its :class:`Step`;
    ``confidence`` is the per-step level (:func:`step_confidence`).
    """
    if not commits:
        raise ValueError("an empty range")
    steps: list[Step] = []

    def run(index: int) -> Step:
        step = measure(commits[index], index + 1)
        steps.append(step)
        if on_step is not None:
            on_step(step)
        return step

    def result(first: int | None, candidates: Sequence[int] = ()) -> BisectResult:
        evidence = next((s for s in steps if first is not None
                         and s.commit == commits[first] and s.verdict == BAD), None)
        return BisectResult(good, commits[-1], len(commits), tuple(steps), confidence,
                            commits[first] if first is not None else None,
                            tuple(commits[i] for i in candidates), evidence)

    last = run(len(commits) - 1)
    if last.verdict != BAD:
        return result(None)
    low, high = -1, len(commits) - 1     # low: known good (-1, the good revision); high: bad
    skipped: set[int] = set()
    while high - low > 1:
        untested = [i for i in range(low + 1, high) if i not in skipped]
        if not untested:
            break
        middle = (low + high) // 2
        index = min(untested, key=lambda i: (abs(i - middle), i))
        verdict = run(index).verdict
        if verdict == BAD:
            high = index
        elif verdict == GOOD:
            low = index
        else:
            skipped.add(index)
    if high - low > 1:  # skipped commits between the last good and the first bad
        return result(None, [i for i in range(low + 1, high + 1)])
    return result(high)
