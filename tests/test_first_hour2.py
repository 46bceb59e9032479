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
