"""Every output shows the same headline: the case's Estimate.

For each measurement method a small benchmark runs on the simulated clock; the console logger's
output, the JSON, CSV, XML and Markdown files, the HTML report and ``compare`` reading the JSON
back must all give the same value, interval and confidence per case. The human-readable outputs
print the value to 3 significant digits and the interval as "± x.xx%", so numbers are compared
within that printed precision; the machine-readable ones (JSON, CSV, XML, compare) exactly.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path

import pytest
from rich.console import Console

import steadybench as sb
from steadybench.compare import CompareOptions, compare_files, read_samples
from steadybench.errors import ResultsFormatError
from steadybench.methods import METHOD_NAMES, make_method
from steadybench.model import CaseResult, Parameters, Results
from steadybench.model.estimate import LEVEL_EXECUTIONS, LEVEL_RUNS, Estimate
from steadybench.output.loggers import ConsoleLogger
from steadybench.output.report import write_report
from steadybench.output.results_io import load_results, results_to_json
from steadybench.output.writers import WRITERS
from steadybench.processors import finalize_case
from steadybench.testing import SimulatedClock, time_function

WORKS_NS = {"fast": 100_000, "slow": 250_000}
DASH = "—"
_SCALE = {"s": 1.0, "ms": 1e-3, "µs": 1e-6, "ns": 1e-9}
_NUMBER = re.compile(r"^(-?[0-9.]+(?:e[+-]?[0-9]+)?) (s|ms|µs|ns)$")
_CI = re.compile(r"^± ([0-9.]+)%$")


#: what the checks expect of a case without an estimate
_BLANK = dict.fromkeys(("value", "ci_low", "ci_high", "confidence", "unit", "statistic", "level",
                        "n_executions"))


@pytest.fixture(autouse=True)
def no_case_figures(monkeypatch: pytest.MonkeyPatch) -> None:
    """The report is read here for its tables (the headline of every case), never for its
    figures: no case gets figures of its own, which are most of a report's processor time
    (tests/test_report.py checks them)."""
    from steadybench.output import reportviews

    monkeypatch.setattr(reportviews, "MAX_CASE_FIGURES", 0)


# ============================================================================ parsing helpers
def _seconds(text: str) -> float:
    """'100 µs' → 1e-4."""
    match = _NUMBER.match(text.strip())
    assert match, f"not a time: {text!r}"
    return float(match.group(1)) * _SCALE[match.group(2)]


def _printed_tolerance(text: str) -> float:
    """Half a unit of the last of the 3 significant digits ``format_seconds`` prints."""
    match = _NUMBER.match(text.strip())
    assert match
    number = abs(float(match.group(1)))
    exponent = math.floor(math.log10(number)) if number else 0
    return 0.5 * 10 ** (exponent - 2) * _SCALE[match.group(2)] * (1 + 1e-9)


def _assert_value_printed(text: str, value: float | None, where: str) -> None:
    if value is None:
        assert text == DASH, f"{where}: {text!r} for no value"
        return
    assert abs(_seconds(text) - value) <= _printed_tolerance(text), \
        f"{where}: printed {text!r}, estimate {value!r}"


def _assert_ci_printed(text: str, est: dict, where: str) -> None:
    if est["value"] is None or est["ci_low"] is None:
        assert text == DASH, where
        return
    match = _CI.match(text)
    assert match, f"{where}: not an interval: {text!r}"
    relative = (est["ci_high"] - est["ci_low"]) / 2 / abs(est["value"]) * 100
    assert abs(float(match.group(1)) - relative) <= 0.005 + 1e-9, \
        f"{where}: printed {text!r}, relative half-width {relative:.4f}%"


def _console_table(text: str) -> tuple[list[str], list[list[str]]]:
    """Header and rows of the rich summary table (box-drawing characters)."""
    header: list[str] = []
    rows = []
    for line in text.splitlines():
        if line.startswith("┃"):
            header = [c.strip() for c in line.strip("┃").split("┃")]
        elif line.startswith("│"):
            rows.append([c.strip() for c in line.strip("│").split("│")])
    assert header and rows, text
    return header, rows


def _console_lines(text: str) -> dict[str, tuple[str, str]]:
    """label → (value text, CI text) from the line printed when each case ends."""
    out = {}
    for line in text.splitlines():
        match = re.match(r"^  (?P<label>.+?): (?:done|failed: .*?), n=\d+, .*? "
                         r"(?P<value>—|-?[0-9.]+(?:e[+-]?[0-9]+)? (?:s|ms|µs|ns)) "
                         r"(?P<ci>—|± [0-9.]+%)", line)
        if match:
            out[match["label"]] = (match["value"], match["ci"])
    return out


def _markdown_table(text: str) -> list[dict[str, str]]:
    lines = [line for line in text.splitlines() if line.startswith("|")]
    header = [c.strip() for c in lines[0].strip("|").split("|")]
    return [dict(zip(header, (c.strip() for c in line.strip("|").split(" | "))))
            for line in lines[2:]]


class _ReportParser(HTMLParser):
    """Cell texts of the summary table, and the estimate row of each case's section."""

    def __init__(self) -> None:
        super().__init__()
        self.header: list[str] = []
        self.rows: list[list[str]] = []
        self.case_rows: list[str] = []
        self._table = self._cell = self._estimate = False
        self._row: list[str] | None = None
        self._text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "table" and (a.get("id") or "").startswith("summary-"):
            self._table = True
        elif tag == "tr":
            self._row = []
            self._estimate = a.get("class") == "estimate" and not self._table
        elif tag in ("td", "th") and self._row is not None:
            self._cell, self._text = True, []

    def handle_endtag(self, tag: str) -> None:
        if tag == "table":
            self._table = False
        elif tag in ("td", "th") and self._cell:
            self._cell = False
            assert self._row is not None
            self._row.append("".join(self._text).strip())
        elif tag == "tr" and self._row is not None:
            if self._table:
                if self.header:
                    self.rows.append(self._row)
                else:
                    self.header = self._row
            elif self._estimate:
                self.case_rows.append(self._row[1])
            self._row = None

    def handle_data(self, data: str) -> None:
        if self._cell:
            self._text.append(data)


