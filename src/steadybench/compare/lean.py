"""The samples of a steadybench results file read straight from its JSON (issue 27 item 13).

``compare`` needs, per benchmark, its name, implementation, parameters, unit, method, the ok
runs' times, the executions' values and the stored estimate. The full
:class:`~steadybench.model.results.CaseResult` holds some twenty more fields (statistics,
streams, analyses, the run table as columns, ...) and costs about a millisecond and a few KB per
benchmark to build; a file of 10^6 benchmarks took minutes and gigabytes before the first
comparison. :func:`lean_samples` builds each :class:`~steadybench.compare.readers.Sample` from
the entry itself (held column-wise, :mod:`.columns`), with the same rules as
:meth:`CaseResult.from_dict` followed by
``readers._from_results`` (the tests check both give the same samples on every kind of case):

* the times are the ``wall_time`` column of the run table (``runs``), ok runs only, NaN and
  ``null`` left out; a file without a run table but with ``samples`` has those as ok runs;
* the executions are the entries of ``processes`` that are objects
  (:func:`~steadybench.model.execution.execution_values`);
* the estimate is read with :meth:`Estimate.from_dict`.

The other fields of an entry are not read here; the full results are built from the kept
document text only when something needs them (``compare --report``, counts), with
:meth:`SampleSet.full_results`. Only the time is read this way: ``--metric`` goes through the
full results.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from ..errors import ResultsFormatError
from ..gc_pause import gc_paused
from ..model.estimate import Estimate
from ..model.execution import Execution, execution_values
from ..model.labels import case_label
from ..model.results import PRIMARY_METRIC, RUN_OK, cpu_pressure_of
from ..redact import redact_tree
from .columns import SampleColumns
from .median import median
from .samples import SampleSet


def _times(entry: dict[str, Any]) -> list[float] | None:
    """The ok runs' times (NaN and null left out), or None when the entry kept no samples."""
    runs = entry.get("runs")
    if runs is not None:
        status = list(runs["status"])
        column = (runs.get("metrics") or {}).get(PRIMARY_METRIC)
        if column is None:
            return []
        values = (math.nan if v is None else float(v) for v in column)
        return [v for v, s in zip(values, status) if s == RUN_OK and not math.isnan(v)]
    samples = entry.get("samples")
    if samples is None:
        return None
    return [v for v in (float(x) for x in samples) if not math.isnan(v)]


def _executions(entry: dict[str, Any]) -> list[Execution]:
    return [Execution.from_dict(p, i)
            for i, p in enumerate(entry.get("processes") or []) if isinstance(p, dict)]


def _sample(path: Path, entry: dict[str, Any], out: SampleColumns) -> str | None:
    """Add one entry's sample to ``out``, or say why it is skipped (as
    ``readers._from_results`` says it)."""
    name = entry["name"]
    implementation = entry.get("implementation", name)
    params = dict(entry.get("params") or {})
    unit = entry.get("unit", "s")
    estimate = Estimate.from_dict(entry.get("estimate"))
    executions = _executions(entry)
    processes = execution_values(executions)
    values = _times(entry)
    if len(executions) <= 1 and entry.get("method", "direct") == "exec" and values:
        out.add(name, values, implementation, params, unit, None, estimate,
                unit_name="runs (one process each)", one_invocation=True,
                cpu_pressure=cpu_pressure_of(entry))
        return None
    if not executions:  # measured in one process: one execution
        if estimate is not None and estimate.ok:
            processes = [float(estimate.value)]  # type: ignore[arg-type]
        elif values:
            processes = [median(values)]
    if not values and not processes:
        why = "no successful runs" if values is not None else "raw samples were not kept"
        return f"{path}: {case_label(name, implementation, params)}: skipped ({why})"
    out.add(name, values or [], implementation, params, unit, processes, estimate,
            unit_name="executions", one_invocation=True, cpu_pressure=cpu_pressure_of(entry))
    return None


def lean_samples(path: Path, data: dict[str, Any], text: str | None = None) -> SampleSet:
    """The :class:`SampleSet` of a steadybench results document ``data`` (already checked with
    :func:`~steadybench.output.results_io.check_results_data`). ``text``, the document as
    read, is kept so :meth:`SampleSet.full_results` can build the full results later; without
    it they are built from ``data`` now (the old way)."""
    samples = SampleColumns(str(path))
    skipped: list[str] = []
    try:
        with gc_paused():
            for entry in data["benchmarks"]:
                why = _sample(path, entry, samples)
                if why is not None:
                    skipped.append(why)
    # as results_from_data says it: a field of the wrong kind (e.g. an estimate that is not an
    # object, a run table without statuses)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise ResultsFormatError(
            f"{path}: malformed results file ({type(exc).__name__}: {exc})") from exc
    environment = dict(data.get("environment") or {})
    context = redact_tree(data.get("context") or {})
    out = SampleSet(str(path), "steadybench", samples, environment=environment,
                    skipped=skipped, lean_context=context)
    if text is not None:
        out.keep_document(text)
    return out
