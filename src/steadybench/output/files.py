"""Results files: JSON (lossless), XML, CSV (one summary row per case) and Markdown.

Every writer takes the whole Results and a path and writes atomically. JSON is the format that
reads back without loss (``load_results``); the others are for people and spreadsheets.

Each format's headline for a case is its :class:`~steadybench.model.estimate.Estimate` (the
figure the console shows): the ``<estimate>`` element in XML, the ``estimate``, ``ci_low``,
``ci_high``, ``confidence`` and ``unit`` columns in CSV, the ``estimate``, ``CI`` and
``confidence`` columns in Markdown. The mean, median and spread of the samples follow, labelled
as descriptive (``sample_*``).
"""

from __future__ import annotations

import csv
import io
import math
import os
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..model.estimate import Estimate
from ..model.results import Results
from ..stats.summary import STAT_KEYS
from .format import (
    UNDEFINED,
    case_estimate,
    confidence_text,
    estimate_ci_text,
    estimate_unit,
    estimate_value_text,
    format_params,
    format_percent,
    format_value,
    markdown_text,
)
from .rates import rate_fields, rates_text
from .results_io import _finite
from .sanitize import csv_text, xml_text

Writer = Callable[[Results, "str | os.PathLike[str]"], Path]


def _xml_value(parent: ET.Element, tag: str, value: Any) -> None:
    """Append ``value`` under ``parent``: dicts as children, lists as <item>s, scalars as text."""
    element = ET.SubElement(parent, tag)
    if isinstance(value, dict):
        for key, item in value.items():
            child_tag = key if str(key).isidentifier() and str(key).isascii() else "entry"
            _xml_value(element, child_tag, item)
            if child_tag == "entry":
                element[-1].set("key", str(key))
    elif isinstance(value, list | tuple):
        for item in value:
            _xml_value(element, "item", item)
    elif value is None:
        element.set("undefined", "true")
    else:
        element.text = str(value)


#: the headline attributes of ``<estimate>`` in XML and the headline columns of CSV, in order
HEADLINE_KEYS = ("value", "ci_low", "ci_high", "confidence", "unit", "method", "statistic",
                 "level", "n_executions", "n_runs", "within_cov", "between_cov")


def _xml_text(value: Any) -> str:
    return repr(float(value)) if isinstance(value, float) else str(value)


def _xml_estimate(parent: ET.Element, data: dict[str, Any] | None) -> None:
    """``<estimate value=… ci_low=… ci_high=… confidence=… unit=… …>``: the case's headline
    as attributes (absent when undefined; ``undefined="true"`` when there is no value), the
    method's figures under ``<fields>`` and the reason for no value under ``<error>``."""
    element = ET.SubElement(parent, "estimate")
    est = Estimate.from_dict(data) if data else None
    if est is None:
        element.set("undefined", "true")
        return
    for key in HEADLINE_KEYS:
        if getattr(est, key) is not None:
            element.set(key, _xml_text(getattr(est, key)))
    if est.value is None:
        element.set("undefined", "true")
    if est.fields:
        _xml_value(element, "fields", est.fields)
    if est.error:
        ET.SubElement(element, "error").text = str(est.error)


def results_to_xml(results: Results) -> str:
    data = _finite(results.to_dict())
    root = ET.Element(
        "results",
        {
            "schema_version": str(data["schema_version"]),
            "suite": data["suite"],
            "created": data["created"],
            "interrupted": str(data["interrupted"]).lower(),
        },
    )
    _xml_value(root, "environment", data["environment"])
    _xml_value(root, "context", data["context"])
    for bench in data["benchmarks"]:
        element = ET.SubElement(
            root,
            "benchmark",
            {
                "name": bench["name"],
                "implementation": bench["implementation"],
                "method": bench["method"],
                "unit": bench["unit"],
                "n": str(bench["n"]),
                "status": bench["status"],
            },
        )
        params = ET.SubElement(element, "params")
        for key, value in bench["params"].items():
            ET.SubElement(params, "param", {"name": str(key), "value": str(value)})
        stats = ET.SubElement(element, "stats")
        for key, value in bench["stats"].items():
            if value is not None:
                stats.set(key, repr(value))
        if bench["ci"]:
            ET.SubElement(element, "ci", {"of": "mean", **{k: str(v) for k, v in
                                                           bench["ci"].items()}})
        ET.SubElement(element, "stop_reason").text = bench["stop_reason"]
        for tag in ("warnings", "errors"):
            group = ET.SubElement(element, tag)
            for message in bench[tag]:
                ET.SubElement(group, tag[:-1]).text = message
        if bench.get("samples") is not None:
            ET.SubElement(element, "samples").text = " ".join(repr(v) for v in bench["samples"])
        _xml_estimate(element, bench.get("estimate"))
    _clean_tree(root)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _clean_tree(root: ET.Element) -> None:
    """Make every text, tail and attribute of the tree valid XML 1.0 (:func:`xml_text`), so
    control characters in a name or message cannot make the document ill-formed."""
    for element in root.iter():
        if element.text is not None:
            element.text = xml_text(element.text)
        if element.tail is not None:
            element.tail = xml_text(element.tail)
        for key, value in list(element.attrib.items()):
            element.attrib[key] = xml_text("" if value is None else value)


