"""The live A/B protocol: randomised multiple interleaved trials with a sequential verdict.

Each **round** executes A once and B once, each in a fresh process, in an order drawn at random
for that round (RMIT: Abedi & Brecht, "Conducting repeatable experiments in highly variable
cloud computing environments", ICPE 2017). A and B of one round see the same state of the
machine, so the paired value of the round, d = ln(time_A / time_B), cancels what drifts between
rounds (load, temperature, frequency); with ``duet`` A and B even run at the same time, pinned
to different cores (Bulej et al., "Duet benchmarking", ICPE 2020).

Under "A and B are the same", d is exactly symmetric about 0 (the order is randomised), so the
Wilcoxon signed-rank interval of the median of d is exact. The data are examined at a few
planned rounds (:class:`~steadybench.stats.sequential.SequentialPlan`); each look spends part of
α, so stopping at the first decided look never calls identical variants different more than
α of the time (repeated confidence intervals, Jennison & Turnbull). A stop by budget (rounds or
time) or by Ctrl-C makes a final look with the α left; after Ctrl-C the verdict is labelled
interim.
"""

from __future__ import annotations

import math
import os
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..defaults import AB_MAX_ROUNDS, AB_MAX_TIME
from ..errors import ConfigurationError
from .variants import Outcome, Variant

#: verdict when a variant cannot be measured
FAILED = "failed"
#: verdict when the comparison ended with fewer rounds than any verdict needs
INCONCLUSIVE = "inconclusive"
#: rounds before the first look, unless the budget is smaller (a large difference is then
#: decided after 12 rounds, a few seconds)
FIRST_LOOK = 12


@dataclass(frozen=True)
class ABSettings:
    """How an A/B comparison runs and decides (see ``docs/comparison.md``)."""

    confidence: float = 0.95
    #: practical threshold X (fraction): faster/slower need the interval of the ratio outside
    #: [1/(1+X), 1+X]
    threshold: float = 0.0
    #: conclude "unchanged within ±X" when the interval lies inside that band
    equivalence: bool = False
    max_rounds: int = AB_MAX_ROUNDS
    min_rounds: int | None = None
    #: seconds of rounds; the budget ends the comparison at the next round (None: rounds
    #: only). The default keeps a comparison of identical variants, which can only end at the
    #: budget, under about 10 s in all; a clear difference is decided at an earlier look
    max_time: float | None = AB_MAX_TIME
    duet: bool = False
    seed: int | None = None
    #: failed executions of a variant before the comparison gives up
    max_failures: int = 3

    def check(self) -> None:
        if not 0 < self.confidence < 1:
            raise ConfigurationError(f"confidence must be between 0 and 1, got "
                                     f"{self.confidence}")
        if not 0 <= self.threshold < 1:
            raise ConfigurationError(f"threshold must be between 0% and 100%, got "
                                     f"{self.threshold}")
        if self.equivalence and self.threshold <= 0:
            raise ConfigurationError("--equivalence needs --threshold X% (the band it "
                                     "concludes within)")
        if self.max_rounds < 2:
            raise ConfigurationError(f"--max-rounds must be at least 2, got {self.max_rounds}")
        if self.max_time is not None and not self.max_time > 0:
            raise ConfigurationError(f"--max-time must be positive, got {self.max_time}")


@dataclass
class Round:
    """One round: the order the variants ran in and what each gave."""

    index: int
    order: tuple[str, str]
    outcomes: dict[str, Outcome]

    @property
    def ok(self) -> bool:
        return all(o.value is not None and o.value > 0 for o in self.outcomes.values())

    @property
    def log_ratio(self) -> float:
        return math.log(self.outcomes["A"].value / self.outcomes["B"].value)  # type: ignore[operator]


@dataclass
class ABResult:
    """The outcome of an A/B comparison."""

    settings: ABSettings
    variants: dict[str, dict[str, Any]]
    rounds: list[Round] = field(default_factory=list)
    #: the last look (a :class:`~steadybench.stats.sequential.Look`), None before the first
    look: Any = None
    verdict: str = "no data"
    interim: bool = False
    reason: str = ""
    elapsed: float = 0.0
    failures: dict[str, list[str]] = field(default_factory=lambda: {"A": [], "B": []})
    warnings: list[str] = field(default_factory=list)
    looks: list[Any] = field(default_factory=list)
    #: the machine-control preset's record (``--preset``), None without one
    machine: dict[str, Any] | None = None
    #: ``--profile``: both sides' profiles and their difference (:mod:`steadybench.profiles`)
    profiles: dict[str, Any] | None = None

    @property
    def paired(self) -> list[Round]:
        return [r for r in self.rounds if r.ok]


