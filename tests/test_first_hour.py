"""Issue 13, a user's first hour: one-liners, answers in plain words, progress, tables that fit,
hyperfine's vocabulary, one option convention, errors that point at the user's code.

Each test names the defect of the issue's "Measured" section it reproduces."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from steadybench.cli import main
from steadybench.model.estimate import Estimate
from steadybench.model.results import CaseResult
from steadybench.runner.stop import RunState

GROUP_BENCH = """
import steadybench as sb

@sb.benchmark(group="build string", n=[1000])
def concat(n):
    parts = [str(i) for i in range(n)]
    def f():
        s = ""
        for p in parts:
            s += p
        return s
    return f

@sb.benchmark(group="build string", n=[1000])
def join(n):
    parts = [str(i) for i in range(n)]
    return lambda: "".join(parts)
"""

BROKEN_BENCH = """import steadybench as sb

def lookup(d):
    return d["missing"]

@sb.benchmark
def broken():
    d = {}
    return lambda: lookup(d)
"""

FAST_RUN = ["--max-time", "0.03", "-p", "2"]


def cli(args, capsys):
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def sb_process(args, cwd, columns=80, check=True):
    """The installed command in a child process, at ``columns`` (not a terminal)."""
    env = {**os.environ, "COLUMNS": str(columns)}
    proc = subprocess.run([sys.executable, "-m", "steadybench", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)
    if check:
        assert proc.returncode == 0, proc.stderr
    return proc


# ------------------------------------------------------------------------- one-liners
def test_python_dash_m_steadybench_works(tmp_path):
    """Measured: "There is no `python -m steadybench`"."""
    proc = sb_process(["--version"], tmp_path)
    assert proc.stdout.startswith("steadybench")


def test_timeit_one_statement_needs_no_file(tmp_path, capsys):
    """Measured: "Comparing two Python snippets needs a file with decorators"."""
    code, out, err = cli(["timeit", "-s", "parts = [str(i) for i in range(100)]",
                          '"".join(parts)', "--style", "plain"], capsys)
    assert code == 0, err
    header, row = out.splitlines()[:2]
    assert header.split()[:3] == ["benchmark", "runs", "estimate"]
    assert '"".join(parts)' in row and row.rstrip().endswith("ok")


def test_timeit_compares_statements_fastest_first(capsys):
    code, out, err = cli(["timeit", "-s", "parts = [str(i) for i in range(2000)]",
                          '"".join(parts)', "--vs", "functools.reduce(operator.add, parts)",
                          "-s", "import functools, operator", "--max-time", "1.5",
                          "--execution-time", "0.02"], capsys)
    assert code == 0, err
    # the times first, then the ratio (issue 28, item 18)
    verdict = [line for line in out.splitlines() if line.startswith('"".join(parts) ')]
    assert verdict and " µs, functools" in verdict[0], out
    assert '"".join(parts) is ' in out and "× faster than functools.reduce" in out \
        or "too few rounds" in out
    assert "statement 2 of 2" in err


def test_timeit_statement_error_is_one_line_naming_the_statement(capsys):
    code, out, err = cli(["timeit", "x = (", "--max-time", "1"], capsys)
    assert code != 0 and err.startswith("error: statement 1:") and err.count("\n") == 1


def test_timeit_statements_do_not_share_a_namespace():
    from steadybench.oneliner import statement_callable

    f = statement_callable("x = [1]", "x.append(2)\ny = len(x)\nreturn y", 1)
    g = statement_callable("x = [1]", "return len(x)", 2)
    assert f() == 2 and f() == 3 and g() == 1
    assert f.__code__.co_filename == "<statement 1>"


# ------------------------------------------------------------------------- bare command
def test_bare_steadybench_prints_short_usage_not_an_error(capsys):
    """Measured: "Bare `steadybench` prints the whole help as one `error:` line"."""
    code, out, err = cli([], capsys)
    assert code == 0 and "error" not in err
    assert out.startswith("usage: steadybench COMMAND") and "steadybench timeit" in out
    assert len(out.splitlines()) < 15 and max(len(line) for line in out.splitlines()) <= 100


def test_help_shows_defaults(capsys):
    code, out, _ = cli(["exec", "--help"], capsys)
    assert code == 0
    flat = " ".join(out.split())
    assert "Measured runs at least. [default: 10" in flat
    assert "--min-time" in flat and "[default: 3.0" in flat


# ------------------------------------------------------------------------- run
def test_run_groups_end_with_a_relative_summary_and_split_stdout_stderr(tmp_path, capsys):
    """Measured: "`run` groups ... never say 'A is N× faster than B'" and "Everything goes to
    stderr, so `> out.txt` captures nothing"."""
    bench = tmp_path / "bench_str.py"
    bench.write_text(GROUP_BENCH)
    code, out, err = cli(["run", str(bench), *FAST_RUN], capsys)
    assert code == 0, err
    assert "build string [n=1000]:" in out
    line = next(x for x in out.splitlines() if "faster than" in x)
    assert line.strip().startswith("join is ") and line.strip().endswith("]")
    assert "benchmark" in out and "bench_str: 2 case(s)" not in out  # table out, log not
    assert "bench_str: 2 case(s)" in err and "case 1 of 2" in err and "case 2 of 2" in err