#: CSV columns: the case, its headline (the Estimate: ``estimate`` is its value, in ``unit``),
#: then descriptive statistics of the samples (``sample_*``, in the case's unit)
CSV_COLUMNS = [
    "benchmark",
    "implementation",
    "params",
    "method",
    "n",
    "status",
    "estimate",
    "ci_low",
    "ci_high",
    "confidence",
    "unit",
    "statistic",
    "level",
    "n_executions",
    "n_runs",
    *[f"sample_{k}" for k in STAT_KEYS],
    "stop_reason",
    "warnings",
    # Google Benchmark's rates, when the benchmark declares what one call processes
    "items_per_second",
    "bytes_per_second",
]


def _cell(value: Any) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return ""
    return repr(float(value)) if isinstance(value, float) else str(value)


def results_to_csv(results: Results) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for case in results.cases:
        est = case_estimate(case)
        headline = [est.value, est.ci_low, est.ci_high, est.confidence, est.unit, est.statistic,
                    est.level, est.n_executions, est.n_runs] if est is not None \
            else [None, None, None, None, case.unit, None, None, None, None]
        writer.writerow(
            [
                csv_text(case.benchmark),
                csv_text(case.implementation),
                csv_text(format_params(case.params)),
                csv_text(case.method),
                case.n,
                csv_text(case.state),
                *(_cell(v) for v in headline),
                *(_cell(case.stats.get(k)) for k in STAT_KEYS),
                csv_text(case.stop_reason or ""),
                csv_text(" | ".join(case.warnings + case.errors)),
                _cell(rate_fields(case).get("items_per_second")),
                _cell(rate_fields(case).get("bytes_per_second")),
            ]
        )
    return out.getvalue()


_md = markdown_text


def results_to_markdown(results: Results) -> str:
    lines = [f"# {_md(results.suite)}", ""]
    env = results.environment
    if env:
        py = env.get("python") if isinstance(env.get("python"), dict) else {}
        lines += [
            f"- Python {_md(py.get('version', '?'))} ({_md(py.get('implementation', '?'))}), "
            f"{_md(env.get('platform', '?'))}",
            f"- CPU: {_md(env.get('cpu_model', '?'))}, {_md(env.get('cpu_count', '?'))} cores; "
            f"host {_md(env.get('hostname', '?'))}; {_md(env.get('time', ''))}",
            "",
        ]
    if results.interrupted:
        lines += ["**Interrupted: partial results.**", ""]
    from .markdown import markdown_table

    with_rates = any((c.extra or {}).get("throughput") for c in results.cases)
    header = ["benchmark", "implementation", "params", "n", "estimate", "CI", "confidence",
              "statistic", *(["rate"] if with_rates else []), "sample mean", "sample median",
              "sample CoV", "sample min", "sample max", "stop reason"]
    align = ["", "", "", "right", "right", "right", "right", "",
             *(["right"] if with_rates else []), "right", "right", "right", "right", "right", ""]
    rows = []
    for case in results.cases:
        s = case.stats
        est = case_estimate(case)
        unit = estimate_unit(case)
        reason = f"FAILED: {case.errors[0]}" if case.errors else case.stop_reason
        rows.append([_md(x) for x in (
            case.benchmark,
            case.implementation,
            format_params(case.params) or UNDEFINED,
            case.n,
            estimate_value_text(est),
            estimate_ci_text(est),
            confidence_text(est),
            (est.statistic if est is not None and est.ok else "") or UNDEFINED,
            *([rates_text(case)] if with_rates else []),
            format_value(s.get("mean"), unit),
            format_value(s.get("median"), unit),
            format_percent(s.get("cov")),
            format_value(s.get("min"), unit),
            format_value(s.get("max"), unit),
            reason,
        )])
    lines += markdown_table(header, rows, align).rstrip("\n").split("\n")
    notes = [(case.label, w) for case in results.cases for w in case.warnings]
    if notes:
        lines += ["", "## Warnings", ""] + [f"- {_md(label)}: {_md(w)}" for label, w in notes]
    return "\n".join(lines) + "\n"
