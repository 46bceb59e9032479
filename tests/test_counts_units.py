"""The count backend's parts that need no valgrind: parsing, the cycles model, the line fit,
the layout, the identity check, and the errors when valgrind is missing (issue 26)."""

from __future__ import annotations

import os

import numpy as np
import pytest

from steadybench.cli import main
from steadybench.counts.backend import check_measure, identity_differences
from steadybench.counts.child import calls_for
from steadybench.counts.cycles import estimate_cycles
from steadybench.counts.fit import fit_counts
from steadybench.counts.layout import ENV_TARGET, env_size, layout_env
from steadybench.counts.valgrind import (
    CountFailure,
    Counts,
    ValgrindMissing,
    cachegrind_argv,
    check_platform,
    find_valgrind,
    parse_cachegrind_out,
)
from steadybench.errors import ConfigurationError, MeasurementError
from steadybench.output.format import format_value

CG_OUT = """\
desc: I1 cache:         32768 B, 64 B, 8-way associative
desc: D1 cache:         32768 B, 64 B, 8-way associative
desc: LL cache:         8388608 B, 64 B, 16-way associative
cmd: python3 w.py 10
events: Ir I1mr ILmr Dr D1mr DLmr Dw D1mw DLmw
fl=./csu/../csu/libc-start.c
fn=__libc_start_main@@GLIBC_2.34
128 2 1 1 2 0 0 0 0 0
summary: 140949302 1413137 14390 40544601 1981947 37759 19713818 203530 89463
"""


def test_parse_cachegrind_totals():
    counts = parse_cachegrind_out(CG_OUT)
    assert counts == Counts(140949302, 1413137, 14390, 40544601, 1981947, 37759, 19713818,
                            203530, 89463)
    assert counts.cache_simulated


def test_parse_instructions_only():
    counts = parse_cachegrind_out("events: Ir\nsummary: 140947527\n")
    assert counts.Ir == 140947527 and counts.Dr is None and not counts.cache_simulated


def test_parse_callgrind_segment_with_trailing_zeros_left_out():
    # callgrind writes "summary: 16051 4632 2625 238 135 35 4" for nine events when the last
    # two are zero (its format: missing trailing costs are zero); cachegrind never does
    text = ("# callgrind format\nversion: 1\ncreator: callgrind-3.19.0\n"
            "events: Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw\n"
            "summary: 16051 4632 2625 238 135 35 4\n")
    counts = parse_cachegrind_out(text)
    assert counts == Counts(Ir=16051, Dr=4632, Dw=2625, I1mr=238, D1mr=135, D1mw=35, ILmr=4,
                            DLmr=0, DLmw=0)


@pytest.mark.parametrize("text", ["", "events: Ir\n", "events: Ir Dr\nsummary: 1\n"])
def test_parse_rejects_cut_output(text):
    with pytest.raises(CountFailure):
        parse_cachegrind_out(text)


def test_cycles_follow_turner_trauring_by_hand():
    c = Counts(Ir=1000, I1mr=10, ILmr=2, Dr=400, D1mr=30, DLmr=5, Dw=100, D1mw=20, DLmw=3)
    # RAM = LL misses 2+5+3 = 10; LL hits = L1 misses 10+30+20 − 10 = 50;
    # L1 hits = accesses 1000+400+100 − 50 − 10 = 1440; cycles = 1440 + 5·50 + 30·10
    est = estimate_cycles(c)
    assert (est.ram, est.ll_hits, est.l1_hits) == (10, 50, 1440)
    assert est.cycles == 1440 + 250 + 300


def test_cycles_need_the_cache_simulation():
    with pytest.raises(CountFailure, match="cache simulation"):
        estimate_cycles(Counts(Ir=5))


def test_cache_geometry_is_fixed_on_the_command_line():
    from steadybench.counts.valgrind import Valgrind

    argv = cachegrind_argv(Valgrind("/usr/bin/valgrind", "valgrind-3.19.0"), "o", "l", True)
    assert "--I1=32768,8,64" in argv and "--LL=8388608,16,64" in argv
    assert not any(a.startswith("--LL") for a in cachegrind_argv(
        Valgrind("/usr/bin/valgrind", "v"), "o", "l", False))


