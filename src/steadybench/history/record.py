"""One entry of the history: a result with where and when it was measured.

A :class:`Record` holds the full steadybench results (the same JSON as ``--json`` writes), the
git commit, branch and dirty flag, the time, the machine (an identity made from the host, CPU
and Python build, :func:`machine_id`) with its full fingerprint, the preset, and where the result
came from (``steadybench``, or an imported ``pytest-benchmark`` or ``asv`` file).
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, field
from typing import Any

from ..model.estimate import Estimate
from ..model.execution import execution_values
from ..model.labels import case_label
from ..model.results import cpu_pressure_of
from .git import GitInfo


def machine_id(environment: dict[str, Any] | None) -> str:
    """A short, stable name for the machine a result was measured on: the host name with a hash
    of the CPU model, CPU count, architecture and Python implementation and version.

    Two results share it when they come from the same host and interpreter: the unit the
    run-to-run noise is learned for (:mod:`steadybench.history.noise`).
    """
    # a results file's environment is what the file says: any of its parts may be missing or
    # of another shape (a hand-written "python": "3.12" is a version)
    env = environment if isinstance(environment, dict) else {}
    fp = env.get("fingerprint") if isinstance(env.get("fingerprint"), dict) else {}
    py = env.get("python") or fp.get("python") or {}
    if not isinstance(py, dict):
        py = {"version": str(py)}
    parts = {
        "host": env.get("hostname") or fp.get("hostname") or "unknown-host",
        "cpu": env.get("cpu_model") or fp.get("cpu_model"),
        "cpus": env.get("cpu_count") or fp.get("cpu_count"),
        "arch": env.get("machine") or fp.get("machine"),
        "python": [py.get("implementation"), py.get("version")],
    }
    digest = hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()
    return f"{parts['host']}-{digest[:8]}"


#: environment variable naming the machine class a result counts for (e.g. "gha-ubuntu-latest"
#: on CI runners, whose host names change from run to run)
MACHINE_VARIABLE = "STEADYBENCH_MACHINE"


def current_machine(environment: dict[str, Any] | None) -> str:
    """The machine a result is recorded for: :data:`MACHINE_VARIABLE` when set, else
    :func:`machine_id` of its environment. The assumption, stated: every host that shares a
    name has the same speed and noise (true of one CI runner type, not of a laptop and a CI
    runner)."""
    import os

    named = os.environ.get(MACHINE_VARIABLE, "").strip()
    return named or machine_id(environment)


def _finite(value: Any) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


@dataclass(frozen=True, slots=True)
class MeasurementRow:
    """One benchmark of a record as the ``measurements`` table holds it: its label, headline,
    interval and the per-execution values (the single value when it ran in one execution).
    Slotted: ``history import`` holds one per benchmark (10^6) until they are inserted."""

    label: str
    benchmark: str
    implementation: str
    #: the parameters as ``k=v,k=v``
    params: str
    unit: str
    value: float
    ci_low: float | None
    ci_high: float | None
    level: str | None
    n_executions: int
    executions: list[float]
    #: what produced a count (:func:`identity_of`); None for a time
    identity: str | None = None
    #: the share of the case's time the CPU was contended (:mod:`steadybench.cpu_pressure`)
    cpu_pressure: float | None = None


def _headline(entry: dict[str, Any]) -> tuple[Estimate | None, dict[str, Any]]:
    """The entry's estimate, read as an :class:`Estimate` (None when absent or unreadable),
    and its raw mapping."""
    raw = entry.get("estimate") or {}
    raw = raw if isinstance(raw, dict) else {}
    try:
        return Estimate.from_dict(raw), raw
    except (TypeError, ValueError):
        return None, raw


def _samples_mean(samples: Any) -> float | None:
    """The mean of a case's finite ``samples`` (None when it has none)."""
    if not isinstance(samples, list):
        return None
    values = [v for v in map(_finite, samples) if v is not None]
    return math.fsum(values) / len(values) if values else None


def identity_of(entry: dict[str, Any]) -> str | None:
    """What produced a benchmark's counts (``extra.counts.identity``: valgrind, interpreter or
    program, layouts and method), as canonical JSON; None for a time or a result without it."""
    counts = (entry.get("extra") or {}).get("counts") if isinstance(entry.get("extra"),
                                                                    dict) else None
    identity = counts.get("identity") if isinstance(counts, dict) else None
    if not isinstance(identity, dict):
        return None
    return json.dumps(identity, sort_keys=True, default=str)


def measurements_of(data: dict[str, Any]) -> list[MeasurementRow]:
    """One row per benchmark of a results document (see :class:`MeasurementRow`), with, for
    counts, what produced them (:func:`identity_of`)."""
    rows = []
    for entry in data.get("benchmarks") or []:
        if not isinstance(entry, dict):
            continue
        name = str(entry.get("name", ""))
        impl = str(entry.get("implementation") or name)
        params = entry.get("params") or {}
        params = params if isinstance(params, dict) else {}
        est, raw = _headline(entry)
        value = _finite(est.value) if est is not None else None
        executions = execution_values(entry.get("processes"))
        if value is None and not executions:
            # a file with samples and no estimate (made by hand or converted): one execution,
            # the mean of its samples, the value ``direct`` gives it (issue 27 item 13: such a
            # file of 10^6 benchmarks was "nothing to record")
            value = _samples_mean(entry.get("samples"))
        if not executions and value is not None:
            executions = [value]
        if value is None and not executions:
            continue
        rows.append(MeasurementRow(
            label=case_label(name, impl, params),
            benchmark=name, implementation=impl,
            params=",".join(f"{k}={v}" for k, v in params.items()),
            unit=str(entry.get("unit") or (est.unit if est is not None else None) or "s"),
            value=value if value is not None else float(sorted(executions)[len(executions)
                                                                           // 2]),
            ci_low=_finite(est.ci_low) if est is not None else None,
            ci_high=_finite(est.ci_high) if est is not None else None,
            # an estimate written before levels were recorded has none (not the default)
            level=est.level if est is not None and "level" in raw else None,
            n_executions=len(executions), executions=executions,
            identity=identity_of(entry), cpu_pressure=cpu_pressure_of(entry),
        ))
    return rows


@dataclass
class Record:
    """A recorded result. ``results`` is the steadybench results document (a dict)."""

    results: dict[str, Any]
    id: int | None = None
    created: str = ""
    name: str | None = None
    command: str | None = None
    git: GitInfo = field(default_factory=GitInfo)
    machine: str = ""
    fingerprint: dict[str, Any] | None = None
    preset: str | None = None
    source: str = "steadybench"
    #: benchmarks in the record, when read without its results
    count: int | None = None

    @property
    def benchmarks(self) -> list[str]:
        return [row.label for row in measurements_of(self.results)]

    def summary(self) -> dict[str, Any]:
        """The record without its results (for listings and JSON)."""
        return {"id": self.id, "created": self.created, "name": self.name,
                "command": self.command, "commit": self.git.commit, "branch": self.git.branch,
                "dirty": self.git.dirty, "git_note": self.git.note, "machine": self.machine,
                "preset": self.preset, "source": self.source,
                "benchmarks": len(self.benchmarks) if self.results or self.count is None
                else self.count}

    def to_dict(self) -> dict[str, Any]:
        return {**self.summary(), "fingerprint": self.fingerprint, "results": self.results}


def preset_of(results: dict[str, Any]) -> str | None:
    """The preset a results document was measured with (``context.machine.preset``)."""
    machine = (results.get("context") or {}).get("machine")
    if isinstance(machine, dict) and machine.get("preset"):
        return str(machine["preset"])
    return None
