"""Matching two inputs benchmark by benchmark and building the comparison document."""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, overload

from .. import __version__
from ..errors import SteadybenchError
from .columns import sample_keys
from .packed import PackedRows
from .protocol import (
    PROTOCOLS,
    CompareOptions,
    adjusted_p_values,
    compare_pair,
    finish_row,
    finish_verdicts,
)
from .readers import Sample, SampleSet, read_samples
from .result import BenchmarkComparison, Comparison
from .suite import WEIGHTS, SuiteColumns, read_suite


class NoMatchError(SteadybenchError):
    """The two inputs have no benchmark in common."""


class Pairs(Sequence[tuple[Sample, Sample]]):
    """The matched pairs, as the indices of each side's sample: a pair's samples are read
    when it is (from :class:`~.columns.SampleColumns` they are made then)."""

    def __init__(self, base: Sequence[Sample], new: Sequence[Sample],
                 indices: list[tuple[int, int]]) -> None:
        self._base, self._new, self._indices = base, new, indices

    def __len__(self) -> int:
        return len(self._indices)

    @overload
    def __getitem__(self, i: int) -> tuple[Sample, Sample]: ...
    @overload
    def __getitem__(self, i: slice) -> list[tuple[Sample, Sample]]: ...

    def __getitem__(self, i: int | slice) -> tuple[Sample, Sample] | list[tuple[Sample, Sample]]:
        if isinstance(i, slice):
            return [(self._base[b], self._new[n]) for b, n in self._indices[i]]
        b, n = self._indices[i]
        return self._base[b], self._new[n]

    def __iter__(self) -> Iterator[tuple[Sample, Sample]]:
        for b, n in self._indices:
            yield self._base[b], self._new[n]


def match(base: SampleSet, new: SampleSet) -> tuple[Pairs, list[str]]:
    """Pairs with the same key (name, implementation, parameters).

    When each input holds exactly one benchmark they are paired whatever their names (two plain
    sample files, two hyperfine exports of different commands).
    """
    notes: list[str] = []
    if len(base.samples) == 1 and len(new.samples) == 1:
        return Pairs(base.samples, new.samples, [(0, 0)]), notes
    base_keys = sample_keys(base.samples)  # each key made once (10^6 benchmarks)
    new_keys = sample_keys(new.samples)
    by_key = {k: i for i, k in enumerate(new_keys)}  # a repeated key: its last sample
    indices = [(i, by_key[k]) for i, k in enumerate(base_keys) if k in by_key]
    matched = {k for k in base_keys if k in by_key}
    for i, k in enumerate(base_keys):
        if k not in matched:
            notes.append(f"{base.samples[i].label}: only in BASE ({base.path}), not compared")
    for i, k in enumerate(new_keys):
        if k not in matched:
            notes.append(f"{new.samples[i].label}: only in NEW ({new.path}), not compared")
    if not indices:
        have_a = ", ".join(s.label for s in base.samples[:5]) or "nothing"
        have_b = ", ".join(s.label for s in new.samples[:5]) or "nothing"
        raise NoMatchError(f"no matching benchmarks between {base.path} ({have_a}) and "
                           f"{new.path} ({have_b})")
    return Pairs(base.samples, new.samples, indices), notes


def _machine_identity(samples: SampleSet) -> dict[str, Any]:
    """The fingerprint of a results file with its preset (kept in ``context["machine"]``), so a
    baseline run compared with a managed one is flagged too."""
    env = dict(samples.environment or {})
    machine = samples.context.get("machine")
    if isinstance(machine, dict):
        fingerprint = dict(machine.get("fingerprint") or env.get("fingerprint") or {})
        fingerprint["preset"] = machine.get("preset")
        env["fingerprint"] = fingerprint
    return env


def fingerprint_warnings(base: SampleSet, new: SampleSet) -> list[str]:
    """Differences of the machine fingerprints when both inputs are steadybench results."""
    if base.environment is None or new.environment is None:
        return []
    from ..system.fingerprint import fingerprint_differences

    try:
        diffs = fingerprint_differences(_machine_identity(base), _machine_identity(new))
    except Exception as exc:  # a fingerprint problem must not hide the comparison
        return [f"machine fingerprints could not be compared ({exc})"]
    return [f"environment differs: {d}" for d in diffs]