def test_parameter_named_n_never_collides_with_the_runs_column(tmp_path, capsys):
    """Measured: 'A parameter called `n` collides with the run count column'."""
    bench = tmp_path / "bench_str.py"
    bench.write_text(GROUP_BENCH)
    code, out, _ = cli(["run", str(bench), *FAST_RUN, "--style", "plain", "-q"], capsys)
    assert code == 0 and out == ""  # -q: nothing but errors
    code, out, _ = cli(["run", str(bench), *FAST_RUN, "--style", "plain"], capsys)
    header = out.splitlines()[0].split()
    assert header[:2] == ["benchmark", "runs"] and "n" not in header
    assert "build_string_join_[n=1000]" in out  # plain: one field (issue 28, item 10)


def test_k_matches_names_as_displayed(tmp_path, capsys):
    """Measured: '`-k "concat join"` (the name as the table prints it) selects nothing'."""
    bench = tmp_path / "bench_str.py"
    bench.write_text(GROUP_BENCH)
    out_json = tmp_path / "r.json"
    code, _, err = cli(["run", str(bench), *FAST_RUN, "-k", "build string join", "-q",
                        "--json", str(out_json)], capsys)
    assert code == 0, err
    cases = json.loads(out_json.read_text())["benchmarks"]
    assert [c["implementation"] for c in cases] == ["join"]


def test_dash_means_stdout_for_run_json(tmp_path, capsys, monkeypatch):
    """Measured: "`run --json -` writes a file named `-`"."""
    monkeypatch.chdir(tmp_path)
    bench = tmp_path / "bench_str.py"
    bench.write_text(GROUP_BENCH)
    code, out, err = cli(["run", str(bench), *FAST_RUN, "--json", "-"], capsys)
    assert code == 0, err
    doc = json.loads(out)  # stdout is the JSON document alone: the table went to stderr
    assert {c["implementation"] for c in doc["benchmarks"]} == {"concat", "join"}
    assert not (tmp_path / "-").exists()
    assert "faster than" in err


@pytest.mark.parametrize("command", ["run", "exec"])
def test_confidence_accepts_percent_everywhere(tmp_path, capsys, command):
    """Measured: "`--confidence` is a float in `run`/`exec`/`report` but text accepting
    '95%' in `compare`/`plan`"."""
    out_json = tmp_path / "r.json"
    if command == "run":
        bench = tmp_path / "bench_str.py"
        bench.write_text(GROUP_BENCH)
        args, tail = ["run", str(bench), *FAST_RUN, "-k", "join"], []
    else:
        args, tail = ["exec", "-r", "3"], ["--", "true"]
    code, _, err = cli([*args, "--confidence", "90%", "-q", "--json", str(out_json), *tail],
                       capsys)
    assert code == 0, err
    (case,) = json.loads(out_json.read_text())["benchmarks"]
    assert case["estimate"]["confidence"] == pytest.approx(0.90)
    code, _, err = cli([*args, "--confidence", "150%", "-q", *tail], capsys)
    assert code == 2 and err.startswith("error:") and "95%" in err


