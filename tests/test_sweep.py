"""Size sweeps: the grid, the complexity fit, the table, and ``steadybench sweep`` end to end."""

from __future__ import annotations

import csv
import io
import json
import math
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from steadybench.cli import main
from steadybench.errors import ConfigurationError
from steadybench.output.results_io import load_results
from steadybench.programs.commands import Command
from steadybench.programs.iters import ItersOptions
from steadybench.programs.process import ProcessRun
from steadybench.programs.sweep import (
    COMPLEXITY_CLASSES,
    fit_complexity,
    parse_sizes,
    run_size_sweep,
    sweep_table,
    table_text,
)
from steadybench.testing import SimulatedClock

CONTRIB = Path(__file__).resolve().parents[1] / "contrib" / "c"


# ---------------------------------------------------------------------------- the grid
def test_power_grid_with_points_per_octave():
    assert parse_sizes("2^3..2^6") == [8, 16, 32, 64]
    assert parse_sizes("2^3..2^5", per_octave=2) == [8, 11, 16, 23, 32]
    assert parse_sizes("8..64") == [8, 16, 32, 64]
    assert parse_sizes("10..100") == [10, 20, 40, 80, 100]  # the upper end is always included
    assert parse_sizes("1e2..1e3", 1) == [100, 200, 400, 800, 1000]


def test_explicit_lists_and_duplicates():
    assert parse_sizes("10, 100,1000") == [10, 100, 1000]
    assert parse_sizes("2^0..2^2", per_octave=4) == [1, 2, 3, 4]  # 1.19, 1.41 round to 1


@pytest.mark.parametrize("spec, message", [
    ("0..10", "positive"),
    ("-4,8", "positive"),
    ("10,0", "positive"),
    ("0.2", "positive integers"),
    ("64..8", "below the lower end"),
    ("a..b", "not a number"),
    ("", "empty"),
    ("1..inf", "'inf' is not a finite number"),
    ("nan,4", "'nan' is not a finite number"),
    ("2^3..2^100000", "'2\\^100000' is too large"),
])
def test_bad_sizes(spec, message):
    with pytest.raises(ConfigurationError, match=message):
        parse_sizes(spec)
    with pytest.raises(ConfigurationError, match="per-octave"):
        parse_sizes("8..16", per_octave=0)


def test_a_grid_far_too_dense_is_refused_before_it_is_built():
    with pytest.raises(ConfigurationError, match="sizes is too many"):
        parse_sizes("1..2^40", per_octave=100_000)


# ---------------------------------------------------------------------------- complexity
@pytest.mark.parametrize("name", list(COMPLEXITY_CLASSES))
def test_each_class_is_recovered_with_its_coefficient(name):
    rng = np.random.default_rng(7)
    sizes = np.array(parse_sizes("2^3..2^16", 2), dtype=float)
    true_c = 3e-9
    times = true_c * COMPLEXITY_CLASSES[name](sizes) * np.exp(rng.normal(0, 0.03, sizes.size))
    result = fit_complexity(sizes, times)
    assert result["best"] == name
    assert result["coefficient"] == pytest.approx(true_c, rel=0.05)
    assert set(result["candidates"]) == set(COMPLEXITY_CLASSES)
    assert result["candidates"][name] == min(result["candidates"].values())


def test_coefficient_is_the_relative_least_squares_solution():
    n = np.array([10.0, 20.0, 40.0])
    t = np.array([1.0, 2.2, 3.9])
    result = fit_complexity(n, t)
    f = n
    c = np.sum(f / t) / np.sum(f**2 / t**2)
    # worked by hand: minimise sum((t - c n)/t)^2 → d/dc = 0
    assert result["coefficients"]["O(n)"] == pytest.approx(c)
    rel = (t - c * f) / t
    assert result["candidates"]["O(n)"] == pytest.approx(math.sqrt(np.mean(rel**2)))


