"""What ``compare`` compares: a :class:`Sample` per benchmark and the :class:`SampleSet` read
from one input (made by :mod:`.readers` and :mod:`.lean`)."""

from __future__ import annotations

import json
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..model.estimate import Estimate
from ..model.results import Results


@dataclass(slots=True)
class Sample:
    """The measurements of one benchmark on one side of a comparison (slotted: a file of 10^6
    benchmarks holds 10^6 of them)."""

    name: str
    values: np.ndarray
    implementation: str = ""
    params: dict[str, Any] = field(default_factory=dict)
    unit: str = "s"
    #: one value per independent execution: the unit of the comparison (see
    #: :mod:`steadybench.compare.protocol`); None means "the values are the executions"
    per_execution: np.ndarray | None = None
    source: str = ""
    #: the case's headline when read from a steadybench results file (``estimate`` there): the
    #: figure the run's console and files showed; None for other inputs
    estimate: Estimate | None = None
    #: what one unit is, for the output
    unit_name: str = "values (one per execution)"
    #: the values come from one invocation (one ``steadybench run``), so a comparison with
    #: another invocation includes the variation between runs
    #: (:mod:`steadybench.compare.between`)
    one_invocation: bool = False
    #: run-level values (each invocation's median) when a side holds several invocations
    runs: np.ndarray | None = None
    #: the share of the case's time the machine's CPU was contended while it was measured
    #: (:mod:`steadybench.cpu_pressure`); None when not measured
    cpu_pressure: float | None = None

    @property
    def executions(self) -> np.ndarray:
        """The per-execution values (the test unit)."""
        return self.values if self.per_execution is None else self.per_execution

    @property
    def param_name(self) -> str:
        return ",".join(f"{k}={v}" for k, v in self.params.items())

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.name, self.implementation or self.name, self.param_name)

    @property
    def label(self) -> str:
        parts = [self.name]
        if self.implementation and self.implementation != self.name:
            parts.append(self.implementation)
        if self.params:
            parts.append(f"[{self.param_name}]")
        return " ".join(parts)


@dataclass
class SampleSet:
    """All samples read from one input, with what kind of input it was."""

    path: str
    kind: str  # plain, csv, steadybench, hyperfine, pyperf
    #: a list, or read lean from a results file :class:`~.columns.SampleColumns`, whose
    #: samples are made when read (a change to one is not kept)
    samples: Sequence[Sample]
    environment: dict[str, Any] | None = None
    results: Results | None = None
    skipped: list[str] = field(default_factory=list)
    #: the results' ``context`` when the set was read lean (:mod:`.lean`), without ``results``
    lean_context: dict[str, Any] | None = field(default=None, repr=False)
    #: the document as read, compressed (:meth:`keep_document`), from which
    #: :meth:`full_results` builds the results on demand
    compressed_document: bytes | None = field(default=None, repr=False)

    def keep_document(self, text: str) -> None:
        """Keep the document's ``text`` for :meth:`full_results`, compressed (zlib, fastest
        level: a file of 10^6 benchmarks is 91 MB as text, a fifth of that compressed)."""
        self.compressed_document = zlib.compress(text.encode("utf-8", "surrogatepass"), 1)

    @property
    def document_text(self) -> str | None:
        """The kept document's text; None when none is kept (or the results are built)."""
        if self.compressed_document is None:
            return None
        return zlib.decompress(self.compressed_document).decode("utf-8", "surrogatepass")

    @property
    def context(self) -> dict[str, Any]:
        """The results' ``context`` (machine, profiles, ...); empty for other inputs."""
        if self.results is not None:
            return self.results.context
        return self.lean_context or {}

    def full_results(self) -> Results | None:
        """The full results of a steadybench results file (built from the kept text the first
        time when the set was read lean); None for other inputs."""
        text = self.document_text if self.results is None else None
        if text is not None:
            from ..output.results_io import results_from_data

            self.results = results_from_data(json.loads(text), self.path)
            self.compressed_document = None
        return self.results
