"""The benchmarks of one pytest session: their results, saving, the comparison with a baseline
and the verdict that can fail the session.

At the end of the session the measured cases become one steadybench
:class:`~steadybench.model.results.Results` (the same document ``steadybench run --json``
writes). Then, each step on its own so one failure costs none of the others:

1. the files asked for are written (steadybench JSON, BMF, github-action-benchmark,
   pytest-benchmark JSON);
2. with ``--steadybench-save NAME`` / ``--steadybench-autosave`` the results are recorded in the
   history;
3. with ``--steadybench-compare REF`` they are compared with the baseline (a history reference:
   a saved name, a git reference such as ``main`` or ``HEAD~1``, ``#ID``; or a results file of
   any format ``compare`` reads) by ``compare``'s protocol (:mod:`steadybench.compare`), using
   the history's run-to-run noise where a side has one execution; ``--steadybench-fail-on``
   turns a significant slowdown (beyond ``--steadybench-threshold``) into a failed session.
"""

from __future__ import annotations

import os
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..model.execution import execution_values

if TYPE_CHECKING:
    import pytest

    from ..compare.result import Comparison
    from ..model.results import CaseResult, Results
    from .measure import Measured

#: default independent executions per benchmark (fewer than ``run``'s: a test suite has many)
DEFAULT_PROCESSES = 5
#: seconds of samples per execution (``--steadybench-time``)
DEFAULT_TIME = 0.15

_KEY = "_steadybench_session"


def session_of(config: pytest.Config) -> BenchmarkSession:
    session = getattr(config, _KEY, None)
    if session is None:
        import pytest

        from ..errors import SteadybenchError

        try:
            session = BenchmarkSession(config)
        except (SteadybenchError, ValueError) as exc:
            raise pytest.UsageError(f"steadybench: {exc}") from None
        setattr(config, _KEY, session)
    return session


def _fraction(text: str | None, what: str) -> float | None:
    from ..confidence import parse_fraction

    return None if text is None else parse_fraction(text, what)


@dataclass
class Outcome:
    """What the end of the session produced, for the summary and the exit status."""

    lines: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    regressions: list[str] = field(default_factory=list)
    comparison: Comparison | None = None
    #: the verdicts on counts, one sentence each and the note that counts are not time
    count_lines: list[str] = field(default_factory=list)