# ============================================================================ the benchmark
def _benchmark_results(method_name: str, console: Console, tmp_path: Path) -> Results:
    """Two cases measured with ``method_name`` on the simulated clock (noise and a few spikes,
    so robust estimates and the mean differ), logged to ``console`` and to every file format."""
    clock = SimulatedClock(read_cost_ns=8_500, jitter_ns=200, spike_prob=0.05, spike_ns=40_000,
                           seed=7)
    options = {"init": clock.workload(30_000)} if method_name == "initsplit" else {}
    runner = sb.Runner(sb.Runs(40), clock=clock, sleep=clock.sleep,
                       method=make_method(method_name, **options))
    bench = sb.Benchmark("work")
    for name, ns in WORKS_NS.items():
        work = clock.workload(ns)
        if method_name == "usertimed":  # the code times itself
            work = time_function(work, clock)
        bench.add_configuration(runner, sb.CallableImplementation(work, name=name))
    loggers = [ConsoleLogger(console=console, live=False),
               sb.JsonLogger(tmp_path / "r.json"), sb.CsvLogger(tmp_path / "r.csv"),
               sb.XmlLogger(tmp_path / "r.xml"), sb.MarkdownLogger(tmp_path / "r.md")]
    results = sb.Manager(f"agree-{method_name}", benchmarks=[bench], loggers=loggers).run()
    write_report([results], tmp_path / "r.html")
    return results


def _capture_console() -> tuple[Console, io.StringIO]:
    buffer = io.StringIO()
    return Console(file=buffer, width=200, color_system=None, force_terminal=False), buffer