ProgressFn = Callable[[ABResult], None]


def plan_arguments(settings: ABSettings) -> dict[str, Any]:
    """The sequential plan's arguments: the first look at ``--min-rounds``, by default after
    :data:`FIRST_LOOK` rounds (or at the budget when it is smaller), never before the exact
    signed-rank interval can exclude a ratio of 1 at that look's share of α."""
    from ..stats.sequential import SequentialPlan

    args: dict[str, Any] = {"confidence": settings.confidence,
                            "max_rounds": settings.max_rounds}
    if settings.min_rounds is not None:
        args["min_rounds"] = settings.min_rounds
    else:
        least = SequentialPlan.smallest_min_rounds(settings.confidence, settings.max_rounds,
                                                   SequentialPlan.rho)
        args["min_rounds"] = min(settings.max_rounds, max(least, FIRST_LOOK))
    return args


def _pinned(cpu: int | None, fn: Callable[[], Outcome]) -> Callable[[], Outcome]:
    """``fn`` run with this thread (and so the processes it starts) pinned to ``cpu``."""
    def run() -> Outcome:
        if cpu is not None and hasattr(os, "sched_setaffinity"):
            os.sched_setaffinity(0, {cpu})
        return fn()
    return run


def duet_cpus() -> tuple[int, int]:
    """Two CPUs this process may use, for ``--duet``; one clear line when there is one."""
    cpus = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
    if len(cpus) < 2:
        raise ConfigurationError("--duet needs at least two CPUs available to this process")
    return cpus[-2], cpus[-1]


def _describe(variant: Variant) -> dict[str, Any]:
    """What the result records of a variant: its kind, its description and, for a benchmark
    file, the layout its executions ran under."""
    described: dict[str, Any] = {"kind": variant.kind, "description": variant.description}
    if getattr(variant, "layout", None):
        described["layout"] = variant.layout
    return described


def first_decidable(plan: Any) -> int:
    """The fewest rounds at which a stop (a final look, with the α no earlier look spent) can
    exclude a ratio of 1 with the exact signed-rank interval: 2^(1−n) ≤ α_final(n) (the
    smallest two-sided p-value of n pairs is 2^(1−n); Wilcoxon 1945)."""
    for n in range(2, plan.max_rounds + 1):
        if 2.0 ** (1 - n) <= 1.0 - plan.level_at(n, final=True):
            return n
    return int(plan.max_rounds)