class BenchmarkSession:
    """The plugin's state for one pytest run (options read once)."""

    def __init__(self, config: pytest.Config) -> None:
        from .. import defaults

        opt = config.getoption
        self.config = config
        self.skip = bool(opt("steadybench_skip", False))
        self.only = bool(opt("steadybench_only", False))
        self.worker = hasattr(config, "workerinput") or bool(os.environ.get(
            "PYTEST_XDIST_WORKER"))
        self.disabled = bool(opt("steadybench_disable", False)) or self.worker
        self.processes = int(opt("steadybench_processes", None) or DEFAULT_PROCESSES)
        self.in_process_reason = ("--steadybench-in-process" if opt("steadybench_in_process",
                                                                     False) else None)
        if self.in_process_reason:
            self.processes = 1
        self.time_per_execution = float(opt("steadybench_time", None)
                                        or DEFAULT_TIME)
        if not 0 < self.time_per_execution < 3600 or not 1 <= self.processes <= 1000:
            raise ValueError("--steadybench-time must be in (0, 3600) seconds and "
                             "--steadybench-processes in 1..1000")
        self.warmup = defaults.WARMUP
        self.time_limit = 600.0
        self.confidence = _fraction(opt("steadybench_confidence", None) or "0.95",
                                    "--steadybench-confidence") or 0.95
        from . import peer_options

        compare_fail = peer_options.compare_fail(config)
        given = opt("steadybench_threshold", None)
        self.threshold = _fraction(given or compare_fail, "--steadybench-threshold" if given
                                   else "--benchmark-compare-fail") or 0.0
        self.fail_on = opt("steadybench_fail_on", None) or "never"
        if compare_fail and self.fail_on == "never":
            self.fail_on = "slower"  # pytest-benchmark's --benchmark-compare-fail
        self.compare_ref = opt("steadybench_compare", None) or peer_options.compare_reference(
            config)
        self.notes = peer_options.ignored_notes(config)
        self.measure = opt("steadybench_measure", None) or "time"
        self.profile = bool(opt("steadybench_profile", False))
        self.group_by = opt("steadybench_group_by", None) or "group"
        self.cases: list[CaseResult] = []
        self.measured: list[Measured] = []
        self.outcome: Outcome | None = None

    # ------------------------------------------------------------------ cases
    def add(self, case: CaseResult, measured: Measured) -> None:
        self.cases.append(case)
        self.measured.append(measured)

    def results(self) -> Results:
        from ..environment import capture_environment
        from ..history.git import git_info
        from ..model.results import Results

        info = git_info()
        isolations = sorted({m.isolation for m in self.measured})
        return Results(suite="pytest", cases=list(self.cases),
                       environment=capture_environment(),
                       context={"command": "pytest " + " ".join(self.config.invocation_params
                                                                .args),
                                "isolation": ", ".join(isolations),
                                "git": {"commit": info.commit, "branch": info.branch,
                                        "dirty": info.dirty, "commit_time": info.commit_time,
                                        "project": Path(info.toplevel).name
                                        if info.toplevel else None},
                                "runner": "pytest plugin"})

    # ------------------------------------------------------------------ the end
    def finish(self, interrupted: bool = False) -> Outcome:
        """Write, save and compare (see the module docs); never raises for a broken history or
        an unwritable file: each failure is one line in ``errors``. After Ctrl-C the files are
        written (marked interrupted) but nothing is recorded or compared: a partial session in
        the history would read as a change."""
        from ..errors import SteadybenchError

        out = Outcome()
        self.outcome = out
        if not self.cases:
            return out
        results = self.results()
        results.interrupted = interrupted
        if self.profile:  # each profiled case's profile into the results, and the summary
            from ..profiles.runner import collect

            out.lines.extend(collect(results))
        opt = self.config.getoption
        from .formats import result_formats

        for flag, cls in result_formats():  # --steadybench-json, -csv, -bmf... (every format)
            option = flag[2:].replace("-", "_")
            fmt = cls.name
            path = opt(option, None)
            if not path:
                continue
            try:
                cls().write(results, path)
                out.lines.append(f"wrote {fmt} results to {path}")
            except (SteadybenchError, OSError) as exc:
                out.errors.append(f"--{option.replace('_', '-')} {path}: {exc}")
        if interrupted:
            out.lines.append("interrupted: the results were not recorded or compared")
            return out
        name = opt("steadybench_save", None)
        url = opt("steadybench_history", None) or os.environ.get("STEADYBENCH_HISTORY_URL")
        if name or opt("steadybench_autosave", False):
            try:
                from ..history.backends import default_path
                from ..history.options import describe, record
                from ..redact import redact

                rec = record(results, url, name or None, results.context["command"])
                out.lines.append(describe(rec, redact(url) if url else str(default_path())))
            except SteadybenchError as exc:
                out.errors.append(str(exc))
        ref = self.compare_ref
        if ref:
            try:
                self._compare(results, ref, url, out)
            except SteadybenchError as exc:
                out.errors.append(f"--steadybench-compare {ref}: {exc}")
        return out

    def _compare(self, results: Results, ref: str, url: str | None, out: Outcome) -> None:
        from ..compare.core import compare_sets
        from ..compare.output import to_markdown
        from ..compare.protocol import FASTER, SLOWER, CompareOptions
        from ..fileio import atomic_write_text
        from ..history.baseline import baseline_samples, samples_of_results
        from ..history.noise import history_noise_lookup, run_noise_lookup
        from ..history.record import current_machine

        base = baseline_samples(ref, url, current_machine(results.environment))
        new = samples_of_results(results, "this session")
        from ..counts.verdict import is_count_comparison

        if is_count_comparison(base.samples, new.samples):
            self._compare_counts(base, new, results, out)
            return
        lookup, note = history_noise_lookup(url, results.environment)
        if note:
            out.lines.append(note)
        opts = CompareOptions(confidence=self.confidence, threshold=self.threshold,
                              noise=lookup, run_noise=run_noise_lookup(url, results.environment))
        comparison = compare_sets(base, new, opts)
        out.comparison = comparison
        path = self.config.getoption("steadybench_markdown", None)
        if path:
            try:
                atomic_write_text(path, to_markdown(comparison))
                out.lines.append(f"wrote the comparison as Markdown to {path}")
            except Exception as exc:  # noqa: BLE001 - one line, the verdict still counts
                out.errors.append(f"--steadybench-markdown {path}: {exc}")
        for row in comparison.benchmarks:
            if row.verdict == SLOWER or (self.fail_on == "change" and row.verdict == FASTER):
                out.regressions.append(f"{row.name}: {row.verdict}")

    def _compare_counts(self, base: Any, new: Any, results: Results, out: Outcome) -> None:
        """The gate on counts (steadybench.counts.verdict): more instructions (or cycles) than
        the baseline beyond the threshold and the layout and fit parts is a regression."""
        from ..compare.protocol import FASTER, SLOWER
        from ..counts.verdict import compare_count_samples, render

        comparison = compare_count_samples(base.samples, new.samples, base.full_results(), results,
                                           self.threshold)
        out.count_lines = render(comparison)
        for row in comparison.rows:
            if row.verdict == SLOWER or (self.fail_on == "change" and row.verdict == FASTER):
                out.regressions.append(row.sentence)

    # ------------------------------------------------------------------ summary
    def summary_lines(self) -> list[str]:
        """Each benchmark's estimate, by group, with the relative summary of each group and the
        comparison's verdicts."""
        from ..output.format import estimate_ci_text, estimate_value_text
        from ..output.relative import Variant, summary_lines
        from .groups import group_key

        lines: list[str] = []
        groups: dict[str, list[tuple[CaseResult, Measured]]] = defaultdict(list)
        for case, m in zip(self.cases, self.measured):
            groups[group_key(case, self.group_by)].append((case, m))
        from ..model.estimate import Estimate

        for key, members in groups.items():
            if key:
                lines.append(f"group {key}:")
            variants = []
            for case, m in members:
                est = Estimate.from_dict(case.estimate)
                value = estimate_value_text(est)
                ci = estimate_ci_text(est)
                level = (f"{est.n_executions} executions" if est is not None and est.independent
                         else f"level: runs ({m.in_process_reason or 'one execution'})")
                lines.append(f"  {case.extra.get('pytest_name', case.benchmark)}: {value} "
                             f"{ci}  [{level}]")
                if est is not None:
                    execs = execution_values(case.processes)
                    variants.append(Variant(case.extra.get("pytest_name", case.benchmark), est,
                                            execs or None))
            if key:  # a relative summary compares the members of a group, not unrelated tests
                lines.extend(f"  {line}" for line in summary_lines(variants, self.confidence))
        out = self.outcome
        if out is not None and out.comparison is not None:
            lines.append("compared with the baseline:")
            from ..output.format import factor_text

            for row in out.comparison.benchmarks:
                ci = row.interval
                factor = factor_text(row.ratio, ci.low if ci else None, ci.high if ci else None)
                lines.append(f"  {row.name}: {row.verdict} ({factor} than the baseline)")
            for warning in out.comparison.warnings:
                lines.append(f"  note: {warning}")
        if out is not None and out.count_lines:
            lines.append("compared with the baseline:")
            lines.extend(f"  {line}" for line in out.count_lines)
        if out is not None:
            lines.extend(out.lines)
        lines.extend(self.notes)
        return lines