# ------------------------------------------------------------------------- errors
def test_user_error_points_at_user_code(tmp_path, capsys):
    """Measured: 'Errors in user code show only "KeyError: 'missing'". `--debug` shows
    steadybench's own traceback, not the user's.'"""
    bench = tmp_path / "bench_err.py"
    bench.write_text(BROKEN_BENCH)
    out_json = tmp_path / "r.json"
    code, _, err = cli(["run", str(bench), *FAST_RUN, "-q", "--json", str(out_json)], capsys)
    assert code == 1
    (line,) = err.strip().splitlines()
    assert line.startswith("error: ") and "KeyError: 'missing'" in line
    assert line.endswith("(KeyError: 'missing') at bench_err.py:4 in lookup ← "
                         "bench_err.py:9 in <lambda>")
    (case,) = json.loads(out_json.read_text())["benchmarks"]
    (kept,) = case["extra"]["tracebacks"]
    assert kept["error"] == "KeyError: 'missing'"
    assert all("<steadybench" not in frame for frame in kept["frames"])
    code, _, err = cli(["--debug", "run", str(bench), *FAST_RUN, "-q"], capsys)
    assert 'return d["missing"]' in err and "traceback of the benchmark's code" in err


# ------------------------------------------------------------------------- exec
def test_exec_default_stop_is_at_least_10_runs_and_3_seconds():
    """Measured: 'The default stop rule gave `gzip -9` n = 2 and `gzip -1` n = 3 (CI
    ±53.61%), with no warning'."""
    from steadybench.cli.hyperfine_options import exec_stop_condition

    opts = {"min_runs": 10, "min_time": 3.0, "confidence": 0.95}
    stop = exec_stop_condition(opts)
    slow = RunState(runs=2, elapsed_ns=int(3.2e9))  # two runs of 1.6 s: 3 s are spent
    assert stop.check(slow) is None
    assert stop.check(RunState(runs=10, elapsed_ns=int(1e9))) is None  # fast: 3 s first
    assert stop.check(RunState(runs=10, elapsed_ns=int(3e9))) is not None
    capped = exec_stop_condition({**opts, "max_runs": 12})
    assert capped.check(RunState(runs=12, elapsed_ns=int(1e9))) is not None
    exact = exec_stop_condition({**opts, "runs": 3})
    assert exact.check(RunState(runs=3, elapsed_ns=1)) is not None


def test_exec_warns_when_max_time_cuts_below_min_runs():
    from steadybench.cli.hyperfine_options import few_runs_warning

    opts = {"min_runs": 10, "runs": None}
    assert "only 2 run(s)" in few_runs_warning(2, opts)
    assert few_runs_warning(10, opts) is None and few_runs_warning(2, {**opts, "runs": 2}) \
        is None


def test_exec_hyperfine_vocabulary_and_export(tmp_path, capfd):
    """Measured: "hyperfine users' habits are missing: --prepare, --setup, --cleanup,
    --conclude, --show-output, -r, -w, -m/-M, -n, -N, --export-json/-markdown/-csv"."""
    log = tmp_path / "hooks.log"
    export = tmp_path / "hf.json"
    md = tmp_path / "hf.md"
    csv_path = tmp_path / "hf.csv"
    code = main(["exec", "-N", "-r", "3", "-w", "1", "-n", "quick", "-n", "slow",
                 "--prepare", f"echo prepare {{n}} >> {log}",
                 "--conclude", f"echo conclude >> {log}",
                 "--setup", f"echo setup >> {log}", "--cleanup", f"echo cleanup >> {log}",
                 "--param", "n=1", "--cmd", "true {n}", "--cmd", "sleep 0.02", "--no-correction",
                 "--export-json", str(export), "--export-markdown", str(md),
                 "--export-csv", str(csv_path)])
    out, err = capfd.readouterr()
    assert code == 0, err
    lines = log.read_text().split("\n")
    assert lines[:2] == ["setup", "setup"] and lines[-3:] == ["cleanup", "cleanup", ""]
    assert lines.count("prepare 1") == 2 * (3 + 1) and lines.count("conclude") == 2 * 4
    doc = json.loads(export.read_text())
    assert [r["command"] for r in doc["results"]] == ["quick", "slow"]
    for r in doc["results"]:
        assert set(r) == {"command", "mean", "stddev", "median", "user", "system", "min",
                          "max", "times", "exit_codes", "parameters"} | (
            {"memory_usage_byte"} if "memory_usage_byte" in r else set())
        assert len(r["times"]) == 3 and r["exit_codes"] == [0, 0, 0]
        assert r["parameters"] == {"n": "1"}
        assert r["min"] <= r["median"] <= r["max"]
    assert md.read_text().startswith("| Command | Mean [")
    assert csv_path.read_text().splitlines()[0] == \
        "command,mean,stddev,median,user,system,min,max,parameter_n"
    # fastest first; a winner only with an interval (issue 28, item 3)
    assert ("quick is " in out and " faster than slow" in out) or "quick and slow are " in out


