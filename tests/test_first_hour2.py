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
    assert "true 1" in out and "true 2" in out
    assert "not found" not in err


def test_exec_dash_dash_form_is_one_command(capsys):
    from steadybench.cli.programs import _commands

    [one] = _commands(["gzip", "-1", "-c", "f"], [], [], shell=False)
    assert one.template == ("gzip", "-1", "-c", "f")
    two = _commands(["gzip -1 -c f", "gzip -9 -c f"], [], [], shell=False)
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