def test_fit_exact_line_separates_fixed_part():
    fit = fit_counts([100, 200, 300], [5_000 + 100 * 77, 5_000 + 200 * 77, 5_000 + 300 * 77])
    assert fit.slope == pytest.approx(77) and fit.intercept == pytest.approx(5_000)
    assert fit.on_line and fit.warning() is None
    assert fit.slope_ci[0] == pytest.approx(77) and fit.slope_ci[1] == pytest.approx(77)


def test_fit_agrees_with_numpy_polyfit():
    calls, counts = [10, 20, 30, 40], [1_000_123, 1_700_010, 2_400_555, 3_099_870]
    fit = fit_counts(calls, counts)
    slope, intercept = np.polyfit(calls, counts, 1)
    assert fit.slope == pytest.approx(slope) and fit.intercept == pytest.approx(intercept)
    assert fit.residuals == pytest.approx(list(np.asarray(counts) - (slope * np.asarray(calls)
                                                                       + intercept)))


def test_fit_warns_when_cost_grows_per_call():
    # each call costs more than the last (a list that grows): count = 1000 + 50·N + N²
    calls = [100, 200, 300]
    fit = fit_counts(calls, [1000 + 50 * n + n * n for n in calls])
    assert not fit.on_line
    assert "not on a line" in fit.warning()


def test_fit_refuses_a_count_that_does_not_grow():
    with pytest.raises(MeasurementError, match="did not grow"):
        fit_counts([1, 2, 3], [500, 500, 500])
    with pytest.raises(MeasurementError):
        fit_counts([5, 5], [1, 2])


@pytest.mark.parametrize(("per_call", "calls"), [(69_500, 100), (2_000, 5_000), (1e9, 1),
                                                  (0, 1_000_000), (3_000_000, 2)])
def test_calls_are_sized_by_the_count(per_call, calls):
    assert calls_for(per_call) == calls


def test_layout_env_is_padded_to_a_fixed_size_and_seeded():
    small = {"PATH": "/bin", "HOME": "/root"}
    big = {**small, "EXTRA": "y" * 3000}
    env_a, seed_a, size_a = layout_env(0, small)
    env_b, seed_b, size_b = layout_env(0, big)
    assert seed_a == seed_b and env_a["PYTHONHASHSEED"] == str(seed_a)
    assert size_a == size_b == env_size(env_a) and size_a >= ENV_TARGET
    assert layout_env(0, small) == (env_a, seed_a, size_a)  # the same every time
    assert layout_env(1, small)[1] != seed_a
    assert "STEADYBENCH_WORKER_FD" not in layout_env(0, {**small, "STEADYBENCH_WORKER_FD": "9"})[0]


def test_identity_differences_name_the_field():
    a = {"measure": "instructions", "valgrind": "valgrind-3.19.0", "program": "py 3.11",
         "cache_geometry": None, "layout": "x"}
    assert identity_differences(a, dict(a)) == []
    (diff,) = identity_differences(a, {**a, "valgrind": "valgrind-3.22.0"})
    assert "valgrind" in diff and "3.22" in diff


def test_measure_names():
    assert check_measure(None) == "time"
    with pytest.raises(ConfigurationError):
        check_measure("seconds")


def test_counts_are_shown_in_their_unit_with_every_digit():
    assert format_value(69316.055, "instructions") == "69,316 instructions"
    assert format_value(1068118, "cycles") == "1,068,118 cycles"


def test_missing_valgrind_is_one_line_on_how_to_install(tmp_path, monkeypatch):
    monkeypatch.delenv("STEADYBENCH_VALGRIND", raising=False)
    with pytest.raises(ValgrindMissing, match="apt-get install valgrind"):
        find_valgrind(path=str(tmp_path))
    with pytest.raises(ValgrindMissing, match="does not run on darwin"):
        check_platform("darwin")


@pytest.mark.parametrize("command", [["run", "BENCH"], ["exec", "--", "true"],
                                     ["iters", "--", "true"]])
