"""Reading and writing steadybench results files (JSON, schema in ``docs/results-schema.md``)."""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import ResultsFormatError
from ..fileio import atomic_write_text, read_user_json
from ..model.results import SCHEMA_VERSION, CaseResult, Results
from .results_check import time_problem


def _finite(obj: Any) -> Any:
    """Replace NaN and infinities (not valid JSON) by None, recursively."""
    kind = type(obj)
    if kind is str or kind is int or kind is bool or obj is None:  # most leaves: at once
        return obj
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {str(k): _finite(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_finite(v) for v in obj]
    if hasattr(obj, "item") and callable(obj.item):  # numpy scalars
        return _finite(obj.item())
    return obj


#: the types :func:`finite_in_place` leaves as they are without a look inside (a subclass of
#: them, e.g. an ``IntEnum``, is handed to :func:`_finite` as before)
_LEAVES = frozenset((str, int, bool, type(None)))


def finite_in_place(obj: Any) -> Any:
    """:func:`_finite` without the copy: the dicts and lists of ``obj`` are changed where they
    are, so a document of 10^6 benchmarks is not held twice (issue 27 item 13). Only for a
    document nothing else refers to (a fresh ``to_dict()``). Returns the document.

    Plain floats, most of a document's numbers, are settled here without a call (a NaN or an
    infinity ``x`` is the one float with ``x - x != 0``): the call per number was a quarter of
    ``history import``'s processor time."""
    if isinstance(obj, dict):
        for key, value in obj.items():
            kind = type(value)
            if kind is float:
                if value - value != 0:
                    obj[key] = None
            elif kind not in _LEAVES:  # a type test first: most values are leaves
                obj[key] = finite_in_place(value)
        if not set(map(type, obj)) <= _STR:  # a key that is not a str: all made str
            return {str(k): v for k, v in obj.items()}
        return obj
    if type(obj) is list:
        for i, value in enumerate(obj):
            kind = type(value)
            if kind is float:
                if value - value != 0:
                    obj[i] = None
            elif kind not in _LEAVES:
                obj[i] = finite_in_place(value)
        return obj
    return _finite(obj)


_STR = frozenset((str,))


def results_to_json(results: Results, indent: int | None = 1) -> str:
    # default=str: a parameter value JSON has no type for (an object, a set) is kept as its text
    return json.dumps(_finite(results.to_dict()), indent=indent, allow_nan=False,
                      default=str) + "\n"


def write_results(results: Results, path: str | os.PathLike[str]) -> Path:
    """Write results as JSON, atomically."""
    return atomic_write_text(path, results_to_json(results))


def results_from_data(data: Any, source: str = "<data>", *, consume: bool = False) -> Results:
    """Build Results from parsed JSON, checking that it is a steadybench file we can read.

    ``consume``: the entries of ``data["benchmarks"]`` are replaced by None as their cases are
    made, so the parsed file and its cases are not both held whole (about 500 and 1,300 bytes
    a benchmark of three values: the report of 10^6 peaked there; issue 27 item 13). Only for
    a document nothing else reads afterwards."""
    check_results_data(data, source)
    try:
        if consume:
            entries = data["benchmarks"]
            results = Results.from_dict({**data, "benchmarks": []})
            for i, entry in enumerate(entries):
                results.cases.append(CaseResult.from_dict(entry))
                entries[i] = None
            return results
        return Results.from_dict(data)
    # AttributeError: a field of the wrong kind, e.g. an ``estimate`` that is not an object
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise ResultsFormatError(
            f"{source}: malformed results file ({type(exc).__name__}: {exc})"
        ) from exc


def check_results_data(data: Any, source: str = "<data>") -> None:
    """Raise :class:`ResultsFormatError` unless ``data`` is a steadybench results document we
    can read: its version, its ``environment``/``context`` objects, and each benchmark's name,
    implementation and times (:func:`~steadybench.output.results_check.time_problem`)."""
    if not isinstance(data, dict) or "benchmarks" not in data or "schema_version" not in data:
        raise ResultsFormatError(
            f"{source}: not a steadybench results file (no 'schema_version' and 'benchmarks')"
        )
    version = data["schema_version"]
    if not isinstance(version, int) or version > SCHEMA_VERSION or version < 1:
        raise ResultsFormatError(
            f"{source}: results schema version {version!r} is not supported "
            f"(this steadybench reads versions 1 to {SCHEMA_VERSION})"
        )
    for key in ("environment", "context"):
        if data.get(key) is not None and not isinstance(data[key], dict):
            raise ResultsFormatError(f"{source}: malformed results file ({key!r} is "
                                     f"{type(data[key]).__name__}, not an object)")
    benchmarks = data["benchmarks"]
    if not isinstance(benchmarks, list):
        raise ResultsFormatError(f"{source}: malformed results file ('benchmarks' is not a list)")
    for i, entry in enumerate(benchmarks):
        if not isinstance(entry, dict):
            raise ResultsFormatError(f"{source}: malformed results file (benchmarks[{i}] is "
                                     f"{type(entry).__name__}, not an object)")
        if not isinstance(entry.get("name"), str):
            raise ResultsFormatError(f"{source}: malformed results file (benchmarks[{i}].name "
                                     f"is {type(entry.get('name')).__name__}, not text)")
        for key in ("name", "implementation"):
            if entry.get(key) is not None and not isinstance(entry[key], str):
                raise ResultsFormatError(f"{source}: malformed results file (benchmarks[{i}]."
                                         f"{key} is {type(entry[key]).__name__}, not text)")
        problem = time_problem(entry)
        if problem:
            raise ResultsFormatError(f"{source}: malformed results file (benchmark "
                                     f"{entry['name']!r}: {problem}, not a time)")
        at = f"benchmarks[{i}]."
        _check_fields(entry, BENCHMARK_FIELDS, at, source)
        for part, kinds in NESTED_FIELDS.items():
            if isinstance(entry.get(part), dict):
                _check_fields(entry[part], kinds(entry[part]), f"{at}{part}.", source)
        status = entry["runs"].get("status") if isinstance(entry.get("runs"), dict) else None
        if any(not isinstance(s, str) for s in status or []):
            raise ResultsFormatError(f"{source}: malformed results file ({at}runs.status "
                                     "holds something other than text)")
    _check_fields(data, TOP_FIELDS, "", source)


_NUMBER = (int, float)
#: the kinds of the fields a reader relies on (docs/results-schema.md); null stands for a
#: missing field. A field of another kind (an object for a name, a list for a number) is one
#: clear error, not an internal one (issue 27, the fault matrix's mutated results)
TOP_FIELDS: dict[str, tuple[type, ...]] = {"suite": (str,), "created": (str,)}
BENCHMARK_FIELDS: dict[str, tuple[type, ...]] = {
    "method": (str,), "analyses": (dict,), "unit": (str,), "params": (dict,),
    "warnings": (list,), "estimate": (dict,), "runs": (dict,), "ci": (dict,),
    "stats": (dict,), "extra": (dict,), "units": (dict,), "stream": (dict,),
    "processes": (list,)}
#: the interval of the mean (``ci``)
CI_FIELDS: dict[str, tuple[type, ...]] = {"low": _NUMBER, "high": _NUMBER,
                                          "confidence": _NUMBER, "method": (str,)}
ESTIMATE_FIELDS: dict[str, tuple[type, ...]] = {
    "confidence": _NUMBER, "n_executions": _NUMBER, "unit": (str,), "method": (str,),
    "level": (str,)}
#: the runs are stored column-wise: each field a list, one value per run
RUNS_FIELDS: dict[str, tuple[type, ...]] = {"status": (list,), "metrics": (dict,)}
#: the objects inside a benchmark whose fields are checked, and their kinds (``stats``: every
#: figure a number)
NESTED_FIELDS: dict[str, Callable[[dict[str, Any]], dict[str, tuple[type, ...]]]] = {
    "ci": lambda _: CI_FIELDS, "stats": lambda stats: dict.fromkeys(stats, _NUMBER),
    "estimate": lambda _: ESTIMATE_FIELDS, "runs": lambda _: RUNS_FIELDS}
#: fields steadybench always writes with a value: a null there is refused like another kind
NEVER_NULL = frozenset({"suite", "method", "n_executions"})
_KIND = {str: "text", dict: "an object", list: "a list", int: "a number", float: "a number"}


def _check_fields(holder: dict[str, Any], kinds: dict[str, tuple[type, ...]], where: str,
                  source: str) -> None:
    """One clear error for the first field of ``holder`` whose kind ``kinds`` does not allow
    (``where``: the holder's place in the file, ending in a dot, empty at the top)."""
    for key, allowed in kinds.items():
        value = holder.get(key)
        if value is None and not (key in NEVER_NULL and key in holder):
            continue
        if isinstance(value, bool) or not isinstance(value, allowed):
            want = " or ".join(dict.fromkeys(_KIND[t] for t in allowed))
            raise ResultsFormatError(
                f"{source}: malformed results file ({where}{key} is "
                f"{'null' if value is None else type(value).__name__}, not {want})")


def load_results(path: str | os.PathLike[str]) -> Results:
    """Read a steadybench JSON results file; one clear error for anything else."""
    return results_from_data(read_user_json(path, ResultsFormatError), str(path))