def test_complexity_needs_two_sizes():
    with pytest.raises(ConfigurationError):
        fit_complexity([8], [1.0])
    # log n is zero at n = 1 only: it is left out rather than dividing by zero
    assert "O(log n)" not in fit_complexity([1, 1], [1.0, 1.1])["candidates"]


# ---------------------------------------------------------------------------- table
def _table():
    return {"sizes": [8, 16], "mean": [1e-6, 2.5e-6], "stddev": [1e-8, None],
            "geomean": [1.1e-6, 2.4e-6], "geostdev": [1.01, 1.02], "r2": [0.999, 0.998],
            "unit": "s", "complexity": {"best": "O(n)", "coefficient": 1.5e-7,
                                        "candidates": {"O(n)": 0.1}}}


def test_table_formats():
    tsv = table_text(_table(), "tsv").splitlines()
    assert tsv[0].split("\t") == ["size", "mean", "stddev", "geomean", "geostdev", "r2"]
    assert tsv[1].split("\t")[:2] == ["8", "1e-06"]
    assert tsv[2].split("\t")[2] == ""  # undefined stays empty
    rows = list(csv.reader(io.StringIO(table_text(_table(), "csv"))))
    assert rows[2][1] == "2.5e-06"
    assert json.loads(table_text(_table(), "json"))["complexity"]["best"] == "O(n)"
    with pytest.raises(ConfigurationError):
        table_text(_table(), "xlsx")


# ---------------------------------------------------------------------------- fake sweep
class NLogNProgram:
    """BATCHTIME = iters · c·n·log2(n) with a small overhead, on a simulated clock."""

    def __init__(self, c=1e-9):
        self.clock = SimulatedClock()
        self.c = c
        self.timeout = 10.0
        self.sizes_seen: list[int] = []

    def resolve(self, argv):
        return list(argv)

    def run(self, argv):
        iters, size = int(argv[1]), int(argv[2])
        self.sizes_seen.append(size)
        batch = iters * self.c * size * math.log2(size) + 2e-6
        t0 = self.clock()
        self.clock.advance(batch * 1e9 + 1e6)
        return ProcessRun(wall_ns=self.clock() - t0, user_time=batch, sys_time=0.0,
                          max_rss=None, exit_code=0, stdout=f"BATCHTIME: {batch!r}\n")


def test_size_sweep_finds_n_log_n():
    prog = NLogNProgram()
    sizes = parse_sizes("2^4..2^14")
    opts = ItersOptions(max_time=0.05, bootstrap=200)
    cases = run_size_sweep(Command.from_line("sorter {size}"), sizes, prog, opts)
    assert [c.params["size"] for c in cases] == sizes
    table = sweep_table(cases)
    assert table["sizes"] == sizes
    expected = [1e-9 * n * math.log2(n) for n in sizes]
    assert table["mean"] == pytest.approx(expected, rel=1e-6)
    assert table["complexity"]["best"] == "O(n log n)"
    assert table["complexity"]["coefficient"] == pytest.approx(1e-9, rel=1e-6)
    assert all(r2 > 0.999 for r2 in table["r2"])
    assert all(g is not None and g > 0 for g in table["geomean"])


class InterruptedProgram(NLogNProgram):
    """The same program, with an interrupt of 0.2–2 ms inside one BATCHTIME in ten."""

    def __init__(self, seed=0):
        super().__init__()
        self.rng = np.random.default_rng(seed)

    def run(self, argv):
        run = super().run(argv)
        if self.rng.random() < 0.1:
            batch = float(run.stdout.split(":")[1]) + self.rng.uniform(2e-4, 2e-3)
            run = ProcessRun(wall_ns=run.wall_ns, user_time=batch, sys_time=0.0, max_rss=None,
                             exit_code=0, stdout=f"BATCHTIME: {batch!r}\n")
        return run


