"""The samples of one input held column-wise, each :class:`~.samples.Sample` made when it is
read (issue 27 item 13).

A :class:`Sample` of a benchmark of three values held two small numpy arrays, the object
itself and a parameters dict: about 530 bytes, a gigabyte for the two sides of a comparison of
10^6 benchmarks. :class:`SampleColumns` keeps every benchmark's values in one array of floats
with the offsets where each begins (likewise the per-execution values), and the other fields
in lists; ``columns[i]`` builds the ``i``-th :class:`Sample`, its arrays copies of its slice of
the columns, so a change to a sample read is never a change to the columns (and is not kept).
About 200 bytes a benchmark, most of it its name.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from ..model.estimate import Estimate
from ..model.sequences import MadeOnRead
from .samples import Sample


class SampleColumns(MadeOnRead[Sample]):
    """The samples of one input, column-wise; a read-only :class:`Sequence` of
    :class:`Sample` once filled with :meth:`add`."""

    def __init__(self, source: str = "") -> None:
        self.source = source  # one text for every sample
        self._names: list[str] = []
        self._implementations: list[str] = []
        self._params: list[dict[str, Any] | None] = []  # None: no parameters
        self._units: list[str] = []
        self._unit_names: list[str] = []
        self._estimates: list[Estimate | None] = []
        self._pressures: list[float | None] = []
        self._one_invocation = bytearray()
        self._values = array("d")
        self._value_ends = array("q")
        self._executions = array("d")
        self._execution_starts = array("q")
        self._execution_ends = array("q")  # -1: the values are the executions
        self._arrays: tuple[np.ndarray, np.ndarray] | None = None

    def add(self, name: str, values: Iterable[float], implementation: str,
            params: dict[str, Any], unit: str, per_execution: Iterable[float] | None,
            estimate: Estimate | None, *, unit_name: str, one_invocation: bool,
            cpu_pressure: float | None) -> None:
        """One more sample, with the fields of :class:`Sample` (``runs`` is None)."""
        self._arrays = None  # (an array viewed by numpy cannot grow)
        self._names.append(name)
        self._implementations.append(implementation)
        self._params.append(params or None)
        self._units.append(unit)
        self._unit_names.append(unit_name)
        self._estimates.append(estimate)
        self._pressures.append(cpu_pressure)
        self._one_invocation.append(one_invocation)
        self._values.extend(values)
        self._value_ends.append(len(self._values))
        self._execution_starts.append(len(self._executions))
        if per_execution is None:
            self._execution_ends.append(-1)
        else:
            self._executions.extend(per_execution)
            self._execution_ends.append(len(self._executions))

    def __len__(self) -> int:
        return len(self._names)

    def _columns(self) -> tuple[np.ndarray, np.ndarray]:
        if self._arrays is None:  # views of the arrays' memory, made once
            self._arrays = (np.frombuffer(self._values, dtype=float),
                            np.frombuffer(self._executions, dtype=float))
        return self._arrays

    def _at(self, i: int) -> Sample:
        values, executions = self._columns()
        start = self._value_ends[i - 1] if i else 0
        end = self._execution_ends[i]
        per_execution = None
        if end >= 0:
            per_execution = executions[self._execution_starts[i]:end].copy()
        params = self._params[i]
        return Sample(self._names[i], values[start:self._value_ends[i]].copy(),
                      self._implementations[i], dict(params) if params else {},
                      self._units[i], per_execution, self.source, self._estimates[i],
                      unit_name=self._unit_names[i],
                      one_invocation=bool(self._one_invocation[i]),
                      cpu_pressure=self._pressures[i])

    def keys(self) -> list[tuple[str, str, str]]:
        """Every sample's :attr:`Sample.key`, without making the samples."""
        return [(name, implementation or name,
                 ",".join(f"{k}={v}" for k, v in params.items()) if params else "")
                for name, implementation, params in zip(self._names, self._implementations,
                                                        self._params, strict=True)]


def sample_keys(samples: Sequence[Sample]) -> list[tuple[str, str, str]]:
    """The :attr:`Sample.key` of each of ``samples`` (read from the columns when it is a
    :class:`SampleColumns`)."""
    if isinstance(samples, SampleColumns):
        return samples.keys()
    return [s.key for s in samples]
