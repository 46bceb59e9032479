"""Issue 28, a user's first hour (second pass): clean interrupts, honest answers, and the
habits users bring from hyperfine, pyperf and pytest-benchmark.

Each test names the item of the issue it reproduces ("item N")."""

from __future__ import annotations

from steadybench.cli import main


def cli(args, capsys):
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


# ---------------------------------------------------------------------- item 14: ab A alone
def test_ab_without_b_is_refused_in_one_line(tmp_path, capsys):
    bench = tmp_path / "a.py"
    bench.write_text("import steadybench\n\n@steadybench.benchmark\n"
                     "def f():\n    return lambda: None\n")
    code, out, err = cli(["ab", str(bench)], capsys)
    assert code == 2
    assert err.count("\n") == 1 and "--aa" in err and "Traceback" not in err
    assert out == ""


def test_ab_aa_is_explicit_and_refuses_b(tmp_path, capsys):
    bench = tmp_path / "a.py"
    bench.write_text("import steadybench\n\n@steadybench.benchmark\n"
                     "def f():\n    return lambda: None\n")
    code, _, err = cli(["ab", str(bench), str(bench), "--aa"], capsys)
    assert code == 2 and "give A only" in err
    code, out, err = cli(["ab", "--command", "true", "--aa", "--max-rounds", "6",
                          "--min-rounds", "6", "--max-time", "0"], capsys)
    assert code == 0, err
    assert "A true" in err and "B true" in err


# --------------------------------------------------------------- item 15: evaluate 95%
def test_evaluate_takes_a_percent_confidence(capsys):
    code, _, err = cli(["evaluate", "--confidence", "95%", "--help"], capsys)
    assert code == 0
    from click.testing import CliRunner

    from steadybench.cli import cli as group

    result = CliRunner().invoke(group, ["evaluate", "--confidence", "95%", "--runs", "x"])
    assert "--confidence" not in result.output, result.output
    result = CliRunner().invoke(group, ["evaluate", "--confidence", "150%", "--runs", "x"])
    assert "--confidence" in result.output


# ------------------------------------------------- item 12: hyperfine's positional commands
def test_exec_takes_hyperfine_positional_command_lines(capsys):
    code, out, err = cli(["exec", "true 1", "true 2", "--runs", "3", "--warmup", "0",
                          "--style", "plain"], capsys)
    assert code == 0, err
    assert "true_1" in out and "true_2" in out  # plain fields: spaces as _
    assert "not found" not in err


def test_exec_dash_dash_form_is_one_command(capsys):
    from steadybench.cli.programs.shared import command_list

    [one] = command_list(["gzip", "-1", "-c", "f"], [], [], shell=False)
    assert one.template == ("gzip", "-1", "-c", "f")
    two = command_list(["gzip -1 -c f", "gzip -9 -c f"], [], [], shell=False)
    assert [c.template for c in two] == [("gzip", "-1", "-c", "f"), ("gzip", "-9", "-c", "f")]


# ------------------------------------------------------ item 6: the docs' executions count
def test_docs_state_the_default_number_of_executions():
    import re
    from pathlib import Path

    from steadybench.defaults import __file__ as defaults_file

    # the source's value: the suite's conftest lowers the module attribute for speed
    PROCESSES = int(re.search(r"^PROCESSES = (\d+)$", Path(defaults_file).read_text(),
                              re.M).group(1))
    root = Path(__file__).resolve().parent.parent
    readme = (root / "README.md").read_text()
    tutorial = (root / "docs" / "tutorial.md").read_text()
    stated = re.findall(r"the default of `run` is (\d+)", readme)
    assert stated and all(int(n) == PROCESSES for n in stated)
    assert re.search(rf"runs in {PROCESSES} fresh worker\s+processes", tutorial)
    words = {"five": 5, "ten": 10, "twenty": 20}
    for text in (readme, tutorial):
        for word, n in words.items():
            if n != PROCESSES:
                assert not re.search(rf"\b{word} fresh worker", text)


# ------------------------------------------------------- item 13: pytest-benchmark's flags
PB_TESTS = '''
def work(n):
    return sum(range(n))

def test_fast(benchmark):
    benchmark(work, 10)

def test_plain():
    assert work(3) == 3
'''


def pytest_in(project, *args):
    import os
    import subprocess
    import sys

    env = {**os.environ}
    env.pop("PYTEST_ADDOPTS", None)
    env.pop("PYTEST_XDIST_WORKER", None)
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           "-p", "no:randomly", "-p", "no:benchmark", *args], cwd=project,
                          capture_output=True, text=True, env=env, timeout=300)


def test_pytest_benchmark_flags_are_understood(tmp_path):
    (tmp_path / "test_pb.py").write_text(PB_TESTS)
    history = tmp_path / "h.sqlite"
    fast = ["--steadybench-processes", "2", "--steadybench-time", "0.02",
            "--steadybench-history", str(history)]
    out = pytest_in(tmp_path, *fast, "--benchmark-only", "--benchmark-autosave",
                    "--benchmark-min-rounds", "5", "--benchmark-json", "pb.json")
    assert out.returncode == 0, out.stdout + out.stderr
    assert "1 passed, 1 deselected" in out.stdout
    assert "--benchmark-min-rounds is pytest-benchmark's and is ignored" in out.stdout
    import json

    doc = json.loads((tmp_path / "pb.json").read_text())
    assert [b["name"] for b in doc["benchmarks"]] == ["test_fast"]
    out = pytest_in(tmp_path, *fast, "--benchmark-only", "--benchmark-compare",
                    "--benchmark-compare-fail=min:90%")
    assert out.returncode == 0, out.stdout + out.stderr
    assert "compared with the baseline:" in out.stdout
    out = pytest_in(tmp_path, *fast, "--benchmark-compare-fail=min:0.001")
    assert out.returncode == 4 and "give a percentage" in out.stderr
    out = pytest_in(tmp_path, *fast, "--benchmark-skip")
    assert out.returncode == 0 and "1 passed, 1 skipped" in out.stdout


# ------------------------------- item 4: pytest-benchmark kept out of the user's venv, named
def test_make_demo_venv_does_not_install_pytest_benchmark():
    import re
    import tomllib
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    project = tomllib.loads((root / "pyproject.toml").read_text())["project"]
    makefile = (root / "Makefile").read_text()
    extras = re.findall(r"pip install [^\n]*-e '\.\[([a-z,]+)\]'", makefile)
    installed = list(project["dependencies"])
    for extra in extras:
        for name in extra.split(","):
            installed += project["optional-dependencies"][name]
    assert not any(req.startswith("pytest-benchmark") for req in installed)