def test_size_sweep_uses_the_robust_fit_at_every_size():
    prog = InterruptedProgram(seed=4)
    sizes = [64, 256, 1024]
    cases = run_size_sweep(Command.from_line("sorter {size}"), sizes, prog,
                           ItersOptions(max_time=0.05, bootstrap=200))
    dropped = 0
    for case, n in zip(cases, sizes):
        fit = case.extra["fit"]
        dropped += len(fit["dropped"])
        assert {"readmitted", "straight", "converged", "noise_power"} <= set(fit)
        assert fit["slope"] == pytest.approx(1e-9 * n * math.log2(n), rel=1e-3)
    assert dropped > 0  # the interrupted batches went, the slopes stand


def test_size_sweep_needs_the_placeholder():
    with pytest.raises(ConfigurationError, match=r"no \{size\} placeholder"):
        run_size_sweep(Command.from_line("prog"), [8], NLogNProgram(), ItersOptions())


# ---------------------------------------------------------------------------- CLI
@pytest.fixture(scope="module")
def busy(tmp_path_factory) -> str:
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler")
    exe = tmp_path_factory.mktemp("c") / "example_busy"
    subprocess.run([cc, "-O2", "-I", str(CONTRIB), "-o", str(exe),
                    str(CONTRIB / "example_busy.c")], check=True)
    return str(exe)


def test_sweep_cli_linear_program(busy, tmp_path, capsys):
    out, tsv = tmp_path / "r.json", tmp_path / "t.tsv"
    # the work per iteration is {size} microseconds: time grows as O(n)
    code = main(["sweep", "--sizes", "2^2..2^6", "--max-time", "0.15", "--json", str(out),
                 "--table", str(tsv), "--", busy, "{size}", "0", "cpu"])
    stdout, err = capsys.readouterr()
    assert code == 0, err
    results = load_results(out)
    table = results.context["sweep"]
    assert table["sizes"] == [4, 8, 16, 32, 64]
    assert table["mean"] == pytest.approx([n * 1e-6 for n in table["sizes"]], rel=0.05)
    assert table["complexity"]["best"] == "O(n)"
    assert table["complexity"]["coefficient"] == pytest.approx(1e-6, rel=0.05)
    assert "growth: best fit O(n)" in stdout  # a result: on standard output
    lines = tsv.read_text().splitlines()
    assert lines[0].startswith("size\tmean") and len(lines) == 6
    assert len(results.cases) == 5 and results.cases[0].extra["fit"]["kind"] == "iters"


@pytest.mark.parametrize("args, fragment", [
    (["--sizes", "0..8", "--", "prog", "{size}"], "error: --sizes 0..8: sizes must be positive"),
    (["--sizes", "8", "--", "true"], "error: command 'true' has no {size} placeholder"),
    (["--sizes", "1..inf", "--", "prog", "{size}"], "error: --sizes: 'inf' is not a finite"),
    (["--sizes", "8", "--", "no-such-prog-xyz", "{size}"], "error: command not found"),
    (["--sizes", "8", "--cmd", "true {size}", "--cmd", "false {size}"],
     "error: sweep measures one command"),
])
def test_sweep_bad_input(args, fragment, capsys):
    code = main(["sweep", *args])
    err = capsys.readouterr().err
    assert code == 2
    assert err.strip().splitlines()[-1].startswith(fragment), err


def test_the_complexity_fit_of_tiny_times_neither_overflows_nor_warns():
    """Times of 1e-160 s (a results file's, or a report's parameter scan) made w = f(n)/t so
    large that w² overflowed: numpy printed a RuntimeWarning into the report's output and the
    coefficient came out 0. The fit is scaled: the same answer as at ordinary times."""
    import warnings

    from steadybench.programs.sweep import fit_complexity

    sizes = [100, 1000, 10000]
    times = [2e-6 * n for n in sizes]
    tiny = [t * 1e-154 for t in times]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        small = fit_complexity(sizes, tiny)
    ordinary = fit_complexity(sizes, times)
    assert small["best"] == ordinary["best"] == "O(n)"
    assert small["coefficient"] == pytest.approx(ordinary["coefficient"] * 1e-154, rel=1e-9)