@pytest.mark.skipif(shutil.which("hyperfine") is None, reason="hyperfine not installed")
def test_exec_json_export_has_hyperfines_fields(tmp_path, capfd):
    """The export against hyperfine's own: the same fields, of the same types."""
    ours, theirs = tmp_path / "ours.json", tmp_path / "theirs.json"
    assert main(["exec", "-r", "2", "-q", "--export-json", str(ours), "--", "true"]) == 0
    subprocess.run(["hyperfine", "-N", "-r", "2", "--export-json", str(theirs), "true"],
                   check=True, capture_output=True)
    capfd.readouterr()
    a = json.loads(ours.read_text())["results"][0]
    b = json.loads(theirs.read_text())["results"][0]
    assert set(a) - {"memory_usage_byte"} == set(b) - {"memory_usage_byte"}
    for key in b:
        if key in a and b[key] is not None and a[key] is not None:
            assert type(a[key]) is type(b[key]) or {type(a[key]), type(b[key])} <= {int, float}


def test_exec_hook_failure_is_one_line(capfd):
    code = main(["exec", "-r", "2", "--prepare", "exit 7", "-q", "--", "true"])
    _, err = capfd.readouterr()
    assert code == 1
    assert err.strip() == "error: --prepare 'exit 7' failed with exit status 7"