def test_the_active_benchmark_fixture_is_named_when_both_plugins_are_there():
    from steadybench.pytest_plugin import pytest_report_header

    class Plugins:
        def __init__(self, names):
            self.names = names

        def has_plugin(self, name):
            return name in self.names

    class Config:
        def __init__(self, names):
            self.pluginmanager = Plugins(names)

    line = pytest_report_header(Config({"benchmark"}))
    assert "pytest-benchmark's" in line and "-p no:benchmark" in line
    assert "\n" not in line
    assert pytest_report_header(Config(set())) is None


# --------------------------------------------------------- item 11: python -m timeit's habit
def test_timeit_arguments_are_lines_of_one_statement(capsys):
    """python -m timeit 's = ""' 'for p in range(3): s += str(p)' times one statement."""
    code, out, err = cli(["timeit", 's = ""', "for p in range(3): s += str(p)",
                          "--style", "plain"], capsys)
    assert code == 0, err
    assert "UnboundLocalError" not in err and "Error" not in err
    assert 's_=_"";_for_p_in_range(3):_s_+=_str(p)' in out  # one statement, two lines
    assert "statement 2 of" not in err


def test_timeit_vs_compares_rivals(capsys):
    code, out, err = cli(["timeit", "-s", "parts = [str(i) for i in range(2000)]",
                          '"".join(parts)', "--vs", 's = ""', "--max-time", "1",
                          "--execution-time", "0.02"], capsys)
    assert code == 0, err
    assert "statement 2 of 2" in err
    # one direction in words: not "join is 15× faster than ... at 95%: slower"
    said = " ".join((out + err).split())
    assert "%: slower" not in said and "%: faster" not in said, said


# ------------------------------------------------ item 16: steadybench show FILE (pyperf's)
def _results_file(tmp_path):
    import random

    from steadybench.model.results import CaseResult, Results
    from steadybench.output.results_io import write_results

    rng = random.Random(7)
    case = CaseResult(benchmark="build", implementation="join", params={"n": 100})
    sizes = [40, 35, 45]
    for k, size in enumerate(sizes):
        for _ in range(size):
            case.add_run("ok", {"wall_time": 5e-7 * (1 + 0.1 * k) * rng.lognormvariate(0, .05)})
    case.processes = [{"index": k, "n": n, "hash_seed": 100 + k} for k, n in enumerate(sizes)]
    results = Results(suite="s", cases=[case], context={"command": "steadybench run s.py"})
    path = tmp_path / "r.json"
    write_results(results, path)
    return path, case.values(), sizes


def test_show_prints_statistics_against_numpy(tmp_path, capsys):
    import numpy as np

    path, values, _ = _results_file(tmp_path)
    code, out, err = cli(["show", str(path)], capsys)
    assert code == 0, err
    from steadybench.output.format import format_seconds

    q1, median, q3 = np.percentile(values, [25, 50, 75])  # numpy's default: R type 7
    assert f"Q1: {format_seconds(q1)}" in out
    assert f"median: {format_seconds(median)}" in out
    assert f"Q3: {format_seconds(q3)}" in out
    assert f"mean ± stdev: {format_seconds(np.mean(values))} ± " \
           f"{format_seconds(np.std(values, ddof=1))}" in out
    assert "values: 120 in 3 execution(s)" in out
    assert max(map(len, out.splitlines())) <= 80


def test_show_hist_dump_and_metadata(tmp_path, capsys):
    import re

    path, values, sizes = _results_file(tmp_path)
    code, out, err = cli(["show", str(path), "--all"], capsys)
    assert code == 0, err
    lines = out.splitlines()
    assert max(map(len, lines)) <= 80
    bins = [line for line in lines if re.match(r"^\s+[\d.]+ [nµm]?s: +\d+", line)]
    assert sum(int(b.split(":")[1].split()[0]) for b in bins) == len(values)
    for k, size in enumerate(sizes, 1):
        assert f"execution {k}: {size} values (hash seed {99 + k})" in out
    dumped = re.findall(r"(?:\(ns\) )?(\d+(?:\.\d+)?)(?:,|$)", "\n".join(
        line for line in lines if line.startswith("    ")), re.M)
    assert len(dumped) == len(values)
    assert "command: steadybench run s.py" in out
    assert not re.search(r"\d\n\s*[nµm]?s\b", out)  # a number is never apart from its unit


def test_show_bad_input_is_one_line(tmp_path, capsys):
    code, _, err = cli(["show", str(tmp_path / "none.json")], capsys)
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err
    (tmp_path / "x.json").write_text("{}")
    code, _, err = cli(["show", str(tmp_path / "x.json")], capsys)
    assert code == 2 and "not a steadybench results file" in err


# ----------------------------------------------- item 16: hyperfine's --reference and --sort
def test_relative_summary_against_a_reference():
    from steadybench.model.estimate import Estimate
    from steadybench.output.relative import Variant, relative_summary

    def v(name, value):
        return Variant(name, Estimate(value=value, unit="s", ci_low=value * 0.99,
                                      ci_high=value * 1.01, confidence=0.95))

    variants = [v("ref", 2.0), v("fast", 1.0), v("slow", 4.0)]
    rel = relative_summary(variants, reference="ref")
    assert [(r.fastest, r.other) for r in rel] == [("fast", "ref"), ("ref", "slow")]
    assert [round(r.ratio, 6) for r in rel] == [2.0, 2.0]
    rel = relative_summary(variants)  # without: the fastest against each
    assert [(r.fastest, r.other) for r in rel] == [("fast", "ref"), ("fast", "slow")]
    by_command = relative_summary([v("b", 3.0), v("a", 1.0), v("c", 2.0)], by_time=False)
    assert [r.other for r in by_command] == ["b", "c"]