def test_cli_without_valgrind_exits_2_with_one_line(command, tmp_path, monkeypatch, capsys):
    bench = tmp_path / "b.py"
    bench.write_text("import steadybench\n\n@steadybench.benchmark\ndef f():\n"
                     "    return lambda: None\n")
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("STEADYBENCH_VALGRIND", raising=False)
    args = [str(bench) if a == "BENCH" else a for a in command]
    code = main([args[0], "--measure", "instructions", *args[1:]])
    err = capsys.readouterr().err
    assert code == 2
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert lines[-1].startswith("error:") and "install" in lines[-1]
    assert "Traceback" not in err


@pytest.mark.parametrize("extra", [["--preset", "baseline"], ["--in-process"],
                                   ["--method", "batch"], ["--runs", "5"]])
def test_run_refuses_time_options_with_counts(extra, tmp_path, capsys):
    bench = tmp_path / "b.py"
    bench.write_text("import steadybench\n\n@steadybench.benchmark\ndef f():\n"
                     "    return lambda: None\n")
    code = main(["run", str(bench), "--measure", "instructions", *extra])
    err = capsys.readouterr().err
    assert code == 2 and "applies to time measurements only" in err, err


def test_env_size_counts_bytes():
    assert env_size({"A": "bc"}) == len(os.fsencode("A")) + 2 + 2


# ------------------------------------------------------------------ verdicts on counts
from steadybench.counts.verdict import CountSide, check_identities, judge  # noqa: E402


def test_verdict_sentence_states_the_exact_difference():
    a = CountSide(16_500.0, 16_500.0, 16_500.0, (16_500.0,), "call")
    b = CountSide(17_012.0, 17_012.0, 17_012.0, (17_012.0,), "call")
    v = judge("join", "instructions", a, b, threshold=0.01)
    assert v.verdict == "slower" and v.difference == 512
    assert "B executes 3.1% more instructions than A (exact: +512 per call)" in v.sentence
    assert judge("join", "instructions", b, a).verdict == "faster"


def test_verdict_allows_layout_spread_and_fit_slack():
    # A's layouts span 1 % of its count: a 0.8 % difference is within the layout spread
    a = CountSide(1000.0, 995.0, 1005.0, (995.0, 1000.0, 1005.0), "call")
    b = CountSide(1008.0, 1008.0, 1008.0, (1008.0,), "call", fit_slack=0.5)
    v = judge("x", "instructions", a, b)
    assert v.layout_part == pytest.approx(0.01) and v.fit_part == pytest.approx(0.0005)
    assert v.verdict == "no change beyond the threshold"
    assert judge("x", "instructions", a, CountSide(1020.0, 1020.0, 1020.0, (1020.0,), "call")
                 ).verdict == "slower"


def test_verdict_uses_the_users_threshold():
    a = CountSide(1000.0, 1000.0, 1000.0, (1000.0,), "call")
    b = CountSide(1020.0, 1020.0, 1020.0, (1020.0,), "call")
    assert judge("x", "cycles", a, b, threshold=0.03).verdict == "no change beyond the threshold"
    assert judge("x", "cycles", a, b, threshold=0.01).verdict == "slower"


def test_identities_warn_or_refuse():
    a = {"measure": "instructions", "valgrind": "valgrind-3.19.0", "program": "p",
         "cache_geometry": None, "layout": "l"}
    assert check_identities(a, a, "x") == []
    (warning,) = check_identities(a, {**a, "program": "q"}, "x")
    assert "different conditions" in warning
    with pytest.raises(ConfigurationError, match="same measure"):
        check_identities(a, {**a, "measure": "cycles"}, "x")


def _count_results(path, value, measure="instructions", program="python 3.11"):
    from steadybench.counts.backend import NOT_TIME
    from steadybench.model.estimate import Estimate
    from steadybench.model.results import CaseResult, Results
    from steadybench.output.results_io import write_results

    case = CaseResult("work", "work", unit=measure, method="count")
    case.add_run("ok", {"wall_time": value})
    case.estimate = Estimate(value, value, value, 0.95, measure, "count", "count per call",
                             fields={"per": "call", "fit_slack": 0.0, "note": NOT_TIME})
    case.extra["counts"] = {"identity": {"measure": measure, "valgrind": "valgrind-3.19.0",
                                         "program": program, "cache_geometry": None,
                                         "layout": "l"}}
    write_results(Results(suite="s", cases=[case]), path)
    return str(path)