def _document(rows: list[dict[str, Any]] | PackedRows, opts: CompareOptions, weights: str,
              precision: float, warnings: list[str], inputs: dict[str, Any],
              suite: SuiteColumns | None = None) -> dict[str, Any]:
    """The comparison document of ``rows``: a list of rows, whose verdicts are settled here,
    or packed rows already settled, with their ``suite`` columns (:func:`_packed_rows`)."""
    if suite is None:
        assert isinstance(rows, list)
        finish_verdicts(rows, opts)
        suite = SuiteColumns(opts.show_min)
        for row in rows:
            suite.add(row)
    doc: dict[str, Any] = {
        "kind": "steadybench-comparison",
        "tool": {"name": "steadybench", "version": __version__},
        "inputs": inputs,
        "options": {
            "confidence": "auto" if opts.confidence is None else opts.confidence,
            "small_sample": opts.small_sample,
            "threshold": opts.threshold,
            "equivalence": opts.equivalence,
            "sides": "two-sided",
            "verdict_by": opts.verdict_by,
            "show_min": opts.show_min,
            "correction": opts.correction if opts.confidence is not None else "none",
            "weights": weights,
            "precision": precision,
            "resamples": opts.resamples,
            "seed": opts.seed,
        },
        "benchmarks": rows,
        "warnings": warnings,
        "suite": None,
    }
    if opts.confidence is None and opts.correction != "none":
        warnings.append("--confidence auto: no multiple-testing correction is applied; the "
                        "levels found describe each benchmark alone")
    if len(rows) > 1 or inputs.get("suite"):
        doc["suite"] = suite.summary(weights, precision)
    return doc


def _packed_rows(pairs: Iterable[tuple[Sample, Sample]], opts: CompareOptions
                 ) -> tuple[PackedRows, SuiteColumns]:
    """Each pair's row, its verdict settled after the multiple-testing correction, packed as
    it is made (:mod:`.packed`: 10^6 rows as dicts took 4 GB), and the columns the suite
    summary reads."""
    rows = PackedRows(functools.partial(BenchmarkComparison.from_dict, owned=True))
    p_values: dict[str, list[float | None]] = {p: [] for p in PROTOCOLS}
    for b, n in pairs:
        row = compare_pair(b, n, opts)
        for p in PROTOCOLS:
            p_values[p].append(row[f"{p}_protocol"]["p_two_sided"])
        rows.append(row)
    correction = opts.correction if opts.confidence is not None else "none"
    adjusted = {p: adjusted_p_values(p_values[p], correction) for p in PROTOCOLS}
    del p_values
    suite = SuiteColumns(opts.show_min)

    def settle(i: int, row: dict[str, Any]) -> None:
        finish_row(row, opts, {p: adjusted[p][i] for p in PROTOCOLS})
        suite.add(row)

    rows.rewrite(settle)
    return rows, suite


def compare_sets(base: SampleSet, new: SampleSet, opts: CompareOptions,
                 weights: str = "equal", precision: float = 0.05) -> Comparison:
    """Compare two inputs; ``to_dict()`` of the result is the comparison document (the JSON
    of ``compare --json``)."""
    opts.check()
    if weights == "custom":
        raise SteadybenchError("--weights custom needs a suite file with a Coef column (--suite)")
    if weights not in WEIGHTS:
        raise SteadybenchError(f"unknown weights {weights!r}")
    from ..gc_pause import gc_paused

    with gc_paused():  # one row per benchmark, all kept: see steadybench.gc_pause
        pairs, notes = match(base, new)
        warnings = [*base.skipped, *new.skipped, *notes, *fingerprint_warnings(base, new)]
        rows, suite = _packed_rows(pairs, opts)
        del pairs
        return Comparison.from_dict(_document(
            rows, opts, weights, precision, warnings,
            {"base": base.path, "new": new.path, "base_kind": base.kind,
             "new_kind": new.kind}, suite), owned=True)


def compare_files(base_path: str, new_path: str, opts: CompareOptions, *,
                  column: str | None = None, weights: str = "equal",
                  precision: float = 0.05, metric: str | None = None
                  ) -> tuple[Comparison, SampleSet, SampleSet]:
    base = read_samples(base_path, column, metric)
    new = read_samples(new_path, column, metric)
    return compare_sets(base, new, opts, weights, precision), base, new


def compare_suite(suite_path: str, opts: CompareOptions, *, column: str | None = None,
                  weights: str = "equal", precision: float = 0.05) -> Comparison:
    """Compare every row of a suite file (``Name, Sample1, Sample2, ConfLevel, Coef``)."""
    opts.check()
    entries = read_suite(suite_path)
    if weights not in WEIGHTS:
        raise SteadybenchError(f"unknown weights {weights!r}")
    rows = []
    warnings: list[str] = []
    for entry in entries:
        base = read_samples(entry["base"], column)
        new = read_samples(entry["new"], column)
        if len(base.samples) != 1 or len(new.samples) != 1:
            raise SteadybenchError(f"{suite_path}:{entry['line']}: each suite row needs one "
                                   "benchmark per sample file")
        row_opts = opts
        if entry["confidence"] is not None and opts.confidence is not None:
            row_opts = dataclasses.replace(opts, confidence=entry["confidence"])
        b, n = base.samples[0], new.samples[0]
        b.name = n.name = entry["name"]
        b.implementation = n.implementation = ""
        row = compare_pair(b, n, row_opts)
        row["coef"] = entry["coef"]
        rows.append(row)
    return Comparison.from_dict(_document(rows, opts, weights, precision, warnings,
                                          {"suite": str(suite_path)}))
