"""A baseline for ``compare``: a results file of any format ``compare`` reads, or a record of
the history named by a saved name, a git reference (``main``, ``HEAD~1``, a tag, a hash) or
``#ID``."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..compare.readers import SampleSet
    from ..model.results import Results


def samples_of_results(results: Results, label: str) -> SampleSet:
    """The compare reader's view of steadybench results held in memory."""
    from pathlib import Path

    from ..compare.readers import _from_results

    return _from_results(Path(label), results)


def record_samples(ref: str, url: str | None = None,
                   machine: str | None = None) -> SampleSet:
    """The history record ``ref`` names, as a compare input labelled ``history <ref> (#id,
    commit)``; raises :class:`~steadybench.history.backends.HistoryError`."""
    from ..output.results_io import results_from_data
    from .store import HistoryStore

    with HistoryStore.open(url, create=False) as store:
        rec = store.resolve(ref, machine=machine)
    commit = f", commit {rec.git.short}" if rec.git.commit else ""
    label = f"history {ref} (#{rec.id}{commit})"
    results = results_from_data(rec.results, label)
    sset = samples_of_results(results, label)
    sset.kind = f"history ({rec.source})"
    return sset


def baseline_samples(ref: str, url: str | None = None, machine: str | None = None) -> SampleSet:
    """An existing file named ``ref`` is read as a file; anything else is looked up in the
    history."""
    from ..compare.readers import read_samples

    if os.path.isfile(ref):
        return read_samples(ref)
    return record_samples(ref, url, machine)