def test_compare_cli_on_counts_gates_and_says_counts_are_not_time(tmp_path, capsys):
    a = _count_results(tmp_path / "a.json", 16_500.0)
    b = _count_results(tmp_path / "b.json", 17_012.0)
    code = main(["compare", a, b, "--fail-on", "slower"])
    out = capsys.readouterr().out
    assert code == 1
    assert "B executes 3.1% more instructions than A (exact: +512 per call)" in out
    assert out.count("counts are not time") == 1 and " s " not in out
    assert main(["compare", a, a, "--fail-on", "slower"]) == 0
    c = _count_results(tmp_path / "c.json", 16_500.0, program="python 3.12")
    main(["compare", a, c])
    assert "different conditions" in capsys.readouterr().out
    d = _count_results(tmp_path / "d.json", 16_500.0, measure="cycles")
    assert main(["compare", a, d]) == 2


def test_relative_summary_of_counts_says_fewer_not_faster():
    from steadybench.model.estimate import Estimate
    from steadybench.output.relative import Variant, summary_lines

    one = Estimate(68_601.0, 68_601.0, 68_601.0, 0.95, "instructions", "count")
    two = Estimate(136_705.0, 136_705.0, 136_705.0, 0.95, "instructions", "count")
    (line,) = summary_lines([Variant("once", one), Variant("twice", two)])
    assert line.startswith("once executes 1.993× fewer instructions than twice")
    assert "faster" not in line


def test_history_compare_on_counts(tmp_path, capsys):
    db = str(tmp_path / "h.sqlite")
    a = _count_results(tmp_path / "a.json", 16_500.0)
    b = _count_results(tmp_path / "b.json", 17_012.0)
    assert main(["history", "import", a, "--history-url", db, "--name", "base"]) == 0
    assert main(["history", "import", b, "--history-url", db, "--name", "new"]) == 0
    capsys.readouterr()
    code = main(["history", "compare", "base", "new", "--history-url", db, "--fail-on",
                 "slower"])
    out = capsys.readouterr().out
    assert code == 1 and "3.1% more instructions than A (exact: +512 per call)" in out
    assert main(["history", "compare", "base", "base", "--history-url", db, "--fail-on",
                 "slower"]) == 0


def test_statement_call_runs_the_setup_once_and_pickles_as_text():
    import pickle

    from steadybench.counts.python import StatementCall
    from steadybench.model.parameters import Parameters

    impl = StatementCall("hits.append(1)", setup="hits = []")
    impl.setup(Parameters())
    for _ in range(3):
        impl.run()
    assert impl.run.__globals__["hits"] == [1, 1, 1]  # the set-up ran once
    copy = pickle.loads(pickle.dumps(impl))
    copy.setup(Parameters())
    copy.run()
    assert copy.run.__globals__["hits"] == [1]


def test_api_measure_counts_need_valgrind(tmp_path, monkeypatch):
    import steadybench

    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("STEADYBENCH_VALGRIND", raising=False)
    with pytest.raises(ValgrindMissing):
        steadybench.measure("sorted(d)", setup="d = [3, 1, 2]", measure="instructions")


def test_history_regressions_on_counts_say_more_instructions(tmp_path, capsys):
    db = str(tmp_path / "h.sqlite")
    for i, value in enumerate([16_500.0] * 6 + [17_012.0] * 4):
        path = _count_results(tmp_path / f"r{i}.json", value)
        assert main(["history", "import", path, "--history-url", db]) == 0
    capsys.readouterr()
    code = main(["history", "regressions", "--history-url", db])
    out = capsys.readouterr().out
    assert code == 1 and "MORE INSTRUCTIONS: work" in out and "+3.1%" in out
    assert "SLOWER" not in out and out.count("counts are not time") == 1
    # counts are exact: no rank-test confidence, but what the verdict rests on
    assert "confidence" not in out
    assert "(exact: 16,500.0 → 17,012.0 instructions, +512.0; exact difference; one layout" in out
    assert out.count("MORE INSTRUCTIONS") == 1  # equal counts are no change