def test_exec_reference_and_sort(capsys):
    code, out, err = cli(["exec", "--reference", "sleep 0.03", "--reference-name", "base",
                          "sleep 0.09", "sleep 0.01", "--runs", "10", "--style", "plain",
                          "--sort", "command"], capsys)
    assert code == 0, err
    rows = [line.split()[0] for line in out.splitlines()[1:4]]
    assert rows[0] == "base"
    compared = [line for line in out.splitlines() if " than " in line]
    assert len(compared) == 2 and all("base" in line for line in compared), out
    # --sort command: the lines follow the commands' order (0.09 first), not their times
    assert "0.09" in compared[0] and "0.01" in compared[1]
    code, out, err = cli(["exec", "sleep 0.09", "sleep 0.01", "sleep 0.03", "--runs", "4",
                          "--style", "plain", "--sort", "mean-time"], capsys)
    assert code == 0, err
    order = [out.index(f"sleep {t}") for t in ("0.01", "0.03", "0.09")]
    assert order == sorted(order), out  # the table by time
    code, _, err = cli(["exec", "--reference-name", "x", "true 1", "--runs", "2"], capsys)
    assert code == 2 and "give --reference" in err


# ------------------------------------------------------------ item 16: run --track-memory
MEM_BENCH = """import steadybench as sb

@sb.benchmark
def build():
    return lambda: [0] * 1000
"""


def test_run_track_memory_records_the_code_own_peak(tmp_path, capsys):
    import json

    bench = tmp_path / "mem.py"
    bench.write_text(MEM_BENCH)
    out_json = tmp_path / "m.json"
    for method in ("auto", "batch"):
        code, out, err = cli(["run", str(bench), "-p", "2", "--runs", "5", "--warmup", "0",
                              "--method", method, "--track-memory", "--json", str(out_json),
                              "-q"], capsys)
        assert code == 0, err
        case = json.loads(out_json.read_text())["benchmarks"][0]
        peaks = case["runs"]["metrics"]["peak_memory"]
        assert len(peaks) == 10
        # a list of 1000 references: 8 kB; the first run of each execution too (it read
        # 2-3 MB of the method's own code compiled on first use)
        assert all(7_900 < p < 9_000 for p in peaks), (method, peaks)
    code, out, err = cli(["run", str(bench), "-p", "2", "--runs", "3", "--track-memory"],
                         capsys)
    assert code == 0 and "peak mem" in out and "KiB" in out


def test_linefit_compiles_every_size_before_its_first_sample():
    from steadybench.methods import make_method
    from steadybench.model.implementation import CallableImplementation
    from steadybench.testing import SimulatedClock

    clock = SimulatedClock(read_cost_ns=50)
    method = make_method("linefit", points=6, base_batch=3)
    method.prepare(CallableImplementation(clock.workload(1000)), clock)
    # the bodies of every point of the sweep exist before any sample is taken
    assert set(method._timer._cache) == {(3 * k, 0) for k in range(1, 7)}


# -------------------------------------------------- item 16: rates (items/s, bytes/s)
RATE_BENCH = """import steadybench as sb

@sb.benchmark(n=[1000, 4000], bytes_per_call="n", items_per_call=lambda n: n // 10)
def copy(n):
    data = bytes(n)
    return lambda: bytearray(data)
"""