def test_exec_show_output(capfd, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code = main(["exec", "-r", "2", "--show-output", "--no-correction", "--", "echo",
                 "hello-from-the-command"])
    out, _ = capfd.readouterr()
    assert code == 0 and out.splitlines().count("hello-from-the-command") == 2
    assert not (tmp_path / "-").exists()  # '-' is standard output, never a file


# ------------------------------------------------------------------------- 80 columns
def _table_rows(text: str) -> list[list[str]]:
    """The rows of a rich table as printed: the cells of each row, the fragments of a folded
    cell joined with a space (a row starts where its second cell is not empty)."""
    rows: list[list[list[str]]] = []
    for line in text.splitlines():
        if not line.startswith("│"):
            continue
        cells = [c.strip() for c in line.strip("│").split("│")]
        if not rows or cells[1]:
            rows.append([[c] if c else [] for c in cells])
        else:
            for i, c in enumerate(cells):
                if c:
                    rows[-1][i].append(c)
    return [[" ".join(parts) for parts in row] for row in rows]


@pytest.mark.slow
def test_run_exec_and_compare_fit_80_columns(tmp_path):
    """Measured: 'The `exec` table shrinks the command column to zero width: rows have no
    names, and the status column disappears' and '`run` wraps names into "nsmalle / st /
    [n=1000 / 0]"'."""
    bench = tmp_path / "bench_long_names.py"
    bench.write_text(GROUP_BENCH.replace("def concat", "def concatenate_with_plus_equals")
                     .replace('"build string"', '"build a long string from parts"'))
    base = tmp_path / "base.json"
    new = tmp_path / "new.json"
    run = sb_process(["run", str(bench), *FAST_RUN, "--json", str(base)], tmp_path)
    sb_process(["run", str(bench), *FAST_RUN, "--json", str(new), "-q"], tmp_path)
    ex = sb_process(["exec", "-r", "5", "--cmd", "sleep 0.001",
                     "--cmd", "python3 -c 'import sys; sys.exit(0)'", "-n", "sleep a moment",
                     "-n", "start python and exit at once without doing anything"], tmp_path)
    cmp = sb_process(["compare", str(base), str(new)], tmp_path)
    names = {
        "run": ["build a long string from parts concatenate_with_plus_equals [n=1000]",
                "build a long string from parts join [n=1000]"],
        "exec": ["sleep a moment", "start python and exit at once without doing anything"],
        "compare": ["build a long string from parts concatenate_with_plus_equals [n=1000]",
                    "build a long string from parts join [n=1000]"],
    }
    for what, proc in (("run", run), ("exec", ex), ("compare", cmp)):
        for stream in (proc.stdout, proc.stderr):
            assert all(len(line) <= 80 for line in stream.splitlines()), (what, stream)
        rows = _table_rows(proc.stdout)
        assert [r[0] for r in rows] == names[what], (what, proc.stdout)
        if what == "compare":
            assert all(r[2] in ("faster", "slower", "no significant difference")
                       for r in rows), proc.stdout
        else:
            assert all(r[-1] == "ok" for r in rows), proc.stdout
            assert all(r[1].isdigit() and int(r[1]) > 0 for r in rows)  # the runs column


# ------------------------------------------------------------------------- compare
def test_compare_says_slower_in_words(tmp_path, capsys):
    """Measured: '`compare` prints median(BASE)/median(NEW), so a regression reads
    "0.137×"'."""
    base, new = tmp_path / "base.txt", tmp_path / "new.txt"
    base.write_text("\n".join(str(1.0 + 0.01 * (i % 7)) for i in range(30)) + "\n")
    new.write_text("\n".join(str(7.3 + 0.07 * (i % 7)) for i in range(30)) + "\n")
    code, out, err = cli(["compare", str(base), str(new)], capsys)
    assert code == 0, err
    assert "0.137" not in out and "× slower" in out
    assert "NEW against BASE on 1 benchmark(s): 1 slower" in " ".join(out.split())
    # the figure beside the interval is the interval's own estimate, the Hodges–Lehmann ratio
    # (the median of all 900 ratios NEW_j/BASE_i: 7.294); the ratio of medians (7.291) stays
    # in the JSON
    assert "NEW is 7.294× slower than BASE [7.221, 7.366]" in out


# ------------------------------------------------------------------------- pieces
def test_tables_fit_and_styles():
    from rich.console import Console

    from steadybench.output.tables import Column, TableSpec, column_widths, render, to_plain

    spec = TableSpec([Column("benchmark", justify="left"), Column("runs"),
                      Column("estimate"), Column("extra", drop=1),
                      Column("status", justify="left", wrap=True)])
    spec.add_row("a rather long benchmark name [n=100000]", "12", "3.45 µs", "x" * 40,
                 "FAILED KeyError: 'missing'")
    widths = column_widths(spec, 80)
    assert 3 not in widths and sum(widths.values()) + 3 * len(widths) + 1 <= 80
    assert widths[0] >= 20
    console = Console(width=80, record=True, color_system=None)
    render(spec, console, "table")
    text = console.export_text()
    assert all(len(line) <= 80 for line in text.splitlines())
    assert "left out at 80 columns: extra" in text
    plain = to_plain(spec).splitlines()
    assert plain[0].split() == ["benchmark", "runs", "estimate", "extra", "status"]
    console = Console(width=80, record=True, color_system=None)
    render(spec, console, "markdown")
    assert console.export_text().splitlines()[1] == "|---|---:|---:|---:|---|"


def _case(name, value, low, high, impl=None, params=None, executions=()):
    case = CaseResult(benchmark=name, implementation=impl or name, params=params or {})
    case.estimate = Estimate(value=value, ci_low=low, ci_high=high, confidence=0.95)
    case.processes = [{"value": v} for v in executions]
    return case


def test_groups_rule():
    from steadybench.output.groups import comparison_text

    cases = [_case("g", 2.0, 1.9, 2.1, "slow", {"n": 1}), _case("g", 1.0, 0.95, 1.05, "fast",
                                                                  {"n": 1}),
             _case("alone", 5.0, 4.0, 6.0)]
    assert comparison_text(cases) == [
        "g [n=1]:", "  fast is 2.00× faster than slow [1.81, 2.21]"]
    # commands: every command at one parameter set is a variant
    cmds = [_case("a", 3.0, 2.9, 3.1), _case("b", 1.0, 0.9, 1.1)]
    assert comparison_text(cmds, commands=True) == ["b is 3.00× faster than a [2.64, 3.44]"]
    # a parameter scan of one command
    scan = [_case("c", 1.0, 0.9, 1.1, params={"size": 1}),
            _case("c", 4.0, 3.6, 4.4, params={"size": 4})]
    assert comparison_text(scan, commands=True) == [
        "c (parameter scan):", "  size=1 is 4.00× faster than size=4 [3.27, 4.89]"]


def test_progress_eta_from_the_budget():
    from steadybench.output.progress import Budget, JobsProgress

    budget = Budget(runs=10, seconds=3.0)
    assert budget.left(0, 0.0) is None  # run time unknown yet
    assert budget.left(2, 3.2) == pytest.approx(8 * 1.6)  # runs still needed dominate
    assert budget.left(10, 1.0) == pytest.approx(2.0)  # time still needed dominates

    class Plain:
        is_terminal = False

        def __init__(self):
            self.lines = []

        def print(self, line, **kwargs):
            self.lines.append(line)

    now = [0.0]
    console = Plain()
    progress = JobsProgress(console, 2, budget, clock=lambda: now[0])
    case = CaseResult(benchmark="a", implementation="a")
    progress(case, RunState(runs=5, elapsed_ns=int(1e9)))
    assert console.lines == []  # off a terminal: a line at most every 10 s
    now[0] = 11.0
    progress(case, RunState(runs=6, elapsed_ns=int(1.2e9)))
    (line,) = console.lines
    # this job: 1.8 s to reach 3 s; the other: max(3 s, 10 runs × 0.2 s)
    assert line.startswith("case 1 of 2: a, run 6") and line.endswith("ETA 5 s")


def test_console_logger_eta_and_case_position():
    from rich.console import Console

    from steadybench.model.results import Results
    from steadybench.output.loggers import ConsoleLogger, eta_text

    console = Console(width=80, record=True, color_system=None)
    logger = ConsoleLogger(console=console, live=False, case_budget=1.5)
    logger.start(Results(suite="s"), 4)
    assert logger.eta(0.0) == pytest.approx(6.0)
    assert logger.eta(1.0) == pytest.approx(0.5 + 4.5)
    assert eta_text(75) == "1 min 15 s" and eta_text(None) == "—"


def test_ab_progress_says_how_long_is_left():
    from steadybench.ab.report import budget_left, progress_line
    from steadybench.ab.session import ABResult, ABSettings, Round
    from steadybench.ab.variants import Outcome
    from steadybench.stats.sequential import Look

    res = ABResult(ABSettings(max_rounds=40, max_time=8.0), {})
    res.rounds = [Round(i, ("A", "B"), {"A": Outcome(2.0), "B": Outcome(1.0)})
                  for i in range(12)]
    res.elapsed = 3.0
    assert budget_left(res) == pytest.approx(5.0)  # the time budget binds first
    res.elapsed = 0.6
    assert budget_left(res) == pytest.approx(28 * 0.05)  # the rounds left bind first
    res.look = Look(rounds=12, estimate=0.5, low=0.45, high=0.55, level=0.99,
                    decision="slower", interim=True, method="m")
    assert progress_line(res) == ("  round 12/40: A is 2.00× faster than B "
                                  "[1.82, 2.22] so far; 0.6 s, ≤ 1 s left")
    assert len(progress_line(res)) <= 80
    res.look = Look(rounds=12, estimate=1 / 1.17, low=1 / 1.55, high=1 / 0.87, level=0.99,
                    decision=None, interim=True, method="m")
    assert progress_line(res).startswith(  # not "A is 1.17× faster" while [0.87, 1.55]
        "  round 12/40: no clear difference between A and B: 1.17× [0.87, 1.55] so far")


def test_timeit_error_points_at_the_statement(capsys):
    code, _, err = cli(["timeit", "-q", "y = 2\n1/0"], capsys)  # line 2 of the statement
    assert code == 1
    assert err.strip().endswith("(ZeroDivisionError: division by zero) at <statement 1>:2 in "
                                "_statement")


def test_timeit_display_names():
    from steadybench.oneliner import display_names

    assert display_names(['s = ""\nfor p in parts: s += p', "x" * 50, "y", "y"], []) == \
        ['s = ""; for p in parts: s += p', "x" * 39 + "…", "y #1", "y #2"]
    assert display_names(["a", "b"], ["first"]) == ["first", "b"]


def test_dash_is_stdout_for_blocks_and_system_show(tmp_path, capsys, monkeypatch):
    """Measured: "`system show --json` is a flag, but `--json FILE` everywhere else"."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "counts.csv").write_text("a,b,total\n1,0,1.0\n0,1,2.0\n1,1,3.0\n2,1,4.0\n")
    code, out, err = cli(["blocks", "counts.csv", "--json", "-"], capsys)
    assert code == 0, err
    assert json.loads(out)["unit"] == "ns" and not (tmp_path / "-").exists()
    for args in (["--json"], ["--json", "-"], ["--json", "state.json"]):
        code, out, err = cli(["system", "show", "--interval", "0", *args], capsys)
        assert code == 0, err
        text = (tmp_path / "state.json").read_text() if "state.json" in args else out
        assert set(json.loads(text)) == {"state", "findings"}