def _point(i, value, executions=()):
    from steadybench.history.store import Point

    return Point(record_id=i, created="", commit=f"{i:040x}", branch=None, dirty=None,
                 name=None, machine="m", label="work", unit="instructions", value=value,
                 ci_low=None, ci_high=None, level=None, executions=tuple(executions))


def test_count_changes_are_exact_differences_beyond_the_layout_spread():
    from steadybench.counts.history import find_count_changes, layout_spread

    points = [_point(1, 100_000.0, (99_900.0, 100_000.0, 100_100.0)),  # spread 0.2 %
              _point(2, 100_000.0, (99_900.0, 100_000.0, 100_100.0)),
              _point(3, 100_150.0, (100_050.0, 100_150.0, 100_250.0)),  # +0.15 %: layout
              _point(4, 103_000.0, (102_900.0, 103_000.0, 103_100.0)),  # +2.85 %: code
              _point(5, 103_000.0, (102_900.0, 103_000.0, 103_100.0))]
    assert layout_spread(points[0]) == pytest.approx(0.002)
    analysis = find_count_changes(points, "work", "m")
    (change,) = analysis.changes
    assert change.index == 3 and change.direction == "slower"
    assert change.difference == 2_850.0 and change.magnitude == pytest.approx(2_850 / 100_150)
    assert change.basis == "exact difference against a layout spread of 0.200% (3 layouts)"
    assert "confidence" not in change.line() and "+2,850.0" in change.line()
    # a threshold above the change hides it; one layout per record: any difference counts
    assert not find_count_changes(points, min_change=0.05).changes
    single = [_point(i, v) for i, v in enumerate([100.0, 100.0, 100.01], 1)]
    assert [c.index for c in find_count_changes(single).changes] == [2]


def test_report_draws_counts_and_time_side_by_side(tmp_path, capsys):
    import re

    from steadybench.model.estimate import Estimate
    from steadybench.model.results import CaseResult, Results
    from steadybench.output.results_io import write_results

    counts = _count_results(tmp_path / "counts.json", 16_500.0)
    case = CaseResult("work", "work", unit="s", method="auto")
    for v in (8.1e-6, 8.0e-6, 8.2e-6):
        case.add_run("ok", {"wall_time": v})
        case.accumulate({"wall_time": v})
    case.estimate = Estimate(8.1e-6, 8.0e-6, 8.2e-6, 0.95, "s", "auto", "median")
    time_path = tmp_path / "time.json"
    write_results(Results(suite="s", cases=[case]), time_path)
    out = tmp_path / "r.html"
    assert main(["report", str(time_path), counts, "-o", str(out)]) == 0
    html = out.read_text()
    text = " ".join(re.sub(r"<[^>]+>", " ", re.sub(r"<style.*?</style>", "", html,
                                                   flags=re.S)).split())
    assert "Counts and time" in text and "16,500 instructions" in text and "8.1 µs" in text
    assert "slower than" not in text and "faster than" not in text


