"""Issue 27 item 13: results files of very many benchmarks.

A file of 10^6 benchmarks (84 MB) took ``compare`` 146 s and 7.6 GB, ``report`` more than
300 s, and ``history import`` 5.7 GB before it said "nothing to record". The measured figures
are printed by ``benchmarks/memory_large_inputs.py``; these tests check the mechanisms on small
files, with the limits lowered: the terminal table shows at most ``TERMINAL_ROWS`` rows (rich
laid out 10^6 rows for minutes), the report draws figures for at most ``MAX_CASE_FIGURES``
cases (it drew one per case), and a file whose benchmarks have samples but no estimate is
recorded.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from click.testing import CliRunner

from steadybench.cli import cli


def samples_file(path: Path, cases: int, slower: tuple[int, ...] = ()) -> Path:
    """``cases`` benchmarks with 30 samples each and no estimate; those in ``slower`` ×2."""
    benchmarks = []
    for i in range(cases):
        scale = 2.0 if i in slower else 1.0
        benchmarks.append({"name": f"bench{i:03d}", "implementation": "x",
                           "samples": [scale * (1e-3 + 1e-6 * (k % 7)) for k in range(30)]})
    path.write_text(json.dumps({"schema_version": 1, "suite": "large",
                                "benchmarks": benchmarks}))
    return path


def test_the_terminal_table_shows_at_most_its_rows(tmp_path, monkeypatch):
    from steadybench.compare import output

    monkeypatch.setattr(output, "TERMINAL_ROWS", 4)
    base = samples_file(tmp_path / "base.json", 9)
    new = samples_file(tmp_path / "new.json", 9, slower=(7, 8))
    done = CliRunner().invoke(cli, ["compare", str(base), str(new), "--json",
                                    str(tmp_path / "c.json")], env={"COLUMNS": "200"})
    assert done.exit_code == 0, done.output
    shown = sorted(set(re.findall(r"bench\d{3}", done.output.split("NEW against BASE")[0])))
    assert shown == ["bench000", "bench001", "bench002", "bench003"], done.output
    assert "(5 of 9 benchmarks not shown here;" in done.output
    # the files keep every row
    assert len(json.loads((tmp_path / "c.json").read_text())["benchmarks"]) == 9


def test_the_changes_are_shown_first_then_the_others_in_order(monkeypatch):
    from types import SimpleNamespace

    from steadybench.compare import output

    monkeypatch.setattr(output, "TERMINAL_ROWS", 4)
    rows = [SimpleNamespace(i=i, moved=i in (7, 8)) for i in range(9)]
    assert [r.i for r in output.shown_rows(rows)] == [0, 1, 7, 8]
    assert output.shown_rows(rows[:4]) == rows[:4]


def test_style_plain_keeps_every_row(tmp_path, monkeypatch):
    from steadybench.compare import output

    monkeypatch.setattr(output, "TERMINAL_ROWS", 4)
    base = samples_file(tmp_path / "base.json", 9)
    done = CliRunner().invoke(cli, ["compare", str(base), str(base), "--style", "plain"])
    assert done.exit_code == 0, done.output
    assert len(set(re.findall(r"bench\d{3}", done.output))) == 9
    assert "not shown" not in done.output


def test_the_report_draws_figures_for_at_most_its_cases(tmp_path, monkeypatch):
    from steadybench.output import reportviews

    monkeypatch.setattr(reportviews, "MAX_CASE_FIGURES", 3)
    monkeypatch.setattr(reportviews, "MAX_BOX_PLOTS", 1)
    monkeypatch.setattr(reportviews, "BOX_CHUNK", 2)
    monkeypatch.setenv("STEADYBENCH_REPORT_WORKERS", "1")
    path = samples_file(tmp_path / "r.json", 8)
    done = CliRunner().invoke(cli, ["report", str(path), "-o", str(tmp_path / "r.html")])
    assert done.exit_code == 0, done.output
    html = (tmp_path / "r.html").read_text()
    case_figures = set(re.findall(r'alt="([^"]*bench\d{3}[^"]*)"', html))
    assert len({re.search(r"bench\d{3}", a).group() for a in case_figures}) == 3, case_figures
    assert len(re.findall(r'alt="[^"]*overview-\d+"', html)) == 1
    assert html.count("bench007") >= 1  # every case is still in the report's table


def test_history_import_records_benchmarks_with_samples_and_no_estimate(tmp_path):
    path = samples_file(tmp_path / "r.json", 5)
    url = f"sqlite:///{tmp_path}/h.sqlite"
    done = CliRunner().invoke(cli, ["history", "import", str(path), "--history-url", url])
    assert done.exit_code == 0, done.output
    assert "recorded #1" in done.output
    from steadybench.history.record import measurements_of
    from steadybench.history.store import HistoryStore

    with HistoryStore.open(url, create=False) as store:
        record = store.records()[0]
        assert record.count == 5
        assert record.id is not None
        rows = {r.label: r for r in measurements_of(store.get(record.id).results)}
    # the value is the samples' mean, as direct gives it
    expected = sum(1e-3 + 1e-6 * (k % 7) for k in range(30)) / 30
    assert abs(rows["bench000 x"].value - expected) < 1e-15, rows.keys()