class ABSession:
    """Runs rounds until the verdict is decided or the budget is spent.

    ``machine`` (a :class:`steadybench.system.presets.MachineSession`, ``--preset``) is the
    machine control the caller set up around the session: its per-run countermeasures run
    around every execution (in duet mode, around each pair run together).
    """

    def __init__(self, a: Variant, b: Variant, settings: ABSettings,
                 progress: ProgressFn | None = None, machine: Any = None) -> None:
        from ..stats.sequential import SequentialPlan

        settings.check()
        self.variants = {"A": a, "B": b}
        self.settings = settings
        self.progress = progress
        plan_args = plan_arguments(settings)
        try:
            self.plan = SequentialPlan(**plan_args)
        except ValueError as exc:
            raise ConfigurationError(str(exc).replace("min_rounds", "--min-rounds")
                                     .replace("max_rounds", "--max-rounds")) from None
        self.rng = random.Random(settings.seed)
        self.decidable = first_decidable(self.plan)
        self.result = ABResult(settings, {k: _describe(v) for k, v in self.variants.items()})
        self.cpus = duet_cpus() if settings.duet else None
        self.machine: Any = None
        self.use_machine(machine)

    def use_machine(self, machine: Any) -> None:
        """Run the per-run countermeasures of ``machine`` (a MachineSession, or None) around
        every execution, and record its preset in the result."""
        self.machine = machine
        self.result.machine = machine.record if machine is not None else None

    def _execute(self, label: str) -> Outcome:
        """One execution of a variant, with the machine's per-run countermeasures around it."""
        if self.machine is not None:
            self.machine.before_run()
        outcome = self.variants[label].execute()
        if self.machine is not None:
            self.machine.after_run()
        return outcome

    # ------------------------------------------------------------------ one round
    def _round(self, index: int) -> Round:
        order = tuple(self.rng.sample(["A", "B"], 2))
        outcomes: dict[str, Outcome] = {}
        if self.cpus is None:
            for label in order:
                outcomes[label] = self._execute(label)
        else:
            # A and B at the same time, each on its own core; the second one of the drawn
            # order runs in this thread, so Ctrl-C reaches it directly.
            first, second = order
            box: dict[str, Outcome | BaseException] = {}

            def other() -> None:
                try:
                    box[first] = _pinned(self.cpus[0], self.variants[first].execute)()
                except BaseException as exc:  # noqa: BLE001 - handed to the main thread
                    box[first] = exc

            if self.machine is not None:
                self.machine.before_run()
            thread = threading.Thread(target=other, daemon=True)
            thread.start()
            mask = os.sched_getaffinity(0)
            try:
                os.sched_setaffinity(0, {self.cpus[1]})
                outcomes[second] = self.variants[second].execute()
            finally:
                os.sched_setaffinity(0, mask)
                thread.join()
            if self.machine is not None:
                self.machine.after_run()
            got = box[first]
            if isinstance(got, BaseException):
                raise got
            outcomes[first] = got
        return Round(index, order, outcomes)  # type: ignore[arg-type]

    # ------------------------------------------------------------------ the protocol
    def run(self) -> ABResult:
        from ..stats.sequential import look

        res = self.result
        looks = set(self.plan.looks())
        started = time.monotonic()
        try:
            for index in range(self.settings.max_rounds):
                # the budget never ends a comparison before a verdict is possible (issue 25,
                # item 6: slow rounds used to end it after 5, with "no real difference")
                if self.settings.max_time is not None and index > 0 \
                        and len(res.paired) >= self.decidable \
                        and time.monotonic() - started >= self.settings.max_time:
                    res.reason = f"time budget of {self.settings.max_time:g} s spent"
                    break
                rnd = self._round(index)
                res.rounds.append(rnd)
                res.elapsed = time.monotonic() - started
                if self._count_failures(rnd):
                    break
                n = len(res.paired)
                if rnd.ok and n in looks:
                    current = look(self._log_ratios(), self.plan, self.settings.threshold)
                    res.look = current
                    res.looks.append(current)
                    if current.decision in ("faster", "slower") or (
                            current.decision == "equivalent" and self.settings.equivalence):
                        res.verdict = current.decision
                        res.reason = f"decided at round {n}"
                        break
                if self.progress is not None:
                    self.progress(res)
            else:
                res.reason = f"all {self.settings.max_rounds} rounds done"
        except KeyboardInterrupt:
            res.interim = True
            res.reason = "interrupted (Ctrl-C)"
        res.elapsed = time.monotonic() - started
        if self._failed():
            res.verdict = FAILED
        elif res.verdict == "no data":
            self._final_look()
        return res

    def _failed(self) -> bool:
        limit = self.settings.max_failures
        return any(len(f) >= limit for f in self.result.failures.values()) or (
            bool(self.result.rounds) and not self.result.paired
            and any(self.result.failures.values()))

    def _count_failures(self, rnd: Round) -> bool:
        """Record failed executions; True when a variant fails too often to go on."""
        for label, outcome in rnd.outcomes.items():
            if outcome.value is None or outcome.value <= 0:
                why = outcome.error or f"non-positive time {outcome.value!r}"
                self.result.failures[label].append(f"round {rnd.index + 1}: {why}")
        if self._failed():
            failing = [k for k, f in self.result.failures.items() if f]
            self.result.reason = "; ".join(
                f"{k} failed: {self.result.failures[k][-1]}" for k in failing)
            return True
        return False

    def _log_ratios(self) -> list[float]:
        return [r.log_ratio for r in self.result.paired]

    def _final_look(self) -> None:
        """The look that ends a comparison stopped by its budget or by Ctrl-C: it uses the α
        the planned looks left unspent."""
        from ..stats.sequential import look

        res = self.result
        n = len(res.paired)
        if n < self.decidable:
            res.reason = (res.reason + "; " if res.reason else "") + \
                (f"{n} complete round(s): a verdict at this confidence needs at least "
                 f"{self.decidable}")
            res.verdict = INCONCLUSIVE
            return
        if res.looks and res.looks[-1].rounds == n:
            # a planned look just spent its share at these rounds: looking again would spend
            # it twice; its interval stands (conservative)
            final = res.looks[-1]
        else:
            final = look(self._log_ratios(), self.plan, self.settings.threshold, final=True)
            res.looks.append(final)
        res.look = final
        decision = final.decision
        if decision == "equivalent" and not self.settings.equivalence:
            decision = "no difference"
        res.verdict = "no difference" if decision == "continue" else decision