def _check_every_output(results: Results, console_text: str, tmp_path: Path,
                        with_compare: bool = True) -> None:
    """The headline of every case agrees across the console, the files, the report and
    ``compare``."""
    data = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    raw = {(b["name"], b["implementation"]): b["estimate"] for b in data["benchmarks"]}
    labels = {(c.benchmark, c.implementation): c.label for c in results.cases}
    # JSON is the Estimate itself
    for case in results.cases:
        assert Estimate.from_dict(raw[(case.benchmark, case.implementation)]) == case.estimate
    estimates = {key: est or _BLANK for key, est in raw.items()}

    # console: the summary table and the line printed as each case ended
    header, rows = _console_table(console_text)
    table = {row[0]: dict(zip(header, row)) for row in rows}
    lines = _console_lines(console_text)
    shown: dict[tuple[str, str], dict[str, str]] = {}
    for key, est in estimates.items():
        row = table[labels[key]]
        value = est["value"]
        _assert_value_printed(row["estimate"], value, f"console table {key}")
        _assert_ci_printed(row["CI"], est, f"console table {key}")
        assert lines[labels[key]] == (row["estimate"], row["CI"]), "case line ≠ table"
        conf = f"{est['confidence'] * 100:.4g}%" if est["ci_low"] is not None else DASH
        assert row["conf."] == conf
        shown[key] = {"value": row["estimate"], "ci": row["CI"], "confidence": row["conf."]}

    # CSV and XML: the exact numbers
    for row in csv.DictReader((tmp_path / "r.csv").open(encoding="utf-8")):
        est = estimates[(row["benchmark"], row["implementation"])]
        for column, key in (("estimate", "value"), ("ci_low", "ci_low"),
                            ("ci_high", "ci_high"), ("confidence", "confidence")):
            assert (float(row[column]) if row[column] else None) == est[key], (column, row)
        assert row["statistic"] == (est["statistic"] or "") and row["level"] == (est["level"] or "")
        assert row["unit"] == (est["unit"] or "s")
        assert (int(row["n_executions"]) if row["n_executions"] else None) == est["n_executions"]
    for bench in ET.parse(tmp_path / "r.xml").getroot().iter("benchmark"):
        est = estimates[(bench.get("name"), bench.get("implementation"))]
        element = bench.find("estimate")
        for key in ("value", "ci_low", "ci_high", "confidence"):
            assert (float(element.get(key)) if element.get(key) else None) == est[key], key
        assert element.get("unit") == est["unit"] and element.get("level") == est["level"]
        assert (element.get("undefined") == "true") == (est["value"] is None)

    # Markdown and the HTML report print exactly what the console printed
    for row in _markdown_table((tmp_path / "r.md").read_text(encoding="utf-8")):
        key = (row["benchmark"], row["implementation"])
        assert (row["estimate"], row["CI"], row["confidence"]) == \
            (shown[key]["value"], shown[key]["ci"], shown[key]["confidence"]), row
    page = _ReportParser()
    page.feed((tmp_path / "r.html").read_text(encoding="utf-8"))
    assert {"estimate", "CI", "confidence"} <= set(page.header)
    by_label = {label: key for key, label in labels.items()}
    assert len(page.rows) == len(results.cases) == len(page.case_rows)
    for row, detail in zip(page.rows, page.case_rows):
        cells = dict(zip(page.header, row))
        key = by_label[cells["case"]]
        assert (cells["estimate"], cells["CI"], cells["confidence"]) == \
            (shown[key]["value"], shown[key]["ci"], shown[key]["confidence"])
        assert detail.startswith(shown[key]["value"])  # the case's own estimate row

    # compare reads the JSON back: each case's headline is the Estimate
    samples = read_samples(tmp_path / "r.json")
    for sample in samples.samples:
        assert sample.estimate == Estimate.from_dict(raw[(sample.name, sample.implementation)])
    if not with_compare:
        return
    doc = compare_files(str(tmp_path / "r.json"), str(tmp_path / "r.json"),
                        CompareOptions())[0].to_dict()
    assert len(doc["benchmarks"]) == len(results.cases)
    for row in doc["benchmarks"]:
        est = estimates[(row["benchmark"], row["implementation"])]
        assert row["base_estimate"] == est and row["new_estimate"] == est


