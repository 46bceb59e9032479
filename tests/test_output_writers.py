"""The output-format registry (steadybench.output.writers, steadybench.registry.writers) and
the one Markdown table writer (steadybench.output.markdown)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

from steadybench import registry
from steadybench.cli import main
from steadybench.errors import ConfigurationError
from steadybench.formats import render
from steadybench.output.markdown import markdown_table
from steadybench.output.writers import ResultsWriter, builtin_writers, writer
from steadybench.pytest_plugin.formats import result_formats

BENCH = "import steadybench as sb\n\n@sb.benchmark()\ndef f():\n    return lambda: sum(range(50))\n"


def test_markdown_table_lays_out_header_rule_and_rows():
    assert markdown_table(["a", "b"], [["1", "2"], [3, 4]], ["", "right"]) == \
        "| a | b |\n|---|---:|\n| 1 | 2 |\n| 3 | 4 |\n"
    assert markdown_table(["a"], [], ["left"]) == "| a |\n|:---|\n"
    with pytest.raises(ValueError, match="3 cells"):
        markdown_table(["a", "b"], [["1", "2", "3"]])
    with pytest.raises(ValueError, match="alignments"):
        markdown_table(["a", "b"], [], ["right"])


def test_the_registry_holds_every_builtin_format():
    names = registry.writers.builtin_names()
    assert names == ("steadybench", "xml", "csv", "markdown", "bmf",
                     "github-action-benchmark", "pytest-benchmark")
    options = [cls.option for cls in builtin_writers()]
    assert options == ["json", "xml", "csv", "markdown", "bmf", "gab", "pb-json"]
    assert len(set(options)) == len(options)
    with pytest.raises(ConfigurationError, match="unknown output format 'yaml'; choose one of "
                                                 "steadybench, xml"):
        writer("yaml")
    # the plugin offers every format but Markdown, which there is the comparison's table
    assert [o for o, _ in result_formats()] == [
        "--steadybench-json", "--steadybench-xml", "--steadybench-csv", "--steadybench-bmf",
        "--steadybench-gab", "--steadybench-pb-json"]


def test_run_writes_every_format_through_the_registry(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "b.py").write_text(BENCH)
    args = ["run", "b.py", "-p", "2", "--max-time", "0.02", "-q"]
    for cls in builtin_writers():
        args += [f"--{cls.option}", f"out.{cls.option}"]
    assert main(args) == 0
    results = json.loads((tmp_path / "out.json").read_text())
    assert results["benchmarks"][0]["name"] == "f"
    bmf = json.loads((tmp_path / "out.bmf").read_text())
    assert bmf["f"]["latency"]["value"] > 0  # nanoseconds, Bencher's unit for latency
    gab = json.loads((tmp_path / "out.gab").read_text())
    assert gab[0]["name"] == "f" and gab[0]["value"] > 0
    pb = json.loads((tmp_path / "out.pb-json").read_text())
    assert pb["benchmarks"][0]["name"] == "f"
    assert ET.parse(tmp_path / "out.xml").getroot().find("benchmark").get("name") == "f"
    assert (tmp_path / "out.csv").read_text().splitlines()[0].startswith("benchmark,")
    assert "| benchmark | implementation |" in (tmp_path / "out.markdown").read_text()


def test_a_new_format_is_one_class(tmp_path, capsys):
    class Lines(ResultsWriter):
        name, option, label = "lines", "lines", "one line per case"

        def render(self, results):
            return "".join(f"{c.benchmark} {c.n}\n" for c in results.cases)

    registry.writers.register("lines", Lines)
    try:
        from steadybench.model.results import CaseResult, Results

        case = CaseResult("f", "f")
        case.add_run("ok", {"wall_time": 1.0})
        assert render("lines", Results(suite="s", cases=[case])) == "f 1\n"
        path = tmp_path / "r.lines"
        assert writer("lines").write(Results(suite="s", cases=[case]), path) == path
        assert path.read_text() == "f 1\n"
    finally:
        registry.writers.unregister("lines")
    assert "lines" not in registry.writers