def test_rates_in_every_output(tmp_path, capsys):
    import csv
    import json

    bench = tmp_path / "rate.py"
    bench.write_text(RATE_BENCH)
    paths = {k: tmp_path / f"r.{k}" for k in ("json", "csv", "md")}
    code, out, err = cli(["run", str(bench), "-p", "2", "--runs", "5", "--json",
                          str(paths["json"]), "--csv", str(paths["csv"]), "--markdown",
                          str(paths["md"])], capsys)
    assert code == 0, err
    doc = json.loads(paths["json"].read_text())
    rows = list(csv.DictReader(paths["csv"].read_text().splitlines()))
    for case, row in zip(doc["benchmarks"], rows, strict=True):
        n = case["params"]["n"]
        value = case["estimate"]["value"]
        assert case["extra"]["throughput"] == {"items": n // 10, "bytes": n}
        rates = case["extra"]["rates"]
        assert abs(rates["bytes_per_second"] - n / value) < 1e-9 * n / value
        assert abs(rates["items_per_second"] - (n // 10) / value) < 1e-9 * n / value
        low, high = rates["bytes_per_second_low"], rates["bytes_per_second_high"]
        assert (low is None or low <= rates["bytes_per_second"]) and \
            (high is None or rates["bytes_per_second"] <= high)
        assert float(row["bytes_per_second"]) == rates["bytes_per_second"]
    assert "GiB/s" in out or "MiB/s" in out
    assert "items/s" in out and "items/s" in paths["md"].read_text()
    code, out, _ = cli(["show", str(paths["json"])], capsys)
    assert "rate: " in out and "items/s" in out


def test_rate_declaration_errors_are_one_line(tmp_path, capsys):
    bench = tmp_path / "bad.py"
    bench.write_text("import steadybench as sb\n\n@sb.benchmark(bytes_per_call=-3)\n"
                     "def f():\n    return lambda: None\n")
    code, _, err = cli(["run", str(bench), "--runs", "2"], capsys)
    assert code != 0 and "bytes_per_call must be a positive number" in err
    bench.write_text("import steadybench as sb\n\n@sb.benchmark(bytes_per_call='m', n=[1])\n"
                     "def f(n):\n    return lambda: None\n")
    code, _, err = cli(["run", str(bench), "--runs", "2", "-p", "2"], capsys)
    assert code != 0 and "no parameter of that name" in err and "Traceback" not in err


# ------------------------------------------------------------ item 16: async benchmarks
def test_a_coroutine_function_is_awaited_in_the_timer_loop_between_the_clock_reads():
    import asyncio

    from steadybench.methods.unroll import Timer
    from steadybench.model.implementation import CallableImplementation

    awaited = []

    async def work():
        await asyncio.sleep(0)
        awaited.append(1)

    reads = []
    ticks = iter(range(0, 10_000, 7))

    def clock():
        # the clock is read inside the running loop: run_until_complete's own start and stop
        # are outside the sample, as the clock's own cost is
        loop = asyncio.get_running_loop()
        reads.append(loop.is_running())
        return next(ticks)

    timer = Timer(CallableImplementation(work))
    assert timer.is_async
    assert timer.time(clock, 5) == 7
    assert len(awaited) == 5 and reads == [True, True]
    assert timer.time(clock, 1200) == 7  # beyond the unrolled block: a loop of blocks
    assert len(awaited) == 1205


def test_run_measures_async_benchmarks(tmp_path, capsys):
    import json

    bench = tmp_path / "asy.py"
    bench.write_text("import asyncio\nimport steadybench as sb\n\nCOUNT = []\n\n"
                     "@sb.benchmark(group='g')\ndef awaited():\n"
                     "    async def f():\n        await asyncio.sleep(0)\n"
                     "        return sum(range(50))\n    return f\n")
    out_json = tmp_path / "a.json"
    for method in ("auto", "linefit"):
        code, out, err = cli(["run", str(bench), "-p", "2", "--runs", "5", "--method", method,
                              "--json", str(out_json)], capsys)
        assert code == 0, err
        assert "never awaited" not in err
        case = json.loads(out_json.read_text())["benchmarks"][0]
        assert case["estimate"]["value"] > 0
    code, _, err = cli(["run", str(bench), "--runs", "5", "--method", "direct",
                        "--in-process"], capsys)
    assert code != 0 and "cannot await a coroutine function" in err


def test_an_async_def_factory_is_explained(tmp_path, capsys):
    bench = tmp_path / "bad.py"
    bench.write_text("import steadybench as sb\n\n@sb.benchmark\nasync def f():\n    pass\n")
    code, _, err = cli(["run", str(bench), "--runs", "3", "--in-process"], capsys)
    assert code != 0 and "write a plain def that returns the async function" in err


# --------------------------------------- item 16: user-timed benchmarks (bench_time_func)
def test_usertimed_records_the_seconds_the_code_reports():
    import steadybench as sb

    calls = []

    def time_func(loops):
        calls.append(loops)
        return loops * 2.5e-6  # what the code says its loops took

    m = sb.measure(time_func, method="usertimed", runs=20, warmup=0)
    # calibration: at least 1 ms per sample, so 400 loops of 2.5 µs
    assert set(calls[-20:]) == {400}
    assert m.estimate.value == 2.5e-6
    m = sb.measure(time_func, method="usertimed", runs=5, loops=7)
    assert calls[-5:] == [7] * 5 and m.estimate.value == 2.5e-6


def test_usertimed_bad_return_is_one_line(tmp_path, capsys):
    bench = tmp_path / "ut.py"
    bench.write_text("import steadybench as sb\n\n@sb.benchmark(method='usertimed')\n"
                     "def f():\n    return lambda loops: 'fast'\n")
    code, _, err = cli(["run", str(bench), "--runs", "3", "-p", "2"], capsys)
    assert code != 0 and "returns the seconds its loops took" in err
    assert "Traceback" not in err


# ------------------------------------------------- item 10: plain fields that split
def test_plain_rows_split_into_the_header_fields(capsys):
    from steadybench.output.tables import Column, TableSpec, to_plain

    spec = TableSpec([Column("benchmark", justify="left"), Column("estimate"), Column("CI"),
                      Column("rate"), Column("status", justify="left")])
    from rich.markup import escape

    spec.add_row(escape("build join [n=100]"), "511 ns", "± 2.22%", "965 M items/s, 8.99 GiB/s",
                 "FAILED KeyError: 'x'")
    header, row = to_plain(spec).splitlines()
    assert row.split() == ["build_join_[n=100]", "511ns", "±2.22%",
                           "965M_items/s,_8.99GiB/s", "FAILED_KeyError:_'x'"]
    assert len(header.split()) == len(row.split())
    # a word after a number is not a unit: it keeps its space (was "from_40earlier_runs")
    from steadybench.output.tables import plain_field

    assert plain_field("from 40 earlier runs, ±10.3% (95 %), 0.1 s elapsed") == \
        "from_40_earlier_runs,_±10.3%_(95%),_0.1s_elapsed"
    code, out, err = cli(["exec", "sleep 0.001", "true 1", "--runs", "3", "--style", "plain"],
                         capsys)
    assert code == 0, err
    lines = out.splitlines()
    fields = len(lines[0].split())
    assert all(len(line.split()) == fields for line in lines[1:3]), out
    assert lines[1].split()[0] == "sleep_0.001"


# ------------------------------------------------------ item 9: 80 columns, no broken words
def test_wrap_keeps_numbers_with_their_units_and_words_whole():
    from steadybench.output.console import wrap_words

    line = ("  build join [n=100]: done, n=297, mean of execution medians 507 ns ± 17.12% "
            "(95% CI) (3 of 3 executions; each: 0.1 s elapsed) · case 1 of 2")
    for width in range(40, 81):
        wrapped = wrap_words(line, width).splitlines()
        assert all(len(part) <= width for part in wrapped), (width, wrapped)
        assert " ".join(p.strip() for p in wrapped) == " ".join(line.split())
        for whole in ("507 ns", "± 17.12%", "0.1 s", "execution medians"[:9]):
            assert any(whole in part for part in wrapped), (width, whole, wrapped)
        assert all(p.startswith("    ") for p in wrapped[1:])  # indent + 2


def test_bare_steadybench_and_history_list_fit_80_columns(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    code, out, _ = cli([], capsys)
    assert out and max(map(len, out.splitlines())) <= 80
    bench = tmp_path / "b.py"
    bench.write_text("import steadybench as sb\n\n@sb.benchmark\ndef f():\n"
                     "    return lambda: None\n")
    db = tmp_path / "h.sqlite"
    for name in ("a-rather-long-name-for-a-record", "second"):
        assert cli(["run", str(bench), "-p", "2", "--runs", "2", "-q", "--history-url",
                    str(db), "--history-name", name], capsys)[0] == 0
    code, out, err = cli(["history", "list", "--history-url", str(db)], capsys)
    assert code == 0, err
    lines = out.splitlines()
    assert len(lines) == 3 and max(map(len, lines)) <= 80
    assert all(len(line.split()) == len(lines[0].split()) for line in lines)


def test_system_show_fits_80_columns_and_a_file_is_not_hard_wrapped(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    code, out, _ = cli(["system", "show", "--interval", "0"], capsys)
    assert code == 0
    assert max(map(len, out.splitlines())) <= 80, out
    monkeypatch.delenv("COLUMNS")
    from steadybench.output.console import make_console

    console = make_console()  # standard output captured: not a terminal
    long = "warning: " + " ".join(["word"] * 60)
    console.print(long)
    assert capsys.readouterr().out == long + "\n"  # one line: a file has no width


def test_pytest_summary_fits_80_columns(tmp_path):
    import os
    import subprocess
    import sys

    (tmp_path / "test_wide.py").write_text(
        "import pytest\n\n"
        "@pytest.mark.benchmark(group='a group with a rather long name')\n"
        "def test_a_benchmark_with_a_long_descriptive_name(benchmark):\n"
        "    benchmark(lambda: sum(range(100)))\n\n"
        "@pytest.mark.benchmark(group='a group with a rather long name')\n"
        "def test_another_benchmark_with_a_long_descriptive_name(benchmark):\n"
        "    benchmark(lambda: sum(range(300)))\n")
    env = {**os.environ, "COLUMNS": "80"}
    env.pop("PYTEST_ADDOPTS", None)
    out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                          "-p", "no:benchmark", "--steadybench-processes", "2",
                          "--steadybench-time", "0.02"], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    section = out.stdout.split("steadybench benchmarks", 1)[1]
    lines = section.splitlines()
    # the group's relative line, whichever way the noise of the machine lets it be said
    assert any(words in line for line in lines
               for words in ("faster than", "apart", "no clear difference"))
    assert max(map(len, lines)) <= 80, section


# --------------------------------- items 3, 7, 17, 18: numbers that agree, winners with cause
def test_ratio_digits_follow_the_interval():
    from steadybench.output.format import change_text, factor_text

    assert factor_text(462.041, 400.2, 520.3) == "462× faster [400, 520]"
    assert factor_text(1.874, 1.761, 2.129) == "1.87× faster [1.76, 2.13]"
    assert factor_text(1.0523, 1.0411, 1.0632) == "1.052× faster [1.041, 1.063]"
    assert factor_text(0.5) == "2.00× slower"
    # an interval that holds 1 names no direction
    assert change_text(1.004, 0.99, 1.02) == "1.004× [0.990, 1.020]"


def test_no_winner_without_an_interval():
    from steadybench.ab.report import answer_phrase
    from steadybench.model.estimate import Estimate
    from steadybench.output.relative import Variant, summary_lines

    [line] = summary_lines([Variant("small", Estimate(value=1.8e-3, unit="s")),
                            Variant("fast", Estimate(value=1e-3, unit="s"))])
    assert "faster" not in line and "no interval" in line
    assert "faster" not in answer_phrase(1.8, None, None)
    assert answer_phrase(1.8, 0.6, 3.6).startswith("no clear difference")
    assert answer_phrase(0.5, 0.45, 0.55) == "A is 2.00× faster than B [1.82, 2.22]"


def test_run_table_cov_is_the_spread_of_the_interval(tmp_path, capsys):
    from steadybench.methods.base import headline_spread
    from steadybench.model.estimate import Estimate
    from steadybench.model.results import CaseResult
    from steadybench.output.format import format_percent
    from steadybench.output.loggers import summary_spec

    case = CaseResult(benchmark="b", implementation="b")
    for v in (1.0, 1.0, 3.0, 1.0, 1.0, 3.0):  # pooled runs: CoV 55 %
        case.add_run("ok", {"wall_time": v})
    case.stats = {"cov": 0.55, "median": 1.0, "min": 1.0}
    case.estimate = Estimate(value=1.5, ci_low=1.48, ci_high=1.52, confidence=0.95, unit="s",
                             statistic="median of execution medians", level="executions",
                             n_executions=3, between_cov=0.01,
                             fields={"execution_values": [1.49, 1.5, 1.51]})
    spec = summary_spec([case])
    headers = [c.header for c in spec.columns]
    assert "median" not in headers  # no second median beside the estimate
    cov = spec.rows[0][headers.index("CoV")]
    assert cov == format_percent(headline_spread(case.estimate)) and cov != "55.00%"


def test_compare_p_says_it_is_adjusted():
    from steadybench.compare.output import p_header
    from steadybench.compare.result import Comparison

    assert p_header(Comparison.from_dict({"options": {"correction": "holm"}})) == "p (holm)"
    assert p_header(Comparison.from_dict({"options": {"correction": "none"}})) == "p"


def test_ab_prints_both_times_and_keeps_jargon_behind_v(capsys):
    args = ["ab", "--command", "sleep 0.001", "sleep 0.004", "--max-rounds", "12",
            "--min-rounds", "12", "--max-time", "0"]
    code, out, err = cli(args, capsys)
    assert code == 0, err
    import re

    assert re.search(r"A [\d.]+ ms, B [\d.]+ ms: ", out), out
    assert "Kim–DeMets" not in out and "RMIT" not in out and "003 §" not in out
    code, out, err = cli([*args, "-v"], capsys)
    assert "Kim–DeMets" in out.replace("\n  ", " ") or "method:" in out


# ------------------------------------------ item 5: --runs and --max-time are per execution
def test_runs_and_max_time_say_per_execution_and_impossible_runs_are_refused(tmp_path,
                                                                              capsys):
    from click.testing import CliRunner

    from steadybench.cli import cli as group

    help_text = " ".join(CliRunner().invoke(group, ["run", "--help"]).output.split())
    assert "in each execution" in help_text and "exactly this many" not in help_text
    assert "Stop each execution after this many seconds" in help_text
    bench = tmp_path / "b.py"
    bench.write_text("import steadybench as sb\n\n@sb.benchmark\ndef f():\n"
                     "    return lambda: None\n")
    code, out, err = cli(["run", str(bench), "--runs", "1000000", "--stream"], capsys)
    assert code == 2 and err.count("\n") == 1 and "beyond --time-limit 600 s" in err
    # 3 executions of 2 s: the expectation is over 5 s, so it is printed; the calls sleep,
    # so the 6 s take no processor time (24 executions of 0.25 s of spinning took 7.8 s)
    bench.write_text("import time\nimport steadybench as sb\n\n@sb.benchmark\ndef f():\n"
                     "    return lambda: time.sleep(0.01)\n")
    code, out, err = cli(["run", str(bench), "--max-time", "2", "-p", "3"], capsys)
    assert code == 0, err
    assert "expected: at least 6 s of measuring, 3 executions per case" in err


# ------------------------------------------------------------- item 1: Ctrl-C during run
def test_ctrl_c_to_the_group_during_run_is_clean(tmp_path):
    """Ctrl-C at a terminal reaches the whole process group, workers included: no traceback,
    no FAILED, no verdict from the interrupted case, one message, status 130."""
    import json
    import os
    import signal
    import subprocess
    import sys

    mark = tmp_path / "b-is-measuring"
    (tmp_path / "b.py").write_text(
        "import pathlib, time\nimport steadybench as sb\n\n"
        "@sb.benchmark(group='g')\ndef a():\n    return lambda: sum(range(50))\n\n"
        "@sb.benchmark(group='g')\ndef b():\n"
        f"    pathlib.Path({str(mark)!r}).touch()  # ready: b's first execution set up\n"
        "    return lambda: time.sleep(0.1) or sum(range(500))\n")
    env = {**os.environ, "COLUMNS": "80", "XDG_STATE_HOME": str(tmp_path / "state")}
    # b's 8 executions of 20 runs of 0.1 s each (16 s, asleep: no processor time taken from
    # the rest of the suite) outlast any delay in this loop's noticing the mark (with 0.3 s
    # each, a loaded machine let b finish before the signal was sent); a's 8 × 20 runs are
    # over in moments (with --max-time 2 instead of --runs, a alone cost 12 s of CPU)
    proc = subprocess.Popen([sys.executable, "-m", "steadybench", "run", "b.py", "-p", "8",
                             "--runs", "20", "--max-time", "60", "--json", "r.json"],
                            cwd=tmp_path,
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)
    err_lines: list[str] = []
    try:
        import time

        deadline = time.monotonic() + 120
        while not mark.exists():  # the child says b is being measured
            assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read()
            time.sleep(0.02)
        os.killpg(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    err = "".join(err_lines) + err
    assert proc.returncode == 130, err
    assert "Traceback" not in out + err and "FAILED" not in out + err
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc["interrupted"] and any(c["interrupted"] for c in doc["benchmarks"]), \
        [(c["implementation"], c["interrupted"], c["n"]) for c in doc["benchmarks"]]
    assert " faster than " not in out and "no clear difference" not in out
    # one message: not also click's empty line and a second "interrupted"
    assert err.count("partial results") == 1 and not err.rstrip().endswith("\ninterrupted")
    assert "\n\n" not in err


# ------------------------------------------- item 8: hyperfine's file against exec results
def test_compare_says_when_start_up_corrections_differ(tmp_path, capsys):
    from steadybench.compare.output import correction_warning
    from steadybench.compare.result import Comparison

    doc = {"inputs": {"base_kind": "hyperfine", "new_kind": "steadybench"},
           "benchmarks": [{"test_unit": "runs (one process each)"}]}
    assert "corrected for start-up differently" in correction_warning(Comparison.from_dict(doc))
    doc["inputs"]["base_kind"] = "steadybench"
    assert correction_warning(Comparison.from_dict(doc)) is None
    e1, h1 = tmp_path / "e1.json", tmp_path / "h1.json"
    assert cli(["exec", "--runs", "5", "--json", str(e1), "-q", "--", "sleep", "0.01"],
               capsys)[0] == 0
    assert cli(["exec", "--runs", "5", "--export-json", str(h1), "-q", "--", "sleep", "0.01"],
               capsys)[0] == 0
    code, out, err = cli(["compare", str(h1), str(e1)], capsys)
    assert "corrected for start-up differently" in (out + err).replace("\n  ", " ")


# --------------------------------------------------- item 3: exec names no winner without cause
def test_exec_says_why_a_command_is_not_compared(capsys):
    code, out, err = cli(["exec", "true 1", "true 2", "--runs", "5"], capsys)
    assert code == 0, err
    if "no comparison for" in out:  # the usual case: `true` takes less than its correction
        assert "start-up correction is larger" in out.replace("\n", " ")
        assert " faster than " not in out
    else:  # both above zero: then the interval decides, and says so
        assert any(w in out for w in ("no clear difference", "apart", " faster than "))


# ------------------------------------------------ item 2: exec's max RSS is the command's own
def _launcher_or_skip():
    import pytest

    from steadybench.programs.launcher import launcher_path
    if launcher_path() is None:
        pytest.skip("no C compiler to build the launcher")


def test_a_tiny_command_peak_is_its_own_not_steadybench(capsys):
    import sys

    from steadybench.programs.process import CommandRunner, own_peak_rss
    _launcher_or_skip()
    runner = CommandRunner()
    run = runner.run(runner.resolve(["true"]))
    assert run.ok and run.max_rss is not None
    # `true` needs about 1 MiB; this process is tens of MiB (the figure used to be ours)
    assert run.max_rss < 6 * 2**20 < own_peak_rss()
    # a program of known peak: the difference from an empty one is what it touched
    size = 96
    base = runner.run(runner.resolve([sys.executable, "-S", "-c", "pass"]))
    big = runner.run(runner.resolve([sys.executable, "-S", "-c",
                                     f"b = b'x' * ({size} * 2**20)"]))
    assert base.max_rss is not None and big.max_rss is not None
    grown = (big.max_rss - base.max_rss) / 2**20
    assert size - 2 <= grown <= size + 4, grown


def test_the_peak_matches_gnu_time(tmp_path):
    import pytest

    from steadybench.programs.process import CommandRunner
    _launcher_or_skip()
    import os
    import subprocess
    if not os.access("/usr/bin/time", os.X_OK):
        pytest.skip("GNU time is not installed")
    data = tmp_path / "f.bin"
    data.write_bytes(os.urandom(2_000_000))
    argv = ["gzip", "-1", "-c", str(data)]
    report = tmp_path / "time.txt"
    subprocess.run(["/usr/bin/time", "-f", "%M", "-o", str(report), *argv],
                   stdout=subprocess.DEVNULL, check=True)
    theirs = int(report.read_text().split()[-1]) * 1024
    runner = CommandRunner()
    ours = [runner.run(runner.resolve(argv)).max_rss for _ in range(3)]
    assert all(r is not None for r in ours)
    # the same kernel figure: within a few hundred KiB (the launcher's few pages)
    assert min(abs(r - theirs) for r in ours) < 512 * 1024, (ours, theirs)


def test_exec_shows_the_command_peak(capsys):
    _launcher_or_skip()
    code, out, err = cli(["exec", "--cmd", "true", "--runs", "5", "--warmup", "0",
                          "--style", "plain"], capsys)
    assert code == 0, err
    assert "peak memory not shown" not in out + err
    header, row = [line.split() for line in out.splitlines()[:2]]
    shown = row[header.index("max_RSS")]
    assert shown.endswith("MiB") and float(shown[:-3]) < 6, out


def test_through_the_launcher_failures_and_timeouts_are_as_before(tmp_path):
    import pytest

    from steadybench.errors import ConfigurationError
    from steadybench.programs.process import CommandRunner
    _launcher_or_skip()
    script = tmp_path / "noshebang"
    script.write_text("echo hi\n")
    script.chmod(0o755)
    runner = CommandRunner(timeout=0.3)
    with pytest.raises(ConfigurationError, match="a script needs a #! line"):
        runner.run(runner.resolve([str(script)]))
    run = runner.run(runner.resolve(["sleep", "5"]))
    assert run.timed_out and run.max_rss is None
    run = runner.run(runner.resolve(["sh", "-c", "exit 3"]))
    assert run.exit_code == 3 and run.max_rss is not None
    run = runner.run(runner.resolve(["sh", "-c", "kill -TERM $$"]))
    assert run.exit_code is None and run.signal == 15


def test_without_a_compiler_commands_start_directly(tmp_path, monkeypatch):
    from steadybench.programs import launcher
    from steadybench.programs.process import CommandRunner
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("CC", "no-such-compiler")
    monkeypatch.setenv("PATH", "/nonexistent")
    launcher.forget()
    try:
        assert launcher.launcher_path() is None
        runner = CommandRunner()
        run = runner.run(["/bin/true"])
        assert run.ok and run.max_rss is None  # never steadybench's own figure
    finally:
        monkeypatch.undo()
        launcher.forget()


def test_a_launcher_others_can_write_is_not_run(tmp_path, monkeypatch):
    import os

    from steadybench.programs import launcher
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    launcher.forget()
    try:
        path = launcher.launcher_path()
        if path is None:
            import pytest
            pytest.skip("no C compiler to build the launcher")
        os.chmod(path, 0o777)
        launcher.forget()
        rebuilt = launcher.launcher_path()
        assert rebuilt == path and os.stat(path).st_mode & 0o777 == 0o700
    finally:
        monkeypatch.undo()
        launcher.forget()


# ------------------------------------- item 17: run-by-run plots and the case table, per execution
def _pooled_case(levels, runs=30, *, spike_every=0, seed=1, metric_noise=0.01):
    """A case pooled as the execution layer pools it: each execution (level) one warm-up run
    and ``runs`` ok runs, merged with merge_executions."""
    import numpy as np

    from steadybench.execution.backend import Outcome
    from steadybench.execution.merge import merge_executions
    from steadybench.model.results import CaseResult
    rng = np.random.default_rng(seed)
    outcomes = []
    for index, level in enumerate(levels):
        own = CaseResult("b", "b")
        own.add_run("warmup", {"wall_time": level * 3})
        for i in range(runs):
            value = level * (1 + metric_noise * rng.standard_normal())
            if spike_every and i % spike_every == spike_every - 1:
                value = level * 100
            own.add_run("ok", {"wall_time": value})
            own.accumulate({"wall_time": value})
        outcomes.append(Outcome(index=index, case=own))
    merged = CaseResult("b", "b")
    merge_executions(merged, outcomes, len(levels))
    return merged


def test_run_by_run_plot_marks_where_each_execution_begins():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from steadybench.output.figures.timeseries import draw_timeseries
    case = _pooled_case([1e-3, 1e-3, 1e-3], runs=20)
    assert case.execution_spans() == [(0, 21), (21, 42), (42, 63)]
    fig, ax = plt.subplots()
    draw_timeseries([ax], case)
    marks = [c for c in ax.collections if "execution start" in str(c.get_label())]
    assert len(marks) == 1 and "3 executions" in marks[0].get_label()
    xs = sorted({round(float(seg[0][0]), 3) for seg in marks[0].get_segments()})
    assert xs == [21.5, 42.5]  # runs are numbered from 1: run 22 is the 2nd's warm-up
    plt.close(fig)


def test_outliers_are_flagged_within_each_execution_not_whole_executions():
    from steadybench.processors.base import TukeyOutlierFilter
    # four executions at 1 ms and one at 1.5 ms: pooled fences would flag all of the last
    case = _pooled_case([1e-3, 1e-3, 1e-3, 1e-3, 1.5e-3], runs=30)
    spike = case.execution_spans()[1][0] + 10  # one slow run inside the 2nd execution
    case.metrics["wall_time"][spike] = 5e-3
    TukeyOutlierFilter().process_case(case)
    flagged = [i for i, f in enumerate(case.outlier) if f]
    last = case.execution_spans()[-1]
    assert spike in flagged
    # pooled fences flag all 30 of the last execution; its own flag at most a stray run
    assert sum(1 for i in flagged if last[0] <= i < last[1]) <= 2, flagged
    assert case.analyses["outliers"]["per"] == "execution"


def test_the_moving_line_never_leaves_the_axis():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    from steadybench.output.figures.timeseries import draw_timeseries
    case = _pooled_case([1e-3, 1.2e-3], runs=100, spike_every=5)  # every 5th run 100× slower
    fig, ax = plt.subplots()
    draw_timeseries([ax], case, window=10)
    low, high = ax.get_ylim()
    (line,) = [ln for ln in ax.get_lines() if "moving" in str(ln.get_label())]
    ys = np.asarray(line.get_ydata(), dtype=float)
    ys = ys[np.isfinite(ys)]
    assert ys.size and low <= ys.min() and ys.max() <= high, (ys.max(), high)
    assert high < 10  # the axis stays robust (ms): the 100 ms spikes are drawn at its edge
    # the line breaks between the two executions instead of joining their levels
    xs = np.asarray(line.get_xdata(), dtype=float)
    assert np.isnan(xs).sum() == 1 and np.isnan(np.asarray(line.get_ydata(), float)).sum() == 1
    plt.close(fig)


def test_case_table_summarises_per_execution_fields():
    from steadybench.output.reportviews import _extra_rows
    case = _pooled_case([1e-3] * 25, runs=3)
    case.extra["method_options"] = [{"executions": 1000 + (i % 2), "min_sample_ns": 1e6}
                                    for i in range(25)]
    short, _ = _extra_rows(case, "s")
    keys = [k for k, _ in short]
    assert not any("[" in k for k in keys), keys  # no method_options[0], [1], ...
    assert not any("execution_starts" in k for k in keys)
    rows = dict(short)
    assert rows["method_options.min_sample_ns (25 executions)"].startswith("each ")
    assert rows["method_options.executions (25 executions)"] == "1000 to 1001"


def test_exec_plots_every_time_in_one_unit_and_exit_codes_only_when_not_zero():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from steadybench.model.results import CaseResult
    from steadybench.output.figures.timeseries import draw_timeseries
    from steadybench.output.report import meter_metrics
    case = CaseResult("cmd", "cmd")
    case.units.update({"wall_time": "s", "sys_time": "s", "exit_code": ""})
    for i in range(20):
        case.add_run("ok", {"wall_time": 5e-3 + i * 1e-5, "sys_time": 2e-6 * (i % 3),
                            "exit_code": 0.0})
    assert "exit_code" not in meter_metrics(case)
    fig, ax = plt.subplots()
    draw_timeseries([ax], case, metric="sys_time")
    assert ax.get_ylabel() == "sys_time (ms)"  # the case's unit, not ns
    plt.close(fig)
    case.metrics["exit_code"][3] = 1.0
    assert "exit_code" in meter_metrics(case)
    case.units["max_rss"] = "B"
    for i in range(20):
        case.metrics.setdefault("max_rss", __import__("array").array("d"))
        case.metrics["max_rss"].append(1.8 * 2**20 + i * 1024)
    fig, ax = plt.subplots()
    draw_timeseries([ax], case, metric="max_rss")
    assert ax.get_ylabel() == "max_rss (MiB)" and ax.get_ylim()[1] < 3
    plt.close(fig)


def test_make_test_gives_the_pytest_benchmark_tests_their_peer_apart():
    """make test installs pytest-benchmark apart (tests/peers.py), so its tests run there
    rather than being skipped with advice to install `.[test]`, which no longer has it."""
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    makefile = (root / "Makefile").read_text()
    target = re.search(r"^test: ([^\n]*)\n\t([^\n]*)", makefile, re.M)
    assert target and "peers" in target.group(1).lower()
    assert "STEADYBENCH_TEST_PEERS" in target.group(2)
    assert re.search(r"--target \$\(PEERS\)[^\n]*\n?[^\n]*pytest-benchmark", makefile)
    stale = "pytest-benchmark is not installed (pip install -e '.[test]" + "')"
    for path in (root / "tests").glob("*.py"):
        assert stale not in path.read_text(), path


def test_peers_are_on_the_subprocess_path_only(tmp_path, monkeypatch):
    import subprocess
    import sys

    import pytest

    import peers
    if peers.folder() is None:
        pytest.skip(peers.REASON)
    assert str(peers.folder()) not in sys.path  # never on this test process's path
    code = "import pytest_benchmark, sys; print(pytest_benchmark.__file__)"
    done = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True,
                          timeout=60, check=False)
    assert str(peers.folder()) not in done.stdout  # nor on the venv's own
    done = subprocess.run([sys.executable, "-c", code], env=peers.env(), capture_output=True,
                          text=True, timeout=60, check=False)
    assert done.returncode == 0 and str(peers.folder()) in done.stdout, done.stderr


def test_a_wide_interval_never_shows_a_ratio_of_zero():
    """ab printed "6× [0, 54]": the low end, 0.4, rounded to the interval's digits."""
    from steadybench.output.format import change_text, ratio_text
    assert ratio_text(6.0, 0.4, 54.0) == "6× [0.4, 54]"
    assert "[0," not in change_text(0.2, 0.004, 3.0)
    assert ratio_text(1.87, 1.76, 2.13) == "1.87× [1.76, 2.13]"


def test_the_ab_report_says_whose_verdict_it_is(tmp_path, capsys):
    """The ab report's summary read "A is 6.03× faster than B … — verdict: slower"."""
    import json
    doc = {"kind": "steadybench-ab", "verdict": "slower", "interim": False,
           "reason": "decided at round 12",
           "summary": "A 1.41 µs, B 8.43 µs: A is 6.03× faster than B [5.65, 7.11] at 95%",
           "settings": {"confidence": 0.95, "threshold": 0.0},
           "variants": {"A": {"kind": "python", "description": "a.py"},
                        "B": {"kind": "python", "description": "b.py"}},
           "medians": {"A": 1.41e-6, "B": 8.43e-6}, "elapsed": 5.6,
           "result": {"rounds": 12, "ratio": 0.166, "low": 0.14, "high": 0.177},
           "looks": [], "failures": {"A": [], "B": []}, "warnings": [],
           "rounds": [{"index": i, "order": ["A", "B"], "A": 1.41e-6, "B": 8.43e-6,
                       "errors": {}} for i in range(12)]}
    path = tmp_path / "ab.json"
    path.write_text(json.dumps(doc))
    html = tmp_path / "r.html"
    code, _, err = cli(["report", str(path), "-o", str(html)], capsys)
    assert code == 0, err
    text = html.read_text()
    assert "verdict: <strong>B is slower</strong>" in text
    assert "trailing moving average" not in text


# ------------------- item 1 (Ctrl-C), the last case: python -m and CPython's stale interrupt flag
def test_a_caught_interrupt_in_c_run_code_does_not_end_python_m_with_sigint(tmp_path):
    """A KeyboardInterrupt that left code CPython ran through PyRun_String (an extension's
    import) and was then caught leaves a C flag set; under ``python -m`` Python then killed
    itself with SIGINT (-2) after steadybench had printed "interrupted" and chosen 130."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    (tmp_path / "interrupted_cli.py").write_text('''
import ctypes, sys
import steadybench.cli
from steadybench import entry

def fake_main(args, late_exit=False):
    run = ctypes.pythonapi.PyRun_String
    run.restype = ctypes.py_object
    run.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.py_object, ctypes.py_object]
    try:  # Ctrl-C inside code run by PyRun_String, caught as the command line catches it
        run(b"raise KeyboardInterrupt", 257, {}, {})
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
    return 130

steadybench.cli.main = fake_main
sys.exit(entry.main())
''')
    src = str(Path(__file__).resolve().parent.parent / "src")
    env = {"PYTHONPATH": os.pathsep.join([str(tmp_path), src]), "PATH": os.environ["PATH"]}
    done = subprocess.run([sys.executable, "-m", "interrupted_cli"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.stderr.strip() == "interrupted"
    assert done.returncode == 130  # not -2: killed by SIGINT


def test_a_time_that_rounds_up_to_the_next_unit_is_said_in_that_unit():
    """Seen in an ab line under load: "A 1e+03 ns, B 975 ns". 999.6 ns printed with three
    significant digits is 1000 ns, which is 1 µs."""
    from steadybench.output.format import format_seconds

    assert format_seconds(999.6e-9) == "1 µs"
    assert format_seconds(999.4e-9) == "999 ns"
    assert format_seconds(999.7e-6) == "1 ms" and format_seconds(0.9996) == "1 s"
    assert format_seconds(-999.6e-9) == "-1 µs" and format_seconds(2.345e-6) == "2.35 µs"
    assert "e+" not in format_seconds(9.9996e-6)
