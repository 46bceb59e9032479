"""Issue 27 items 14 and 15, the rest: values no measurement gives, and benchmark files that
end the process or measure nothing.

- Times of 1e308 made ``report`` fail with an internal error; NaN, infinite, negative, text,
  true/false and null times in a results file were read as they were (``compare`` then printed
  "1.000× faster" from the stored estimate). Now reading the file refuses them in one line.
- ``plan`` and ``blocks`` with 1e308 printed numpy warnings and ``inf``/``nan`` as results.
- A benchmark whose callable is a generator function measured only the generator's creation.
- ``os._exit(5)`` at the top of a benchmark file ended steadybench with status 5, silently.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from steadybench.cli import main

BENCH = textwrap.dedent("""
    import steadybench as sb

    @sb.benchmark
    def fast():
        return lambda: sum(range(100))
""")


def one_error(args: list[str], capsys, status: int = 2) -> str:
    code = main(args)
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if ln.startswith("error:")]
    assert code == status, err
    assert len(lines) == 1, err
    assert "Traceback" not in err and "internal error" not in err
    assert "RuntimeWarning" not in err and "\ninf" not in err, err
    return lines[0]


@pytest.fixture(scope="module")
def results_file(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("res")
    (d / "b.py").write_text(BENCH)
    out = d / "ok.json"
    assert main(["run", str(d / "b.py"), "--in-process", "--runs", "5", "-q",
                 "--json", str(out)]) == 0
    return out


def _with_times(source: Path, target: Path, value: str, where: str) -> Path:
    data = json.loads(source.read_text())
    b = data["benchmarks"][0]
    if where == "samples":
        b["samples"] = ["__V__"] * len(b["samples"])
    elif where == "runs":
        b["runs"]["metrics"]["wall_time"][1] = "__V__"
    elif where == "stats":
        b["stats"]["median"] = "__V__"
    else:
        b["estimate"]["value"] = "__V__"
    target.write_text(json.dumps(data).replace('"__V__"', value))
    return target


@pytest.mark.parametrize("value, why", [
    ("1e308", "1e+308 s, longer than 1e+07 s"), ("NaN", "nan"), ("Infinity", "inf"),
    ("-1.5", "negative (-1.5)"), ('"abc"', "str 'abc'"), ("true", "bool True"),
])
@pytest.mark.parametrize("where", ["samples", "runs", "stats", "estimate"])
def test_results_with_times_no_measurement_gives_are_refused(results_file, tmp_path, capsys,
                                                             value, why, where):
    bad = _with_times(results_file, tmp_path / "bad.json", value, where)
    field = {"samples": "samples[0]", "runs": "runs.metrics.wall_time[1]",
             "stats": "stats.median", "estimate": "estimate.value"}[where]
    expected = (f"error: {bad}: malformed results file (benchmark 'fast': {field} is {why}, "
                "not a time)")
    assert one_error(["report", str(bad), "-o", str(tmp_path / "r.html")], capsys) == expected
    assert one_error(["compare", str(results_file), str(bad)], capsys) == expected
    assert not (tmp_path / "r.html").exists()


def test_null_samples_are_refused_but_a_failed_runs_null_is_not(results_file, tmp_path, capsys):
    bad = _with_times(results_file, tmp_path / "bad.json", "null", "samples")
    assert "samples[0] is null, not a time" in one_error(["compare", str(results_file),
                                                          str(bad)], capsys)
    fine = _with_times(results_file, tmp_path / "fine.json", "null", "runs")
    assert main(["report", str(fine), "-o", str(tmp_path / "r.html")]) == 0


def test_plan_and_blocks_with_values_near_the_float_limit(tmp_path, capsys):
    pilot = tmp_path / "pilot.txt"
    pilot.write_text("1\n2\n1e308\n3\n4\n")
    assert one_error(["plan", "--ci-width", "1%", str(pilot)], capsys) == (
        f"error: {pilot}: the samples are too large or too small for floating point "
        "(overflow encountered in square): rescale them (another unit)")
    for rows in ("1,2,1e308\n2,1,1e308\n3,3,1e308\n1,1,5\n",
                 "1e308,2,1\n2,1e308,1\n3,3,2\n1,1,5\n"):
        counts = tmp_path / "counts.csv"
        counts.write_text("a,b,total\n" + rows)
        line = one_error(["blocks", str(counts)], capsys)
        assert line.startswith(f"error: {counts}: the counts and totals are too large or too "
                               "small for floating point")


@pytest.mark.parametrize("mode", [[], ["--in-process"]], ids=["workers", "in-process"])
def test_a_generator_function_is_not_measured_as_its_creation(tmp_path, capsys, mode):
    bench = tmp_path / "gen.py"
    bench.write_text(textwrap.dedent("""
        import steadybench as sb

        def produce():
            yield sum(range(10000))

        @sb.benchmark
        def gen():
            return produce
    """))
    code = main(["run", str(bench), *mode, "--runs", "3", "-q", "--json",
                 str(tmp_path / "r.json")])
    err = capsys.readouterr().err
    assert code in (1, 2), err
    assert ("benchmark 'gen' returned a generator function (produce): calling it only creates "
            "the generator and none of its body runs") in err
    assert "Traceback" not in err


@pytest.mark.parametrize("mode", [["-p", "2"], ["--in-process"]], ids=["workers", "in-process"])
def test_os_exit_at_import_is_one_line_not_a_silent_exit(tmp_path, capsys, mode):
    bench = tmp_path / "leave.py"
    bench.write_text("import os\nos._exit(5)\n")
    line = one_error(["run", str(bench), *mode, "--runs", "3"], capsys)
    assert line == (f"error: {bench}: called os._exit(5) while loading: a benchmark file must "
                    "not end the process")
    import os

    assert os._exit.__module__ == "posix"  # put back


@pytest.mark.parametrize("mode", [[], ["--in-process"]], ids=["workers", "in-process"])
def test_a_benchmark_raising_keyboardinterrupt_is_a_failure_not_a_ctrl_c(tmp_path, capsys,
                                                                          mode):
    bench = tmp_path / "kbi.py"
    bench.write_text("import steadybench as sb\n\ndef f():\n    raise KeyboardInterrupt\n\n"
                     "@sb.benchmark\ndef kbi():\n    return f\n")
    out = tmp_path / "r.json"
    code = main(["run", str(bench), *mode, "--runs", "3", "--json", str(out)])
    err = capsys.readouterr().err
    assert code == 1, err  # was 130 (in-process) and 0 (workers), "interrupted"
    assert "KeyboardInterrupt raised by the benchmark itself (no Ctrl-C arrived)" in err
    assert "interrupted" not in err
    assert json.loads(out.read_text())["interrupted"] is False


def test_blocks_with_100000_rounds_fits_in_memory(tmp_path):
    """Item 13: the dependency check made a full SVD with an n×n factor (74.5 GiB for 100,000
    rounds). Under a 2 GiB address-space limit the solution now comes out."""
    import random
    import resource
    import subprocess
    import sys

    rng = random.Random(1)
    rows = ["a,b,total"]
    for _ in range(100_000):
        a, b = rng.randint(0, 9), rng.randint(0, 9)
        rows.append(f"{a},{b},{1.5 * a + 2.5 * b + rng.random() * 0.01:.6f}")
    counts = tmp_path / "counts.csv"
    counts.write_text("\n".join(rows) + "\n")

    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (2 * 2**30, 2 * 2**30))

    done = subprocess.run([sys.executable, "-m", "steadybench", "blocks", "--json", "-",
                           str(counts)], capture_output=True, text=True, preexec_fn=limited,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    groups = {g["blocks"][0]: g["value"] for g in json.loads(done.stdout)["groups"]}
    assert groups["a"] == pytest.approx(1.5, abs=1e-3)
    assert groups["b"] == pytest.approx(2.5, abs=1e-3)


def test_blocks_unit_is_a_short_word(tmp_path, capsys):
    counts = tmp_path / "c.csv"
    counts.write_text("a,b,total\n1,0,1\n0,1,2\n1,1,3.1\n2,1,4\n")
    assert one_error(["blocks", "--unit", "x" * 100_000, str(counts)], capsys) == (
        "error: --unit must be at most 32 printable characters (got 100000)")
