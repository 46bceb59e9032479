"""The HTML report: self-contained, escaped, comparison first, huge results kept small, and
the ``steadybench report`` command."""

from __future__ import annotations

import base64
import json
import os
import re
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest

from steadybench.cli import main
from steadybench.errors import ConfigurationError
from steadybench.model.results import CaseResult, Results
from steadybench.output import figurepool, reportviews
from steadybench.output import report as rp
from steadybench.output.results_io import results_to_json
from test_plots_support import (
    HOSTILE,
    PNG_MAGIC,
    fit_extra,
    make_case,
    make_results,
    png_size,
    with_executions,
)


class _Page(HTMLParser):
    """Collects tags, image sources, ids and the text of the page."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.images: list[str] = []
        self.ids: list[str] = []
        self.text: list[str] = []
        self.attrs_seen: list[tuple[str, str | None]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.attrs_seen += attrs
        d = dict(attrs)
        if tag == "img":
            self.images.append(d.get("src") or "")
        if d.get("id"):
            self.ids.append(d["id"])

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def _parse(path: Path) -> _Page:
    page = _Page()
    page.feed(path.read_text(encoding="utf-8"))
    return page


@pytest.fixture
def no_case_figures(monkeypatch: pytest.MonkeyPatch) -> None:
    """For a test that asserts on the report's text only: no case gets figures of its own
    (the overview and comparison figures are still drawn). Drawing the cases' time series,
    histograms and error evolutions is most of a report's processor time, and the tests
    that assert on them (images, alt texts, plot files) keep them."""
    monkeypatch.setattr(reportviews, "MAX_CASE_FIGURES", 0)


def _check_images(page: _Page) -> None:
    assert page.images
    for src in page.images:
        assert src.startswith("data:image/png;base64,")
        data = base64.b64decode(src.split(",", 1)[1])
        assert data[:8] == PNG_MAGIC and min(png_size(data)) > 100


@pytest.mark.slow
def test_report_is_self_contained(tmp_path: Path) -> None:
    results = make_results(("alpha", "beta", "gamma"))
    results.cases[0].extra["fit"] = fit_extra()
    path = rp.write_report([results], tmp_path / "r.html")
    html = path.read_text(encoding="utf-8")
    page = _parse(path)
    _check_images(page)
    # nothing fetched: no external URL in any src/href, a CSP that forbids fetching and scripts
    for name, value in page.attrs_seen:
        if name in ("src", "href") and value:
            assert value.startswith(("data:", "#")), value
    assert "default-src 'none'" in html and "script" not in page.tags
    assert "link" not in page.tags
    assert "summary-1" in page.ids and {"case-001", "case-002", "case-003"} <= set(page.ids)
    text = " ".join(page.text)
    for expected in ("Test CPU", "quiet", "governor=performance", "turbo: no sysfs file",
                     "120 runs done", "fit slope", "40 ns"):
        assert expected in text, expected
    # per case: series, histogram, error evolution, one series per meter recorded per run
    # (+ fit for the first); plus the overview
    meters = sum(len(rp.meter_metrics(c)) for c in results.cases)
    assert len(page.images) == 1 + 3 * 3 + meters + 1


def test_hostile_text_is_escaped(tmp_path: Path) -> None:
    case = make_case(HOSTILE, implementation=f"impl {HOSTILE}", params={"p": HOSTILE})
    case.extra["command"] = f"prog --name '{HOSTILE}'"
    case.extra["output"] = "line 1\n" + HOSTILE + "\n</pre></details><script>x()</script>"
    case.warnings.append(HOSTILE)
    case.errors.append(HOSTILE)
    case.stop_reason = HOSTILE
    results = Results(suite=HOSTILE, cases=[case], environment={HOSTILE: HOSTILE},
                      context={"preset": HOSTILE, "applied": [HOSTILE], HOSTILE: 1})
    comparison = {"benchmarks": [{"name": HOSTILE, "speedup": 1.1, "verdict": HOSTILE,
                                  "warnings": [HOSTILE]}], "warnings": [HOSTILE]}
    path = rp.write_report([results], tmp_path / "r.html", comparison=comparison)
    html = path.read_text(encoding="utf-8")
    assert "<script" not in html and "<b>bold" not in html
    assert "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;" in html
    page = _parse(path)
    assert "script" not in page.tags and "b" not in page.tags
    text = "".join(page.text)
    assert text.count('<script>alert("x")</script>') >= 10  # shown literally, many times
    assert "x()</script>" in text
    # ids and anchors never come from names
    assert all(re.fullmatch(r"[a-z0-9-]+", i) for i in page.ids)


@pytest.mark.slow
def test_comparison_comes_first(tmp_path: Path) -> None:
    base = make_results(("a", "b"), seed=0, monitors=False)
    new = make_results(("a", "b"), seed=5, scale=0.9, monitors=False)
    comparison = {
        "kind": "steadybench-comparison",
        "benchmarks": [
            {"name": "a [size=10]", "benchmark": "a", "implementation": "impl",
             "params": {"size": 10}, "speedup": 1.11, "speedup_ci": {"low": 1.05, "high": 1.2},
             "verdict": "faster", "test": "Mann-Whitney", "p_value": 0.0001,
             "p_adjusted": 0.0002, "confidence": 0.95, "warnings": []},
            {"name": "b [size=10]", "speedup": None, "verdict": "inconclusive"},
        ],
        "suite": {"benchmarks": 2, "accelerated": 1,
                  "gain": {"median": {"all": {"gain": 0.1, "speedup": 1.111}}},
                  "confidence": 0.95},
        "warnings": ["environment differs: cpu"],
    }
    path = rp.write_report([base, new], tmp_path / "r.html", comparison=comparison,
                           labels=["base.json", "new.json"])
    html = path.read_text(encoding="utf-8")
    assert html.index('id="comparison"') < html.index('id="input-1"') < html.index('id="input-2"')
    text = " ".join(_parse(path).text)
    for expected in ("faster", "Mann-Whitney", "1.110× faster [1.050, 1.200]", "10.00 %",
                     "inconclusive", "environment differs: cpu", "base.json", "new.json"):
        assert expected in text, expected
    page = _parse(path)
    _check_images(page)
    assert any("comparison-suite" in a[1] for a in page.attrs_seen if a[0] == "alt")
    # pair plot drawn for "a" (matched by benchmark, implementation, parameters)
    assert any("comparison-001" in (v or "") for k, v in page.attrs_seen if k == "alt")


@pytest.mark.slow
def test_two_results_without_comparison_show_ratio_only(tmp_path: Path,
                                                        no_case_figures: None) -> None:
    path = rp.write_report([make_results(("a",), monitors=False),
                            make_results(("a",), seed=3, monitors=False)], tmp_path / "r.html")
    assert "ratio of the headlines only" in path.read_text(encoding="utf-8")


def test_streaming_failed_and_empty_cases(tmp_path: Path) -> None:
    streaming = CaseResult("stream", "stream", keep_samples=False)
    for v in (1.0, 2.0, 3.0):
        streaming.accumulate({"wall_time": v})
    failed = CaseResult("broken", "broken")
    failed.add_run("failed", {})
    failed.errors.append("exit status 3")
    one = CaseResult("one", "one")
    one.add_run("ok", {"wall_time": 1e-3})
    results = Results(cases=[streaming, failed, one])
    path = rp.write_report([results], tmp_path / "r.html")
    text = " ".join(_parse(path).text)
    assert "exit status 3" in text and "1 failed" in text
    _check_images(_parse(path))


@pytest.mark.slow
def test_json_round_trip_and_atomic_overwrite(tmp_path: Path, no_case_figures: None) -> None:
    results = Results.from_dict(json.loads(results_to_json(make_results(("a",)))))
    target = tmp_path / "r.html"
    target.write_text("old")
    rp.write_report([results], target)
    assert target.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert [p.name for p in tmp_path.iterdir()] == ["r.html"]  # no temporary file left


@pytest.mark.slow
def test_plots_dir_and_svg(tmp_path: Path) -> None:
    results = make_results(("a",))
    rp.write_report([results], tmp_path / "r.html", plots_dir=str(tmp_path / "p"),
                    plot_format="svg")
    files = sorted(p.name for p in (tmp_path / "p").iterdir())
    meters = len(rp.meter_metrics(results.cases[0]))
    assert "overview-1.svg" in files and len(files) == 1 + 3 + meters
    with pytest.raises(ConfigurationError):
        rp.write_report([make_results()], tmp_path / "r.html", plot_format="gif")


def test_comparison_only(tmp_path: Path) -> None:
    """A suite compared from plain sample files: no Results, only the comparison."""
    comparison = {"benchmarks": [{"name": "k1", "speedup": 0.8, "verdict": "slower"}]}
    path = rp.write_report([], tmp_path / "r.html", comparison=comparison)
    text = " ".join(_parse(path).text)
    assert "slower" in text and "k1" in text
    _check_images(_parse(path))


def test_bad_arguments() -> None:
    with pytest.raises(ConfigurationError):
        rp.write_report([], "x.html")
    with pytest.raises(ConfigurationError):
        rp.write_report(["not results"], "x.html")  # type: ignore[list-item]


def test_many_cases_are_compact(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rp, "COMPACT_CASES", 4)
    monkeypatch.setattr(reportviews, "BOX_CHUNK", 4)
    names = tuple(f"b{i}" for i in range(6))
    results = make_results(names, n=40)
    path = rp.write_report([results], tmp_path / "r.html")
    page = _parse(path)
    # one figure per case plus two overview box plots (4 cases per plot)
    assert len(page.images) == len(names) + 2
    assert "compact figures" in " ".join(page.text)


# ---------------------------------------------------------------- command line
def _write(tmp_path: Path, name: str, results: Results) -> str:
    path = tmp_path / name
    path.write_text(results_to_json(results))
    return str(path)


def test_cli_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f1 = _write(tmp_path, "one.json", make_results(("a",), monitors=False))
    out = tmp_path / "out.html"
    assert main(["report", f1, "-o", str(out), "--plots", str(tmp_path / "figs")]) == 0
    assert out.exists() and (tmp_path / "figs" / "overview-1.png").exists()
    assert "wrote" in capsys.readouterr().err


@pytest.mark.slow
def test_cli_two_files_compare(tmp_path: Path, no_case_figures: None) -> None:
    f1 = _write(tmp_path, "base.json",
                with_executions(make_results(("a", "b"), seed=0, monitors=False)))
    f2 = _write(tmp_path, "new.json", with_executions(
        make_results(("a", "b"), seed=4, scale=0.8, monitors=False)))
    out = tmp_path / "out.html"
    assert main(["report", f1, f2, "-o", str(out)]) == 0
    html = out.read_text(encoding="utf-8")
    assert 'id="comparison"' in html and ">faster<" in html
    # a saved comparison
    comp = tmp_path / "comp.json"
    comp.write_text(json.dumps({"benchmarks": [{"name": "x", "speedup": 2.0,
                                                "verdict": "saved-verdict"}]}))
    assert main(["report", f1, "--comparison", str(comp), "-o", str(out)]) == 0
    assert "saved-verdict" in out.read_text(encoding="utf-8")


@pytest.mark.slow
def test_cli_unrelated_files_still_report(tmp_path: Path, no_case_figures: None) -> None:
    f1 = _write(tmp_path, "a.json", make_results(("a", "b"), monitors=False, n=20))
    f2 = _write(tmp_path, "b.json", make_results(("yyy", "zzz"), monitors=False, n=20))
    out = tmp_path / "out.html"
    assert main(["report", f1, f2, "-o", str(out)]) == 0
    assert "not compared" in out.read_text(encoding="utf-8")


@pytest.mark.parametrize(("content", "message"), [
    ('{"foo": 1}', "not a steadybench results file"),
    ('{"schema_version": 99, "benchmarks": []}', "schema version 99"),
    ("not json", "not valid JSON"),
])
def test_cli_bad_input_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                   content: str, message: str) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(content)
    assert main(["report", str(bad), "-o", str(tmp_path / "o.html")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and message in err and err.count("\n") == 1
    assert not (tmp_path / "o.html").exists()


def test_cli_results_file_as_comparison_is_refused(tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    f1 = _write(tmp_path, "one.json", make_results(monitors=False, n=20))
    out = tmp_path / "o.html"
    assert main(["report", f1, "--comparison", f1, "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"error: {f1}: a results file, not a "
                                                   "comparison")
    assert not out.exists()


def test_cli_compare_needs_two(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f1 = _write(tmp_path, "one.json", make_results())
    assert main(["report", f1, "--compare", "-o", str(tmp_path / "o.html")]) == 2
    assert "exactly two" in capsys.readouterr().err
    assert main(["report", str(tmp_path / "missing.json")]) == 2
    assert "no such file" in capsys.readouterr().err


# ---------------------------------------------------------------- every kind of result
def _text(path: Path) -> str:
    return " ".join(_parse(path).text)


def _order(html: str, *ids: str) -> None:
    positions = [html.index(f'id="{i}"') for i in ids]
    assert positions == sorted(positions), ids


def _no_raw_json(path: Path) -> None:
    text = _text(path)
    assert '{"' not in text and "[{" not in text and "': " not in text


def _cases_with_estimates(names: tuple[str, ...], method: str, scale: float = 1.0,
                          **kw) -> Results:
    results = with_executions(make_results(names, monitors=False, n=40, scale=scale, **kw))
    for case in results.cases:
        case.method = method
    return results


def test_run_report_answers_first(tmp_path: Path, no_case_figures: None) -> None:
    """A run group: the relative answer is in the summary, before the tables, and the
    environment is collapsed at the end."""
    a = make_case("build", implementation="join", mean=1e-3, monitors=False, params={})
    b = make_case("build", implementation="concat", mean=1.5e-3, seed=1, monitors=False,
                  params={})
    results = with_executions(Results(suite="s", cases=[a, b], environment={"os": "Linux"}))
    path = rp.write_report([results], tmp_path / "r.html")
    html = path.read_text(encoding="utf-8")
    _order(html, "summary", "relative-1", "input-1", "environment")
    assert re.search(r'<details id="environment"', html)
    text = _text(path)
    assert re.search(r"join is 1\.\d+× faster than concat \[1\.\d+, 1\.\d+\]", text)
    _no_raw_json(path)


def test_exec_report_compares_commands_and_keeps_units(tmp_path: Path,
                                                       no_case_figures: None) -> None:
    results = _cases_with_estimates(("gzip -1 f", "gzip -9 f"), "exec", implementation=None,
                                    params={})
    for case in results.cases:
        case.implementation = case.benchmark
        case.extra["calibration"] = {"runs": 36, "mean": 0.00402595, "unit": "s"}
    path = rp.write_report([results], tmp_path / "r.html")
    text = _text(path)
    assert re.search(r"gzip -1 f is \d\.\d+× faster than gzip -9 f", text)
    assert "0.00402595" not in text and "4.026 ms" in text  # one unit for every time
    _no_raw_json(path)


@pytest.mark.slow
def test_run_parameter_scan_gets_a_growth_plot(tmp_path: Path) -> None:
    cases = []
    for i, n in enumerate((100, 1000, 10_000, 100_000)):
        cases.append(make_case("sort", implementation="sort", params={"n": n}, seed=i,
                               mean=1e-8 * n * np.log2(n), monitors=False, n=30))
    path = rp.write_report([Results(cases=cases)], tmp_path / "r.html")
    text = _text(path)
    assert "sort: time grows as O(n log n)" in text
    assert any(a == ("alt", "growth-1") for a in _parse(path).attrs_seen)


@pytest.mark.slow
def test_sweep_report_does_not_crash(tmp_path: Path) -> None:
    """report on a sweep result crashed in the old plots (R² is a list per size)."""
    from steadybench.programs.sweep import sweep_table

    cases = []
    for size in (8, 16, 32, 64):
        case = make_case("prog {size}", implementation="prog {size}", params={"size": size},
                         mean=1e-9 * size, monitors=False, n=20)
        case.method = "iters"
        case.extra["fit"] = {"kind": "iters", "x": [1, 2, 3], "y": [1e-9 * size * k
                                                                    for k in (1, 2, 3)],
                             "slope": 1e-9 * size, "intercept": 0.0, "r2": 0.9999,
                             "stddev": 1e-11 * size, "loglog": {"factor": 1e-9 * size}}
        cases.append(case)
    results = Results(suite="sweep", cases=cases, context={"sweep": sweep_table(cases)})
    source = _write(tmp_path, "sweep.json", results)
    out = tmp_path / "s.html"
    assert main(["report", source, "-o", str(out)]) == 0
    text = _text(out)
    assert "time grows as O(n) (c = 1 ns)" in text
    assert any(a == ("alt", "sweep") for a in _parse(out).attrs_seen)
    _check_images(_parse(out))


def test_compare_json_alone_is_a_report(tmp_path: Path) -> None:
    base = _write(tmp_path, "base.json", with_executions(make_results(("a",), monitors=False)))
    new = _write(tmp_path, "new.json", with_executions(
        make_results(("a",), seed=4, scale=0.625, monitors=False)))
    cmp = tmp_path / "cmp.json"
    assert main(["compare", base, new, "--json", str(cmp)]) in (0, 1)
    out = tmp_path / "c.html"
    assert main(["report", str(cmp), "-o", str(out)]) == 0
    html = out.read_text(encoding="utf-8")
    _order(html, "summary", "verdicts", "comparison", "input-1", "environment")
    text = _text(out)
    assert re.search(r"a impl \[size=10\]: NEW is 1\.\d+× faster than BASE "
                     r"\[1\.\d+, 1\.\d+\]", text)
    assert "p = 0 " not in text and "p-value 0" not in text
    # the results files named in the comparison give the pair plot
    assert any("comparison-001" in (v or "") for k, v in _parse(out).attrs_seen if k == "alt")


def test_p_value_zero_is_written_as_a_bound(tmp_path: Path) -> None:
    comparison = {"benchmarks": [{"name": "k", "speedup": 1.6, "verdict": "faster",
                                  "p_value": 0.0, "p_adjusted": 0.0}]}
    path = rp.write_report([], tmp_path / "r.html", comparison=comparison)
    text = _text(path)
    assert "< 1e-16" in text
    assert "k: NEW is 1.60× faster than BASE — faster, unadjusted p < 1e-16" in text
    cells = re.findall(r'<td class="num">([^<]*)</td>', path.read_text(encoding="utf-8"))
    assert "0" not in cells


def _ab_document() -> dict:
    rounds = [{"index": i, "order": ["A", "B"], "A": 3e-5 * (1 + 0.01 * i), "B": 2e-5,
               "errors": {}} for i in range(12)]
    look = {"rounds": 12, "ratio": 1.5, "low": 1.45, "high": 1.55, "level": 0.95,
            "decision": "faster", "method": "repeated exact signed-rank interval"}
    return {"kind": "steadybench-ab", "tool": {"name": "steadybench", "version": "0"},
            "settings": {"confidence": 0.95, "threshold": 0.0, "max_rounds": 40},
            "variants": {"A": {"kind": "python", "description": "old.py"},
                         "B": {"kind": "python", "description": "new.py"}},
            "verdict": "faster", "interim": False, "reason": "decided at look 1",
            "summary": "B is 1.500× faster than A [1.450, 1.550] at 95%", "elapsed": 3.2,
            "result": look, "looks": [look], "rounds": rounds,
            "failures": {"A": [], "B": []}, "warnings": []}


def test_ab_json_is_a_report(tmp_path: Path) -> None:
    source = tmp_path / "ab.json"
    source.write_text(json.dumps(_ab_document()))
    out = tmp_path / "ab.html"
    assert main(["report", str(source), "-o", str(out)]) == 0
    html = out.read_text(encoding="utf-8")
    _order(html, "summary", "ab-1", "environment")
    text = _text(out)
    assert "B is 1.500× faster than A [1.450, 1.550] at 95%" in text
    assert "old.py" in text and "30 µs" in text  # median of A with its unit
    _check_images(_parse(out))
    _no_raw_json(out)


class _RENDER:
    """Where :func:`_render_noting_pid` writes and what it calls (set by the test)."""

    pids: Path = Path("pids")
    original: object = None


def _render_noting_pid(index: int):
    """figurepool._render noting which process drew (module level: the pool pickles it)."""
    with open(_RENDER.pids, "a", encoding="utf-8") as out:
        out.write(f"{os.getpid()}\n")
    return _RENDER.original(index)  # type: ignore[operator]


def test_figures_drawn_in_worker_processes_are_the_same(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch
                                                        ) -> None:
    import threading

    if threading.active_count() > 1:
        # by design figures are forked only from a single-threaded process; threads other
        # tests left behind in this process make the report draw them here
        pytest.skip("other tests left threads in this process: figures are drawn in-process")
    results = make_results(("a", "b"), monitors=False, n=30)
    monkeypatch.setenv("STEADYBENCH_REPORT_WORKERS", "1")
    one = rp.write_report([results], tmp_path / "one.html").read_text(encoding="utf-8")
    monkeypatch.setenv("STEADYBENCH_REPORT_WORKERS", "2")
    pids = tmp_path / "pids"
    monkeypatch.setattr(_RENDER, "pids", pids)
    monkeypatch.setattr(_RENDER, "original", figurepool._render)
    monkeypatch.setattr(figurepool, "_render", _render_noting_pid)
    two = rp.write_report([results], tmp_path / "two.html").read_text(encoding="utf-8")
    assert one == two
    drawn_by = set(pids.read_text().split())
    assert drawn_by and str(os.getpid()) not in drawn_by  # really drawn by the workers


@pytest.mark.slow
def test_sweep_command_writes_its_report(tmp_path: Path) -> None:
    """``sweep --report`` end to end on a C program whose work grows as O(n): it crashed
    with "TypeError: float() argument must be ... not 'list'" before."""
    import shutil
    import subprocess

    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler")
    contrib = Path(__file__).resolve().parents[1] / "contrib" / "c"
    exe = tmp_path / "busy"
    subprocess.run([cc, "-O2", "-I", str(contrib), "-o", str(exe),
                    str(contrib / "example_busy.c")], check=True)
    out = tmp_path / "sweep.html"
    assert main(["sweep", "--sizes", "2^2..2^5", "--max-time", "0.1", "--report", str(out),
                 "--", str(exe), "{size}", "0", "cpu"]) == 0
    text = _text(out)
    assert "time grows as O(n)" in text
    assert any(a == ("alt", "sweep") for a in _parse(out).attrs_seen)


@pytest.mark.slow
def test_meters_recorded_per_run_are_drawn(tmp_path):
    """Issue 15: energy (and any meter recorded per run: devfreq frequency, temperature) is
    plotted in the report, each as its own time series; timestamps and the load are not."""
    from steadybench.model.results import CaseResult, Results
    from steadybench.output.report import meter_metrics, write_report
    from steadybench.processors import finalize_case

    case = CaseResult("energy", "e")
    for i in range(40):
        case.add_run("ok", {"wall_time": 1e-3 * (1 + i % 3 / 100), "energy": 0.5 + i / 1000,
                            "timestamp": float(i), "loadavg": 0.1})
    finalize_case(case, ())
    assert meter_metrics(case) == ["energy"]
    plots = tmp_path / "plots"
    write_report([Results(suite="s", cases=[case])], tmp_path / "r.html", plots_dir=str(plots))
    names = sorted(p.name for p in plots.iterdir())
    assert any(n.endswith("-energy.png") for n in names), names
    assert not any("timestamp" in n for n in names)


def test_a_figure_that_never_finishes_does_not_hang_the_report(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch
                                                               ) -> None:
    """Figures whose drawing blocks (until the test releases them) are waited for at most
    STEADYBENCH_FIGURE_TIMEOUT each: the report is written without them, each caption says
    why, and one warning counts them. Every figure blocks, so none can finish in time."""
    import threading

    from steadybench.output.figures import histogram, timeseries

    release = threading.Event()
    entered = threading.Event()

    def blocking(*args, **kwargs):
        entered.set()
        release.wait(timeout=60)  # bounded: the test releases it right after the report
        raise RuntimeError("released")

    results = make_results(("a",), monitors=False, n=10)
    monkeypatch.setattr(histogram, "histogram_figure", blocking)
    monkeypatch.setattr(timeseries, "timeseries_figure", blocking)
    monkeypatch.setenv("STEADYBENCH_REPORT_WORKERS", "1")  # in-process: the Event is shared
    monkeypatch.setenv("STEADYBENCH_FIGURE_TIMEOUT", "0.2")
    try:
        with pytest.warns(RuntimeWarning, match=r"left out \d+ figure\(s\).*histogram"):
            out = rp.write_report([results], tmp_path / "r.html")
    finally:
        release.set()
    assert entered.is_set()  # a blocking figure was really being drawn
    html = out.read_text(encoding="utf-8")
    assert "not drawn: it took longer than 0.2 s" in html
    assert not re.search(r'alt="[^"]*-(histogram|timeseries)"', html)
    assert 'id="case-001"' in html  # the case is still in the report


def test_the_figure_pool_draws_the_others_beside_one_that_hangs() -> None:
    """draw_all directly: the figures around a blocked one are drawn, the blocked one is left
    out with its caption. The wait is 10 s, what the blocked figure costs: a one-second wait
    raced the drawing of the small figures beside two CPU hogs (one missed it)."""
    import threading
    import warnings

    from steadybench.output.figures.common import figure_bytes, new_figure

    figure_bytes(new_figure(1.0, 1.0), "png")  # matplotlib imported before any wait starts
    release = threading.Event()

    def hang():
        release.wait(timeout=60)
        return new_figure(1.0, 1.0)

    figs = figurepool.FigureSet(None, "png")
    figs.add("first", lambda: new_figure(1.0, 1.0))
    figs.add("hangs", hang)
    figs.add("last", lambda: new_figure(1.0, 1.0))
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("STEADYBENCH_FIGURE_TIMEOUT", "10")
        mp.setenv("STEADYBENCH_REPORT_WORKERS", "1")
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # write_report's test checks the warning
                missed = figurepool.draw_all(figs)
        finally:
            release.set()
    assert missed == ["hangs"]
    first, hangs, last = figs.images
    assert first.src.startswith("data:image/png;base64,") and last.src.startswith("data:")
    assert hangs.src == "" and hangs.caption.startswith("not drawn")


def test_figure_timeout_must_be_positive(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STEADYBENCH_FIGURE_TIMEOUT", "soon")
    with pytest.raises(ConfigurationError, match="STEADYBENCH_FIGURE_TIMEOUT"):
        figurepool.figure_timeout()


def _never_finishes():
    """A figure that never finishes drawing (in a forked worker: the pool ends it)."""
    import threading

    threading.Event().wait()


def test_a_worker_stuck_in_a_figure_is_ended_with_the_pool(monkeypatch: pytest.MonkeyPatch
                                                           ) -> None:
    """The forked-workers path: a worker stuck in a figure is waited for at most the time
    limit, then ended with the pool (the report returns); the other figures are drawn."""
    import threading
    import warnings

    from steadybench.output.figures.common import figure_bytes, new_figure

    if threading.active_count() > 1:
        pytest.skip("other tests left threads in this process: figures are drawn in-process")
    figure_bytes(new_figure(1.0, 1.0), "png")  # matplotlib imported before the fork
    figs = figurepool.FigureSet(None, "png")
    figs.add("first", lambda: new_figure(1.0, 1.0))
    figs.add("stuck", _never_finishes)
    figs.add("last", lambda: new_figure(1.0, 1.0))
    monkeypatch.setenv("STEADYBENCH_REPORT_WORKERS", "2")
    monkeypatch.setenv("STEADYBENCH_FIGURE_TIMEOUT", "10")  # the small figures' margin under load
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        missed = figurepool.draw_all(figs)
    assert missed == ["stuck"]
    assert figs.images[0].src and figs.images[2].src and not figs.images[1].src