@pytest.mark.parametrize("method_name", METHOD_NAMES)
@pytest.mark.slow
def test_every_output_shows_the_estimate(method_name, tmp_path):
    console, buffer = _capture_console()
    results = _benchmark_results(method_name, console, tmp_path)
    assert len(results.cases) == 2
    for case in results.cases:
        assert isinstance(case.estimate, Estimate) and case.estimate.ok, case.errors
        assert case.estimate.method == method_name and case.estimate.level == LEVEL_RUNS
    _check_every_output(results, buffer.getvalue(), tmp_path)


@pytest.mark.slow
def test_the_headline_is_not_the_sample_mean(tmp_path):
    """The check above would catch an output that shows the mean: here the estimate and the
    mean differ by far more than the printed precision."""
    console, buffer = _capture_console()
    results = _benchmark_results("initsplit", console, tmp_path)
    for case in results.cases:
        assert abs(case.stats["mean"] - case.estimate.value) > 0.05 * case.estimate.value
    _check_every_output(results, buffer.getvalue(), tmp_path)


def test_executions_level_headline_agrees(tmp_path):
    """With several executions the headline is the mean of the per-execution values and its
    interval is across executions: every output shows that, not the pooled statistic."""
    clock = SimulatedClock(read_cost_ns=8_500, jitter_ns=200, seed=3)
    method = make_method("auto")
    runner = sb.Runner(sb.Runs(30), clock=clock, sleep=clock.sleep, method=method)
    case = runner.execute(sb.CallableImplementation(clock.workload(100_000), name="exe"),
                          Parameters(), benchmark="work")
    case.processes = [{"value": v, "n": 10, "within_cov": 0.01}
                      for v in (1.00e-4, 1.04e-4, 1.10e-4)]
    finalize_case(case, (), method)
    est = case.estimate
    assert est.level == LEVEL_EXECUTIONS and est.n_executions == 3 and est.independent
    assert est.value == pytest.approx(1.0466666e-4) and est.ci_low < 1.0e-4 < est.ci_high
    results = Results("executions", cases=[case])
    console, buffer = _capture_console()
    logger = ConsoleLogger(console=console, live=False)
    logger.case_end(case)
    logger.finish(results)
    for fmt, writer in WRITERS.items():
        writer(results, tmp_path / ("r.md" if fmt == "markdown" else f"r.{fmt}"))
    write_report([results], tmp_path / "r.html")
    _check_every_output(results, buffer.getvalue(), tmp_path, with_compare=False)
    assert "105 µs" in buffer.getvalue()  # not the pooled median, 100 µs


@pytest.mark.slow
def test_cases_without_a_headline_render_everywhere(tmp_path):
    """No estimate, or a failed one: a dash (or an empty cell) everywhere, never a crash and
    never another statistic in its place."""
    clock = SimulatedClock(read_cost_ns=100, jitter_ns=20, seed=1)
    runner = sb.Runner(sb.Runs(10), clock=clock, sleep=clock.sleep)
    cases = []
    for name in ("none", "failed"):
        case = runner.execute(sb.CallableImplementation(clock.workload(1_000), name=name),
                              Parameters(), benchmark="b")
        finalize_case(case)
        cases.append(case)
    cases[0].estimate = None
    cases[1].estimate = Estimate.failed("the fit failed", method="linefit")
    cases[1].errors.append("the fit failed")
    results = Results("empty", cases=cases)
    console, buffer = _capture_console()
    logger = ConsoleLogger(console=console, live=False)
    for case in cases:
        logger.case_end(case)
    logger.finish(results)
    for fmt, writer in WRITERS.items():
        writer(results, tmp_path / ("r.md" if fmt == "markdown" else f"r.{fmt}"))
    write_report([results], tmp_path / "r.html")
    _check_every_output(results, buffer.getvalue(), tmp_path, with_compare=False)
    header, rows = _console_table(buffer.getvalue())
    assert all(dict(zip(header, r))["estimate"] == DASH for r in rows)
    assert read_samples(tmp_path / "r.json").samples[1].estimate.error == "the fit failed"


