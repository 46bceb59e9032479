"""Issue 27 item 17: escape and format injection in the exports.

The native CSV, the HTML report and hyperfine's CSV and Markdown exports kept raw ESC from
names; a line break in a name broke the hyperfine Markdown table; XML kept U+202E; CSV formulas
(``=HYPERLINK(...)``) were not neutralised; ``system show`` and ``system tune --dry-run`` printed
OSC/CSI sequences read from sysfs values.
"""

from __future__ import annotations

import csv
import io

import pytest
from hostile_text import ALL, TERMINAL, hostile_results
from markdown_it import MarkdownIt

from fake_machine import CPU, make_machine, put
from steadybench.cli import main
from steadybench.output.files import results_to_csv, results_to_xml
from steadybench.output.report import write_report
from steadybench.programs.hyperfine import to_csv, to_markdown

#: characters that must never reach a file or a terminal raw
RAW = ["\x1b", "\x9b", "\x07", "\u202e", "\x00"]
FORMULAS = ["=HYPERLINK(\"http://x.test\",\"click\")", "+1+1", "-2+3", "@SUM(A1)"]


def _no_raw(text: str) -> None:
    assert [c for c in RAW if c in text] == []


def test_native_csv_has_no_escape_and_no_formula():
    text = results_to_csv(hostile_results(ALL + FORMULAS))
    _no_raw(text)
    rows = list(csv.reader(io.StringIO(text)))[1:]
    assert len(rows) == len(ALL + FORMULAS)  # a line break in a name did not add a row
    for row in rows:
        for cell in row:
            assert not cell.startswith(("=", "+", "-", "@")), cell


def test_hyperfine_exports_are_inert():
    results = hostile_results(ALL + FORMULAS)
    text = to_csv(results)
    _no_raw(text)
    for row in list(csv.reader(io.StringIO(text)))[1:]:
        assert not row[0].startswith(("=", "+", "-", "@")), row[0]
    table = to_markdown(results)
    _no_raw(table)
    lines = table.strip().splitlines()
    assert len(lines) == 2 + len(ALL + FORMULAS)  # one row per command, whatever its name
    tokens = MarkdownIt("commonmark").enable("table").parse(table)
    rows = [t for t in tokens if t.type == "tr_open"]
    assert len(rows) == 1 + len(ALL + FORMULAS)
    cells = [t for t in tokens if t.type == "td_open"]
    assert len(cells) == 5 * len(ALL + FORMULAS)  # no name added a cell


@pytest.mark.parametrize("text", ["a", "a`b", "``x``", "`", "a|b", "line\nbreak", "\x1b[2J"])
def test_code_span_shows_the_text(text):
    from steadybench.programs.hyperfine import code_span

    span = code_span(text)
    html = MarkdownIt("commonmark").enable("table").renderInline(span)
    assert html.startswith("<code>") and "\n" not in span and "\x1b" not in span


def test_xml_shows_bidi_overrides_escaped():
    text = results_to_xml(hostile_results(TERMINAL))
    _no_raw(text)
    assert "\\u202e" in text


def test_html_report_shows_no_raw_escape(tmp_path):
    html = write_report([hostile_results(TERMINAL + FORMULAS)], tmp_path / "r.html").read_text()
    _no_raw(html)
    assert "\\x1b" in html


@pytest.mark.parametrize("value", ["\x1b]0;pwned\x07", "\x1b[2J\x1b[31mred", "gov\x9b31m"])
def test_system_commands_print_no_escape_read_from_sysfs(tmp_path, monkeypatch, capsys, value):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    root = make_machine(tmp_path / "m")
    put(root, f"{CPU}/cpu0/cpufreq/scaling_governor", value + "\n")
    put(root, f"{CPU}/cpu0/cpufreq/scaling_available_governors",
        f"performance powersave {value}\n")
    for args in (["system", "show", "--interval", "0"], ["system", "tune", "--dry-run"],
                 ["system", "check", "--interval", "0"]):
        main(["--root", str(root), *args])
        out, err = capsys.readouterr()
        _no_raw(out + err)


def test_figures_show_escapes_and_warn_nothing_raw(tmp_path, capsys):
    """Found by the fault matrix: Matplotlib warned of the missing glyph of a raw ESC in a
    figure's title, printing the ESC on the terminal."""
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        write_report([hostile_results(TERMINAL)], tmp_path / "r.html")
    _no_raw(" ".join(str(w.message) for w in caught))
    _no_raw(capsys.readouterr().err)