def test_compare_on_counts_writes_markdown_csv_json_and_the_report(tmp_path, capsys):
    import csv
    import json
    import re

    a = _count_results(tmp_path / "a.json", 16_500.0)
    b = _count_results(tmp_path / "b.json", 17_012.0)
    md, table, doc, html = (tmp_path / n for n in ("c.md", "c.csv", "c.json", "c.html"))
    code = main(["compare", a, b, "--markdown", str(md), "--csv", str(table), "--json",
                 str(doc), "--report", str(html), "--fail-on", "slower"])
    out = capsys.readouterr().out
    assert code == 1 and "B executes 3.1% more instructions than A" in out
    lines = md.read_text().splitlines()
    assert lines[0] == ("| Benchmark | A (BASE) | B (NEW) | B against A | Difference | Allowed "
                        "| Verdict |")
    assert lines[1] == "|---|---:|---:|---|---:|---:|---|"
    assert lines[2] == ("| work | 16,500.0 | 17,012.0 | 3.10% more instructions | +512.0 | "
                        "0.000% | **slower** |")
    assert any("counts are not time" in line for line in lines)
    (row,) = list(csv.DictReader(table.open()))
    assert (row["Name"], row["Unit"], row["Verdict"]) == ("work", "instructions", "slower")
    assert float(row["Base"]) == 16_500.0 and float(row["Difference"]) == 512.0
    assert float(row["Change"]) == pytest.approx(512 / 16_500)
    assert json.loads(doc.read_text())["kind"] == "counts"
    text = " ".join(re.sub(r"<[^>]+>", " ", re.sub(r"<style.*?</style>", "", html.read_text(),
                                                   flags=re.S)).split())
    assert "B executes 3.1% more instructions than A" in text and "slower" in text
    assert "counts are not time" in text
    # the same counts: "the same", no change; Markdown to standard output stays parseable
    assert main(["compare", a, a, "--markdown", "-"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("| Benchmark |") and "| the same instructions |" in out
    assert "no change beyond the threshold" in out and "B executes" not in out.split("\n")[0]


def test_every_time_only_option_named_for_counts_is_an_option_of_its_command():
    # the table of options counts refuse must not name an option a command does not have (a
    # renamed option would silently stop being refused)
    import click

    from steadybench.cli import cli
    from steadybench.cli.measure import TIME_ONLY

    ctx = click.Context(cli)
    for command, names in TIME_ONLY.items():
        params = {p.name for p in cli.get_command(ctx, command).params}
        assert "measure" in params
        assert set(names) <= params, (command, set(names) - params)


@pytest.mark.parametrize(("argv", "flag"), [
    (["timeit", "--preset", "quiet", "pass"], "--preset"),
    (["timeit", "--max-time", "3", "pass"], "--max-time"),
    (["timeit", "--seed", "1", "pass"], "--seed"),
    (["run", "{bench}", "--warmup", "2"], "--warmup"),
    (["run", "{bench}", "--track-memory"], "--track-memory"),
    (["ab", "--check-output", "{bench}", "{bench}"], "--check-output"),
    (["ab", "--max-rounds", "5", "{bench}", "{bench}"], "--max-rounds"),
    (["exec", "--runs", "3", "true"], "--runs"),
    (["exec", "--prepare", "true", "true"], "--prepare"),
    (["iters", "--min-points", "4", "true"], "--min-points"),
    (["sweep", "--sizes", "1,2", "--bootstrap", "10", "true {size}"], "--bootstrap"),
])
def test_counts_refuse_options_they_cannot_honour_in_one_line(argv, flag, tmp_path, capsys):
    # given on the command line, a time-only option is refused before anything is measured
    # (valgrind is not even looked for); left at its default it is not (the valgrind tests)
    bench = tmp_path / "b.py"
    bench.write_text("import steadybench\n\n@steadybench.benchmark\ndef f():\n"
                     "    return lambda: None\n")
    argv = [a.replace("{bench}", str(bench)) for a in argv]
    code = main([argv[0], "--measure", "instructions", *argv[1:]])
    err = capsys.readouterr().err
    assert code == 2
    assert f"--measure instructions does not take {flag}" in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_python_counts_made_in_segments_say_so_in_their_identity():
    # counts per call made by one process per point (before) and by segments of one process
    # differ (11,992 vs 11,786 per call for a loop of 40 additions): compare must warn
    from steadybench.counts.backend import PYTHON_SEGMENTS, make_identity
    from steadybench.counts.valgrind import Valgrind

    vg = Valgrind("/usr/bin/valgrind", "valgrind-3.19.0")
    old = make_identity("instructions", vg, "python").to_dict()
    new = make_identity("instructions", vg, "python", PYTHON_SEGMENTS).to_dict()
    (difference,) = identity_differences(old, new)
    assert difference.startswith("layout ") and "callgrind segments" in difference