# ============================================================================ the JSON form
def test_estimate_json_round_trip():
    est = Estimate(1.5e-6, 1.4e-6, 1.6e-6, 0.95, unit="s", method="auto", statistic="median",
                   level=LEVEL_EXECUTIONS, n_executions=4, n_runs=200, within_cov=0.01,
                   between_cov=0.02, fields={"executions": 100, "bias": [1e-9, None]})
    data = est.to_dict()
    assert data["value"] == 1.5e-6 and data["fields"] == {"executions": 100, "bias": [1e-9, None]}
    assert set(data) == {"value", "ci_low", "ci_high", "confidence", "unit", "method",
                         "statistic", "level", "n_executions", "n_runs", "within_cov",
                         "between_cov", "fields", "error"}
    assert Estimate.from_dict(json.loads(json.dumps(data))) == est
    assert Estimate.from_dict(None) is None and Estimate.from_dict(est) is est
    failed = Estimate.failed("no fit", method="linefit")
    again = Estimate.from_dict(json.loads(json.dumps(failed.to_dict())))
    assert again == failed and not again.ok and again.error == "no fit"


def test_old_flat_estimate_dicts_are_read(tmp_path):
    """Files written before the typed Estimate hold a flat dict; its method figures go to
    ``fields`` and every output shows its value."""
    old = {"value": 2e-6, "ci_low": 1.9e-6, "ci_high": 2.1e-6, "confidence": 0.9,
           "overhead": 3e-8, "between_process_ci": [1.8e-6, 2.2e-6]}
    est = Estimate.from_dict(old)
    assert (est.value, est.ci_low, est.ci_high, est.confidence) == (2e-6, 1.9e-6, 2.1e-6, 0.9)
    assert est.fields == {"overhead": 3e-8, "between_process_ci": [1.8e-6, 2.2e-6]}
    assert est.figure("overhead") == 3e-8 and est.level == LEVEL_RUNS and est.unit == "s"
    case = CaseResult("old", "old")
    for v in (1e-6, 3e-6, 2e-6):
        case.add_run("ok", {"wall_time": v})
    data = json.loads(results_to_json(Results("old", cases=[case])))
    data["benchmarks"][0]["estimate"] = old
    path = tmp_path / "old.json"
    path.write_text(json.dumps(data))
    back = load_results(path)
    assert back.cases[0].estimate == est
    assert read_samples(path).samples[0].estimate == est
    for fmt, writer in WRITERS.items():
        writer(back, tmp_path / ("r.md" if fmt == "markdown" else f"r.{fmt}"))
    write_report([back], tmp_path / "r.html")
    row = next(csv.DictReader((tmp_path / "r.csv").open(encoding="utf-8")))
    assert float(row["estimate"]) == 2e-6 and float(row["confidence"]) == 0.9
    assert "| 2 µs | ± 5.00% | 90% |" in (tmp_path / "r.md").read_text(encoding="utf-8")


def test_malformed_estimate_is_one_clear_error(tmp_path):
    case = CaseResult("b", "b")
    case.add_run("ok", {"wall_time": 1.0})
    data = json.loads(results_to_json(Results(cases=[case])))
    data["benchmarks"][0]["estimate"] = [1, 2]
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ResultsFormatError, match="malformed"):
        load_results(path)


def test_a_wrapped_comparison_line_keeps_its_indent():
    """At 80 columns the demo's "no clear difference ... 1.036× [0.980, \\n1.082]" wrapped its
    interval to column 0; continuations keep the line's indent, with no trailing spaces."""
    import io

    from rich.console import Console

    from steadybench.output.console import print_indented

    buf = io.StringIO()
    console = Console(file=buf, width=40)
    print_indented(console, "  no clear difference between list_comprehension and generator: "
                            "1.036× [0.980, 1.082]")
    print_indented(console, "sum_of_squares [n=100]:")
    print_indented(console, "  bad \x1b[31mlabel")
    lines = buf.getvalue().splitlines()
    assert lines[:3] == ["  no clear difference between", "  list_comprehension and generator:",
                         "  1.036× [0.980, 1.082]"]
    assert lines[3] == "sum_of_squares [n=100]:"
    assert "\x1b" not in lines[4] and lines[4].startswith("  bad ")
    assert all(len(line) <= 40 and line == line.rstrip() for line in lines)
